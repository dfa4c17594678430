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

function midpoints(list) {
  return Object.fromEntries(list.map((f) => [f.name, (f.min + f.max) / 2]));
}

// Every factor at the middle of its range; one target when the set has
// per-target factors.
export function defaultSnapshot(set) {
  const targets = targetFactorsOf(set).length
    ? [{ id: 'target-1', factors: midpoints(targetFactorsOf(set)) }] : [];
  return { factors: midpoints(factorsOf(set)), targets, currentAction: '', personality: '' };
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
    agentId: 'inspector', behaviourSet: set.name, factors, targets,
    currentAction: snapshot.currentAction || '',
    personality: snapshot.personality || '',
  };
  if (snapshot.secondsSinceAction)
    agent.secondsSinceAction = snapshot.secondsSinceAction;
  if (tree) {
    agent.treeState = tree.prev;
    agent.gameTime = tree.time;
    agent.leafOutcomes = Object.entries(tree.outcomes).map(
      ([leaf, status]) => ({ leaf: Number(leaf), status }));
  }
  return agent;
}
