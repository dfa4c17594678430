// A line diff of the author's file against the file with the page's edits
// written in (POST /api/v1/sets/{name}/export), shown before the download.
// Pure functions, unit-tested under Node (tests/ui/modules_test.mjs).

// The lines of `before` and `after` as ' ' (both), '-' (only before) and
// '+' (only after), in order, each with its line numbers (0 where it has
// none). The common head and tail are set aside first, so the longest
// common subsequence is only sought among the lines that changed.
export function lineDiff(before, after) {
  const a = before.split('\n'), b = after.split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) ++head;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head &&
         a[a.length - 1 - tail] === b[b.length - 1 - tail]) ++tail;
  const x = a.slice(head, a.length - tail), y = b.slice(head, b.length - tail);
  // common[i][j]: the longest common subsequence of x[i..] and y[j..].
  const common = Array.from({ length: x.length + 1 }, () => new Array(y.length + 1).fill(0));
  for (let i = x.length - 1; i >= 0; --i) {
    for (let j = y.length - 1; j >= 0; --j) {
      common[i][j] = x[i] === y[j] ? common[i + 1][j + 1] + 1
        : Math.max(common[i + 1][j], common[i][j + 1]);
    }
  }
  const out = [];
  let oldLine = 1, newLine = 1;
  const keep = (text) => out.push({ kind: ' ', text, oldLine: oldLine++, newLine: newLine++ });
  for (let k = 0; k < head; ++k) keep(a[k]);
  let i = 0, j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) {
      keep(x[i]);
      ++i; ++j;
    } else if (i < x.length && (j === y.length || common[i + 1][j] >= common[i][j + 1])) {
      out.push({ kind: '-', text: x[i++], oldLine: oldLine++, newLine: 0 });  // removals first
    } else {
      out.push({ kind: '+', text: y[j++], oldLine: 0, newLine: newLine++ });
    }
  }
  for (let k = a.length - tail; k < a.length; ++k) keep(a[k]);
  return out;
}

// The changed lines with `context` unchanged lines around each change;
// a gap between two shown runs is one {kind: '…'} line. Empty when
// nothing changed.
export function diffHunks(lines, context = 3) {
  const near = lines.map(() => false);
  lines.forEach((l, k) => {
    if (l.kind === ' ') return;
    for (let d = Math.max(0, k - context); d <= Math.min(lines.length - 1, k + context); ++d) near[d] = true;
  });
  const out = [];
  lines.forEach((l, k) => {
    if (!near[k]) return;
    if (k > 0 && !near[k - 1] && out.length) out.push({ kind: '…', text: '', oldLine: 0, newLine: 0 });
    out.push(l);
  });
  return out;
}

// "1 line changed", "2 lines added, 1 removed": the diff in words.
export function diffSummary(lines) {
  const added = lines.filter((l) => l.kind === '+').length;
  const removed = lines.filter((l) => l.kind === '-').length;
  const n = (k, what) => `${k} line${k === 1 ? '' : 's'} ${what}`;
  if (!added && !removed) return 'No change: the file is as the server loaded it.';
  if (added === removed) return n(added, 'changed');
  const parts = [];
  if (added) parts.push(n(added, 'added'));
  if (removed) parts.push(n(removed, 'removed'));
  return parts.join(', ');
}
