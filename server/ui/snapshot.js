// The page's agent: a snapshot ({factors: {name: v}, targets: [{id,
// factors}], currentAction, personality, secondsSinceAction}) of a set, and
// the agent the API takes for it. Pure functions of the set (as the server
// serves it, defaults applied), unit-tested under Node
// (tests/ui/modules_test.mjs).

// The agent's own factors and the per-target factors the set declares.
export function factorsOf(set) { return (set && set.factors) || []; }
export function targetFactorsOf(set) { return (set && set.targetFactors) || []; }

// The factor `def` (a consideration) reads, or a 0..1 stand-in when the set
// does not declare it.
export function factorOf(set, def) {
  const list = def.perTarget ? targetFactorsOf(set) : factorsOf(set);
  return list.find((f) => f.name === def.factor) || { min: 0, max: 1 };
}

// What factor `f`'s values are (its `kind` in the format): 'flag' (0 or
// 1), 'count' (whole numbers) or 'number'.
export function kindOf(f) {
  return { FACTOR_KIND_FLAG: 'flag', FACTOR_KIND_COUNT: 'count' }[f && f.kind] || 'number';
}

// A slider's step for factor `f`: whole steps for a flag or a count, else
// about 1/200 of its range, rounded to 1, 2 or 5 times a power of ten, so
// that round values (4, 0.5, 37.5) can be reached exactly rather than as
// 3.99.
export function factorStep(f) {
  if (kindOf(f) !== 'number') return 1;
  const raw = Math.abs(f.max - f.min) / 200;
  if (!(raw > 0) || !Number.isFinite(raw)) return 0.01;
  const p = 10 ** Math.floor(Math.log10(raw));
  const m = raw / p;
  return Number(((m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p).toPrecision(1));
}

// The middle of each factor's range: 0 for a flag, a whole one for a count.
function midpoints(list) {
  const middle = (f) => ({ flag: 0, count: Math.round((f.min + f.max) / 2) })[kindOf(f)] ??
    (f.min + f.max) / 2;
  return Object.fromEntries(list.map((f) => [f.name, middle(f)]));
}

// A new target for `snapshot`: the first unused id target-N, every factor
// at the middle of its range.
export function newTarget(set, snapshot) {
  const ids = new Set(snapshot.targets.map((t) => t.id));
  let n = 1;
  while (ids.has(`target-${n}`)) ++n;
  return { id: `target-${n}`, factors: midpoints(targetFactorsOf(set)) };
}

// Every factor at the middle of its range; one target when the set has
// per-target factors.
export function defaultSnapshot(set) {
  const targets = targetFactorsOf(set).length
    ? [{ id: 'target-1', factors: midpoints(targetFactorsOf(set)) }] : [];
  return { factors: midpoints(factorsOf(set)), targets, currentAction: '', personality: '' };
}

// `old` (a snapshot of an earlier revision of the set) carried over to
// `set`: the values of factors both have, the middle of the range for new
// ones; the targets, current action and the rest as they were.
export function carriedSnapshot(set, old) {
  const keep = (list, values) => Object.fromEntries(list.map((f) =>
    [f.name, f.name in values ? values[f.name] : (f.min + f.max) / 2]));
  return {
    ...old,
    factors: keep(factorsOf(set), old.factors),
    targets: old.targets.map((t) => ({ id: t.id, factors: keep(targetFactorsOf(set), t.factors) })),
    currentAction: set.actions.some((a) => a.name === old.currentAction) ? old.currentAction : '',
  };
}

// A scenario (or a witness the analysis found) as a snapshot: what it
// gives, the middle of the range for what it leaves out.
export function scenarioSnapshot(set, s) {
  return {
    factors: Object.assign(midpoints(factorsOf(set)), s.factors || {}),
    targets: (s.targets || []).map((t) => ({
      id: t.id,
      factors: Object.assign(midpoints(targetFactorsOf(set)), t.factors || {}),
    })),
    currentAction: s.currentAction || '',
    personality: s.personality || '',
    secondsSinceAction: s.secondsSinceAction,
  };
}

// A factor list's values by name from a logged snapshot's `factors` (in the
// set's order) or `namedFactors`.
function valuesByName(list, values, named) {
  if (named && Object.keys(named).length) return { ...named };
  return Object.fromEntries(list.map((f, i) => [f.name, (values || [])[i]]));
}

// What the game sent for a live-feed entry (its `snapshot`, as the server
// received it), exactly: factors, targets (none when it sent none), current
// action and target, cooldown clocks, seed, personality, held resources, and
// for sets with a tree the tree's state, game time and leaf outcomes.
// Returns {snapshot, tree} (tree null for flat sets).
export function loggedSnapshot(set, entry) {
  const sent = entry.snapshot || {};
  const snapshot = {
    factors: valuesByName(factorsOf(set), sent.factors, sent.namedFactors),
    targets: (sent.targets || []).map((t) => ({
      id: t.targetId || '',
      factors: valuesByName(targetFactorsOf(set), t.factors, t.namedFactors),
    })),
    currentAction: sent.currentAction || '',
    personality: sent.personality || '',
    secondsSinceAction: sent.secondsSinceAction,
    currentTarget: sent.currentTarget || '',
    seed: sent.seed,
    held: sent.held,
    // The game's id (masked when the server masks ids): a canary routes by it.
    agentId: sent.agentId || entry.agentId || '',
  };
  const tree = set.tree ? {
    prev: sent.treeState || '',
    time: sent.gameTime || 0,
    outcomes: Object.fromEntries((sent.leafOutcomes || []).map((o) => [o.leaf || 0, o.status])),
  } : null;
  return { snapshot, tree };
}

// The agent for `snapshot` in the API's form. `overrides` replaces one
// factor ({factor, value}) or the first target's ({targetFactor, value}),
// as a sweep steps it; `tree` ({prev, time, outcomes}) is the tree's state
// for sets with a tree.
export function agentOf(set, snapshot, tree, overrides = {}) {
  const factors = factorsOf(set).map((f) =>
    overrides.factor === f.name ? overrides.value : snapshot.factors[f.name]);
  const targets = snapshot.targets.map((t, i) => ({
    targetId: t.id,
    factors: targetFactorsOf(set).map((f) =>
      (i === 0 && overrides.targetFactor === f.name)
        ? overrides.value : t.factors[f.name]),
  }));
  const agent = {
    agentId: snapshot.agentId || 'inspector', behaviourSet: set.name, factors, targets,
    currentAction: snapshot.currentAction || '',
    personality: snapshot.personality || '',
  };
  // What only a logged snapshot carries (loggedSnapshot), sent as it came.
  for (const key of ['secondsSinceAction', 'currentTarget', 'seed', 'held']) {
    if (snapshot[key] !== undefined && snapshot[key] !== '') agent[key] = snapshot[key];
  }
  if (tree) {
    agent.treeState = tree.prev;
    agent.gameTime = tree.time;
    agent.leafOutcomes = Object.entries(tree.outcomes).map(
      ([leaf, status]) => ({ leaf: Number(leaf), status }));
  }
  return agent;
}
