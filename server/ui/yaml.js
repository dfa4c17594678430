// A behaviour set exported as YAML from its JSON. Pure functions,
// unit-tested under Node (tests/ui/modules_test.mjs).

// Keys of map fields, whose own keys are names to keep as written.
const MAP_FIELDS = new Set(['factors', 'secondsSinceAction', 'actionWeights',
  'considerationWeights']);
const snake = (k) => k.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());

function yamlScalar(v) {
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}
function isEmpty(v) {
  return Array.isArray(v) ? !v.length : !Object.keys(v).length;
}

// Block-style YAML lines for an object or array at `indent` levels.
export function yamlLines(value, indent, isMap) {
  const pad = '  '.repeat(indent);
  const out = [];
  if (Array.isArray(value)) {
    for (const item of value) {
      if (item === null || typeof item !== 'object') {
        out.push(`${pad}- ${yamlScalar(item)}`);
      } else if (isEmpty(item)) {
        out.push(`${pad}- ${Array.isArray(item) ? '[]' : '{}'}`);
      } else {
        const inner = yamlLines(item, indent + 1, false);
        inner[0] = `${pad}- ` + inner[0].slice(pad.length + 2);
        out.push(...inner);
      }
    }
    return out;
  }
  for (const k of Object.keys(value)) {
    const key = isMap ? JSON.stringify(k) : snake(k);
    const child = value[k];
    if (child === null || typeof child !== 'object') {
      out.push(`${pad}${key}: ${yamlScalar(child)}`);
    } else if (isEmpty(child)) {
      out.push(`${pad}${key}: ${Array.isArray(child) ? '[]' : '{}'}`);
    } else {
      out.push(`${pad}${key}:`);
      out.push(...yamlLines(child, indent + 1,
        !isMap && MAP_FIELDS.has(k) && !Array.isArray(child)));
    }
  }
  return out;
}

// A set's JSON (protobuf's JSON names) as the YAML the loader reads:
// snake_case keys, map keys kept as written, the revision left out (the
// loader computes it). `edited` notes what-if edits in the header comment.
export function yamlDocument(set, edited) {
  const copy = JSON.parse(JSON.stringify(set));
  delete copy.revision;
  return '# Exported from the utilityd inspector' +
    (edited ? ' (with what-if edits)' : '') + '\n' +
    yamlLines(copy, 0, false).join('\n') + '\n';
}
