// utilityd inspector. The page scores nothing itself: every number comes
// from the server's /api/v1 (the same engine as gRPC). Curves are drawn from
// the server's own breakdowns of a sweep of the factor across its range.
// This module holds the page's state and wires the panels together; each
// panel and each pure piece is a module of its own (see server/README.md),
// unit-tested under Node (tests/ui/modules_test.mjs).
import { actionsHtml, duelHtml } from './actions_view.js';
import { createAnalysisView } from './analysis_view.js';
import { createApi } from './api.js';
import { diffHunks, diffSummary, lineDiff } from './diff.js';
import { createCandidateView } from './candidate_view.js';
import { createEditorView } from './editor_view.js';
import { createFeedView } from './feed_view.js';
import { curveSvg } from './plot.js';
import { originOf, provenanceText } from './provenance.js';
import { sensitivityLine, sensitivityOf } from './sensitivity_view.js';
import {
  agentOf as snapshotAgent, carriedSnapshot, defaultSnapshot, factorOf, factorsOf, kindOf,
  loggedSnapshot, newTarget, scenarioSnapshot, targetFactorsOf,
} from './snapshot.js';
import { factorInputHtml, inputValue, targetsHtml } from './inputs_view.js';
import { revisionChange, staleText } from './revision.js';
import { addSweepCurves, sweepChart, sweepXs } from './sweep_view.js';
import { esc, fmt, namePaths } from './text.js';
import {
  scenarioTick, stepMisses, tickLogEntry, tickLogHtml, treeHtml, treeLeavesHtml, treeNodes,
  treeOutcomesHtml,
} from './tree_view.js';

const $ = (id) => document.getElementById(id);

const state = {
  // What the server's engine knows: curve kind (JSON name) -> {formatName,
  // params: [{name, formatName, type, default}]} (/api/v1/curves); the format's node
  // kinds ({name, jsonName}) and compensations (/api/v1/format).
  format: { curveKinds: {}, nodeKinds: [], compensations: [] },
  sets: [],          // summaries
  summary: null,     // of the chosen set
  loaded: null,      // the set as the server has it (defaults applied)
  work: null,        // the working copy the what-if editor changes
  edited: false,
  snapshot: null,    // {factors: {name: v}, targets: [{id, factors}], ...}
  decision: null,    // last decision for the snapshot
  scoring: null,     // the newest scoring call's ticket (older answers are dropped)
  sweeping: null,    // the same for the sweep chart
  curving: null,     // and for the cards' curves
  curves: {},        // "action/consideration" -> [[x, output], ...]
  tree: null,        // sets with a tree: {prev, time, outcomes} of this tick
  exported: null,    // the last export: {fileName, original, text}
  token: sessionStorage.getItem('utilityd-token') || '',
};

const api = createApi({
  fetchFn: (path, init) => fetch(path, init),
  token: () => state.token,
  onUnauthorized: () => { $('token-box').hidden = false; },
  onBusy: (n) => { document.body.dataset.busy = String(n); },
});

// Shows what went wrong (with the set's items named, not numbered), or
// clears it.
function showError(e) {
  $('error').hidden = !e;
  $('error').textContent = e ? namePaths(state.work, e.message || e) : '';
}

// The page's set (its edits included) as the API takes it.
function editedCopy() {
  const copy = JSON.parse(JSON.stringify(state.work));
  delete copy.revision;
  return copy;
}

// Decides agents with the loaded set, or with the edited copy (what-if).
// `extra` adds request fields, e.g. {sensitivity: true}.
async function decide(agents, extra = {}) {
  if (state.edited) {
    return api('/api/v1/whatif', {
      behaviourSet: editedCopy(),
      request: { agents: agents.map((a) => ({ ...a, behaviourSet: '' })),
                 explain: 'EXPLAIN_FULL', ...extra },
    });
  }
  return api('/api/v1/decide', { agents, explain: 'EXPLAIN_FULL', ...extra });
}

// ---- the snapshot: snapshot.js ---------------------------------------------

const factorList = () => factorsOf(state.work);
const targetFactorList = () => targetFactorsOf(state.work);
const agentOf = (snapshot, overrides) =>
  snapshotAgent(state.work, snapshot, state.tree, overrides);

// ---- loading a set ------------------------------------------------------------

async function loadSets() {
  const curves = await api('/api/v1/curves');
  const format = await api('/api/v1/format');
  state.format = {
    curveKinds: Object.fromEntries(curves.kinds.map((k) => [k.name, k])),
    nodeKinds: format.nodeKinds,
    compensations: format.compensations,
  };
  const list = await api('/api/v1/sets');
  state.sets = list.behaviourSets || [];
  $('set').innerHTML = state.sets.map((s) =>
    `<option value="${esc(s.name)}">${esc(s.name)}</option>`).join('');
  const wanted = new URLSearchParams(location.search).get('set');
  if (wanted && state.sets.some((s) => s.name === wanted)) $('set').value = wanted;
  await chooseSet($('set').value);
}

// Loads set `name` as the server has it now. `snapshot` (of this set,
// perhaps of an older revision) is kept where it still fits; without one
// the set's first scenario, or every factor mid-range, is the agent.
async function chooseSet(name, snapshot) {
  delete document.body.dataset.set;
  const got = await api('/api/v1/sets/' + encodeURIComponent(name));
  state.summary = got.summary;
  state.loaded = got.behaviourSet;
  // A composed set: the packages, to say what an edit to one reaches.
  state.packages = (got.behaviourSet.origins || []).length
    ? (await api('/api/v1/packages')).packages || [] : [];
  state.work = JSON.parse(JSON.stringify(got.behaviourSet));
  // The last set's decision does not fit this set's actions: none until
  // this set's first decision (the curves may be drawn before it).
  state.decision = null;
  state.edited = false;
  showStale('');
  editor.close();
  state.tree = state.work.tree ? freshTree() : null;
  $('tree-box').hidden = !state.tree;
  $('set').value = name;
  $('set-info').textContent =
    `revision ${got.summary.revision} · loaded ${new Date(got.summary.loadedAt).toLocaleString()}`;
  const scenarios = state.work.scenarios || [];
  $('scenario').innerHTML = '<option value="">(free)</option>' + scenarios.map(
    (s, i) => `<option value="${i}">${esc(s.name)}</option>`).join('');
  state.snapshot = snapshot ? carriedSnapshot(state.work, snapshot) : (scenarios.length
    ? scenarioSnapshot(state.work, scenarios[0]) : defaultSnapshot(state.work));
  $('scenario').value = snapshot ? '' : (scenarios.length ? '0' : '');
  renderSetControls();
  renderInputs();
  analysisView.reset();
  await Promise.all([rescore(), refreshCurves()]);
  document.body.dataset.set = name;
  feed.refresh();
}

// ---- following the server's reloads: revision.js ----------------------------

// Says why the page's copy is behind the server's (and refuses Export), or
// clears that ('').
const EXPORT_TITLE = $('export').title;
function showStale(text) {
  $('stale').hidden = !text;
  $('stale').textContent = text;
  $('export').disabled = !!text;
  $('export').title = text || EXPORT_TITLE;
}

// Polled with the feed: a new revision of the page's set is loaded when the
// page has no edits (the agent kept), and refused for export over edits.
// One poll at a time: under load a poll can outlast the 2 s between them,
// and two that both saw the new revision would load it twice — the second
// load closing an editor opened after the first.
let following = false;
async function followRevision() {
  if (following || !state.work || !document.body.dataset.set) return;  // a load is under way
  following = true;
  try {
    const name = state.work.name, shown = state.summary.revision;
    const list = await api('/api/v1/sets');
    if (!state.work || state.work.name !== name || state.summary.revision !== shown) return;
    state.sets = list.behaviourSets || [];
    const change = revisionChange(state.sets, name, shown, state.edited);
    if (change.kind === 'reload') await chooseSet(name, state.snapshot);
    else showStale(change.kind === 'same' ? '' : staleText(change, name, shown));
  } finally {
    following = false;
  }
}

function renderSetControls() {
  const w = state.work;
  $('current-action').innerHTML = '<option value="">(none)</option>' +
    w.actions.map((a) => `<option>${esc(a.name)}</option>`).join('');
  $('personality').innerHTML = '<option value="">(none)</option>' +
    (w.personalities || []).map((p) => `<option>${esc(p.name)}</option>`).join('');
  $('compensation').innerHTML = state.format.compensations.map((c) =>
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

function renderInputs() {
  const snap = state.snapshot;
  $('current-action').value = snap.currentAction || '';
  $('personality').value = snap.personality || '';
  const scen = (state.work.scenarios || [])[$('scenario').value];
  $('scenario-text').textContent = scen ? (scen.description || '') : '';
  $('factors').innerHTML = factorList().map((f) =>
    factorInputHtml(f, snap.factors[f.name], { factor: f.name })).join('');
  $('targets').innerHTML = targetsHtml(snap.targets, targetFactorList());
}

// Loads `snapshot` as the page's agent (a scenario left unchosen).
function loadSnapshot(snapshot) {
  state.snapshot = snapshot;
  $('scenario').value = '';
  renderInputs();
  rescore();
}

// ---- scoring ------------------------------------------------------------------

async function rescore() {
  const ticket = state.scoring = {};
  try {
    const res = await decide([agentOf(state.snapshot)], { sensitivity: true });
    if (ticket !== state.scoring) return;  // a newer change is on its way
    const d = res.decisions[0];
    if (d.error && d.error.message) throw new Error(d.error.message);
    state.decision = d;
    showError(null);
    $('actions').classList.remove('stale');
    $('actions').title = '';
    if (state.tree) renderTree(d);
    renderActions();
    renderSensitivity(d);
    refreshSweep();
  } catch (e) {
    // The scores on show are from before the change that failed: say so
    // rather than leave them looking current.
    if (ticket !== state.scoring) return;
    showError(e);
    $('actions').classList.add('stale');
    $('actions').title = 'These scores are from before the change that failed (see the error above).';
  }
}

function renderActions() {
  if (!state.decision) return;
  $('summary').textContent = (state.decision.explanation || {}).summary || '';
  $('duel').innerHTML = duelHtml(state.decision, state.work);
  $('actions').innerHTML = actionsHtml(state.work, state.decision, state.curves);
}

// Under each slider, what its factor would have to be for the decision to
// change (sensitivity_view.js says it).
function renderSensitivity(d) {
  const all = d && d.sensitivity;
  for (const el of document.querySelectorAll('.slider')) {
    const input = el.querySelector('input[data-factor], input[data-target-factor]');
    const sens = el.querySelector('.sens');
    let s, f;
    if (input.dataset.factor !== undefined) {
      s = sensitivityOf(all, input.dataset.factor);
      f = factorList().find((x) => x.name === input.dataset.factor);
    } else {
      const target = state.snapshot.targets[Number(input.dataset.target)];
      s = target && sensitivityOf(all, input.dataset.targetFactor, target.id);
      f = targetFactorList().find((x) => x.name === input.dataset.targetFactor);
    }
    if (!s) { sens.textContent = ''; sens.title = ''; continue; }
    const line = sensitivityLine(s, kindOf(f));
    sens.textContent = line.text;
    sens.title = line.title;
    sens.dataset.below = line.below;
    sens.dataset.above = line.above;
  }
}

// ---- sweeps: sweep_view.js ----------------------------------------------------

// One batch per factor sweep: the agent with that factor ('a') or its first
// target's ('t') stepped across its range, scored with full breakdowns.
async function sweep(kind, name) {
  const f = (kind === 'a' ? factorList() : targetFactorList()).find((x) => x.name === name);
  const xs = sweepXs(f);
  const agents = xs.map((x) => agentOf(state.snapshot,
    kind === 'a' ? { factor: name, value: x } : { targetFactor: name, value: x }));
  const res = await decide(agents);
  return { kind, f, xs, decisions: res.decisions };
}

// Every consideration's curve, from a sweep of each factor.
// Like rescore, each keeps a ticket and drops an answer a newer call has
// superseded: a slow sweep of the agent before a scenario was chosen must
// not draw over the sweep of the agent after.
async function refreshCurves() {
  const ticket = state.curving = {};
  const curves = {};
  const first = state.snapshot.targets.length ? state.snapshot.targets[0].id : '';
  try {
    const jobs = factorList().map((f) => sweep('a', f.name));
    if (first) jobs.push(...targetFactorList().map((f) => sweep('t', f.name)));
    const results = await Promise.all(jobs);
    if (ticket !== state.curving) return;
    for (const r of results) addSweepCurves(curves, state.work, r, first);
  } catch (e) {
    if (ticket === state.curving) showError(e);  // the curves on show stay, like the scores
    return;
  }
  state.curves = curves;
  renderActions();
}

// The chosen factor's sweep of every action, with the exact crossings
// nearest the current value (the sweep varies the first target's factors).
async function refreshSweep() {
  const choice = $('sweep-factor').value;
  if (!choice || !state.decision) return;
  const [kind, name] = [choice[0], choice.slice(2)];
  const first = state.snapshot.targets[0];
  if (kind === 't' && !first) return;
  const ticket = state.sweeping = {};
  try {
    const r = await sweep(kind, name);
    if (ticket !== state.sweeping) return;
    const all = state.decision && state.decision.sensitivity;
    const chart = sweepChart(r, state.work.actions.map((a) => a.name),
      kind === 'a' ? state.snapshot.factors[name] : first.factors[name],
      kind === 'a' ? sensitivityOf(all, name) : sensitivityOf(all, name, first.id));
    $('sweep').innerHTML = chart.html;
    $('sweep-text').textContent = chart.text;
  } catch (e) {
    if (ticket === state.sweeping) showError(e);
  }
}

function openPlot(key, raw, def) {
  const f = factorOf(state.work, def);
  $('modal-body').innerHTML = `<h2>${esc(key)} <span class="muted">(${esc(def.factor)})</span></h2>` +
    curveSvg(state.curves[key], raw, [f.min, f.max], 640, 320) +
    `<p class="muted">Output of the consideration across ${esc(def.factor)}'s range
    (${fmt(f.min)}..${fmt(f.max)} ${esc(f.unit || '')}), as the server scores it;
    the line marks the current value. Click or press Esc to close.</p>`;
  $('modal').hidden = false;
}

// ---- the tree view: tree_view.js ------------------------------------------------

// The set's tree in this tick, its leaves and the outcomes to send with the
// next.
function renderTree(d) {
  const play = state.tree.play;
  $('tree').innerHTML = treeHtml(state.work.tree, d, state.format.nodeKinds);
  $('tree-time').textContent = `game time ${fmt(state.tree.time)} s`;
  $('tree-leaves').innerHTML = treeLeavesHtml(d);
  $('tree-outcomes').innerHTML = play ? '' : treeOutcomesHtml(d);
  $('tree-log-box').innerHTML = tickLogHtml(state.tree.log || []);
  $('tree-play').hidden = !play;
  $('tree-step').textContent = !play ? ''
    : play.done ? `scenario played: ${play.steps.length} ticks`
      : `scenario tick ${play.next + 1} of ${play.steps.length}`;
  $('tree-tick').disabled = !!(play && play.done);
}

// A tree with no state yet; `steps`: a tree scenario's ticks, to play.
function freshTree(steps) {
  return { prev: '', time: 0, outcomes: {}, log: [],
    play: steps && steps.length ? { steps, next: 0, done: false } : null };
}

// Scenario tick `k` after the tick `d` sent on: its factors, game time,
// the tree's state and its leaves' outcomes.
function applyStep(k, d) {
  const t = scenarioTick(treeNodes(state.work.tree, state.format.nodeKinds), state.tree.play.steps[k], d);
  Object.assign(state.snapshot.factors, t.factors);
  Object.assign(state.tree, { prev: t.prev, time: t.time, outcomes: t.outcomes });
  state.tree.play.next = k;
  renderInputs();
}

// Moves on: this tick goes into the log (checked against the scenario's
// expectations when one is playing) and its answer becomes the state; the
// next tick is the scenario's, or the outcomes chosen here half a second
// later.
function tickTree() {
  const d = state.decision;
  if (!state.tree || !d) return;
  const play = state.tree.play;
  if (play && play.done) return;
  const entry = tickLogEntry(treeNodes(state.work.tree, state.format.nodeKinds), d, state.tree.time);
  if (play) entry.misses = stepMisses(play.steps[play.next], entry);
  state.tree.log = [...(state.tree.log || []), entry];
  if (play && play.next + 1 < play.steps.length) {
    applyStep(play.next + 1, d);
  } else if (play) {
    play.done = true;
    stopPlaying();
    renderTree(d);
    return;
  } else {
    const outcomes = {};
    for (const el of document.querySelectorAll('#tree-outcomes select')) {
      if (el.value !== 'NODE_STATUS_RUNNING') outcomes[el.dataset.leaf] = el.value;
    }
    Object.assign(state.tree, { prev: d.treeState || '', time: state.tree.time + 0.5, outcomes });
  }
  rescore();
}

// Plays the scenario's ticks one after another, each once its answer is in.
let playing = null;
function startPlaying() {
  $('tree-play').textContent = 'Pause';
  playing = setInterval(() => {
    if (document.body.dataset.busy === '0') tickTree();
  }, 600);
}
function stopPlaying() {
  clearInterval(playing);
  playing = null;
  $('tree-play').textContent = 'Play scenario';
}

// ---- the what-if editor: editor_view.js -----------------------------------------

function markEdited() {
  state.edited = true;
  $('edited').hidden = false;
  $('revert').hidden = false;
  rescore();
  refreshCurves();
}

// A consideration's factor for the curve editor: its unit, and the agent's
// value (the first target's for a per-target factor).
function editedFactor(con) {
  const values = con.perTarget ? (state.snapshot.targets[0] || {}).factors || {} : state.snapshot.factors;
  return { unit: factorOf(state.work, con).unit || '', value: values[con.factor] };
}

const editor = createEditorView({
  $, set: () => state.work, kinds: () => state.format.curveKinds, onEdit: markEdited,
  onDrag: () => {
    state.edited = true;
    rescore();
  },
  fetchCurve: (set, action, consideration) => api(`/api/v1/curve?action=${encodeURIComponent(action)}` +
    `&consideration=${encodeURIComponent(consideration)}`, set),
  original: () => state.loaded,
  factorOf: editedFactor,
  provenance: (action) =>
    provenanceText(originOf(state.loaded, `actions.${action}`), state.packages),
});

// Export: the server writes the page's edits into the set's own file, and
// refuses when that file moved on since the page loaded it
// (POST /api/v1/sets/{name}/export); the diff is shown before the download.
async function exportSet() {
  const name = state.work.name;
  const answer = await api(`/api/v1/sets/${encodeURIComponent(name)}/export?base=` +
    encodeURIComponent(state.summary.revision), state.work);
  const lines = lineDiff(answer.original, answer.text);
  state.exported = answer;
  $('export-file').textContent = answer.fileName;
  $('export-summary').textContent = diffSummary(lines);
  $('export-diff').replaceChildren(...diffHunks(lines).map((l) => {
    const row = document.createElement('span');
    row.className = { '+': 'added', '-': 'removed', '…': 'gap' }[l.kind] || '';
    const number = l.kind === '+' ? l.newLine : l.oldLine;
    row.textContent = l.kind === '…' ? '…\n'
      : `${String(number || '').padStart(4)} ${l.kind} ${l.text}\n`;
    return row;
  }));
  $('export-download').disabled = answer.text === answer.original;
  $('export-view').showModal();
}

function downloadExport() {
  const { fileName, text } = state.exported;
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type: 'application/yaml' }));
  a.download = fileName;
  document.body.appendChild(a);
  a.click();
  a.remove();
}

// ---- live feed, analysis and candidates: their views -----------------------------

// A feed entry loaded as the page's agent, exactly as the game sent it (its
// set chosen first).
async function loadFeedRow(e) {
  if (!state.work || e.behaviourSet !== state.work.name) await chooseSet(e.behaviourSet);
  const { snapshot, tree } = loggedSnapshot(state.work, e);
  state.tree = tree;
  loadSnapshot(snapshot);
}

const feed = createFeedView({
  $, api, currentSet: () => (state.work ? state.work.name : ''),
  onRow: loadFeedRow, showError,
});

const analysisView = createAnalysisView({
  $, api, set: editedCopy, factors: factorList, targetFactors: targetFactorList,
  // A witness (a snapshot the analysis found) loads as the page's agent.
  onWitness: async (w) => loadSnapshot(scenarioSnapshot(state.work, w)),
  compare: (name, set) => candidate.compare(name, set),
  // The tuner's change becomes the page's what-if edit (the revision it was
  // tuned over kept, so a reload since then is still caught).
  onApply: (tuned) => {
    state.work = { ...tuned, revision: state.work.revision };
    renderSetControls();
    markEdited();
  },
  onScenario: (index) => {
    $('scenario').value = String(index);
    $('scenario').dispatchEvent(new Event('change'));
  },
  // A tree node: shown in the tree view, marked for a moment.
  onNode: (index) => {
    const node = document.querySelector(`#tree .node[data-node="${index}"]`);
    if (!node) return;
    node.scrollIntoView({ block: 'center' });
    node.classList.add('found');
    setTimeout(() => node.classList.remove('found'), 2500);
  },
  nodeKinds: () => state.format.nodeKinds,
  onConsideration: (action, consideration) => {
    editor.open(action, consideration);
    const card = document.querySelector(
      `.action[data-action="${CSS.escape(action)}"] .con[data-consideration="${CSS.escape(consideration)}"]`);
    if (card) card.scrollIntoView({ block: 'center' });
  },
  showError,
});

const candidate = createCandidateView({ $, api });

// The page's edits as a candidate (the shadow set when `useEdits` is false).
function compareCandidate(useEdits) {
  return candidate.compare(state.work.name, useEdits ? editedCopy() : undefined);
}

// ---- wiring --------------------------------------------------------------------

function wireSnapshot() {
  $('scenario').addEventListener('change', (e) => {
    const s = (state.work.scenarios || [])[e.target.value];
    if (s) state.snapshot = scenarioSnapshot(state.work, s);
    if (state.tree) {
      state.tree = freshTree(s && s.ticks);
      if (state.tree.play) applyStep(0, null);
    }
    renderInputs();
    rescore();
  });
  $('current-action').addEventListener('change', (e) => {
    state.snapshot.currentAction = e.target.value; rescore();
  });
  $('personality').addEventListener('change', (e) => {
    state.snapshot.personality = e.target.value; rescore();
  });
  // A slider, a typed value or a checkbox: the snapshot takes its value,
  // and the slider and the box beside it show it.
  const onInput = (e) => {
    const t = e.target, d = t.dataset;
    const factor = d.factor ?? d.typedFactor, targetFactor = d.targetFactor ?? d.typedTargetFactor;
    const value = inputValue(t);
    if ((factor === undefined && targetFactor === undefined) || !Number.isFinite(value)) return;
    if (factor !== undefined) state.snapshot.factors[factor] = value;
    else state.snapshot.targets[Number(d.target ?? d.typedTarget)].factors[targetFactor] = value;
    for (const other of t.closest('.slider').querySelectorAll('input')) {
      if (other !== t && other.type !== 'checkbox') other.value = String(value);
    }
    rescore();
  };
  $('factors').addEventListener('input', onInput);
  $('targets').addEventListener('input', onInput);
  $('targets').addEventListener('click', (e) => {
    const remove = e.target.dataset.removeTarget;
    if (remove !== undefined) state.snapshot.targets.splice(Number(remove), 1);
    else if (e.target.id === 'add-target') state.snapshot.targets.push(newTarget(state.work, state.snapshot));
    else return;
    renderInputs();
    rescore();
    refreshCurves();
  });
}

function wireSetEdits() {
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
  $('actions').addEventListener('click', (e) => {
    if (e.target.classList.contains('edit-action')) {
      editor.open(e.target.dataset.action, null);
      return;
    }
    const act = e.target.closest('.action');
    const con = e.target.closest('.con');
    if (!con || !act) return;
    const action = state.work.actions.find((a) => a.name === act.dataset.action);
    const name = con.dataset.consideration;
    if (e.target.classList.contains('edit-con')) {
      editor.open(action.name, name);
      return;
    }
    const def = action.considerations.find((c) => c.name === name);
    const vals = (state.decision.explanation.actions.find((a) => a.action === action.name) || {}).considerations || [];
    const c = vals.find((x) => x.consideration === name) || {};
    openPlot(con.dataset.key, c.raw, def);
  });
  editor.wire();
  $('revert').addEventListener('click', () => chooseSet(state.work.name, state.snapshot).catch(showError));
  $('export').addEventListener('click', () => exportSet().catch(showError));
  $('export-download').addEventListener('click', downloadExport);
  $('export-close').addEventListener('click', () => $('export-view').close());
}

function wire() {
  $('set').addEventListener('change', (e) => chooseSet(e.target.value).catch(showError));
  wireSnapshot();
  wireSetEdits();
  $('modal').addEventListener('click', () => { $('modal').hidden = true; });
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape' && !$('modal').hidden) $('modal').hidden = true;
  });
  $('tree-tick').addEventListener('click', tickTree);
  $('tree-restart').addEventListener('click', () => {
    const steps = state.tree.play && state.tree.play.steps;
    stopPlaying();
    state.tree = freshTree(steps);
    if (steps) {
      const s = (state.work.scenarios || [])[$('scenario').value];
      if (s) state.snapshot = scenarioSnapshot(state.work, s);
      applyStep(0, null);
    }
    rescore();
  });
  $('tree-play').addEventListener('click', () => (playing ? stopPlaying() : startPlaying()));
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
  setInterval(() => {
    feed.refresh();
    followRevision().catch(showError);
  }, 2000);
}

// What the browser test (tests/browser/inspector_test.mjs) reads of the
// page: a module's names are not globals.
window.inspector = { state, agentOf, loadFeedRow };

wire();
loadSets().catch(showError);
