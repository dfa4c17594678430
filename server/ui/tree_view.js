// The behaviour tree as the inspector reads it from a set's JSON: which kind
// a node is and its children. The kinds come from the server
// (/api/v1/format: {name, jsonName} each), never from this file. Pure
// functions, unit-tested under Node (tests/ui/modules_test.mjs).

// A tick trace's status enum -> the CSS class the tree view uses.
export const STATUS = { NODE_STATUS_RUNNING: 'running', NODE_STATUS_SUCCESS: 'success',
  NODE_STATUS_FAILURE: 'failure' };

// A node's kind among `kinds`: the format's name (reactive_fallback) and the
// JSON field its body is under (reactiveFallback); undefined for none.
export function nodeKindOf(n, kinds) { return kinds.find((k) => n[k.jsonName] !== undefined); }

// A node's children, whichever its kind: its body's `children`, or its
// `child` as a list of one; none for a leaf.
export function nodeChildren(n, kinds) {
  const kind = nodeKindOf(n, kinds);
  const body = kind && n[kind.jsonName];
  if (!body || typeof body !== 'object') return [];
  return body.children || (body.child ? [body.child] : []);
}
