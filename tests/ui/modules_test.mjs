// The inspector's pure modules (server/ui/text.js, tree_view.js, yaml.js)
// under Node's own test runner; the page as a whole is tests/browser's.
//   node tests/ui/modules_test.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { esc, fmt, short } from '../../server/ui/text.js';
import { STATUS, nodeChildren, nodeKindOf } from '../../server/ui/tree_view.js';
import { yamlDocument, yamlLines } from '../../server/ui/yaml.js';

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

test('yamlDocument writes snake_case keys, keeps map keys, drops the revision', () => {
  const set = {
    name: 'guard',
    revision: 'abc123',
    factors: [{ name: 'health', min: 0, max: 100 }],
    actions: [{ name: 'attack', considerations: [
      { factor: 'health', curve: { linear: { slope: -1, intercept: 1 } } }] }],
    selection: { strategy: 'STRATEGY_TOP_K', topK: 2 },
    personalities: [{ name: 'bold', actionWeights: { attackHard: 2 } }],
    tags: [],
  };
  const text = yamlDocument(set, false);
  const lines = text.split('\n');
  assert.equal(lines[0], '# Exported from the utilityd inspector');
  assert.ok(!text.includes('abc123'), 'the revision is left out');
  assert.ok(lines.includes('name: "guard"'));
  assert.ok(lines.includes('  top_k: 2'), text);
  assert.ok(lines.includes('  strategy: "STRATEGY_TOP_K"'));
  assert.ok(lines.includes('    action_weights:'), text);
  assert.ok(lines.includes('      "attackHard": 2'), 'map keys stay as written');
  assert.ok(lines.includes('tags: []'));
  assert.ok(lines.includes('  - name: "attack"'), text);
  assert.ok(lines.includes('            slope: -1'), text);
  assert.ok(text.endsWith('\n'));
  assert.equal(set.revision, 'abc123', 'the set itself is not changed');
  assert.match(yamlDocument(set, true).split('\n')[0], /with what-if edits/);
});

test('yamlLines writes lists of scalars and of objects in block style', () => {
  assert.deepEqual(yamlLines([1, 'a', true], 0, false), ['- 1', '- "a"', '- true']);
  assert.deepEqual(yamlLines([{ x: 1, y: 2 }, {}], 1, false),
    ['  - x: 1', '    y: 2', '  - {}']);
});
