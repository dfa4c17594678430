// Text for the page: escaping and the number formats the inspector shows.
// Pure functions, unit-tested under Node (tests/ui/modules_test.mjs).

// `s` safe inside HTML text and attribute values.
export function esc(s) {
  return String(s === undefined || s === null ? '' : s).replace(/[&<>"']/g, (c) =>
    ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

// A score or factor value in a table: '–' for none, else 0, 1 or 3
// decimals by size.
export function fmt(v) {
  if (v === undefined || v === null || v === '') return '–';
  const n = Number(v);
  if (!Number.isFinite(n)) return String(v);
  return Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(3);
}

// Four significant digits and no trailing zeros: 37.53, 0.871, 40.
export function short(v) { return String(Number(Number(v).toPrecision(4))); }
