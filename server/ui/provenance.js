// Where a piece of a composed set was written — the set's `origins`
// (docs/FORMAT.md, "Packages and archetypes") — and what an edit to a
// package's piece reaches: the sets composing that package
// (/api/v1/packages). Pure functions, unit-tested under Node
// (tests/ui/modules_test.mjs).

// The origin of piece `piece` ("actions.flee") of `set`, or null (a set
// that composes no package has none).
export function originOf(set, piece) {
  return ((set && set.origins) || []).find((o) => o.piece === piece) || null;
}

// What the editor says of a piece from a package: where it is written, how
// many sets an edit there changes (and which), and what this set overrides
// of it. '' for the set's own piece.
export function provenanceText(origin, packages) {
  if (!origin || !origin.package) return '';
  const where = origin.line ? `${origin.file}:${origin.line}` : origin.file;
  const found = (packages || []).find((p) => p.name === origin.package);
  const users = found ? found.usedBy || [] : [];
  const sets = `${users.length} set${users.length === 1 ? '' : 's'}`;
  const overridden = origin.overridden || [];
  return `From package ${origin.package} (${where}). An edit there changes ` +
    `${sets}: ${users.join(', ')}.` +
    (overridden.length ? ` This set overrides: ${overridden.join(', ')}.` : '');
}
