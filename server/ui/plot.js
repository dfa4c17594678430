// A consideration's response curve as a small SVG: its sampled points, the
// axes with the factor's range, and a marker at the agent's value. Pure,
// unit-tested under Node (tests/ui/modules_test.mjs).
import { fmt } from './text.js';

// `points` are [x, output] pairs (gaps allowed) over `range` ([lo, hi],
// either order); `x` marks the agent's value, clamped into the range, when
// it is a finite number. Empty for no points.
export function curveSvg(points, x, range, w, h) {
  if (!points || !points.length) return '';
  const lo = range[0], hi = range[1];
  const sx = (v) => 4 + (w - 8) * (v - lo) / ((hi - lo) || 1);
  const sy = (v) => h - 12 - (h - 16) * v;
  const path = points.filter(Boolean).map((p, i) =>
    `${i ? 'L' : 'M'}${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join('');
  let marker = '';
  if (Number.isFinite(x)) {
    const cx = sx(Math.min(Math.max(x, Math.min(lo, hi)), Math.max(lo, hi)));
    marker = `<line class="marker" x1="${cx}" x2="${cx}" y1="2" y2="${h - 12}"/>`;
  }
  return `<svg width="${w}" height="${h}" viewBox="0 0 ${w} ${h}">
    <line class="axis" x1="4" x2="${w - 4}" y1="${h - 12}" y2="${h - 12}"/>
    <line class="axis" x1="4" x2="4" y1="2" y2="${h - 12}"/>
    <path class="curve" d="${path}"/>${marker}
    <text x="4" y="${h - 1}">${fmt(lo)}</text>
    <text x="${w - 4}" y="${h - 1}" text-anchor="end">${fmt(hi)}</text></svg>`;
}
