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

// `message` with the set's list positions named: the server's checks say
// where by position ("actions[3].considerations[1].range", in the format's
// field names), which a designer reads better as
// "actions[heal].considerations[hurt].range". Positions that do not resolve
// to a named item of `set` (the set's JSON, camelCase) stay as they are.
export function namePaths(set, message) {
  if (!set) return message;
  const camel = (s) => s.replace(/_([a-z])/g, (_, c) => c.toUpperCase());
  return String(message).replace(/\b[a-z_]+\[\d+\](?:\.[a-z_]+(?:\[\d+\])?)*/g, (path) => {
    let at = set;
    return path.replace(/([a-z_]+)(?:\[(\d+)\])?/g, (whole, field, index) => {
      at = at && at[camel(field)];
      if (index === undefined) return whole;
      at = Array.isArray(at) ? at[Number(index)] : undefined;
      return at && typeof at.name === 'string' && at.name ? `${field}[${at.name}]` : whole;
    });
  });
}
