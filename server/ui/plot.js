// Drawing: a consideration's response curve as a small SVG (its sampled
// points, the axes with the factor's range, a marker at the agent's value),
// and each action's colour and line pattern. Pure, unit-tested under Node
// (tests/ui/modules_test.mjs).
import { fmt } from './text.js';

// One colour per action, by its place in the set, wherever the page draws
// actions (the sweep, the analysis map and its table); none is the red that
// marks a veto. Colour is never the only cue: the sweep draws each action
// with its own dash pattern, and every legend names the action beside it.
export const ACTION_COLOURS = ['#4e79a7', '#f28e2b', '#59a14f', '#17becf',
  '#76b7b2', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#7f7f7f'];
const ACTION_DASHES = ['', '7,3', '2,2', '9,3,2,3', '1,3', '12,4', '4,4',
  '6,2,2,2,2,2', '3,6', '14,2'];

export function actionColour(i) { return ACTION_COLOURS[i % ACTION_COLOURS.length]; }
export function actionDash(i) { return ACTION_DASHES[i % ACTION_DASHES.length]; }

// Action `i`'s key in a legend: a short line in its colour and pattern.
export function actionKey(i) {
  return `<svg class="key" width="24" height="10" aria-hidden="true"><line x1="1" x2="23" y1="5" y2="5"
    stroke="${actionColour(i)}" stroke-width="2.5" stroke-dasharray="${actionDash(i)}"/></svg>`;
}

// `points` are [x, output] pairs (gaps allowed) over `range` ([lo, hi],
// either order); `x` marks the agent's value, clamped into the range, when
// it is a finite number. Empty for no points.
// A plot 120 px or taller (the large one) also labels its output axis
// 0, 0.5 and 1, in a left margin.
export function curveSvg(points, x, range, w, h) {
  if (!points || !points.length) return '';
  const lo = range[0], hi = range[1];
  const left = h >= 120 ? 28 : 4;
  const sx = (v) => left + (w - left - 4) * (v - lo) / ((hi - lo) || 1);
  const sy = (v) => h - 12 - (h - 16) * v;
  const yAxis = left > 4 ? [0, 0.5, 1].map((v) =>
    `<text class="y" x="${left - 4}" y="${(sy(v) + 4).toFixed(1)}" text-anchor="end">${v}</text>`).join('') : '';
  const path = points.filter(Boolean).map((p, i) =>
    `${i ? 'L' : 'M'}${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join('');
  let marker = '';
  if (Number.isFinite(x)) {
    const cx = sx(Math.min(Math.max(x, Math.min(lo, hi)), Math.max(lo, hi)));
    marker = `<line class="marker" x1="${cx}" x2="${cx}" y1="2" y2="${h - 12}"/>`;
  }
  return `<svg width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">
    <line class="axis" x1="${left}" x2="${w - 4}" y1="${h - 12}" y2="${h - 12}"/>
    <line class="axis" x1="${left}" x2="${left}" y1="2" y2="${h - 12}"/>
    <path class="curve" d="${path}"/>${marker}${yAxis}
    <text x="${left}" y="${h - 1}">${fmt(lo)}</text>
    <text x="${w - 4}" y="${h - 1}" text-anchor="end">${fmt(hi)}</text></svg>`;
}
