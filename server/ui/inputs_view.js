// The situation's inputs as the game has them: a checkbox for a flag, a
// slider in whole steps for a count, a slider for any other number, each
// with its value typed beside it; and the targets, each removable, with one
// to add. Pure markup, unit-tested under Node (tests/ui/modules_test.mjs);
// app.js reads the inputs back by their data attributes.
import { factorStep, kindOf } from './snapshot.js';
import { esc } from './text.js';

// The data attributes naming what an input sets: the agent's factor, or
// target `target`'s; `typed` for the number box beside a slider.
function where(at, typed) {
  const p = typed ? 'data-typed-' : 'data-';
  return at.target === undefined ? `${p}factor="${esc(at.factor)}"`
    : `${p}target="${at.target}" ${p}target-factor="${esc(at.factor)}"`;
}

// Factor `f`'s input at `value`; `at` is {factor} or {target, factor};
// `label` names it for screen readers (the factor, with the target's id).
export function factorInputHtml(f, value, at, label = f.name) {
  const named = esc(label + (f.unit ? ` (${f.unit})` : ''));
  const tip = esc(f.description || '');
  if (kindOf(f) === 'flag') {
    return `<div class="slider flag"><label title="${tip}"><input type="checkbox" ${where(at)}
      ${value >= 0.5 ? 'checked' : ''} aria-label="${esc(label)}"> ${esc(f.name)}</label>
      <div class="sens"></div></div>`;
  }
  const lo = Math.min(f.min, f.max), hi = Math.max(f.min, f.max);
  const step = factorStep(f);
  return `<div class="slider"><div class="name"><span>${esc(f.name)}</span>
    <span><input type="number" class="typed" ${where(at, true)} step="${kindOf(f) === 'count' ? 1 : 'any'}"
      value="${value}" aria-label="${named}, typed"> ${esc(f.unit || '')}</span></div>
    <input type="range" min="${lo}" max="${hi}" step="${step}" value="${value}" ${where(at)}
      aria-label="${named}" title="${tip}">
    <div class="sens"></div></div>`;
}

// The value input `el` gives: a checkbox's 0 or 1, else its number (NaN
// when the box is empty or not a number).
export function inputValue(el) {
  if (el.type === 'checkbox') return el.checked ? 1 : 0;
  return el.value === '' ? NaN : Number(el.value);
}

// Every target's inputs, each under its id with a Remove button, and an
// Add button; none when the set has no per-target factors.
export function targetsHtml(targets, targetFactors) {
  if (!targetFactors.length) return '';
  return targets.map((t, i) => `<div class="target" data-target-box="${i}"><h3>Target ${esc(t.id)}
      <button type="button" class="remove-target" data-remove-target="${i}"
        aria-label="Remove target ${esc(t.id)}">Remove</button></h3>` +
    targetFactors.map((f) => factorInputHtml(f, t.factors[f.name], { target: i, factor: f.name },
      `${t.id} ${f.name}`)).join('') + '</div>').join('') +
    '<button type="button" id="add-target">Add target</button>';
}
