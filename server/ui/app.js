// utilityd inspector. The page scores nothing itself: every number comes
// from the server's /api/v1 (the same engine as gRPC). Curves are drawn from
// the server's own breakdowns of a sweep of the factor across its range.
// An ES module; its pure parts and the candidate view are modules of their
// own (text.js, tree_view.js, yaml.js, candidate_view.js), unit-tested
// under Node.
import { createAnalysisView } from './analysis_view.js';
import { createCandidateView } from './candidate_view.js';
import { createFeedView } from './feed_view.js';
import { crossingText, sensitivityLine, sensitivityOf } from './sensitivity_view.js';
import { curveSvg } from './plot.js';
import { esc, fmt } from './text.js';
import { treeHtml, treeLeavesHtml, treeOutcomesHtml } from './tree_view.js';
import { yamlDocument } from './yaml.js';

const $ = (id) => document.getElementById(id);
const SWEEP_POINTS = 41;
// Curve kind (JSON name) -> its parameters [{name, type, default}], from the
// engine's registry (/api/v1/curves).
let CURVE_KINDS = {};
// The format's node kinds ({name, jsonName}) and compensations, from the
// server's schema (/api/v1/format).
let NODE_KINDS = [];
let COMPENSATIONS = [];
const COLORS = ['#3d7ab8', '#c0392b', '#1f8a4c', '#8e44ad', '#e0a100',
  '#16a085', '#d35400', '#2c3e50', '#7f8c8d', '#b03a82'];

const state = {
  sets: [],          // summaries
  summary: null,     // of the chosen set
  loaded: null,      // the set as the server has it (defaults applied)
  work: null,        // the working copy the what-if editor changes
  edited: false,
  snapshot: null,    // {factors: {name: v}, targets: [{id, factors}], ...}
  decision: null,    // last decision for the snapshot
  curves: {},        // "action/consideration" -> [[x, output], ...]
  editing: null,     // {action, consideration} being edited
  tree: null,        // sets with a tree: {prev, time, outcomes} of this tick
  token: sessionStorage.getItem('utilityd-token') || '',
};

// ---- server calls ---------------------------------------------------------

// body[data-busy] counts calls in flight (tests wait for 0).
let busy = 0;
function setBusy(delta) {
  busy += delta;
  document.body.dataset.busy = String(busy);
}

async function api(path, body) {
  setBusy(1);
  try {
    return await apiCall(path, body);
  } finally {
    setBusy(-1);
  }
}

async function apiCall(path, body) {
  const init = { headers: {} };
  if (state.token) init.headers.Authorization = 'Bearer ' + state.token;
  if (body !== undefined) {
    init.method = 'POST';
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (res.status === 401) {
    $('token-box').hidden = false;
    throw new Error('This server needs its admin token (--admin_token).');
  }
  const json = await res.json();
  if (!res.ok) throw new Error(json.message || res.statusText);
  return json;
}

function showError(e) {
  $('error').hidden = !e;
  $('error').textContent = e ? String(e.message || e) : '';
}

// Decides agents with the loaded set, or with the edited copy (what-if).
// `extra` adds request fields, e.g. {sensitivity: true}.
async function decide(agents, extra = {}) {
  if (state.edited) {
    const copy = JSON.parse(JSON.stringify(state.work));
    delete copy.revision;
    return api('/api/v1/whatif', {
      behaviourSet: copy,
      request: { agents: agents.map((a) => ({ ...a, behaviourSet: '' })),
                 explain: 'EXPLAIN_FULL', ...extra },
    });
  }
  return api('/api/v1/decide', { agents, explain: 'EXPLAIN_FULL', ...extra });
}

// ---- the snapshot -----------------------------------------------------------

function factorList() { return state.work.factors || []; }
function targetFactorList() { return state.work.targetFactors || []; }

function agentOf(snapshot, overrides = {}) {
  const factors = factorList().map((f) =>
    overrides.factor === f.name ? overrides.value : snapshot.factors[f.name]);
  const targets = snapshot.targets.map((t, i) => ({
    targetId: t.id,
    factors: targetFactorList().map((f) =>
      (i === 0 && overrides.targetFactor === f.name)
        ? overrides.value : t.factors[f.name]),
  }));
  const agent = {
    agentId: 'inspector', behaviourSet: state.work.name, factors, targets,
    currentAction: snapshot.currentAction || '',
    personality: snapshot.personality || '',
  };
  if (snapshot.secondsSinceAction)
    agent.secondsSinceAction = snapshot.secondsSinceAction;
  if (state.tree) {
    agent.treeState = state.tree.prev;
    agent.gameTime = state.tree.time;
    agent.leafOutcomes = Object.entries(state.tree.outcomes).map(
      ([leaf, status]) => ({ leaf: Number(leaf), status }));
  }
  return agent;
}

function defaultSnapshot() {
  const factors = {};
  for (const f of factorList()) factors[f.name] = (f.min + f.max) / 2;
  const targets = targetFactorList().length ? [{ id: 'target-1', factors: {} }] : [];
  for (const t of targets)
    for (const f of targetFactorList()) t.factors[f.name] = (f.min + f.max) / 2;
  return { factors, targets, currentAction: '', personality: '' };
}

function scenarioSnapshot(s) {
  const snap = defaultSnapshot();
  Object.assign(snap.factors, s.factors || {});
  snap.targets = (s.targets || []).map((t) => {
    const tf = {};
    for (const f of targetFactorList()) tf[f.name] = (f.min + f.max) / 2;
    return { id: t.id, factors: Object.assign(tf, t.factors || {}) };
  });
  snap.currentAction = s.currentAction || '';
  snap.personality = s.personality || '';
  snap.secondsSinceAction = s.secondsSinceAction;
  return snap;
}

// ---- loading a set ------------------------------------------------------------

async function loadSets() {
  const curves = await api('/api/v1/curves');
  CURVE_KINDS = Object.fromEntries(curves.kinds.map((k) => [k.name, k.params]));
  const format = await api('/api/v1/format');
  NODE_KINDS = format.nodeKinds;
  COMPENSATIONS = format.compensations;
  const list = await api('/api/v1/sets');
  state.sets = list.behaviourSets || [];
  $('set').innerHTML = state.sets.map((s) =>
    `<option value="${esc(s.name)}">${esc(s.name)}</option>`).join('');
  const wanted = new URLSearchParams(location.search).get('set');
  if (wanted && state.sets.some((s) => s.name === wanted)) $('set').value = wanted;
  await chooseSet($('set').value);
}

async function chooseSet(name, snapshot) {
  delete document.body.dataset.set;
  const got = await api('/api/v1/sets/' + encodeURIComponent(name));
  state.summary = got.summary;
  state.loaded = got.behaviourSet;
  state.work = JSON.parse(JSON.stringify(got.behaviourSet));
  // The last set's decision does not fit this set's actions: none until
  // this set's first decision (the curves may be drawn before it).
  state.decision = null;
  state.edited = false;
  state.editing = null;
  $('editor').hidden = true;
  state.tree = state.work.tree ? { prev: '', time: 0, outcomes: {} } : null;
  $('tree-box').hidden = !state.tree;
  $('set').value = name;
  $('set-info').textContent =
    `revision ${got.summary.revision} · loaded ${new Date(got.summary.loadedAt).toLocaleString()}`;
  const scenarios = state.work.scenarios || [];
  $('scenario').innerHTML = '<option value="">(free)</option>' + scenarios.map(
    (s, i) => `<option value="${i}">${esc(s.name)}</option>`).join('');
  state.snapshot = snapshot || (scenarios.length
    ? scenarioSnapshot(scenarios[0]) : defaultSnapshot());
  $('scenario').value = snapshot ? '' : (scenarios.length ? '0' : '');
  renderSetControls();
  renderInputs();
  analysisView.reset();
  await Promise.all([rescore(), refreshCurves()]);
  document.body.dataset.set = name;
  feed.refresh();
}

function renderSetControls() {
  const w = state.work;
  $('current-action').innerHTML = '<option value="">(none)</option>' +
    w.actions.map((a) => `<option>${esc(a.name)}</option>`).join('');
  $('personality').innerHTML = '<option value="">(none)</option>' +
    (w.personalities || []).map((p) => `<option>${esc(p.name)}</option>`).join('');
  $('compensation').innerHTML = COMPENSATIONS.map((c) =>
    `<option value="${c}">${c.replace('COMPENSATION_', '').toLowerCase()}</option>`).join('');
  $('compensation').value = (w.scoring || {}).compensation || 'COMPENSATION_NONE';
  $('commitment').value = (w.selection || {}).commitmentBonus || 0;
  $('sweep-factor').innerHTML = factorList().map((f) =>
    `<option value="a:${esc(f.name)}">${esc(f.name)}</option>`).join('') +
    targetFactorList().map((f) =>
      `<option value="t:${esc(f.name)}">target ${esc(f.name)}</option>`).join('');
  $('feed-action').innerHTML = '<option value="">any</option>' +
    w.actions.map((a) => `<option>${esc(a.name)}</option>`).join('');
  $('edited').hidden = !state.edited;
  $('revert').hidden = !state.edited;
}

function slider(f, value, attrs) {
  const step = (Math.abs(f.max - f.min) / 200) || 0.01;
  const lo = Math.min(f.min, f.max), hi = Math.max(f.min, f.max);
  return `<div class="slider"><div class="name"><span>${esc(f.name)}</span>
    <span><b class="value">${fmt(value)}</b> ${esc(f.unit || '')}</span></div>
    <input type="range" min="${lo}" max="${hi}" step="${step}" value="${value}"
      ${attrs} title="${esc(f.description || '')}">
    <div class="sens"></div></div>`;
}

function renderInputs() {
  const snap = state.snapshot;
  $('current-action').value = snap.currentAction || '';
  $('personality').value = snap.personality || '';
  const scen = (state.work.scenarios || [])[$('scenario').value];
  $('scenario-text').textContent = scen ? (scen.description || '') : '';
  $('factors').innerHTML = factorList().map((f) =>
    slider(f, snap.factors[f.name], `data-factor="${esc(f.name)}"`)).join('');
  $('targets').innerHTML = snap.targets.map((t, i) =>
    `<h3>Target ${esc(t.id)}</h3>` + targetFactorList().map((f) =>
      slider(f, t.factors[f.name],
        `data-target="${i}" data-target-factor="${esc(f.name)}"`)).join('')).join('');
}

// ---- scoring ------------------------------------------------------------------

let pending = null;
async function rescore() {
  const ticket = pending = {};
  try {
    const res = await decide([agentOf(state.snapshot)], { sensitivity: true });
    if (ticket !== pending) return;  // a newer change is on its way
    const d = res.decisions[0];
    if (d.error && d.error.message) throw new Error(d.error.message);
    state.decision = d;
    showError(null);
    if (state.tree) renderTree(d);
    renderActions();
    renderSensitivity(d);
    refreshSweep();
  } catch (e) { showError(e); }
}

// ---- what would change it ------------------------------------------------------

// Under each slider, what its factor would have to be for the decision to
// change (sensitivity_view.js says it).
function renderSensitivity(d) {
  const all = d && d.sensitivity;
  for (const el of document.querySelectorAll('.slider')) {
    const input = el.querySelector('input');
    const sens = el.querySelector('.sens');
    let s;
    if (input.dataset.factor !== undefined) {
      s = sensitivityOf(all, input.dataset.factor);
    } else {
      const target = state.snapshot.targets[Number(input.dataset.target)];
      s = target && sensitivityOf(all, input.dataset.targetFactor, target.id);
    }
    if (!s) { sens.textContent = ''; sens.title = ''; continue; }
    const line = sensitivityLine(s);
    sens.textContent = line.text;
    sens.title = line.title;
    sens.dataset.below = line.below;
    sens.dataset.above = line.above;
  }
}

// One batch per factor sweep: the agent with that factor stepped across its
// range, scored by the server with full breakdowns.
async function sweepAgents(kind, name) {
  const list = kind === 'a' ? factorList() : targetFactorList();
  const f = list.find((x) => x.name === name);
  const xs = [];
  for (let i = 0; i < SWEEP_POINTS; i++)
    xs.push(f.min + (f.max - f.min) * i / (SWEEP_POINTS - 1));
  const agents = xs.map((x) => agentOf(state.snapshot,
    kind === 'a' ? { factor: name, value: x } : { targetFactor: name, value: x }));
  const res = await decide(agents);
  return { f, xs, decisions: res.decisions };
}

async function refreshCurves() {
  const curves = {};
  try {
    const jobs = [];
    for (const f of factorList()) jobs.push(sweepAgents('a', f.name).then((r) => ['a', r]));
    if (state.snapshot.targets.length)
      for (const f of targetFactorList()) jobs.push(sweepAgents('t', f.name).then((r) => ['t', r]));
    for (const [kind, r] of await Promise.all(jobs)) {
      r.decisions.forEach((d, i) => {
        for (const a of (d.explanation || {}).actions || []) {
          const action = state.work.actions[a.actionIndex];
          for (const c of a.considerations || []) {
            const def = action.considerations.find((x) => x.name === c.consideration);
            if (!def || def.factor !== r.f.name || !!def.perTarget !== (kind === 't')) continue;
            const key = action.name + '/' + c.consideration;
            if (a.targetId && state.snapshot.targets.length &&
                a.targetId !== state.snapshot.targets[0].id) continue;
            (curves[key] = curves[key] || [])[i] = [r.xs[i], c.output];
          }
        }
      });
    }
  } catch (e) { showError(e); }
  state.curves = curves;
  renderActions();
}

// ---- the tree view ----------------------------------------------------------------

// The set's tree in this tick (tree_view.js draws it), its leaves and the
// outcomes to send with the next.
function renderTree(d) {
  $('tree').innerHTML = treeHtml(state.work.tree, d, NODE_KINDS);
  $('tree-time').textContent = `game time ${fmt(state.tree.time)} s`;
  $('tree-leaves').innerHTML = treeLeavesHtml(d);
  $('tree-outcomes').innerHTML = treeOutcomesHtml(d);
}

// Moves on: this tick's answer becomes the state, the chosen outcomes go
// with the next request, game time advances.
function tickTree() {
  const d = state.decision;
  if (!state.tree || !d) return;
  const outcomes = {};
  for (const el of document.querySelectorAll('#tree-outcomes select')) {
    if (el.value !== 'NODE_STATUS_RUNNING') outcomes[el.dataset.leaf] = el.value;
  }
  state.tree = { prev: d.treeState || '', time: state.tree.time + 0.5, outcomes };
  rescore();
}

// ---- drawing ------------------------------------------------------------------

function factorDef(def) {
  const list = def.perTarget ? targetFactorList() : factorList();
  return list.find((f) => f.name === def.factor) || { min: 0, max: 1 };
}

function renderActions() {
  const d = state.decision;
  if (!d) return;
  const ex = d.explanation || {};
  $('summary').textContent = ex.summary || '';
  const rows = (ex.actions || []).slice();
  const ranks = [...new Set(rows.map((a) => a.rank || 0))].sort((a, b) => b - a);
  let html = '';
  for (const rank of ranks) {
    html += `<div class="rank"><div class="rank-title">rank ${rank}${
      rank === (ex.rank || 0) ? ' (competing)' : ''}</div>`;
    for (const a of rows.filter((r) => (r.rank || 0) === rank)) {
      const action = state.work.actions[a.actionIndex];
      const label = a.targetId ? `${a.action} → ${a.targetId}` : a.action;
      const win = a.action === d.action && (a.targetId || '') === (d.targetId || '');
      const runner = a.action === ex.runnerUpAction &&
        (a.targetId || '') === (ex.runnerUpTarget || '');
      const cls = ['action', win ? 'winner' : '', a.vetoed ? 'vetoed' : ''].join(' ');
      html += `<div class="${cls}" data-action="${esc(a.action)}" data-target="${esc(a.targetId || '')}">
        <div class="head"><span class="title">${esc(label)}</span>
        <div class="bar"><div style="width:${(100 * Math.min(1, a.score)).toFixed(1)}%"></div></div>
        <span class="score">${a.score.toFixed(3)}</span>
        ${win ? `<span class="tag win">winner${!ex.runnerUpAction ? ''
          : ex.margin >= 0 ? ` by ${Number(ex.margin).toFixed(3)}`
          : ' (higher rank)'}</span>` : ''}
        ${runner ? '<span class="tag runner">runner-up</span>' : ''}
        ${a.vetoed ? `<span class="veto">vetoed by <span class="vetoed-by">${esc(a.vetoedBy)}</span></span>` : ''}
        </div><div class="muted">weight ${fmt(action.weight)} · aggregate ${fmt(a.aggregate)}
          · compensated ${fmt(a.compensated)}${a.commitmentFactor && a.commitmentFactor !== 1
          ? ` · commitment ×${fmt(a.commitmentFactor)}` : ''}
          <button class="edit-action" data-action="${esc(action.name)}">edit</button></div>
        <div class="cons">${(a.considerations || []).map((c) => {
          const def = action.considerations.find((x) => x.name === c.consideration) || {};
          const f = factorDef(def);
          const key = action.name + '/' + c.consideration;
          const vetoing = a.vetoed && a.vetoedBy === c.consideration;
          return `<div class="con${vetoing ? ' vetoing' : ''}" data-key="${esc(key)}"
            data-consideration="${esc(c.consideration)}">
            <div class="cname"><span>${esc(c.consideration)}</span>
            <span class="muted">${esc(def.factor || '')}</span></div>
            ${curveSvg(state.curves[key], c.raw, [f.min, f.max], 190, 56)}
            <div class="vals"><span>raw</span><span>${fmt(c.raw)} ${esc(f.unit || '')}</span>
            <span>normalised</span><span>${fmt(c.normalised)}</span>
            <span>curved</span><span>${fmt(c.curved)}</span>
            <span>output</span><span class="output">${fmt(c.output)}</span>
            <span>contribution</span><span class="contribution">${fmt(c.contribution)}</span></div>
            <button class="edit-con">edit curve</button></div>`;
        }).join('')}</div></div>`;
    }
    html += '</div>';
  }
  $('actions').innerHTML = html;
}

function openPlot(key, raw, def) {
  const f = factorDef(def);
  $('modal-body').innerHTML = `<h2>${esc(key)} <span class="muted">(${esc(def.factor)})</span></h2>` +
    curveSvg(state.curves[key], raw, [f.min, f.max], 640, 320) +
    `<p class="muted">Output of the consideration across ${esc(def.factor)}'s range
    (${fmt(f.min)}..${fmt(f.max)} ${esc(f.unit || '')}), as the server scores it;
    the line marks the current value. Click to close.</p>`;
  $('modal').hidden = false;
}

async function refreshSweep() {
  const choice = $('sweep-factor').value;
  if (!choice || !state.decision) return;
  const [kind, name] = [choice[0], choice.slice(2)];
  if (kind === 't' && !state.snapshot.targets.length) return;
  try {
    const r = await sweepAgents(kind, name);
    const w = 360, h = 200;
    const sx = (v) => 30 + (w - 40) * (v - r.f.min) / ((r.f.max - r.f.min) || 1);
    const sy = (v) => h - 20 - (h - 30) * Math.min(1, v);
    const names = state.work.actions.map((a) => a.name);
    const best = names.map(() => []);
    let winners = [];
    r.decisions.forEach((d, i) => {
      const top = {};
      for (const a of (d.explanation || {}).actions || []) {
        top[a.actionIndex] = Math.max(top[a.actionIndex] || 0, a.score);
      }
      names.forEach((_, k) => best[k].push([r.xs[i], top[k] || 0]));
      winners.push(d.action || '(none)');
    });
    let lines = '';
    best.forEach((pts, k) => {
      lines += `<path fill="none" stroke="${COLORS[k % COLORS.length]}" stroke-width="1.5"
        d="${pts.map((p, i) => `${i ? 'L' : 'M'}${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join('')}"/>`;
    });
    const changes = [];
    for (let i = 1; i < winners.length; i++) {
      if (winners[i] !== winners[i - 1]) {
        const x = (r.xs[i] + r.xs[i - 1]) / 2;
        changes.push(`${winners[i - 1]} → ${winners[i]} near ${fmt(x)}`);
        lines += `<line class="marker" x1="${sx(x)}" x2="${sx(x)}" y1="10" y2="${h - 20}" stroke-dasharray="3,3"/>`;
      }
    }
    const cur = kind === 'a' ? state.snapshot.factors[name]
      : state.snapshot.targets[0].factors[name];
    // The exact crossings nearest the current value (the sweep varies the
    // first target's factors).
    const all = state.decision && state.decision.sensitivity;
    const first = state.snapshot.targets[0];
    const sens = kind === 'a' ? sensitivityOf(all, name)
      : first && sensitivityOf(all, name, first.id);
    const near = [];
    for (const side of ['below', 'above']) {
      if (!sens || !sens[side]) continue;
      const x = sens[side].value || 0;
      near.push(crossingText(sens, side));
      lines += `<line class="crossing" data-side="${side}" data-value="${x}" x1="${sx(x)}" x2="${sx(x)}"
        y1="10" y2="${h - 20}"/>`;
    }
    $('sweep').innerHTML = `<svg width="${w}" height="${h}">
      <line class="axis" x1="30" x2="${w - 10}" y1="${h - 20}" y2="${h - 20}"/>
      <line class="axis" x1="30" x2="30" y1="10" y2="${h - 20}"/>
      <text x="26" y="${sy(1) + 4}" text-anchor="end">1</text>
      <text x="26" y="${sy(0)}" text-anchor="end">0</text>
      <text x="30" y="${h - 5}">${fmt(r.f.min)}</text>
      <text x="${w - 10}" y="${h - 5}" text-anchor="end">${fmt(r.f.max)} ${esc(r.f.unit || '')}</text>
      ${lines}<circle class="dot" cx="${sx(cur)}" cy="${h - 20}" r="4"/></svg>
      <div class="legend">${names.map((n, k) =>
        `<span style="color:${COLORS[k % COLORS.length]}">■ ${esc(n)}</span>`).join('')}</div>`;
    $('sweep-text').textContent = (changes.length
      ? 'Winner changes: ' + changes.join('; ')
      : `${winners[0]} wins across the whole range`) + '.' +
      (near.length ? ` Nearest change (exact): ${near.join('; ')}.` : '');
  } catch (e) { showError(e); }
}

// ---- the what-if editor -----------------------------------------------------------

function markEdited() {
  state.edited = true;
  $('edited').hidden = false;
  $('revert').hidden = false;
  rescore();
  refreshCurves();
}

function numberField(label, value, onchange, placeholder = 'default') {
  const id = 'f' + Math.random().toString(36).slice(2);
  setTimeout(() => {
    const el = $(id);
    if (el) el.addEventListener('change', () => onchange(el.value === '' ? undefined : Number(el.value)));
  });
  return `<label>${esc(label)} <input id="${id}" type="number" step="any"
    data-field="${esc(label)}" value="${value === undefined ? '' : value}" placeholder="${placeholder}"></label>`;
}

function openEditor(actionName, conName) {
  state.editing = { action: actionName, consideration: conName };
  const action = state.work.actions.find((a) => a.name === actionName);
  const con = conName && action.considerations.find((c) => c.name === conName);
  $('editor').hidden = false;
  $('editor-title').textContent = con ? `${actionName} / ${conName}` : actionName;
  let html = numberField('action weight', action.weight, (v) => {
    action.weight = v; markEdited();
  });
  if (con) {
    con.curve = con.curve || {};
    const kind = Object.keys(CURVE_KINDS).find((k) => con.curve[k]) || 'linear';
    html += `<label>curve <select id="curve-kind" data-field="curve">${Object.keys(CURVE_KINDS).map((k) =>
      `<option ${k === kind ? 'selected' : ''}>${k}</option>`).join('')}</select></label>`;
    const params = con.curve[kind] || {};
    for (const p of CURVE_KINDS[kind]) {
      if (p.type === 'flag') {
        html += `<label>${esc(p.name)} <input class="curve-flag" data-param="${esc(p.name)}" type="checkbox" ${
          params[p.name] ? 'checked' : ''}></label>`;
      } else if (p.type === 'points') {
        html += `<label>${esc(p.name)} (x,y; x,y …)</label><textarea class="curve-points" data-param="${
          esc(p.name)}" rows="2">${
          (params[p.name] || []).map((q) => `${q.x || 0},${q.y || 0}`).join('; ')}</textarea>`;
      } else {
        html += numberField(p.name, params[p.name], (v) => {
          con.curve[kind] = con.curve[kind] || {};
          if (v === undefined) delete con.curve[kind][p.name]; else con.curve[kind][p.name] = v;
          markEdited();
        }, `default ${p.default}`);
      }
    }
    html += `<label>invert <input id="curve-invert" type="checkbox" ${con.curve.invert ? 'checked' : ''}></label>`;
    con.range = con.range || {};
    con.output = con.output || {};
    html += numberField('range min', con.range.min, (v) => { con.range.min = v; markEdited(); });
    html += numberField('range max', con.range.max, (v) => { con.range.max = v; markEdited(); });
    html += numberField('output floor (min)', con.output.min, (v) => { con.output.min = v; markEdited(); });
    html += numberField('output max', con.output.max, (v) => { con.output.max = v; markEdited(); });
    html += numberField('consideration weight', con.weight, (v) => { con.weight = v; markEdited(); });
  }
  $('editor-fields').innerHTML = html;
  if (!con) return;
  $('curve-kind').addEventListener('change', (e) => {
    const invert = con.curve.invert;
    con.curve = { [e.target.value]: {} };
    if (invert) con.curve.invert = true;
    markEdited();
    openEditor(actionName, conName);
  });
  $('curve-invert').addEventListener('change', (e) => { con.curve.invert = e.target.checked; markEdited(); });
  const kind = Object.keys(CURVE_KINDS).find((k) => con.curve[k]) || 'linear';
  for (const el of document.querySelectorAll('#editor-fields .curve-flag')) {
    el.addEventListener('change', (e) => {
      con.curve[kind] = con.curve[kind] || {};
      con.curve[kind][el.dataset.param] = e.target.checked;
      markEdited();
    });
  }
  for (const el of document.querySelectorAll('#editor-fields .curve-points')) {
    el.addEventListener('change', (e) => {
      con.curve[kind] = con.curve[kind] || {};
      con.curve[kind][el.dataset.param] = e.target.value.split(';').filter((s) => s.trim()).map((s) => {
        const [x, y] = s.split(',').map(Number);
        return { x, y };
      });
      markEdited();
    });
  }
}

// ---- export -------------------------------------------------------------------


function exportYaml() {
  const text = yamlDocument(state.work, state.edited);
  const blob = new Blob([text], { type: 'application/yaml' });
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = state.work.name + '.yaml';
  document.body.appendChild(a);
  a.click();
  a.remove();
}

// ---- live feed: feed_view.js -------------------------------------------------

// A feed entry loaded as the page's agent (its set chosen first).
async function loadFeedRow(e) {
  const snapshotFor = () => {
    const snap = defaultSnapshot();
    Object.assign(snap.factors, e.factors || {});
    snap.currentAction = e.currentAction || '';
    return snap;
  };
  if (!state.work || e.behaviourSet !== state.work.name) {
    await chooseSet(e.behaviourSet);
  }
  state.snapshot = snapshotFor();
  $('scenario').value = '';
  renderInputs();
  rescore();
}

const feed = createFeedView({
  $, api, currentSet: () => (state.work ? state.work.name : ''),
  onRow: loadFeedRow, showError,
});

// ---- analysis: analysis_view.js ------------------------------------------------

// The page's set (its edits included) as the API takes it.
function editedCopy() {
  const copy = JSON.parse(JSON.stringify(state.work));
  delete copy.revision;
  return copy;
}

// A witness (a snapshot the analysis found) loaded as the page's agent.
async function loadWitness(witness) {
  state.snapshot = scenarioSnapshot(witness);
  $('scenario').value = '';
  renderInputs();
  rescore();
}

const analysisView = createAnalysisView({
  $, api, set: editedCopy, factors: factorList, targetFactors: targetFactorList,
  onWitness: loadWitness, compare: (name, set) => candidate.compare(name, set),
  showError,
});

// ---- candidate view: candidate_view.js -----------------------------------------

const candidate = createCandidateView({ $, api });

// The page's edits as a candidate (the shadow set when `useEdits` is false).
function compareCandidate(useEdits) {
  return candidate.compare(state.work.name, useEdits ? editedCopy() : undefined);
}

// ---- wiring --------------------------------------------------------------------


function wire() {
  $('set').addEventListener('change', (e) => chooseSet(e.target.value).catch(showError));
  $('scenario').addEventListener('change', (e) => {
    const s = (state.work.scenarios || [])[e.target.value];
    if (s) state.snapshot = scenarioSnapshot(s);
    if (state.tree) state.tree = { prev: '', time: 0, outcomes: {} };
    renderInputs();
    rescore();
  });
  $('current-action').addEventListener('change', (e) => {
    state.snapshot.currentAction = e.target.value; rescore();
  });
  $('personality').addEventListener('change', (e) => {
    state.snapshot.personality = e.target.value; rescore();
  });
  $('commitment').addEventListener('change', (e) => {
    state.work.selection = state.work.selection || {};
    state.work.selection.commitmentBonus = Number(e.target.value);
    markEdited();
  });
  $('compensation').addEventListener('change', (e) => {
    state.work.scoring = state.work.scoring || {};
    state.work.scoring.compensation = e.target.value;
    markEdited();
  });
  document.body.addEventListener('input', (e) => {
    const t = e.target;
    if (t.dataset.factor !== undefined) {
      state.snapshot.factors[t.dataset.factor] = Number(t.value);
    } else if (t.dataset.targetFactor !== undefined) {
      state.snapshot.targets[Number(t.dataset.target)].factors[t.dataset.targetFactor] = Number(t.value);
    } else return;
    t.closest('.slider').querySelector('.value').textContent = fmt(Number(t.value));
    rescore();
  });
  $('actions').addEventListener('click', (e) => {
    const act = e.target.closest('.action');
    if (e.target.classList.contains('edit-action')) {
      openEditor(e.target.dataset.action, null);
      return;
    }
    const con = e.target.closest('.con');
    if (!con || !act) return;
    const action = state.work.actions.find((a) => a.name === act.dataset.action);
    const name = con.dataset.consideration;
    if (e.target.classList.contains('edit-con')) {
      openEditor(action.name, name);
      return;
    }
    const def = action.considerations.find((c) => c.name === name);
    const vals = (state.decision.explanation.actions.find((a) => a.action === action.name) || {}).considerations || [];
    const c = vals.find((x) => x.consideration === name) || {};
    openPlot(con.dataset.key, c.raw, def);
  });
  $('modal').addEventListener('click', () => { $('modal').hidden = true; });
  $('tree-tick').addEventListener('click', tickTree);
  $('tree-restart').addEventListener('click', () => {
    state.tree = { prev: '', time: 0, outcomes: {} };
    rescore();
  });
  $('revert').addEventListener('click', () => chooseSet(state.work.name, state.snapshot).catch(showError));
  $('export').addEventListener('click', exportYaml);
  $('sweep-factor').addEventListener('change', refreshSweep);
  feed.wire();
  analysisView.wire();
  $('candidate-shadow').addEventListener('click', () => compareCandidate(false));
  $('candidate-edits').addEventListener('click', () => compareCandidate(true));
  $('candidate-flips').addEventListener('click', (e) => {
    const row = e.target.closest('.flip-row');
    if (row) candidate.openFlip(Number(row.dataset.index));
  });
  $('token-save').addEventListener('click', () => {
    state.token = $('token').value;
    sessionStorage.setItem('utilityd-token', state.token);
    $('token-box').hidden = true;
    loadSets().catch(showError);
  });
  setInterval(feed.refresh, 2000);
}

// What the browser test (tests/browser/inspector_test.mjs) reads of the
// page: a module's names are not globals.
window.inspector = { state, agentOf };

wire();
loadSets().catch(showError);
