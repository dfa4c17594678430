// Sweeps: one factor stepped across its range, each step scored by the
// server with full breakdowns. From a sweep come each consideration's curve
// (drawn on its card) and the chart of every action's best score with the
// winner changes. Pure functions, unit-tested under Node
// (tests/ui/modules_test.mjs); app.js asks the server for the sweeps.
import { actionColour, actionDash, actionKey } from './plot.js';
import { crossingText } from './sensitivity_view.js';
import { kindOf } from './snapshot.js';
import { esc, fmt, short } from './text.js';

export const SWEEP_POINTS = 41;

// `n` evenly spaced values of factor `f` from its min to its max.
// A flag sweeps 0 and 1; a count its whole values (every one when they are
// at most `n`, else `n` of them, rounded).
export function sweepXs(f, n = SWEEP_POINTS) {
  const kind = kindOf(f);
  if (kind === 'flag') return [0, 1];
  const xs = [];
  for (let i = 0; i < n; i++) xs.push(f.min + (f.max - f.min) * i / (n - 1));
  if (kind !== 'count') return xs;
  const whole = Math.abs(f.max - f.min) + 1 <= n
    ? Array.from({ length: Math.abs(f.max - f.min) + 1 }, (_, i) => f.min + Math.sign(f.max - f.min) * i)
    : xs.map(Math.round);
  return [...new Set(whole)];
}

// Adds to `curves` ("action/consideration" -> [[x, output], ...]) the
// points of every consideration that reads the swept factor. `sweep` is
// {kind: 'a' (the agent's) or 't' (the first target's), f, xs, decisions};
// `firstTarget` is the id whose rows count ('' when there are no targets).
export function addSweepCurves(curves, set, sweep, firstTarget) {
  sweep.decisions.forEach((d, i) => {
    for (const a of (d.explanation || {}).actions || []) {
      if (a.targetId && firstTarget && a.targetId !== firstTarget) continue;
      const action = set.actions[a.actionIndex];
      for (const c of a.considerations || []) {
        const def = action.considerations.find((x) => x.name === c.consideration);
        if (!def || def.factor !== sweep.f.name || !!def.perTarget !== (sweep.kind === 't'))
          continue;
        const key = action.name + '/' + c.consideration;
        (curves[key] = curves[key] || [])[i] = [sweep.xs[i], c.output];
      }
    }
  });
  return curves;
}

// The winner of each step, and where it changes (midway between steps).
export function winnerChanges(sweep) {
  const winners = sweep.decisions.map((d) => d.action || '(none)');
  const changes = [];
  for (let i = 1; i < winners.length; i++) {
    if (winners[i] !== winners[i - 1])
      changes.push({ from: winners[i - 1], to: winners[i],
                     x: (sweep.xs[i] + sweep.xs[i - 1]) / 2,
                     between: [sweep.xs[i - 1], sweep.xs[i]] });
  }
  return { winners, changes };
}

// Each action's best score (over its targets) at each step, in set order.
// A tree set's tick scores only the children of its utility nodes: their
// rows are in the tree path (by action name; their index counts the
// node's children). An action scored at no step (a tree's leaf that runs
// without a score) has null for its line: it is not drawn. `names` are the
// set's actions.
export function bestScores(sweep, names) {
  const best = names.map(() => []);
  const scored = new Set();
  sweep.decisions.forEach((d, i) => {
    const top = {};
    const rows = [...((d.explanation || {}).actions || []).map((a) => [a.actionIndex || 0, a.score]),
      ...(d.treePath || []).flatMap((t) => (t.utility && t.utility.actions) || [])
        .map((a) => [names.indexOf(a.action), a.score])];
    for (const [k, score] of rows) {
      if (k < 0) continue;
      top[k] = Math.max(top[k] || 0, score || 0);
      scored.add(k);
    }
    best.forEach((pts, k) => pts.push([sweep.xs[i], top[k] || 0]));
  });
  return best.map((pts, k) => (scored.has(k) ? pts : null));
}

// The sweep chart and its sentence. `names` are the set's actions,
// `current` the agent's value of the factor, `sens` the decision's exact
// sensitivity entry for it (or none).
export function sweepChart(sweep, names, current, sens) {
  const w = 360, h = 200, f = sweep.f;
  const sx = (v) => 30 + (w - 40) * (v - f.min) / ((f.max - f.min) || 1);
  const sy = (v) => h - 20 - (h - 30) * Math.min(1, v);
  const vertical = (cls, x, extra = '') =>
    `<line class="${cls}"${extra} x1="${sx(x)}" x2="${sx(x)}" y1="10" y2="${h - 20}"/>`;
  const best = bestScores(sweep, names);
  let lines = best.map((pts, k) => (!pts ? '' :
    `<path fill="none" stroke="${actionColour(k)}" stroke-width="2"
        stroke-dasharray="${actionDash(k)}" data-action="${esc(names[k])}" d="${pts.map((p, i) => `${i ? 'L' : 'M'}${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join('')}"/>`)).join('');
  const { winners, changes } = winnerChanges(sweep);
  for (const c of changes) lines += vertical('marker', c.x, ' stroke-dasharray="3,3"');
  const near = [];
  for (const side of ['below', 'above']) {
    if (!sens || !sens[side]) continue;
    const x = sens[side].value || 0;
    near.push(crossingText(sens, side));
    lines += vertical('crossing', x, ` data-side="${side}" data-value="${x}"`);
  }
  const html = `<svg width="${w}" height="${h}">
      <line class="axis" x1="30" x2="${w - 10}" y1="${h - 20}" y2="${h - 20}"/>
      <line class="axis" x1="30" x2="30" y1="10" y2="${h - 20}"/>
      <text x="26" y="${sy(1) + 4}" text-anchor="end">1</text>
      <text x="26" y="${sy(0)}" text-anchor="end">0</text>
      <text x="30" y="${h - 5}">${fmt(f.min)}</text>
      <text x="${w - 10}" y="${h - 5}" text-anchor="end">${fmt(f.max)} ${esc(f.unit || '')}</text>
      ${lines}<circle class="dot" cx="${sx(current)}" cy="${h - 20}" r="4"/></svg>
      <div class="legend">${names.map((n, k) => (!best[k] ? ''
        : `<span>${actionKey(k)} ${esc(n)}</span>`)).join('')}${best.some((b) => !b)
        ? `<span class="muted">not scored (the tree runs it by its conditions): ${
          esc(names.filter((n, k) => !best[k]).join(', '))}</span>` : ''}</div>`;
  const unit = f.unit ? ' ' + f.unit : '';
  // A sampled change with the exact crossing between its two steps is
  // said at the exact value, so one crossing never reads as two numbers.
  const exact = (c) => ['below', 'above'].map((side) => sens && sens[side])
    .find((x) => x && (x.value || 0) >= Math.min(...c.between) && (x.value || 0) <= Math.max(...c.between));
  const said = (c, at = exact(c)) => at
    ? `${c.from} → ${c.to} at ${short(at.value || 0)}${unit} (exact)`
    : `${c.from} → ${c.to} near ${fmt(c.x)}${unit}`;
  const text = (changes.length
    ? 'Winner changes: ' + changes.map((c) => said(c)).join('; ')
    : `${winners[0]} wins across the whole range`) + '.' +
    (near.length ? ` Nearest change (exact): ${near.join('; ')}.` : '');
  return { html, text };
}
