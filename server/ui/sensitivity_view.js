// What would change the decision, under each slider: the server's
// sensitivity (exact, not sampled) as words. Pure functions, unit-tested
// under Node (tests/ui/modules_test.mjs); app.js puts them under the
// sliders.
import { short } from './text.js';

// One side of a factor's sensitivity as words: "flee at ≤ 31.5 hp"; for a
// count the whole value that gets there ("attack at ≥ 2 charges"), for a
// flag the value that does ("take_cover at 0"). `kind` is the factor's
// ('flag', 'count' or 'number', kindOf in snapshot.js).
export function crossingText(s, side, kind = 'number') {
  const c = s[side];
  if (!c) return '';
  const who = (c.action || '(no action)') + (c.targetId ? '@' + c.targetId : '');
  const v = c.value || 0;
  if (kind === 'flag') return `${who} at ${side === 'below' ? 0 : 1}`;
  if (kind === 'count') {
    return `${who} at ${side === 'below' ? '≤ ' + Math.floor(v) : '≥ ' + Math.ceil(v)} ${s.unit || ''}`.trim();
  }
  return `${who} at ${side === 'below' ? '≤' : '≥'} ${short(v)} ${s.unit || ''}`.trim();
}

// The entry of `sensitivity` (a decision's) for factor `name`: the agent's
// own factor when `targetId` is undefined, else that target's.
export function sensitivityOf(sensitivity, name, targetId) {
  return (sensitivity || []).find((s) => s.factor === name &&
    (targetId === undefined ? !s.targetId : s.targetId === targetId));
}

// A slider's line for entry `s` (of a factor of `kind`): its text (each crossing, or that none is
// within the range), its tooltip (the exact values and changes), and the
// crossings as numbers ('' for none).
export function sensitivityLine(s, kind = 'number') {
  const parts = [crossingText(s, 'below', kind), crossingText(s, 'above', kind)].filter((x) => x);
  return {
    text: parts.length ? parts.join(' · ')
      : `no change within ${short(s.rangeMin || 0)}..${short(s.rangeMax || 0)} ${s.unit || ''}`.trim(),
    title: ['below', 'above'].filter((k) => s[k])
      .map((k) => `${k}: exactly ${s[k].value || 0} (change ${s[k].change || 0})`).join('\n'),
    below: s.below ? String(s.below.value || 0) : '',
    above: s.above ? String(s.above.value || 0) : '',
  };
}
