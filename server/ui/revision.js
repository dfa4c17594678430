// Following the server's reloads: when the file of the page's set changes
// on disk the server loads a new revision, and the page must not keep
// showing, editing or exporting the old one without saying so. Pure
// functions, unit-tested under Node (tests/ui/modules_test.mjs); app.js
// polls the set list and acts on what `revisionChange` says.

// What a poll of the set list (`summaries`, /api/v1/sets) means for the
// page showing revision `shown` of set `name`, with or without edits:
//   {kind: 'same'}                       nothing changed;
//   {kind: 'reload', revision}           no edits: load the new revision;
//   {kind: 'stale', revision}            edits over an older revision;
//   {kind: 'gone'}                       the server no longer has the set.
export function revisionChange(summaries, name, shown, edited) {
  const now = (summaries || []).find((s) => s.name === name);
  if (!now) return { kind: 'gone' };
  if (now.revision === shown) return { kind: 'same' };
  return { kind: edited ? 'stale' : 'reload', revision: now.revision };
}

// The banner for edits over an old revision, or for a set the server
// dropped.
export function staleText(change, name, shown) {
  if (change.kind === 'gone') {
    return `The server no longer has ${name} (its file was removed or no longer loads). ` +
      'Export is refused; choose another set.';
  }
  return `${name} changed on the server: it now serves revision ${change.revision}, ` +
    `and your edits are over revision ${shown}. Export is refused so that it cannot ` +
    'overwrite the newer file; revert to load the new revision (your edits are dropped), ' +
    'or make them again there.';
}
