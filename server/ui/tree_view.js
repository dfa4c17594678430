// The behaviour tree as the inspector reads it from a set's JSON: which kind
// a node is and its children, and a tick drawn as the tree view's markup.
// The kinds come from the server (/api/v1/format: {name, jsonName} each),
// never from this file. Pure functions, unit-tested under Node
// (tests/ui/modules_test.mjs).
import { esc, fmt, short } from './text.js';

// A tick trace's status enum -> the CSS class the tree view uses.
export const STATUS = { NODE_STATUS_RUNNING: 'running', NODE_STATUS_SUCCESS: 'success',
  NODE_STATUS_FAILURE: 'failure', NODE_STATUS_SKIPPED: 'skipped' };

// A node's kind among `kinds`: the format's name (reactive_fallback) and the
// JSON field its body is under (reactiveFallback); undefined for none.
export function nodeKindOf(n, kinds) { return kinds.find((k) => n[k.jsonName] !== undefined); }

// A node's children, whichever its kind: its body's `children`, or its
// `child` as a list of one; none for a leaf.
export function nodeChildren(n, kinds) {
  const kind = nodeKindOf(n, kinds);
  const body = kind && n[kind.jsonName];
  if (!body || typeof body !== 'object') return [];
  return body.children || (body.child ? [body.child] : []);
}

// `tree` (the set's JSON) as nested lists, nodes numbered in pre-order as
// the server numbers them, each with its status in the tick `d` (a
// decision with its tree path); a condition shows its value, and a utility
// node opens into its children's scores.
export function treeHtml(tree, d, kinds) {
  const path = {};
  for (const t of d.treePath || []) path[t.node || 0] = t;
  let next = 0;
  const draw = (n) => {
    const id = next++;
    const kind = (nodeKindOf(n, kinds) || { name: '?' }).name;
    const t = path[id];
    const status = t ? (STATUS[t.status] || 'idle') : 'idle';
    const name = n.name || (kind === 'action' ? n.action : '');
    let extra = '';
    if (kind === 'condition' && t) extra = ` <span class="muted">${fmt(t.value || 0)}</span>`;
    if (kind === 'utility' && t && t.utility) {
      const rows = (t.utility.actions || []).map((a) =>
        `<div class="choice${a.vetoed ? ' vetoed' : ''}" data-choice="${esc(a.action)}">
          <span>${esc(a.targetId ? `${a.action} → ${a.targetId}` : a.action)}</span>
          <div class="bar"><div style="width:${(100 * Math.min(1, a.score)).toFixed(1)}%"></div></div>
          <span>${a.score.toFixed(3)}</span></div>`).join('');
      extra += `<details open><summary class="muted">scores</summary>${rows}</details>`;
    }
    const kids = nodeChildren(n, kinds).map(draw).join('');
    return `<li class="node st-${status}" data-node="${id}" data-kind="${esc(kind)}"
      data-name="${esc(name)}"><span class="label">${esc(name || kind)}
      <span class="kind">${esc(kind)}</span> · ${status}</span>${extra}
      ${kids ? `<ul>${kids}</ul>` : ''}</li>`;
  };
  return `<ul>${draw(tree)}</ul>`;
}

const leafText = (l) => (l.targetId ? `${l.action} → ${l.targetId}` : l.action);

// The tick on show (not yet sent on; the sliders change it): what runs (and
// starts), what it halts, the root's status, and a state reset when there
// was one. What earlier ticks did is in the tick log.
export function treeLeavesHtml(d) {
  const run = (d.runLeaves || []).map((l) => leafText(l) + (l.started ? ' (starts)' : ''));
  const halted = (d.haltedLeaves || []).map(leafText);
  return `this tick runs <b id="tree-run">${esc(run.join(', ') || 'nothing')}</b>` +
    ` · halts <b id="tree-halted">${esc(halted.join(', ') || 'nothing')}</b>` +
    ` · root ${esc(STATUS[d.treeStatus] || 'idle')}` +
    (d.treeReset ? ` · state reset: ${esc(d.treeReset)}` : '');
}

// A choice of outcome for each running leaf, sent with the next tick.
export function treeOutcomesHtml(d) {
  return (d.runLeaves || []).map((l) =>
    `<label>${esc(leafText(l))} <select data-leaf="${l.node || 0}">
      <option value="NODE_STATUS_RUNNING">running</option>
      <option value="NODE_STATUS_SUCCESS">success</option>
      <option value="NODE_STATUS_FAILURE">failure</option></select></label>`).join('');
}

// The tree's nodes in pre-order, numbered as the server numbers them: each
// {kind, name}, the name a scenario uses for a leaf (its own, or its
// action's).
export function treeNodes(tree, kinds) {
  const out = [];
  const walk = (n) => {
    const kind = (nodeKindOf(n, kinds) || { name: '?' }).name;
    out.push({ kind, name: n.name || (kind === 'action' ? n.action : '') || kind });
    nodeChildren(n, kinds).forEach(walk);
  };
  if (tree) walk(tree);
  return out;
}

const leafName = (nodes, l) => (nodes[l.node || 0] || {}).name || l.action;

// What tick `d` did at game time `time`, by leaf name: started, still
// running, halted; the root's status.
export function tickLogEntry(nodes, d, time) {
  const run = d.runLeaves || [];
  return {
    time,
    started: run.filter((l) => l.started).map((l) => leafName(nodes, l)),
    running: run.filter((l) => !l.started).map((l) => leafName(nodes, l)),
    halted: (d.haltedLeaves || []).map((l) => leafName(nodes, l)),
    status: STATUS[d.treeStatus] || 'idle',
  };
}

// How tick `entry` met a scenario tick's expectations (`step`, the set's
// JSON): the misses as words, none when all held (or nothing is expected).
export function stepMisses(step, entry) {
  const misses = [];
  const run = [...entry.started, ...entry.running];
  const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
  if ((step.expectedRun || []).length && !same(run, step.expectedRun)) {
    misses.push(`expected to run ${step.expectedRun.join(', ')}, ran ${run.join(', ') || 'nothing'}`);
  }
  if ((step.expectedHalted || []).length && !same(entry.halted, step.expectedHalted)) {
    misses.push(`expected to halt ${step.expectedHalted.join(', ')}, halted ${entry.halted.join(', ') || 'nothing'}`);
  }
  const status = STATUS[step.expectedStatus];
  if (status && status !== entry.status) misses.push(`expected the root ${status}, was ${entry.status}`);
  return misses;
}

// The request for scenario tick `step` after tick `d` (null for the first):
// its game time, the factors it changes, the tree's state from `d`, and
// its outcomes for the leaves `d` ran, by node.
export function scenarioTick(nodes, step, d) {
  const outcomes = {};
  for (const l of (d && d.runLeaves) || []) {
    const status = (step.outcomes || {})[leafName(nodes, l)];
    if (status && status !== 'NODE_STATUS_RUNNING') outcomes[l.node || 0] = status;
  }
  return { time: step.gameTime || 0, factors: step.factors || {}, prev: d ? d.treeState || '' : '', outcomes };
}

// The tick log, oldest first: what each tick started, left running and
// halted, the root's status, and whether a scenario's expectations held.
export function tickLogHtml(entries) {
  if (!entries.length) return '';
  const list = (what, names) => (names.length ? ` · ${what} ${esc(names.join(', '))}` : '');
  return '<ol id="tree-log" aria-label="Tick log">' + entries.map((e, i) => {
    const check = e.misses === undefined ? ''
      : e.misses.length ? ` <span class="miss">✗ ${esc(e.misses.join('; '))}</span>`
        : ' <span class="held">✓ as the scenario expects</span>';
    return `<li data-tick="${i}">${short(e.time)} s${list('starts', e.started)}${list('runs', e.running)}` +
      `${list('halts', e.halted)} · root ${esc(e.status)}${check}</li>`;
  }).join('') + '</ol>';
}
