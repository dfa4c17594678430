// The inspector's modules (server/ui/text.js, api.js, snapshot.js,
// tree_view.js, diff.js, plot.js, and the actions, sweep, editor,
// candidate, analysis, feed and sensitivity views)
// under Node's own test runner; the page as a whole is tests/browser's.
//   node tests/ui/modules_test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { actionsHtml, cardOrder, duelHtml, duelRows, duelText } from '../../server/ui/actions_view.js';
import {
  analysisActionsHtml, applyParam, findingsHtml, findingsSummary, findingTarget, locksHtml,
  unlockSpec,
  tunedSet, tuneText, winnerMapHtml,
} from '../../server/ui/analysis_view.js';
import { createApi } from '../../server/ui/api.js';
import {
  candidateSummary, createCandidateView, movedTransitions, sideText,
} from '../../server/ui/candidate_view.js';
import {
  applyEdit, curveKindOf, editorFieldsHtml, parsePoints, pointsText,
} from '../../server/ui/editor_view.js';
import { ACTION_COLOURS, actionColour, curveSvg } from '../../server/ui/plot.js';
import { originOf, provenanceText } from '../../server/ui/provenance.js';
const MAP_COLOURS = ACTION_COLOURS;
import { feedQuery, feedRowsHtml, feedText } from '../../server/ui/feed_view.js';
import {
  crossingText, sensitivityLine, sensitivityOf,
} from '../../server/ui/sensitivity_view.js';
import {
  agentOf, carriedSnapshot, defaultSnapshot, factorOf, factorStep, kindOf, loggedSnapshot, newTarget,
  scenarioSnapshot,
} from '../../server/ui/snapshot.js';
import { factorInputHtml, inputValue, targetsHtml } from '../../server/ui/inputs_view.js';
import { revisionChange, staleText } from '../../server/ui/revision.js';
import {
  addSweepCurves, bestScores, sweepChart, sweepXs, winnerChanges,
} from '../../server/ui/sweep_view.js';
import { esc, fmt, namePaths, short } from '../../server/ui/text.js';
import {
  STATUS, nodeChildren, nodeKindOf, scenarioTick, stepMisses, tickLogEntry, tickLogHtml, treeHtml,
  treeLeavesHtml, treeNodes, treeOutcomesHtml,
} from '../../server/ui/tree_view.js';
import { diffHunks, diffSummary, lineDiff } from '../../server/ui/diff.js';
import {
  applyHandle, dragValue, handlesOf, keyValue, outputAt, plotSvg, presetsOf, readout, roundTo, scales,
  ticks,
} from '../../server/ui/curve_editor.js';

test('esc makes text safe for HTML and attributes', () => {
  assert.equal(esc(`<a href="x">Tom's & co</a>`),
    '&lt;a href=&quot;x&quot;&gt;Tom&#39;s &amp; co&lt;/a&gt;');
  assert.equal(esc(undefined), '');
  assert.equal(esc(null), '');
  assert.equal(esc(0), '0');
});

test('fmt shows 0, 1 or 3 decimals by size, and a dash for none', () => {
  assert.equal(fmt(undefined), '–');
  assert.equal(fmt(''), '–');
  assert.equal(fmt(123.46), '123');
  assert.equal(fmt(-12.34), '-12.3');
  assert.equal(fmt(0.12345), '0.123');
  assert.equal(fmt('0.5'), '0.500');
  assert.equal(fmt('NaN'), 'NaN');
});

test('short keeps four significant digits without trailing zeros', () => {
  assert.equal(short(37.5312), '37.53');
  assert.equal(short(40), '40');
  assert.equal(short(0.87104), '0.871');
  assert.equal(short('2.50'), '2.5');
});

// The kinds as /api/v1/format serves them (a subset).
const KINDS = [
  { name: 'sequence', jsonName: 'sequence' },
  { name: 'reactive_fallback', jsonName: 'reactiveFallback' },
  { name: 'inverter', jsonName: 'inverter' },
  { name: 'action', jsonName: 'action' },
];

test('nodeKindOf finds the kind by its JSON field, from the kinds given', () => {
  assert.equal(nodeKindOf({ reactiveFallback: { children: [] } }, KINDS).name,
    'reactive_fallback');
  assert.equal(nodeKindOf({ action: 'attack', name: 'hit' }, KINDS).name, 'action');
  assert.equal(nodeKindOf({ utility: {} }, KINDS), undefined);  // not in KINDS
  assert.equal(nodeKindOf({ name: 'x' }, KINDS), undefined);
});

test('nodeChildren reads children, a single child, or none', () => {
  const a = { action: 'a' }, b = { action: 'b' };
  assert.deepEqual(nodeChildren({ sequence: { children: [a, b] } }, KINDS), [a, b]);
  assert.deepEqual(nodeChildren({ inverter: { child: a } }, KINDS), [a]);
  assert.deepEqual(nodeChildren({ inverter: {} }, KINDS), []);
  assert.deepEqual(nodeChildren(a, KINDS), []);  // a leaf: its body is a name
  assert.deepEqual(nodeChildren({ utility: { children: [a] } }, KINDS), []);
});

test('STATUS maps the trace statuses the tree view colours', () => {
  assert.equal(STATUS.NODE_STATUS_RUNNING, 'running');
  assert.equal(STATUS.NODE_STATUS_FAILURE, 'failure');
  assert.equal(STATUS.NODE_STATUS_IDLE, undefined);
});

test('lineDiff marks one changed line, numbered in both files; hunks keep 3 lines of context', () => {
  const before = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].join('\n');
  const after = ['a', 'b', 'c', 'd', 'E', 'f', 'g', 'h', 'i'].join('\n');
  const lines = lineDiff(before, after);
  assert.deepEqual(lines.filter((l) => l.kind !== ' '), [
    { kind: '-', text: 'e', oldLine: 5, newLine: 0 },
    { kind: '+', text: 'E', oldLine: 0, newLine: 5 },
  ]);
  assert.equal(lines.length, 10);
  assert.deepEqual(diffHunks(lines).map((l) => l.text), ['b', 'c', 'd', 'e', 'E', 'f', 'g', 'h']);
  assert.equal(diffSummary(lines), '1 line changed');
});

test('lineDiff finds an added line and two changes apart; a gap between hunks', () => {
  const base = Array.from({ length: 20 }, (_, k) => `line ${k}`);
  const edited = base.slice();
  edited.splice(3, 0, '    weight: 2');
  edited[15] = 'line 14 edited';
  const lines = lineDiff(base.join('\n'), edited.join('\n'));
  assert.deepEqual(lines.filter((l) => l.kind === '+').map((l) => [l.text, l.newLine]),
    [['    weight: 2', 4], ['line 14 edited', 16]]);
  assert.deepEqual(lines.filter((l) => l.kind === '-').map((l) => [l.text, l.oldLine]), [['line 14', 15]]);
  assert.equal(diffHunks(lines, 1).filter((l) => l.kind === '…').length, 1);
  assert.equal(diffSummary(lines), '2 lines added, 1 line removed');
  assert.deepEqual(diffHunks(lineDiff('x\ny', 'x\ny')), []);
  assert.match(diffSummary(lineDiff('x', 'x')), /^No change/);
});

test('sideText names the action and its target, or none', () => {
  assert.equal(sideText({ action: 'attack', targetId: 'goblin-2' }), 'attack@goblin-2');
  assert.equal(sideText({ action: 'idle' }), 'idle');
  assert.equal(sideText({}), '(none)');
});

test('candidateSummary states churn, flips, revisions and refusals', () => {
  assert.equal(candidateSummary({
    decisions: '40', flipped: '6', churn: 0.15, candidateRevision: 'c1',
    baselineRevision: 'b1',
  }), 'churn 15.0%: 6 of 40 recent decisions change (candidate c1, live b1)');
  assert.match(candidateSummary({
    decisions: 2, flipped: 0, churn: 0, errors: 1, firstError: 'bad factor',
  }), /; 1 refused: bad factor$/);
});

test('movedTransitions keeps changes of action or of target only', () => {
  const moved = movedTransitions({ transitions: [
    { from: 'a', to: 'a', count: 9 },
    { from: 'a', to: 'a', count: 3, targetChanged: 2 },
    { from: 'a', to: 'b', count: 1 },
  ] });
  assert.deepEqual(moved.map((t) => `${t.from}>${t.to}`), ['a>a', 'a>b']);
});

test('the candidate view renders an answer and opens a flip from it', async () => {
  // Elements as plain objects: the view sets text, HTML and hidden only.
  const el = {};
  const $ = (id) => (el[id] ??= { hidden: false, textContent: '', innerHTML: '',
    querySelector() { return (this.body ??= { innerHTML: '' }); } });
  const answer = {
    sets: [{ decisions: 3, flipped: 1, churn: 1 / 3, candidateRevision: 'c',
      baselineRevision: 'b', transitions: [{ from: 'idle', to: 'flee', count: 1 }] }],
    examples: [{ agentId: 'npc-1', decisionId: 'd1', margin: 0.25,
      baseline: { action: 'idle', score: 0.5, summary: 'idle 0.5' },
      candidate: { action: 'flee', score: 0.75, summary: 'flee 0.75 | hp low' } }],
  };
  const asked = [];
  const view = createCandidateView({ $, api: async (path, body) => {
    asked.push([path, body]);
    return answer;
  } });
  await view.compare('guard', { name: 'guard' });
  assert.deepEqual(asked, [['/api/v1/candidate',
    { behaviourSet: 'guard', candidate: { name: 'guard' } }]]);
  assert.match(el['candidate-text'].textContent, /^churn 33.3%: 1 of 3/);
  assert.match(el['candidate-matrix'].body.innerHTML, /data-from="idle" data-to="flee"/);
  assert.match(el['candidate-flips'].body.innerHTML, /idle → flee/);
  view.openFlip(0);
  assert.equal(el.modal.hidden, false);
  assert.match(el['modal-body'].innerHTML, /<li>hp low<\/li>/);
  // A failed call says why and hides the tables.
  const failing = createCandidateView({ $, api: async () => { throw new Error('no shadow set'); } });
  await failing.compare('guard');
  assert.equal(el['candidate-text'].textContent, 'no shadow set');
  assert.equal(el['candidate-matrix'].hidden, true);
});

test('findings are summed up, listed with their kind, the accepted muted', () => {
  assert.equal(findingsSummary([]), 'No findings.');
  const findings = [
    { kind: 'dead_action', subject: 'hide', message: 'never wins' },
    { kind: 'dominated', subject: 'eat', message: 'by <sleep>', accepted: 'on purpose' },
  ];
  assert.equal(findingsSummary(findings), '2 findings, 1 not accepted by the set.');
  assert.equal(findingsSummary(findings.slice(0, 1)), '1 finding, 1 not accepted by the set.');
  const html = findingsHtml(findings, { actions: [{ name: 'hide' }, { name: 'eat' }] });
  assert.match(html, /data-index="0"[\s\S]*<b>dead_action<\/b> hide: never wins/);
  assert.match(html, /class="finding accepted" data-index="1"/);
  assert.match(html, /by &lt;sleep&gt;/);
  assert.match(html, /\(accepted: on purpose\)/);
});

test('each analysed action shows its colour, reach and coverage', () => {
  const html = analysisActionsHtml([
    { action: 'eat', reach: 'REACH_ALIVE', coverage: 0.25 },
    { action: 'hide', reach: 'REACH_DEAD' },
  ]);
  assert.match(html, new RegExp(`background:${MAP_COLOURS[0]}"></span>eat</td>\\s*<td>alive</td>\\s*<td>25.0%</td>`));
  assert.match(html, new RegExp(`background:${MAP_COLOURS[1]}"></span>hide</td>\\s*<td>dead</td>\\s*<td>0.000%</td>`));
});

test('the winner map colours each cell by its action and places witnesses', () => {
  const factors = [{ name: 'hunger', min: 0, max: 1 }, { name: 'danger', min: 0, max: 10 }];
  const actions = [
    { action: 'eat', witness: { factors: { hunger: 0.75, danger: 2.5 } } },
    { action: 'hide' },
  ];
  const coverage = { mapX: 'hunger', mapY: 'danger', legend: { a: 'eat', b: 'hide' },
                     mapRows: ['ab', 'b?'] };
  const html = winnerMapHtml(coverage, actions, factors, []);
  assert.match(html, /repeat\(2,1fr\)/);
  const cells = [...html.matchAll(/<i style="background:([^"]+)"><\/i>/g)].map((m) => m[1]);
  assert.deepEqual(cells, [MAP_COLOURS[0], MAP_COLOURS[1], MAP_COLOURS[1], '#eee']);
  assert.match(html, /data-action="eat"[\s\S]*left:75%;top:75%/);
  assert.doesNotMatch(html, /data-action="hide"/);
  assert.equal(winnerMapHtml({}, actions, factors, []), '');
});

test('a tuner path sets the consideration field it names, in camelCase', () => {
  const set = { actions: [{ name: 'eat', considerations: [{ name: 'hungry' }] }] };
  applyParam(set, 'eat.hungry.weight', 2);
  applyParam(set, 'eat.hungry.range.min', 0.1);
  applyParam(set, 'eat.hungry.curve.logistic.mid_point', 0.4);
  applyParam(set, 'sleep.tired.weight', 9);  // no such action: unchanged
  assert.deepEqual(set.actions[0].considerations[0], {
    name: 'hungry', weight: 2, range: { min: 0.1 }, curve: { logistic: { midPoint: 0.4 } },
  });
  assert.equal(set.actions.length, 1);
});

test('the tuner answer reads as its changes, or why there are none', () => {
  assert.equal(tuneText({ feasible: false, conflicts: ['a', 'b'] }),
    'No change makes every scenario pass:\na\nb');
  assert.equal(tuneText({ feasible: true }),
    'Every scenario passes with its margin: nothing to change.');
  const r = {
    feasible: true,
    changes: [{ action: 'eat', from: 1, to: 1.5 }],
    params: [{ path: 'eat.hungry.weight', from: 1, to: 0.5 }],
    after: [{ scenario: 'starving', winner: 'eat', margin: 0.05 }],
  };
  assert.equal(tuneText(r), 'eat: weight 1.000 → 1.500\neat.hungry.weight: 1.000 → 0.500\n' +
    'starving: eat by 0.050');
  const set = { actions: [{ name: 'eat', weight: 1, considerations: [{ name: 'hungry', weight: 1 }] }] };
  tunedSet(set, r);
  assert.equal(set.actions[0].weight, 1.5);
  assert.equal(set.actions[0].considerations[0].weight, 0.5);
});

test('the feed asks for the newest 30, filtered only as the page says', () => {
  assert.equal(feedQuery({}), 'limit=30');
  assert.equal(feedQuery({ set: 'arena_mage', action: 'flee', switched: 'true' }),
    'limit=30&set=arena_mage&action=flee&switched=true');
  assert.equal(feedQuery({ set: '', action: 'flee' }), 'limit=30&action=flee');
});

test('a feed row shows its agent, action and target, score and switch', () => {
  const html = feedRowsHtml([
    { time: '2026-12-05T10:00:00Z', agentId: 'mage<1>', action: 'attack',
      targetId: 'goblin-2', score: 0.5, switched: true },
    { time: '2026-12-05T10:00:01Z', agentId: 'mage-2', action: 'wait', score: '0.25' },
  ]);
  assert.match(html, /data-index="0" data-agent="mage&lt;1&gt;"/);
  assert.match(html, /<td>attack → goblin-2<\/td>\s*<td>0.500<\/td><td>yes<\/td>/);
  assert.match(html, /<td>wait<\/td>\s*<td>0.250<\/td><td><\/td>/);
  assert.match(feedText([{}]), /Click a row/);
  assert.match(feedText([]), /No sampled decisions yet/);
});

test('a tick draws the tree in pre-order with each node\'s status and scores', () => {
  const kinds = [{ name: 'fallback', jsonName: 'fallback' },
    { name: 'condition', jsonName: 'condition' }, { name: 'utility', jsonName: 'utility' },
    { name: 'action', jsonName: 'action' }];
  const tree = { fallback: { children: [
    { name: 'hurt', condition: { factor: 'health' } },
    { utility: { children: [{ action: 'attack' }, { action: 'flee' }] } },
  ] } };
  const d = { treePath: [
    { status: 'NODE_STATUS_RUNNING' },
    { node: 1, status: 'NODE_STATUS_FAILURE', value: 0.25 },
    { node: 2, status: 'NODE_STATUS_RUNNING', utility: { actions: [
      { action: 'attack', targetId: 'goblin<1>', score: 0.75 },
      { action: 'flee', score: 0.125, vetoed: true }] } },
    { node: 3, status: 'NODE_STATUS_RUNNING' },
  ] };
  const html = treeHtml(tree, d, kinds);
  const nodes = [...html.matchAll(/class="node st-(\w+)" data-node="(\d)" data-kind="(\w+)"/g)]
    .map((m) => `${m[2]}:${m[3]}:${m[1]}`);
  assert.deepEqual(nodes, ['0:fallback:running', '1:condition:failure', '2:utility:running',
    '3:action:running', '4:action:idle']);
  assert.match(html, /data-name="hurt"[\s\S]*<span class="muted">0.250<\/span>/);
  assert.match(html, /attack → goblin&lt;1&gt;<\/span>[\s\S]*width:75.0%[\s\S]*0.750/);
  assert.match(html, /class="choice vetoed" data-choice="flee"/);
});

test('a tick\'s leaves and the outcomes offered for the running ones', () => {
  const d = { runLeaves: [{ node: 3, action: 'attack', targetId: 'g1', started: true }],
    haltedLeaves: [{ action: 'flee' }], treeStatus: 'NODE_STATUS_RUNNING',
    treeReset: 'TREE_RESET_VERSION' };
  assert.equal(treeLeavesHtml(d), 'this tick runs <b id="tree-run">attack → g1 (starts)</b>' +
    ' · halts <b id="tree-halted">flee</b> · root running · state reset: TREE_RESET_VERSION');
  assert.equal(treeLeavesHtml({}), 'this tick runs <b id="tree-run">nothing</b>' +
    ' · halts <b id="tree-halted">nothing</b> · root idle');
  const outcomes = treeOutcomesHtml(d);
  assert.match(outcomes, /<label>attack → g1 <select data-leaf="3">/);
  assert.equal((outcomes.match(/<option /g) || []).length, 3);
  assert.equal(treeOutcomesHtml({}), '');
});

test('a factor\'s sensitivity reads as the crossing on each side, or none', () => {
  const all = [
    { factor: 'health', unit: 'hp', rangeMin: 0, rangeMax: 100,
      below: { action: 'flee', value: 31.5, change: 0.2 } },
    { factor: 'distance', targetId: 'g1', unit: 'm', rangeMin: 0, rangeMax: 50,
      above: { action: 'attack', targetId: 'g1', value: 12 } },
    { factor: 'mana', rangeMin: 0, rangeMax: 1 },
  ];
  assert.equal(sensitivityOf(all, 'health'), all[0]);
  assert.equal(sensitivityOf(all, 'distance'), undefined);
  assert.equal(sensitivityOf(all, 'distance', 'g1'), all[1]);
  assert.equal(sensitivityOf(all, 'distance', 'g2'), undefined);
  assert.equal(crossingText(all[0], 'below'), 'flee at ≤ 31.5 hp');
  assert.equal(crossingText(all[0], 'above'), '');
  assert.deepEqual(sensitivityLine(all[0]), {
    text: 'flee at ≤ 31.5 hp', title: 'below: exactly 31.5 (change 0.2)',
    below: '31.5', above: '' });
  assert.equal(sensitivityLine(all[1]).text, 'attack@g1 at ≥ 12 m');
  assert.equal(sensitivityLine(all[2]).text, 'no change within 0..1');
});

test('a curve plot draws its points over the range and marks the agent', () => {
  assert.equal(curveSvg([], 0.5, [0, 1], 100, 50), '');
  const svg = curveSvg([[0, 0], undefined, [10, 1]], 20, [0, 10], 108, 66);
  // x: 4 + 100 * v / 10; y: 54 - 50 * output.
  assert.match(svg, /<path class="curve" d="M4.0,54.0L104.0,4.0"\/>/);
  assert.match(svg, /<line class="marker" x1="104" x2="104"/);  // clamped to hi
  assert.match(svg, /<text x="4" y="65">0.000<\/text>[\s\S]*text-anchor="end">10.0</);
  assert.doesNotMatch(curveSvg([[0, 0], [1, 1]], NaN, [0, 1], 100, 50), /marker/);
  // The large plot labels its output axis in a left margin.
  assert.doesNotMatch(svg, /class="y"/);
  const big = curveSvg([[0, 0], [10, 1]], 5, [0, 10], 640, 320);
  assert.match(big, /<path class="curve" d="M28.0,308.0L636.0,4.0"\/>/);
  assert.deepEqual([...big.matchAll(/<text class="y" x="24" y="([\d.]+)" text-anchor="end">([\d.]+)</g)]
    .map((m) => [m[1], m[2]]), [['312.0', '0'], ['160.0', '0.5'], ['8.0', '1']]);
});

// ---- api.js -------------------------------------------------------------------

// A stand-in for the browser's fetch: answers from `reply(path, init)`.
function fakeFetch(reply) {
  const calls = [];
  const fn = async (path, init) => {
    calls.push([path, init]);
    const [status, json] = reply(path, init);
    return { status, ok: status >= 200 && status < 300, statusText: 'status ' + status,
             json: async () => json };
  };
  return { fn, calls };
}

test('api calls send the token and JSON, and count the calls in flight', async () => {
  const busy = [];
  const f = fakeFetch(() => [200, { ok: 1 }]);
  let token = '';
  const api = createApi({ fetchFn: f.fn, token: () => token,
    onUnauthorized: () => assert.fail('not a 401'), onBusy: (n) => busy.push(n) });
  assert.deepEqual(await api('/api/v1/sets'), { ok: 1 });
  assert.deepEqual(f.calls[0], ['/api/v1/sets', { headers: {} }]);
  token = 'secret';
  await Promise.all([api('/api/v1/decide', { agents: [] }), api('/api/v1/curves')]);
  assert.deepEqual(f.calls[1][1], { method: 'POST', body: '{"agents":[]}',
    headers: { Authorization: 'Bearer secret', 'Content-Type': 'application/json' } });
  assert.equal(f.calls[2][1].headers.Authorization, 'Bearer secret');
  assert.deepEqual(busy, [1, 0, 1, 2, 1, 0]);
});

test('api errors carry the server\'s message, and a 401 asks for the token', async () => {
  let asked = 0;
  const busy = [];
  const f = fakeFetch((path) => path === '/locked' ? [401, {}]
    : path === '/bad' ? [400, { message: 'actions[0]: no such factor "hp"' }] : [503, {}]);
  const api = createApi({ fetchFn: f.fn, token: () => '', onUnauthorized: () => asked++,
    onBusy: (n) => busy.push(n) });
  await assert.rejects(api('/locked'), /needs its admin token \(--admin_token\)/);
  assert.equal(asked, 1);
  await assert.rejects(api('/bad'), /^Error: actions\[0\]: no such factor "hp"$/);
  await assert.rejects(api('/down'), /^Error: status 503$/);
  assert.equal(asked, 1);
  assert.equal(busy.at(-1), 0);  // failures end their count too
});

// ---- snapshot.js --------------------------------------------------------------

const SET = {
  name: 'guard',
  factors: [{ name: 'health', min: 0, max: 100 }, { name: 'alarm', min: 1, max: 0 }],
  targetFactors: [{ name: 'distance', min: 0, max: 40, unit: 'm' }],
  actions: [
    { name: 'attack', weight: 1, considerations: [
      { name: 'close', factor: 'distance', perTarget: true },
      { name: 'healthy', factor: 'health' }] },
    { name: 'flee', weight: 2, considerations: [{ name: 'hurt', factor: 'health' }] },
  ],
};

test('a default snapshot puts every factor mid-range, with one target', () => {
  assert.deepEqual(defaultSnapshot(SET), { factors: { health: 50, alarm: 0.5 },
    targets: [{ id: 'target-1', factors: { distance: 20 } }], currentAction: '', personality: '' });
  assert.deepEqual(defaultSnapshot({ name: 'x', factors: [] }).targets, []);
});

test('a scenario snapshot keeps what the scenario gives, mid-range the rest', () => {
  const snap = scenarioSnapshot(SET, { factors: { health: 10 }, currentAction: 'flee',
    targets: [{ id: 'g1', factors: {} }, { id: 'g2', factors: { distance: 3 } }],
    secondsSinceAction: 4 });
  assert.deepEqual(snap, { factors: { health: 10, alarm: 0.5 },
    targets: [{ id: 'g1', factors: { distance: 20 } }, { id: 'g2', factors: { distance: 3 } }],
    currentAction: 'flee', personality: '', secondsSinceAction: 4 });
  assert.deepEqual(scenarioSnapshot(SET, {}).targets, []);
});

test('the agent lists factors in the set\'s order, overrides one, carries the tree', () => {
  const snap = { factors: { alarm: 1, health: 30 }, currentAction: 'attack', personality: '',
    targets: [{ id: 'g1', factors: { distance: 5 } }, { id: 'g2', factors: { distance: 9 } }] };
  const agent = agentOf(SET, snap, null);
  assert.deepEqual(agent, { agentId: 'inspector', behaviourSet: 'guard', factors: [30, 1],
    targets: [{ targetId: 'g1', factors: [5] }, { targetId: 'g2', factors: [9] }],
    currentAction: 'attack', personality: '' });
  assert.deepEqual(agentOf(SET, snap, null, { factor: 'alarm', value: 0 }).factors, [30, 0]);
  const swept = agentOf(SET, snap, null, { targetFactor: 'distance', value: 33 });
  assert.deepEqual(swept.targets.map((t) => t.factors[0]), [33, 9]);  // the first target only
  const ticked = agentOf(SET, { ...snap, secondsSinceAction: 2 },
    { prev: 'abc', time: 1.5, outcomes: { 3: 'NODE_STATUS_SUCCESS' } });
  assert.equal(ticked.secondsSinceAction, 2);
  assert.equal(ticked.treeState, 'abc');
  assert.equal(ticked.gameTime, 1.5);
  assert.deepEqual(ticked.leafOutcomes, [{ leaf: 3, status: 'NODE_STATUS_SUCCESS' }]);
});

test('a consideration\'s factor is the agent\'s or the target\'s, 0..1 when unknown', () => {
  assert.equal(factorOf(SET, { factor: 'distance', perTarget: true }).unit, 'm');
  assert.deepEqual(factorOf(SET, { factor: 'distance' }), { min: 0, max: 1 });
  assert.equal(factorOf(SET, { factor: 'health' }).max, 100);
});

// ---- sweep_view.js ------------------------------------------------------------

// A decision with `actions` rows [actionIndex, score, targetId, {consideration: output}].
function swept(action, rows) {
  return { action, explanation: { actions: rows.map(([i, score, targetId, cons]) => ({
    actionIndex: i, score, targetId,
    considerations: Object.entries(cons || {}).map(([c, output]) => ({ consideration: c, output })),
  })) } };
}

test('a sweep steps a factor evenly from its min to its max', () => {
  assert.deepEqual(sweepXs({ min: 0, max: 10 }, 3), [0, 5, 10]);
  assert.deepEqual(sweepXs({ min: 1, max: 0 }, 5), [1, 0.75, 0.5, 0.25, 0]);
  assert.deepEqual(sweepXs({ min: 0, max: 1, kind: 'FACTOR_KIND_FLAG' }), [0, 1]);
  assert.deepEqual(sweepXs({ min: 0, max: 4, kind: 'FACTOR_KIND_COUNT' }), [0, 1, 2, 3, 4]);
  assert.deepEqual(sweepXs({ min: 0, max: 100, kind: 'FACTOR_KIND_COUNT' }, 5), [0, 25, 50, 75, 100]);
  assert.deepEqual(sweepXs({ min: 0, max: 10, kind: 'FACTOR_KIND_COUNT' }, 4), [0, 3, 7, 10]);
  assert.equal(sweepXs({ min: 0, max: 1 }).length, 41);
});

test('sweep curves keep the considerations of the swept factor, first target only', () => {
  const sweep = { kind: 't', f: SET.targetFactors[0], xs: [0, 40], decisions: [
    swept('attack', [[0, 0.9, 'g1', { close: 1, healthy: 0.5 }], [0, 0.1, 'g2', { close: 0 }],
                     [1, 0.2, '', { hurt: 0.3 }]]),
    swept('flee', [[0, 0.1, 'g1', { close: 0.25, healthy: 0.5 }]]),
  ] };
  assert.deepEqual(addSweepCurves({}, SET, sweep, 'g1'),
    { 'attack/close': [[0, 1], [40, 0.25]] });
  // The agent's own factor: a per-target consideration of the same name does not count.
  const own = { kind: 'a', f: SET.factors[0], xs: [0], decisions: [
    swept('flee', [[0, 0.5, 'g1', { healthy: 0.5 }], [1, 0.7, '', { hurt: 0.7 }]])] };
  assert.deepEqual(addSweepCurves({}, SET, own, 'g1'),
    { 'attack/healthy': [[0, 0.5]], 'flee/hurt': [[0, 0.7]] });
});

test('a sweep\'s winner changes fall midway, best scores per action per step', () => {
  const sweep = { f: { name: 'health', min: 0, max: 100, unit: 'hp' }, xs: [0, 50, 100],
    decisions: [swept('flee', [[1, 0.8], [0, 0.2, 'g1'], [0, 0.4, 'g2']]),
                swept('attack', [[0, 0.6, 'g1'], [1, 0.5]]), swept('', [])] };
  assert.deepEqual(winnerChanges(sweep).changes, [
    { from: 'flee', to: 'attack', x: 25, between: [0, 50] },
    { from: 'attack', to: '(none)', x: 75, between: [50, 100] }]);
  assert.deepEqual(bestScores(sweep, ['attack', 'flee']), [[[0, 0.4], [50, 0.6], [100, 0]],
                                          [[0, 0.8], [50, 0.5], [100, 0]]]);
  const sens = { factor: 'health', unit: 'hp', below: { action: 'flee', value: 31.5 } };
  const chart = sweepChart(sweep, ['attack', 'flee'], 50, sens);
  // The first change has the exact crossing (31.5) between its steps.
  assert.equal(chart.text, 'Winner changes: flee → attack at 31.5 hp (exact); attack → (none) near 75.0 hp.' +
    ' Nearest change (exact): flee at ≤ 31.5 hp.');
  assert.match(chart.html, /class="crossing" data-side="below" data-value="31.5"/);
  assert.equal((chart.html.match(/class="marker"/g) || []).length, 2);
  // Each action in its colour and its own dash pattern, named in the legend.
  assert.match(chart.html, new RegExp(`stroke="${actionColour(1)}" stroke-width="2"\\s+stroke-dasharray="7,3" data-action="flee"`));
  assert.match(chart.html, /stroke-dasharray="7,3"\/><\/svg> flee<\/span>/);
  const flat = { ...sweep, decisions: [swept('idle', []), swept('idle', [])], xs: [0, 100] };
  assert.equal(sweepChart(flat, ['idle'], 0, undefined).text, 'idle wins across the whole range.');
});

test('a tree set\'s sweep draws its utility nodes\' scores; leaves run unscored are named, not drawn flat', () => {
  const tick = (action, score) => ({ action, explanation: {}, treePath: [{ node: 0 },
    { node: 4, utility: { actions: [{ action: 'fireball', actionIndex: 0, score }] } }] });
  const sweep = { f: { name: 'mana', min: 0, max: 100 }, xs: [0, 100],
    decisions: [{ action: 'patrol', explanation: {}, treePath: [{ node: 0 }] }, tick('fireball', 0.7)] };
  assert.deepEqual(bestScores(sweep, ['patrol', 'fireball']), [null, [[0, 0], [100, 0.7]]]);
  const chart = sweepChart(sweep, ['patrol', 'fireball'], 50, undefined);
  assert.doesNotMatch(chart.html, /data-action="patrol"/);
  assert.match(chart.html, /data-action="fireball"/);
  assert.match(chart.html, /not scored \(the tree runs it by its conditions\): patrol/);
  assert.equal(chart.text, 'Winner changes: patrol → fireball near 50.0.');
});

// ---- actions_view.js ----------------------------------------------------------

test('action cards go by rank, highest first, with winner, runner-up and veto', () => {
  const d = { action: 'flee', explanation: { rank: 1, runnerUpAction: 'attack',
    runnerUpTarget: 'g1', margin: 0.125, actions: [
      { action: 'attack', actionIndex: 0, targetId: 'g1', rank: 0, score: 0.4,
        considerations: [{ consideration: 'close', raw: 5, output: 0.9 }] },
      { action: 'flee', actionIndex: 1, rank: 1, score: 1.2, commitmentFactor: 1.5,
        considerations: [{ consideration: 'hurt', raw: 30, output: 0 }],
        vetoed: false },
      { action: 'attack', actionIndex: 0, targetId: 'g2', rank: 0, score: 0,
        vetoed: true, vetoedBy: 'close', considerations: [{ consideration: 'close', output: 0 }] },
    ] } };
  const html = actionsHtml(SET, d, { 'attack/close': [[0, 1], [40, 0]] });
  const ranks = [...html.matchAll(/rank-title">([^<]*)</g)].map((m) => m[1]);
  assert.deepEqual(ranks, ['rank 1 (competing)', 'rank 0']);
  assert.ok(html.indexOf('data-target="g1"') < html.indexOf('data-target="g2"'));  // runner-up first
  assert.match(html, /class="action winner " data-action="flee"[\s\S]*winner by 0.125/);
  assert.match(html, /width:100.0%/);  // a score above 1 fills the bar
  assert.match(html, /commitment ×1.500\n/);
  assert.match(html, /attack → g1[\s\S]*runner-up/);
  assert.match(html, /class="action  vetoed" data-action="attack" data-target="g2"[\s\S]*vetoed by <span class="vetoed-by">close/);
  assert.match(html, /class="con vetoing" data-key="attack\/close"/);
  assert.match(html, /<span>5.000 m<\/span>/);  // the target factor's unit
  assert.equal((html.match(/<path class="curve"/g) || []).length, 2);  // attack/close's cards
  const higher = { ...d, explanation: { ...d.explanation, margin: -1 } };
  assert.match(actionsHtml(SET, higher, {}), /winner \(higher rank\)/);
});

// ---- editor_view.js -----------------------------------------------------------

const CURVE_KINDS = {
  linear: { formatName: 'linear', params: [{ name: 'slope', type: 'number', default: 1 }] },
  logistic: { formatName: 'logistic', params: [
    { name: 'steepness', type: 'number', default: 10 },
    { name: 'midpoint', type: 'number', default: 0.5 }] },
  piecewiseLinear: { formatName: 'piecewise_linear', params: [
    { name: 'points', type: 'points' },
    { name: 'stepAt', formatName: 'step_at', type: 'flag' }] },
};

// An editor input as the page has it.
function input({ id = '', value = '', checked = false, field, param, cls = '' }) {
  return { id, value, checked, dataset: { field, param },
    classList: { contains: (c) => cls.split(' ').includes(c) } };
}

test('the editor names the curve kind, its parameters with defaults, and points', () => {
  assert.equal(curveKindOf({ logistic: {} }, CURVE_KINDS), 'logistic');
  assert.equal(curveKindOf(undefined, CURVE_KINDS), 'linear');
  const con = { curve: { logistic: { midpoint: 0.3 }, invert: true }, range: { min: 2 } };
  const html = editorFieldsHtml({ weight: 2 }, con, CURVE_KINDS);
  assert.match(html, /data-field="action weight"\s+value="2"/);
  assert.match(html, /<option value="logistic" selected>logistic<\/option>/);
  // Kinds and parameters are labelled as the format (YAML) names them.
  assert.match(html, /<option value="piecewiseLinear" >piecewise_linear<\/option>/);
  assert.match(html, /data-param="steepness" value="" placeholder="default 10"/);
  assert.match(html, /data-param="midpoint" value="0.3"/);
  assert.match(html, /id="curve-invert" type="checkbox" checked/);
  assert.match(html, /data-field="range min"\s+value="2"/);
  assert.doesNotMatch(editorFieldsHtml({}, null, CURVE_KINDS), /curve-kind/);
  assert.deepEqual(parsePoints('0,0; 0.5,1;'), [{ x: 0, y: 0 }, { x: 0.5, y: 1 }]);
  assert.equal(pointsText([{ x: 0, y: 0 }, { x: 0.5, y: 1 }]), '0,0; 0.5,1');
  const pw = editorFieldsHtml({}, { curve: { piecewiseLinear: { points: [{ x: 1, y: 1 }] } } },
    CURVE_KINDS);
  assert.match(pw, /class="curve-points" data-param="points" rows="2">1,1</);
  assert.match(pw, /<label>step_at <input class="curve-flag" data-param="stepAt" type="checkbox" >/);
});

test('editor edits change the working copy, clear to the default, reopen on a new kind', () => {
  const action = { weight: 1 };
  const con = { curve: { logistic: { midpoint: 0.3 }, invert: true } };
  assert.equal(applyEdit(action, con, CURVE_KINDS,
    input({ field: 'action weight', value: '3' })), 'edited');
  assert.equal(action.weight, 3);
  applyEdit(action, con, CURVE_KINDS, input({ field: 'midpoint', param: 'midpoint', cls: 'curve-param' }));
  assert.deepEqual(con.curve.logistic, {});  // cleared: the default applies
  applyEdit(action, con, CURVE_KINDS, input({ field: 'steepness', param: 'steepness', cls: 'curve-param', value: '4' }));
  assert.deepEqual(con.curve.logistic, { steepness: 4 });
  applyEdit(action, con, CURVE_KINDS, input({ field: 'range min', value: '10' }));
  applyEdit(action, con, CURVE_KINDS, input({ field: 'output floor (min)', value: '0.1' }));
  applyEdit(action, con, CURVE_KINDS, input({ field: 'consideration weight', value: '0.5' }));
  assert.deepEqual([con.range, con.output, con.weight], [{ min: 10 }, { min: 0.1 }, 0.5]);
  assert.equal(applyEdit(action, con, CURVE_KINDS,
    input({ id: 'curve-kind', field: 'curve', value: 'piecewiseLinear' })), 'reopen');
  assert.deepEqual(con.curve, { piecewiseLinear: {}, invert: true });  // invert kept
  applyEdit(action, con, CURVE_KINDS, input({ param: 'points', cls: 'curve-points', value: '0,1;1,0' }));
  applyEdit(action, con, CURVE_KINDS, input({ param: 'stepAt', cls: 'curve-flag', checked: true }));
  applyEdit(action, con, CURVE_KINDS, input({ id: 'curve-invert', checked: false }));
  assert.deepEqual(con.curve, { piecewiseLinear:
    { points: [{ x: 0, y: 1 }, { x: 1, y: 0 }], stepAt: true }, invert: false });
  assert.equal(applyEdit(action, con, CURVE_KINDS, input({ field: 'something else' })), '');
  assert.equal(applyEdit(action, null, CURVE_KINDS, input({ field: 'range min', value: '1' })), '');
});

test('a logged snapshot loads as sent: no invented target, clocks, seed, tree state', () => {
  const entry = { agentId: 'mage-13', snapshot: { agentId: 'mage-13', factors: [12, 1],
    currentAction: 'patrol', seed: '42', secondsSinceAction: { heal: 3 },
    held: [{ resource: 'shrine' }] } };
  const { snapshot, tree } = loggedSnapshot(SET, entry);
  assert.deepEqual(snapshot.targets, []);
  assert.deepEqual(snapshot.factors, { health: 12, alarm: 1 });
  assert.equal(tree, null);
  const agent = agentOf(SET, snapshot, tree);
  assert.deepEqual(agent, { agentId: 'mage-13', behaviourSet: 'guard', factors: [12, 1],
    targets: [], currentAction: 'patrol', personality: '',
    secondsSinceAction: { heal: 3 }, seed: '42', held: [{ resource: 'shrine' }] });
  // Named factors and targets, a current target, and a tree's state.
  const named = loggedSnapshot({ ...SET, tree: {} }, { snapshot: {
    namedFactors: { alarm: 0, health: 70 }, currentTarget: 'g2', treeState: 'AAE=',
    gameTime: 2.5, leafOutcomes: [{ leaf: 4, status: 'NODE_STATUS_FAILURE' }, { status: 'NODE_STATUS_SUCCESS' }],
    targets: [{ targetId: 'g2', namedFactors: { distance: 7 } }, { targetId: 'g3', factors: [9] }] } });
  assert.deepEqual(named.tree, { prev: 'AAE=', time: 2.5,
    outcomes: { 4: 'NODE_STATUS_FAILURE', 0: 'NODE_STATUS_SUCCESS' } });
  const tagent = agentOf(SET, named.snapshot, named.tree);
  assert.deepEqual([tagent.agentId, tagent.factors, tagent.currentTarget, tagent.targets],
    ['inspector', [70, 0], 'g2', [{ targetId: 'g2', factors: [7] }, { targetId: 'g3', factors: [9] }]]);
  assert.equal(tagent.treeState, 'AAE=');
  assert.equal(tagent.gameTime, 2.5);
});

test('a snapshot carries over to a new revision where its factors still fit', () => {
  const old = { factors: { health: 10, gone: 3 }, targets: [{ id: 'g1', factors: { distance: 5 } }],
    currentAction: 'removed', personality: 'brave', seed: '9' };
  const next = { ...SET, factors: [...SET.factors, { name: 'fresh', min: 0, max: 4 }] };
  assert.deepEqual(carriedSnapshot(next, old), { factors: { health: 10, alarm: 0.5, fresh: 2 },
    targets: [{ id: 'g1', factors: { distance: 5 } }], currentAction: '', personality: 'brave',
    seed: '9' });
  assert.equal(carriedSnapshot(SET, { ...old, currentAction: 'flee' }).currentAction, 'flee');
});

test('a new revision reloads a page without edits, and is stale under edits', () => {
  const sets = [{ name: 'guard', revision: 'r2' }, { name: 'mage', revision: 'm1' }];
  assert.deepEqual(revisionChange(sets, 'guard', 'r2', true), { kind: 'same' });
  assert.deepEqual(revisionChange(sets, 'guard', 'r1', false), { kind: 'reload', revision: 'r2' });
  assert.deepEqual(revisionChange(sets, 'guard', 'r1', true), { kind: 'stale', revision: 'r2' });
  assert.deepEqual(revisionChange(sets, 'gone', 'g1', false), { kind: 'gone' });
  assert.match(staleText({ kind: 'stale', revision: 'r2' }, 'guard', 'r1'),
    /^guard changed on the server: it now serves revision r2, and your edits are over revision r1\. Export is refused/);
  assert.match(staleText({ kind: 'gone' }, 'guard', 'r1'), /no longer has guard/);
});

test('cards put the answer first: competing rank, winner, runner-up, vetoed last', () => {
  const row = (action, score, rank, extra = {}) => ({ action, score, rank, ...extra });
  const d = { action: 'heal', explanation: { rank: 1, runnerUpAction: 'attack', runnerUpTarget: 'g2',
    actions: [
      row('flee', 0, 2, { vetoed: true }),  // a higher rank, all vetoed: not competing
      row('patrol', 0.9, 1, { vetoed: true }),
      row('attack', 0.5, 1, { targetId: 'g1' }),
      row('idle', 0.6, 1),
      row('attack', 0.4, 1, { targetId: 'g2' }),
      row('heal', 0.3, 1),  // wins on commitment or a tie rule the engine applied
      row('sleep', 0.1, 0),
      row('wave', 0.2, 0),
    ] } };
  assert.deepEqual(cardOrder(d).map(([rank, rows]) =>
    [rank, rows.map((a) => a.action + (a.targetId ? '@' + a.targetId : ''))]),
  [[1, ['heal', 'attack@g2', 'idle', 'attack@g1', 'patrol']], [2, ['flee']], [0, ['wave', 'sleep']]]);
});

test('messages name list items instead of their positions', () => {
  const set = { actions: [{ name: 'attack', considerations: [{ name: 'close' }, { name: 'healthy' }],
    uses: [{ resource: 'slot' }] }], targetFactors: [{ name: 'distance' }] };
  assert.equal(namePaths(set, 'behaviour set "guard": actions[0].considerations[1].range: ' +
    'min must be below max, got min 5, max 5'),
  'behaviour set "guard": actions[attack].considerations[healthy].range: ' +
    'min must be below max, got min 5, max 5');
  assert.equal(namePaths(set, 'target_factors[0].name: duplicate'), 'target_factors[distance].name: duplicate');
  // Unnamed items and positions past the end stay positions.
  assert.equal(namePaths(set, 'actions[0].uses[0].resource: is required; actions[4].weight'),
    'actions[attack].uses[0].resource: is required; actions[4].weight');
  assert.equal(namePaths(null, 'actions[0]'), 'actions[0]');
});

test('one colour per action, none of them the veto red, and a pattern beside it', () => {
  assert.equal(new Set(ACTION_COLOURS).size, ACTION_COLOURS.length);
  assert.ok(!ACTION_COLOURS.includes('#c0392b'));
  assert.equal(actionColour(ACTION_COLOURS.length + 2), actionColour(2));
});

test('a finding loads its action\'s witness, its scenario or its consideration', () => {
  const set = { actions: [{ name: 'eat', considerations: [{ name: 'hunger' }] }, { name: 'hide' }],
    scenarios: [{ name: 'Starving' }, { name: 'Chased' }] };
  assert.deepEqual(findingTarget({ kind: 'dead', subject: 'hide' }, set), { kind: 'witness', action: 'hide' });
  assert.deepEqual(findingTarget({ kind: 'fragile_scenario', subject: 'Chased' }, set),
    { kind: 'scenario', index: 1 });
  assert.deepEqual(findingTarget({ kind: 'plateau', subject: 'eat.hunger' }, set),
    { kind: 'consideration', action: 'eat', consideration: 'hunger' });
  assert.equal(findingTarget({ kind: 'never_entered', subject: 'combat' }, set), null);
  assert.equal(findingTarget({ kind: 'plateau', subject: 'eat.thirst' }, set), null);
  // In a tree: a node by its name, by its number, or a utility node's choice.
  const kinds = [{ name: 'sequence', jsonName: 'sequence' }, { name: 'utility', jsonName: 'utility' },
    { name: 'action', jsonName: 'action' }];
  const tree = { ...set, tree: { name: 'combat', sequence: { children: [
    { name: 'attack', utility: { children: [{ action: 'eat' }, { action: 'hide' }] } }] } } };
  assert.deepEqual(findingTarget({ kind: 'never_entered', subject: 'combat' }, tree, kinds), { kind: 'node', index: 0 });
  assert.deepEqual(findingTarget({ kind: 'never_holds', subject: 'node 1' }, tree, kinds), { kind: 'node', index: 1 });
  assert.deepEqual(findingTarget({ kind: 'never_chosen', subject: 'attack.hide' }, tree, kinds),
    { kind: 'node', index: 3 });
  assert.equal(findingTarget({ kind: 'never_holds', subject: 'node 9' }, tree, kinds), null);
  const html = findingsHtml([{ kind: 'dead', subject: 'hide', message: 'm' },
    { kind: 'never_entered', subject: 'combat', message: 'm' }], set);
  assert.match(html, /class="finding" data-index="0"/);
  assert.match(html, /class="finding inert" data-index="1"/);
});

test('actions kept fixed leave the tuner the others, or nothing to change', () => {
  const actions = ['eat', 'hide', 'wander'];
  assert.equal(unlockSpec('weights', actions, []), 'weights');
  assert.equal(unlockSpec('weights+bookends', actions, ['hide']), 'weights+bookends:eat,wander');
  assert.equal(unlockSpec('action_weights', actions, actions), null);
  assert.match(locksHtml(['eat', '<b>']), /data-lock="eat"> eat<\/label>.*data-lock="&lt;b&gt;"/s);
});

test('the pinned answer says who won over whom, by rank when the margin is negative', () => {
  const cons = (pairs) => pairs.map(([c, output]) => ({ consideration: c, output }));
  const d = { action: 'flee', explanation: { runnerUpAction: 'attack', runnerUpTarget: 'g1', margin: 0.125,
    actions: [
      { action: 'flee', score: 1.2, commitmentFactor: 1.5, considerations: cons([['hurt', 0.9], ['far', 0.4]]) },
      { action: 'attack', targetId: 'g1', score: 0.8, considerations: cons([['close', 0.2], ['healthy', 1]]) },
    ] } };
  assert.deepEqual(duelText(d), {
    head: 'flee wins with 1.200 over attack → g1 (0.800), by 0.125.',
    lines: ['Its score is above 1 because it is the current action: the commitment bonus multiplies it by 1.500.',
      "The winner's weakest consideration: far (output 0.400).",
      "The runner-up's weakest consideration: close (output 0.200)."] });
  const byRank = { ...d, explanation: { ...d.explanation, margin: -0.2, actions: [
    { action: 'flee', score: 0.6, rank: 2 }, { action: 'attack', targetId: 'g1', score: 0.8, rank: 1 }] } };
  assert.equal(duelText(byRank).head, 'flee wins with 0.600, by rank: it is in rank 2, where it ' +
    'competes; attack → g1 scores more (0.800) in rank 1.');
  assert.equal(duelText({ action: 'idle', explanation: { actions: [{ action: 'idle', score: 0.1 }] } }).head,
    'idle wins with 0.100, unopposed.');
  assert.equal(duelText({ action: '', explanation: {} }).head, 'No action can be chosen.');
  assert.match(duelHtml(d), /<p class="duel-head">flee wins with 1.200 over attack → g1/);
});

test('winner against runner-up: considerations lowest first, a shared factor on one row', () => {
  const set = { actions: [
    { name: 'heal', considerations: [{ name: 'hurt', factor: 'health' }, { name: 'potion', factor: 'has_potion' }] },
    { name: 'flee', considerations: [{ name: 'desperate', factor: 'health' }, { name: 'outnumbered', factor: 'enemies' },
      { name: 'far', factor: 'distance' }] }] };
  const row = (action, list) => ({ action, score: 0.5, considerations: list.map(([consideration, contribution]) =>
    ({ consideration, contribution })) });
  const d = { action: 'heal', explanation: { runnerUpAction: 'flee', actions: [
    row('heal', [['hurt', 0.6], ['potion', 1]]),
    row('flee', [['desperate', 0.3], ['outnumbered', 0.9], ['far', 0.5]])] } };
  const name = (c) => (c ? `${c.name} ${c.contribution}` : '');
  assert.deepEqual(duelRows(set, d).map(([a, f, b]) => [name(a), f, name(b)]), [
    ['hurt 0.6', 'health', 'desperate 0.3'],
    ['potion 1', '', 'far 0.5'],
    ['', '', 'outnumbered 0.9']]);
  const html = duelHtml(d, set);
  assert.match(html, /<caption>What separates them/);
  assert.match(html, /<th scope="col">heal<\/th><th scope="col">factor<\/th>/);
  assert.deepEqual(duelRows(set, { action: 'heal', explanation: { actions: [row('heal', [])] } }), []);
});

test('a slider steps by a round fraction of its range, so round values are reachable', () => {
  assert.equal(factorStep({ min: 0, max: 100 }), 0.5);
  assert.equal(factorStep({ min: 0, max: 10 }), 0.05);
  assert.equal(factorStep({ min: 0, max: 6 }), 0.05);
  assert.equal(factorStep({ min: 0, max: 1.33 }), 0.01);
  assert.equal(factorStep({ min: 40, max: 0 }), 0.2);
  assert.equal(factorStep({ min: 0, max: 0 }), 0.01);
  // 4 on a 0..6 slider is a whole number of steps.
  assert.equal(Number.isInteger(Math.round(4 / factorStep({ min: 0, max: 6 }) * 1e9) / 1e9), true);
});

// ---- the curve editor (curve_editor.js) ----

const EDIT_KINDS = {
  linear: { formatName: 'linear', params: [
    { name: 'slope', type: 'number', default: 1 }, { name: 'intercept', type: 'number', default: 0 }] },
  logistic: { formatName: 'logistic', params: [
    { name: 'steepness', type: 'number', default: 10 },
    { name: 'midpoint', type: 'number', default: 0.5, onInput: true },
    { name: 'rescale', type: 'flag', default: false }] },
  piecewiseLinear: { formatName: 'piecewise_linear', params: [{ name: 'points', type: 'points' }] },
  smoothstep: { formatName: 'smoothstep', params: [] },
};

test('scales map factor values and outputs to the plot and back; ticks are round values', () => {
  const s = scales(0, 100);
  assert.equal(s.sx(0), s.x0);
  assert.equal(s.sx(100), s.x1);
  assert.equal(s.sy(0), s.y0);
  assert.equal(s.sy(1), s.y1);
  assert.ok(Math.abs(s.ix(s.sx(37.5)) - 37.5) < 1e-9);
  assert.ok(Math.abs(s.iy(s.sy(0.3)) - 0.3) < 1e-9);
  assert.deepEqual(ticks(0, 100), [0, 20, 40, 60, 80, 100]);
  assert.deepEqual(ticks(0, 6), [0, 2, 4, 6]);
  assert.deepEqual(ticks(0, 1), [0, 0.2, 0.4, 0.6, 0.8, 1]);
  assert.equal(roundTo(3.98765, 0.01), 3.99);
});

test('outputAt reads between samples, rising or falling', () => {
  const pts = [[0, 0], [10, 1], [20, 0.5]];
  assert.equal(outputAt(pts, 5), 0.5);
  assert.equal(outputAt(pts, 15), 0.75);
  assert.equal(outputAt([[20, 1], [0, 0]], 10), 0.5);
});

test('handles: bookends, output range, the midpoint along the input, steepness up and down, points', () => {
  const con = { range: { min: 0, max: 50 }, output: { min: 0.2, max: 1 },
    curve: { logistic: { steepness: 8, midpoint: 0.4 } } };
  const pts = [[0, 0.2], [100, 1]];
  const hs = handlesOf(con, EDIT_KINDS, 0, 100, pts);
  const by = Object.fromEntries(hs.map((h) => [h.id, h]));
  assert.deepEqual(Object.keys(by), ['range.min', 'range.max', 'output.min', 'output.max',
    'param.steepness', 'param.midpoint']);
  assert.equal(by['range.max'].x, 50);
  assert.equal(by['output.min'].value, 0.2);
  assert.equal(by['param.midpoint'].axis, 'x');
  assert.equal(by['param.midpoint'].x, 20, 'midpoint 0.4 of the bookends 0..50');
  assert.equal(by['param.steepness'].axis, 'y');
  const pw = handlesOf({ range: { min: 0, max: 10 }, curve: { piecewiseLinear: {
    points: [{ x: 0, y: 1 }, { x: 0.5, y: 0.25 }] } } }, EDIT_KINDS, 0, 10, pts);
  assert.deepEqual(pw.filter((h) => h.axis === 'xy').map((h) => [h.x, h.y]), [[0, 1], [5, 0.25]]);
});

test('a drag moves what its handle edits: bookend, midpoint, steepness, a point', () => {
  const con = { range: { min: 0, max: 50 }, output: { min: 0, max: 1 },
    curve: { logistic: { steepness: 8, midpoint: 0.4 } } };
  const s = scales(0, 100);
  const hs = handlesOf(con, EDIT_KINDS, 0, 100, [[0, 0], [100, 1]]);
  const h = (id) => hs.find((x) => x.id === id);
  let v = dragValue(con, h('range.max'), { x: 0, y: 0 }, { x: s.sx(62), y: 0 }, s);
  assert.equal(v.value, 62);
  v = dragValue(con, h('param.midpoint'), { x: 0, y: 0 }, { x: s.sx(25), y: 0 }, s);
  assert.equal(v.value, 0.5, 'halfway between the bookends');
  v = dragValue(con, h('param.steepness'), { x: 0, y: 100 }, { x: 0, y: 40 }, s);
  assert.equal(v.value, 21.7, 'up 60 px: times e (8e = 21.75), to a tenth');
  v = dragValue(con, h('output.max'), { x: 0, y: 0 }, { x: 0, y: s.sy(0.8) }, s);
  assert.equal(v.value, 0.8);
  applyHandle(con, EDIT_KINDS, h('param.midpoint'), 0.5);
  applyHandle(con, EDIT_KINDS, h('range.max'), 62);
  assert.deepEqual(con, { range: { min: 0, max: 62 }, output: { min: 0, max: 1 },
    curve: { logistic: { steepness: 8, midpoint: 0.5 } } });
  const pw = { range: { min: 0, max: 10 }, curve: { piecewiseLinear: { points: [{ x: 0, y: 1 }, { x: 1, y: 0 }] } } };
  const ph = handlesOf(pw, EDIT_KINDS, 0, 10, [[0, 1], [10, 0]])[5];
  const s10 = scales(0, 10);
  v = dragValue(pw, ph, { x: 0, y: 0 }, { x: s10.sx(3), y: s10.sy(0.5) }, s10);
  assert.deepEqual(v, { value: 0.3, yValue: 0.5 });
  applyHandle(pw, EDIT_KINDS, ph, v.value, v.yValue);
  assert.deepEqual(pw.curve.piecewiseLinear.points, [{ x: 0, y: 1 }, { x: 0.3, y: 0.5 }]);
});

test('arrow keys step each handle; shift takes ten steps; other keys do nothing', () => {
  const con = { range: { min: 0, max: 100 }, curve: { logistic: { steepness: 10, midpoint: 0.5 } } };
  const hs = handlesOf(con, EDIT_KINDS, 0, 100, [[0, 0], [100, 1]]);
  const h = (id) => hs.find((x) => x.id === id);
  assert.deepEqual(keyValue(h('range.min'), 'ArrowRight', false), { value: 1 });
  assert.deepEqual(keyValue(h('range.max'), 'ArrowLeft', true), { value: 90 });
  assert.deepEqual(keyValue(h('param.midpoint'), 'ArrowRight', false), { value: 0.51 });
  assert.deepEqual(keyValue(h('param.steepness'), 'ArrowUp', false), { value: 11 });
  assert.deepEqual(keyValue(h('output.max'), 'ArrowDown', false), { value: 0.99 });
  assert.equal(keyValue(h('range.min'), 'Enter', false), null);
});

test('presets are the engine\'s kinds only; the plot names every handle and labels its axes', () => {
  assert.deepEqual(presetsOf(EDIT_KINDS).map((p) => p.name), ['rises', 'falls', 'S-curve', 'ease in-out']);
  const con = { range: { min: 0, max: 100 }, curve: { logistic: { steepness: 10, midpoint: 0.5 } } };
  const pts = [[0, 0], [50, 0.5], [100, 1]];
  const svg = plotSvg({ points: pts, ghost: pts, from: 0, to: 100, unit: 'hp', factor: 'health',
    handles: handlesOf(con, EDIT_KINDS, 0, 100, pts), agentX: 30 });
  for (const label of ['range min (bookend)', 'range max (bookend)', 'output min', 'output max',
    'steepness', 'midpoint']) {
    assert.match(svg, new RegExp(`role="slider"\\s+aria-label="${label.replace(/[()]/g, '\\$&')}"`));
  }
  assert.match(svg, />health \(hp\)</);
  assert.match(svg, />60</);
  assert.match(svg, /class="ghost"/);
  assert.equal(readout(pts, 0, 100, 'hp', scales(0, 100).sx(25)), '25 hp → 0.250');
});

// ---- inputs as the game has them (inputs_view.js, snapshot.js) ----

test('factor kinds: a flag starts at 0 and a count at a whole middle, both in whole steps', () => {
  const set = { factors: [
    { name: 'seen', min: 0, max: 1, kind: 'FACTOR_KIND_FLAG' },
    { name: 'goblins', min: 0, max: 5, kind: 'FACTOR_KIND_COUNT' },
    { name: 'health', min: 0, max: 100 }] };
  assert.deepEqual(set.factors.map(kindOf), ['flag', 'count', 'number']);
  assert.deepEqual(set.factors.map(factorStep), [1, 1, 0.5]);
  assert.deepEqual(defaultSnapshot(set).factors, { seen: 0, goblins: 3, health: 50 });
});

test('a flag is a checkbox; a number has a slider and a typed box; targets can be added and removed', () => {
  const flag = factorInputHtml({ name: 'in_cover', min: 0, max: 1, kind: 'FACTOR_KIND_FLAG' }, 1,
    { factor: 'in_cover' });
  assert.match(flag, /type="checkbox" data-factor="in_cover"\s+checked/);
  assert.doesNotMatch(flag, /type="range"/);
  const count = factorInputHtml({ name: 'charges', min: 0, max: 6, unit: 'charges', kind: 'FACTOR_KIND_COUNT' }, 2,
    { target: 1, factor: 'charges' }, 'g2 charges');
  assert.match(count, /type="number" class="typed" data-typed-target="1" data-typed-target-factor="charges" step="1"/);
  assert.match(count, /type="range" min="0" max="6" step="1" value="2" data-target="1" data-target-factor="charges"/);
  assert.match(count, /aria-label="g2 charges \(charges\)"/);
  assert.equal(inputValue({ type: 'checkbox', checked: true }), 1);
  assert.equal(inputValue({ type: 'number', value: '37.25' }), 37.25);
  assert.ok(Number.isNaN(inputValue({ type: 'number', value: '' })));
  const tf = [{ name: 'distance', min: 0, max: 30 }];
  const html = targetsHtml([{ id: 'g1', factors: { distance: 3 } }], tf);
  assert.match(html, /Target g1/);
  assert.match(html, /data-remove-target="0"/);
  assert.match(html, /id="add-target"/);
  assert.equal(targetsHtml([], []), '');
  const snap = { targets: [{ id: 'target-1', factors: {} }, { id: 'target-3', factors: {} }] };
  assert.deepEqual(newTarget({ targetFactors: tf }, snap), { id: 'target-2', factors: { distance: 15 } });
});

test('a count\'s crossing is the whole value that gets there; a flag\'s is 0 or 1', () => {
  const s = { factor: 'charges', unit: 'charges',
    below: { action: 'recharge', value: 0.4 }, above: { action: 'attack', targetId: 'g1', value: 1.221 } };
  assert.equal(crossingText(s, 'above', 'count'), 'attack@g1 at ≥ 2 charges');
  assert.equal(crossingText(s, 'below', 'count'), 'recharge at ≤ 0 charges');
  assert.equal(crossingText(s, 'below', 'flag'), 'recharge at 0');
  assert.equal(crossingText(s, 'above'), 'attack@g1 at ≥ 1.221 charges');
  assert.equal(sensitivityLine(s, 'count').text, 'recharge at ≤ 0 charges · attack@g1 at ≥ 2 charges');
});

// ---- playing a tree scenario (tree_view.js) ----

const PLAY_KINDS = [{ name: 'reactive_fallback', jsonName: 'reactiveFallback' },
  { name: 'action', jsonName: 'action' }, { name: 'condition', jsonName: 'condition' }];
const PLAY_TREE = { name: 'root', reactiveFallback: { children: [
  { name: 'sees', condition: { factor: 'seen' } },
  { action: 'patrol' },
  { name: 'cast', action: 'fireball' }] } };

test('tree nodes are numbered as the server numbers them, leaves named as scenarios name them', () => {
  assert.deepEqual(treeNodes(PLAY_TREE, PLAY_KINDS).map((n) => n.name), ['root', 'sees', 'patrol', 'cast']);
});

test('a scenario tick sends its factors, the last state and outcomes for the leaves that ran', () => {
  const nodes = treeNodes(PLAY_TREE, PLAY_KINDS);
  const d = { treeState: 'S1', runLeaves: [{ node: 3, action: 'fireball' }, { node: 2, action: 'patrol' }] };
  const step = { gameTime: 2, factors: { seen: 1 }, outcomes: { cast: 'NODE_STATUS_SUCCESS', patrol: 'NODE_STATUS_RUNNING' } };
  assert.deepEqual(scenarioTick(nodes, step, d),
    { time: 2, factors: { seen: 1 }, prev: 'S1', outcomes: { 3: 'NODE_STATUS_SUCCESS' } });
  assert.deepEqual(scenarioTick(nodes, { gameTime: 0 }, null), { time: 0, factors: {}, prev: '', outcomes: {} });
});

test('the tick log says what started, ran and halted, and whether the scenario held', () => {
  const nodes = treeNodes(PLAY_TREE, PLAY_KINDS);
  const d = { treeStatus: 'NODE_STATUS_RUNNING', runLeaves: [{ node: 3, action: 'fireball', started: true }],
    haltedLeaves: [{ node: 2, action: 'patrol' }] };
  const entry = tickLogEntry(nodes, d, 0.5);
  assert.deepEqual(entry, { time: 0.5, started: ['cast'], running: [], halted: ['patrol'], status: 'running' });
  assert.deepEqual(stepMisses({ expectedRun: ['cast'], expectedHalted: ['patrol'],
    expectedStatus: 'NODE_STATUS_RUNNING' }, entry), []);
  assert.deepEqual(stepMisses({ expectedRun: ['patrol'], expectedStatus: 'NODE_STATUS_SUCCESS' }, entry),
    ['expected to run patrol, ran cast', 'expected the root success, was running']);
  entry.misses = [];
  const html = tickLogHtml([entry, { ...entry, misses: ['expected to run patrol, ran cast'] }]);
  assert.match(html, /0\.5 s · starts cast · halts patrol · root running <span class="held">✓/);
  assert.match(html, /<span class="miss">✗ expected to run patrol, ran cast<\/span>/);
  assert.equal(tickLogHtml([]), '');
});

test('a piece from a package says where it is written and how many sets an edit there changes', () => {
  const set = { origins: [
    { piece: 'factors.health', file: 'wolf.yaml', line: 7 },
    { piece: 'actions.flee', package: 'survival', file: 'survival.yaml', line: 12,
      overridden: ['weight', 'considerations.hurt.range'] },
    { piece: 'actions.howl', file: 'wolf.yaml', line: 20 },
  ] };
  const packages = [{ name: 'survival', file: 'survival.yaml', usedBy: ['bandit', 'deer', 'wolf'] }];
  assert.equal(provenanceText(originOf(set, 'actions.flee'), packages),
    'From package survival (survival.yaml:12). An edit there changes 3 sets: bandit, deer, wolf. ' +
    'This set overrides: weight, considerations.hurt.range.');
  // The set's own piece, a set that composes nothing, an unknown piece: nothing to say.
  assert.equal(provenanceText(originOf(set, 'actions.howl'), packages), '');
  assert.equal(originOf({ name: 'plain' }, 'actions.flee'), null);
  assert.equal(provenanceText(originOf(set, 'actions.nope'), packages), '');
  assert.equal(provenanceText({ piece: 'actions.x', package: 'solo', file: 'solo.yaml' },
    [{ name: 'solo', usedBy: ['one'] }]),
  'From package solo (solo.yaml). An edit there changes 1 set: one.');
});
