// The analysis panel: the page's set (its edits included) analysed by the
// server (/api/v1/analysis) — findings, each action's reach and coverage,
// the winner map over two factors with each action's witness — and the
// scenarios tuned (/api/v1/tune), the tuned set then compared on the live
// feed. The text and markup come from pure functions (unit-tested under
// Node); the view takes the page's element lookup, API call and callbacks,
// and holds no page state but the analysis on show.
import { actionColour } from './plot.js';
import { esc, fmt } from './text.js';
import { treeNodes } from './tree_view.js';


// "No findings.", or how many there are and how many the set has not
// accepted.
export function findingsSummary(findings) {
  if (findings.length === 0) return 'No findings.';
  const open = findings.filter((f) => !f.accepted).length;
  return `${findings.length} finding${findings.length === 1 ? '' : 's'}, ` +
    `${open} not accepted by the set.`;
}

// What clicking finding `f` of `set` loads: an action's witness (the
// situation where it wins), a scenario, a consideration's curve in the
// editor, or a node of the set's tree (by its name, "node N", or a utility
// node's choice "attack.fireball"; `kinds` are the tree's node kinds);
// null when it names nothing the page can show.
export function findingTarget(f, set, kinds = []) {
  const actions = (set && set.actions) || [];
  const action = actions.find((a) => a.name === f.subject);
  if (action) return { kind: 'witness', action: action.name };
  const scenario = ((set && set.scenarios) || []).findIndex((x) => x.name === f.subject);
  if (scenario >= 0) return { kind: 'scenario', index: scenario };
  const dot = f.subject.indexOf('.');
  if (dot > 0) {
    const owner = actions.find((a) => a.name === f.subject.slice(0, dot));
    const name = f.subject.slice(dot + 1);
    if (owner && (owner.considerations || []).some((c) => c.name === name))
      return { kind: 'consideration', action: owner.name, consideration: name };
  }
  const nodes = set && set.tree ? treeNodes(set.tree, kinds) : [];
  const numbered = /^node (\d+)$/.exec(f.subject);
  if (numbered && Number(numbered[1]) < nodes.length) return { kind: 'node', index: Number(numbered[1]) };
  const parent = dot > 0 ? nodes.findIndex((n) => n.name === f.subject.slice(0, dot)) : -1;
  const child = parent >= 0 ? nodes.findIndex((n, i) => i > parent && n.name === f.subject.slice(dot + 1)) : -1;
  const named = child >= 0 ? child : nodes.findIndex((n) => n.name === f.subject);
  return named >= 0 ? { kind: 'node', index: named } : null;
}

export function findingsHtml(findings, set, kinds = []) {
  return findings.map((f, i) =>
    `<li class="${['finding', f.accepted ? 'accepted' : '', findingTarget(f, set, kinds) ? '' : 'inert']
      .filter(Boolean).join(' ')}" data-index="${i}"
         data-kind="${esc(f.kind)}" data-testid="finding">
       <b>${esc(f.kind)}</b> ${esc(f.subject)}: ${esc(f.message)}
       ${f.accepted ? `<span class="muted">(accepted: ${esc(f.accepted)})</span>` : ''}
     </li>`).join('');
}

// One row per action: its colour on the map, its reach, its coverage.
export function analysisActionsHtml(actions) {
  return actions.map((x, i) =>
    `<tr class="analysis-action" data-index="${i}" data-testid="analysis-action">
       <td><span class="swatch" style="background:${actionColour(i)}"></span>${esc(x.action)}</td>
       <td>${esc((x.reach || '').replace('REACH_', '').toLowerCase())}</td>
       <td>${fmt(100 * (x.coverage || 0))}%</td></tr>`).join('');
}

// The winner map (`coverage` of the analysis, the other factors at
// mid-range), each witness marked where its two mapped factors put it;
// `factors` and `targetFactors` are the set's, for the axes' ranges. Empty
// when the analysis drew no map.
export function winnerMapHtml(coverage, actions, factors, targetFactors) {
  const c = coverage || {};
  const rows = c.mapRows || [];
  if (rows.length === 0) return '';
  const legend = c.legend || {};
  const index = {};
  actions.forEach((x, i) => { index[x.action] = i; });
  const cell = (ch) => {
    const name = legend[ch];
    return name in index ? actionColour(index[name]) : '#eee';
  };
  const dim = (name) => name.startsWith('target.')
    ? targetFactors.find((f) => 'target.' + f.name === name)
    : factors.find((f) => f.name === name);
  const fx = dim(c.mapX), fy = dim(c.mapY);
  const value = (w, name) => name.startsWith('target.')
    ? ((w.targets || [])[0] || { factors: {} }).factors[name.slice(7)]
    : (w.factors || {})[name];
  const marks = actions.filter((x) => x.witness).map((x) => {
    const vx = value(x.witness, c.mapX), vy = value(x.witness, c.mapY);
    if (vx === undefined || vy === undefined || !fx || !fy) return '';
    const left = 100 * (vx - fx.min) / (fx.max - fx.min);
    const top = 100 * (1 - (vy - fy.min) / (fy.max - fy.min));
    return `<span class="witness" data-testid="witness" data-action="${esc(x.action)}"
      title="${esc(x.action)} wins here" style="left:${left}%;top:${top}%">◆</span>`;
  }).join('');
  return `<div class="map-area"><div class="map-grid" style="grid-template-columns:repeat(${rows[0].length},1fr)">` +
    rows.map((r) => [...r].map((ch) =>
      `<i style="background:${cell(ch)}"></i>`).join('')).join('') +
    `</div>${marks}</div><p class="muted">${esc(c.mapX)} → across, ` +
    `${esc(c.mapY)} ↑ up, the other factors at mid-range</p>`;
}

// Sets "action.consideration.weight", "....range.min" or
// "....curve.kind.field" (the tuner's paths, snake_case) in a set's JSON
// (camelCase). A path naming no consideration changes nothing.
export function applyParam(set, path, value) {
  const camel = (w) => w.replace(/_([a-z])/g, (m, c) => c.toUpperCase());
  const [a, c, ...rest] = path.split('.');
  const act = (set.actions || []).find((x) => x.name === a);
  const con = act && (act.considerations || []).find((x) => x.name === c);
  if (!con) return;
  let at = con;
  for (const key of rest.slice(0, -1).map(camel)) at = at[key] = at[key] || {};
  at[camel(rest[rest.length - 1])] = value;
}

// The tuner's `unlock` for what may change (`what`: action_weights,
// weights, …) with the actions in `locked` kept fixed (their weights and
// considerations); null when every action is locked.
export function unlockSpec(what, actions, locked) {
  const free = actions.filter((a) => !locked.includes(a));
  if (free.length === 0) return null;
  return free.length === actions.length ? what : `${what}:${free.join(',')}`;
}

// One checkbox per action, to keep it fixed while tuning.
export function locksHtml(actions) {
  return actions.map((a) => `<label class="lock"><input type="checkbox" data-lock="${esc(a)}"> ${
    esc(a)}</label>`).join('');
}

// What the tuner's answer `r` says: the conflicts, nothing to change, or
// each change and each scenario's winner after it.
export function tuneText(r) {
  if (!r.feasible) {
    return 'No change makes every scenario pass:\n' + (r.conflicts || []).join('\n');
  }
  const changes = r.changes || [], params = r.params || [];
  if (changes.length === 0 && params.length === 0) {
    return 'Every scenario passes with its margin: nothing to change.';
  }
  return changes.map((c) => `${c.action}: weight ${fmt(c.from)} → ${fmt(c.to)}`)
    .concat(params.map((c) => `${c.path}: ${fmt(c.from)} → ${fmt(c.to)}`))
    .join('\n') + '\n' + (r.after || []).map((m) =>
    `${m.scenario}: ${m.winner} by ${fmt(m.margin || 0)}`).join('\n');
}

// `set` with the tuner's changes (action weights and parameters) applied.
export function tunedSet(set, r) {
  for (const c of r.changes || []) {
    const act = (set.actions || []).find((x) => x.name === c.action);
    if (act) act.weight = c.to;
  }
  for (const c of r.params || []) applyParam(set, c.path, c.to);
  return set;
}

// The panel. `set()` returns the page's set as the API takes it (a copy);
// `factors()` and `targetFactors()` the set's factor lists; `onWitness`
// loads a witness snapshot into the page; `compare(name, set)` shows a
// tuned set in the candidate view; `onApply(set)` makes a tuned set the
// page's working copy; `onScenario(index)` loads a scenario of the set and
// `onConsideration(action, consideration)` opens one in the editor (what
// findings load); `showError` reports a failed call.
export function createAnalysisView({
  $, api, set, factors, targetFactors, onWitness, compare, onApply, onScenario,
  onConsideration, onNode, nodeKinds, showError,
}) {
  let analysis = null;
  let tuned = null;  // the last tuning's set, until applied or replaced

  function render() {
    const a = analysis;
    const findings = a.findings || [];
    $('analysis-text').textContent = findingsSummary(findings);
    $('analysis-findings').innerHTML = findingsHtml(findings, set(), nodeKinds());
    const actions = a.actions || [];
    $('analysis-actions').hidden = actions.length === 0;
    $('analysis-actions').querySelector('tbody').innerHTML =
      analysisActionsHtml(actions);
    $('analysis-map').innerHTML =
      winnerMapHtml(a.coverage, actions, factors(), targetFactors());
  }

  // The axes' choices: every factor and target factor, the chosen kept.
  function factorsChanged() {
    const all = factors().map((f) => f.name)
      .concat(targetFactors().map((f) => 'target.' + f.name));
    for (const id of ['analysis-x', 'analysis-y']) {
      const keep = $(id).value;
      $(id).innerHTML = all.map((n) => `<option>${esc(n)}</option>`).join('');
      if (all.includes(keep)) $(id).value = keep;
    }
    if (all.length > 1 && $('analysis-x').value === $('analysis-y').value)
      $('analysis-y').value = all[1];
  }

  // A new set: its axes, and nothing analysed yet.
  function reset() {
    factorsChanged();
    $('analysis-locks').innerHTML = locksHtml((set().actions || []).map((a) => a.name));
    analysis = null;
    $('analysis-findings').innerHTML = $('analysis-map').innerHTML = '';
    $('analysis-text').textContent = '';
    $('analysis-actions').hidden = $('analysis-tune-out').hidden = true;
    tuned = null;
    $('analysis-apply').hidden = true;
  }

  async function run() {
    $('analysis-text').textContent = 'analysing…';
    try {
      const body = { behaviourSet: set() };
      const x = $('analysis-x').value, y = $('analysis-y').value;
      if (x && y && x !== y) {
        body.mapX = x;
        body.mapY = y;
      }
      analysis = await api('/api/v1/analysis', body);
      render();
    } catch (e) {
      // Nothing of an earlier analysis stays on show beside the error.
      analysis = null;
      $('analysis-findings').innerHTML = $('analysis-map').innerHTML = '';
      $('analysis-actions').hidden = true;
      $('analysis-text').textContent = String(e.message || e);
    }
  }

  async function tune() {
    const out = $('analysis-tune-out');
    out.hidden = false;
    out.textContent = 'tuning…';
    tuned = null;
    $('analysis-apply').hidden = true;
    try {
      const margin = Number($('analysis-margin').value);
      const locked = [...$('analysis-locks').querySelectorAll('input:checked')]
        .map((el) => el.dataset.lock);
      const unlock = unlockSpec($('analysis-unlock').value,
        (set().actions || []).map((a) => a.name), locked);
      if (!unlock) {
        out.textContent = 'Every action is kept fixed: the tuner may change nothing. ' +
          'Untick an action under "keep actions fixed".';
        return;
      }
      const r = await api('/api/v1/tune', {
        behaviourSet: set(), unlock,
        ...(margin >= 0 ? { margin } : {}) });
      out.textContent = tuneText(r);
      if (!r.feasible || ((r.changes || []).length === 0 &&
                          (r.params || []).length === 0)) return;
      // The change's churn on the live feed: the candidate view, with the
      // tuned set.
      tuned = tunedSet(set(), r);
      $('analysis-apply').hidden = false;
      await compare(tuned.name, tuned);
    } catch (e) {
      out.textContent = String(e.message || e);
    }
  }

  // The witness of the action named `name`, loaded into the page.
  function witnessOf(name) {
    const x = analysis && (analysis.actions || []).find((a) => a.action === name);
    if (x && x.witness) onWitness(x.witness).catch(showError);
  }

  function wire() {
    $('analysis-run').addEventListener('click', run);
    $('analysis-tune').addEventListener('click', tune);
    $('analysis-apply').addEventListener('click', () => {
      if (!tuned) return;
      onApply(tuned);
      tuned = null;
      $('analysis-apply').hidden = true;
    });
    $('analysis-findings').addEventListener('click', (e) => {
      const li = e.target.closest('.finding');
      if (!li || !analysis) return;
      const target = findingTarget(analysis.findings[Number(li.dataset.index)], set(), nodeKinds());
      if (!target) return;
      if (target.kind === 'witness') witnessOf(target.action);
      else if (target.kind === 'scenario') onScenario(target.index);
      else if (target.kind === 'node') onNode(target.index);
      else onConsideration(target.action, target.consideration);
    });
    $('analysis-actions').addEventListener('click', (e) => {
      const row = e.target.closest('.analysis-action');
      if (row && analysis) witnessOf(analysis.actions[Number(row.dataset.index)].action);
    });
    $('analysis-map').addEventListener('click', (e) => {
      const w = e.target.closest('.witness');
      if (w) witnessOf(w.dataset.action);
    });
  }

  return { reset, factorsChanged, run, tune, wire };
}
