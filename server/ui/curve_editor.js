// The curve editor's plot, in the what-if editor: the consideration's
// output across its factor as the engine computes it (POST /api/v1/curve),
// the loaded set's curve as a ghost, axis values in the factor's unit, a
// readout under the pointer, and a handle for each thing a designer shapes —
// the bookends (range min and max) along the factor axis, the output range
// up and down, the curve kind's places on the input (midpoint, mean,
// threshold: the engine marks them, /api/v1/curves `onInput`) along the
// factor axis, its other numbers (steepness, exponent …) up and down, and
// piecewise points both ways. Every handle takes the arrow keys too.
// Geometry and edits are pure, unit-tested under Node
// (tests/ui/modules_test.mjs); the view wires the pointer and the keys.
import { esc, short } from './text.js';

// The curve kind a consideration's curve names (its one kind field), or
// linear, the format's default.
export function curveKindOf(curve, kinds) {
  return Object.keys(kinds).find((k) => curve && curve[k]) || 'linear';
}

export const PLOT = { w: 360, h: 236, left: 40, right: 14, top: 12, bottom: 40 };

// Plot coordinates for factor values `from`..`to` (x) and outputs 0..1 (y),
// and back.
export function scales(from, to, plot = PLOT) {
  const x0 = plot.left, x1 = plot.w - plot.right;
  const y0 = plot.h - plot.bottom, y1 = plot.top;
  const span = (to - from) || 1;
  return {
    x0, x1, y0, y1,
    sx: (v) => x0 + (x1 - x0) * (v - from) / span,
    sy: (v) => y0 - (y0 - y1) * v,
    ix: (px) => from + (px - x0) / (x1 - x0) * span,
    iy: (py) => (y0 - py) / (y0 - y1),
  };
}

// Round values about `n` apart across `from`..`to` (1, 2, 2.5 or 5 times a
// power of ten).
export function ticks(from, to, n = 5) {
  const lo = Math.min(from, to), hi = Math.max(from, to);
  const raw = (hi - lo || 1) / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw * 0.999);
  const out = [];
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) {
    out.push(Number(v.toFixed(10)));
  }
  return out;
}

// A value rounded to the precision a step of `step` shows.
export function roundTo(v, step) {
  const digits = Math.max(0, -Math.floor(Math.log10(step)));
  return Number(v.toFixed(Math.min(digits, 10)));
}

// The output at factor value `x`: between the two samples around it.
export function outputAt(points, x) {
  if (!points || !points.length) return 0;
  const up = points[0][0] <= points[points.length - 1][0];
  for (let i = 1; i < points.length; i++) {
    const [xa, ya] = points[i - 1], [xb, yb] = points[i];
    if ((up && x <= xb) || (!up && x >= xb)) {
      return xb === xa ? yb : ya + (yb - ya) * (x - xa) / (xb - xa);
    }
  }
  return points[points.length - 1][1];
}

const clamp = (v, lo, hi) => Math.min(Math.max(v, lo), hi);

// The handles of consideration `con` (the page's JSON, its defaults
// applied) on a plot of `from`..`to`, the curve sampled at `points`. Each:
// {id, label, axis: 'x' | 'y' | 'xy', x, y (a factor value and an output),
// value, step}.
export function handlesOf(con, kinds, from, to, points) {
  const range = con.range || {}, output = con.output || {};
  const lo = range.min ?? from, hi = range.max ?? to;
  const omin = output.min ?? 0, omax = output.max ?? 1;
  const kind = curveKindOf(con.curve, kinds);
  const params = (con.curve || {})[kind] || {};
  const toFactor = (n) => lo + (hi - lo) * n;
  const xStep = Math.abs(to - from) / 100 || 0.01;
  const hs = [
    { id: 'range.min', label: 'range min (bookend)', axis: 'x', x: lo, y: 0, value: lo, step: xStep },
    { id: 'range.max', label: 'range max (bookend)', axis: 'x', x: hi, y: 0, value: hi, step: xStep },
    { id: 'output.min', label: 'output min', axis: 'y', x: Math.min(from, to), y: omin, value: omin, step: 0.01 },
    { id: 'output.max', label: 'output max', axis: 'y', x: Math.max(from, to), y: omax, value: omax, step: 0.01 },
  ];
  let shapes = 0;
  for (const p of (kinds[kind] || { params: [] }).params) {
    const label = p.formatName || p.name;
    if (p.type === 'number') {
      const v = params[p.name] ?? p.default;
      const x = p.onInput ? toFactor(v) : toFactor(0.25 + 0.5 * (shapes++ % 2));
      hs.push({ id: 'param.' + p.name, param: p.name, label, axis: p.onInput ? 'x' : 'y',
        onInput: !!p.onInput, x, y: outputAt(points, x), value: v, step: p.onInput ? 0.01 : 0.1 });
    } else if (p.type === 'points') {
      (params[p.name] || []).forEach((q, i) => hs.push({
        id: `points.${p.name}.${i}`, param: p.name, index: i, label: `${label} ${i + 1}`,
        axis: 'xy', x: toFactor(q.x ?? 0), y: omin + (omax - omin) * (q.y ?? 0),
        value: q.x ?? 0, yValue: q.y ?? 0, step: 0.01 }));
    }
  }
  return hs;
}

// Sets what handle `h` edits to `value` (and `yValue`, a point's output) in
// `con`, in place.
export function applyHandle(con, kinds, h, value, yValue) {
  const [what, key] = h.id.split('.');
  if (what === 'range' || what === 'output') {
    con[what] = con[what] || {};
    con[what][key] = value;
    return;
  }
  con.curve = con.curve || {};
  const kind = curveKindOf(con.curve, kinds);
  const params = (con.curve[kind] = con.curve[kind] || {});
  if (what === 'param') params[h.param] = value;
  else if (what === 'points') {
    const list = params[h.param] = (params[h.param] || []).map((q) => ({ ...q }));
    list[h.index] = { x: value, y: yValue };
  }
}

// Where a drag of handle `h` from plot point `start` to `at` puts its
// value(s), for `con` on scales `s`. Positions follow the pointer; a shape
// number (steepness, exponent …) grows by e for each 60 px up when it is
// positive, else moves 1 per 60 px.
export function dragValue(con, h, start, at, s) {
  const range = con.range || {}, output = con.output || {};
  const lo = range.min ?? 0, hi = range.max ?? 1;
  const omin = output.min ?? 0, omax = output.max ?? 1;
  const norm = (px) => clamp((s.ix(px) - lo) / ((hi - lo) || 1), 0, 1);
  if (h.id.startsWith('range.')) return { value: roundTo(s.ix(at.x), h.step) };
  if (h.id.startsWith('output.')) return { value: roundTo(clamp(s.iy(at.y), 0, 1), 0.01) };
  if (h.axis === 'xy') {
    const y = (s.iy(at.y) - omin) / ((omax - omin) || 1);
    return { value: roundTo(norm(at.x), 0.001), yValue: roundTo(clamp(y, 0, 1), 0.001) };
  }
  if (h.onInput) return { value: roundTo(norm(at.x), 0.001) };
  const up = start.y - at.y;
  const v = h.value > 0 ? h.value * Math.exp(up / 60) : h.value + up / 60;
  return { value: roundTo(v, Math.abs(v) >= 10 ? 0.1 : 0.001) };
}

// The value(s) the arrow key `key` (shift: ten steps) gives handle `h`, or
// null for any other key.
export function keyValue(h, key, shift) {
  const dir = { ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1 }[key];
  if (!dir) return null;
  const n = shift ? 10 : 1;
  if (h.axis === 'xy') {
    const horizontal = key === 'ArrowLeft' || key === 'ArrowRight';
    return {
      value: horizontal ? roundTo(clamp(h.value + dir * n * h.step, 0, 1), 0.001) : h.value,
      yValue: horizontal ? h.yValue : roundTo(clamp(h.yValue + dir * n * h.step, 0, 1), 0.001),
    };
  }
  if (h.id.startsWith('output.')) return { value: roundTo(clamp(h.value + dir * n * 0.01, 0, 1), 0.01) };
  if (h.id.startsWith('param.') && !h.onInput && h.value > 0) {
    return { value: roundTo(h.value * (dir > 0 ? 1.1 : 1 / 1.1) ** n, 0.001) };
  }
  const v = h.value + dir * n * h.step;
  return { value: roundTo(h.onInput ? clamp(v, 0, 1) : v, h.onInput ? 0.001 : h.step) };
}

// Ready-made shapes, for the kinds the engine has (by their JSON names).
const PRESETS = [
  ['rises', { linear: { slope: 1, intercept: 0 } }],
  ['falls', { linear: { slope: -1, intercept: 1 } }],
  ['S-curve', { logistic: { steepness: 10, midpoint: 0.5, rescale: true } }],
  ['fast rise', { inverseQuadratic: {} }],
  ['slow rise', { polynomial: { exponent: 2 } }],
  ['bell', { normal: { mean: 0.5, stddev: 0.15 } }],
  ['threshold', { step: { threshold: 0.5 } }],
  ['ease in-out', { smoothstep: {} }],
];
export function presetsOf(kinds) {
  return PRESETS.filter(([, curve]) => kinds[Object.keys(curve)[0]])
    .map(([name, curve]) => ({ name, curve }));
}

function pathOf(points, s) {
  return (points || []).map((p, i) =>
    `${i ? 'L' : 'M'}${s.sx(p[0]).toFixed(1)},${s.sy(p[1]).toFixed(1)}`).join('');
}

// The plot as SVG: axes with values (the factor's unit under the x axis),
// the ghost and the curve, the bookends, the agent's value, the handles.
export function plotSvg({ points, ghost, from, to, unit, factor, handles, agentX }) {
  const s = scales(from, to);
  const xTicks = ticks(from, to).map((v) =>
    `<text class="tick" x="${s.sx(v).toFixed(1)}" y="${s.y0 + 15}" text-anchor="middle">${short(v)}</text>` +
    `<line class="grid" x1="${s.sx(v).toFixed(1)}" x2="${s.sx(v).toFixed(1)}" y1="${s.y1}" y2="${s.y0}"/>`).join('');
  const yTicks = [0, 0.5, 1].map((v) =>
    `<text class="tick" x="${s.x0 - 5}" y="${(s.sy(v) + 4).toFixed(1)}" text-anchor="end">${v}</text>` +
    `<line class="grid" x1="${s.x0}" x2="${s.x1}" y1="${s.sy(v).toFixed(1)}" y2="${s.sy(v).toFixed(1)}"/>`).join('');
  const bookends = handles.filter((h) => h.id.startsWith('range.')).map((h) =>
    `<line class="bookend" x1="${s.sx(h.x).toFixed(1)}" x2="${s.sx(h.x).toFixed(1)}" y1="${s.y1}" y2="${s.y0}"/>`).join('');
  const agent = Number.isFinite(agentX) ? `<line class="marker" x1="${s.sx(agentX).toFixed(1)}"
    x2="${s.sx(agentX).toFixed(1)}" y1="${s.y1}" y2="${s.y0}"/>` : '';
  const knobs = handles.map((h) => {
    const cx = h.id === 'output.min' ? s.x0 : h.id === 'output.max' ? s.x1 : s.sx(h.x);
    const cy = h.id.startsWith('range.') ? s.y0 : s.sy(h.y);
    const text = h.axis === 'xy' ? `${short(h.value)}, ${short(h.yValue)}` : short(h.value);
    const shape = h.axis === 'y' && !h.id.startsWith('param.')
      ? `<rect x="${(cx - 6).toFixed(1)}" y="${(cy - 6).toFixed(1)}" width="12" height="12"/>`
      : `<circle cx="${cx.toFixed(1)}" cy="${cy.toFixed(1)}" r="7"/>`;
    return `<g class="handle" data-handle="${esc(h.id)}" tabindex="0" role="slider"
      aria-label="${esc(h.label)}" aria-valuenow="${h.value}" aria-valuetext="${esc(h.label)} ${esc(text)}"
      aria-orientation="${h.axis === 'y' ? 'vertical' : 'horizontal'}"><title>${esc(h.label)}: ${esc(text)}</title>${shape}</g>`;
  }).join('');
  return `<svg id="curve-plot" width="${PLOT.w}" height="${PLOT.h}" viewBox="0 0 ${PLOT.w} ${PLOT.h}"
    role="group" aria-label="${esc(factor)} curve: drag a handle, or focus it and use the arrow keys">
    ${xTicks}${yTicks}
    <line class="axis" x1="${s.x0}" x2="${s.x1}" y1="${s.y0}" y2="${s.y0}"/>
    <line class="axis" x1="${s.x0}" x2="${s.x0}" y1="${s.y1}" y2="${s.y0}"/>
    <text class="tick" x="${s.x1}" y="${s.y0 + 30}" text-anchor="end">${esc(factor)}${unit ? ` (${esc(unit)})` : ''}</text>
    ${bookends}${agent}
    <path class="ghost" d="${pathOf(ghost, s)}"/>
    <path class="curve-main" d="${pathOf(points, s)}"/>
    ${knobs}
    <text id="curve-readout" class="tick" x="${s.x1 - 4}" y="${s.y1 + 12}" text-anchor="end"></text></svg>`;
}

// What the pointer at plot x `px` reads: "36.4 hp → 0.62".
export function readout(points, from, to, unit, px) {
  const s = scales(from, to);
  if (px < s.x0 || px > s.x1) return '';
  const x = s.ix(px);
  return `${short(x)}${unit ? ' ' + unit : ''} → ${outputAt(points, x).toFixed(3)}`;
}
