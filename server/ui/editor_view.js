// The what-if editor: an action's weight, and a consideration's curve (its
// kind and parameters from the engine's registry, /api/v1/curves), invert
// flag, input range, output range and weight. It edits the page's working
// copy of the set in place; the page then scores with the edited copy. The
// markup and the edits are pure functions, unit-tested under Node
// (tests/ui/modules_test.mjs).
import { esc } from './text.js';

// The curve kind a consideration's curve names (its one kind field), or
// linear, the format's default.
export function curveKindOf(curve, kinds) {
  return Object.keys(kinds).find((k) => curve && curve[k]) || 'linear';
}

// Piecewise points as typed ("x,y; x,y") and back.
export function parsePoints(text) {
  return text.split(';').filter((s) => s.trim()).map((s) => {
    const [x, y] = s.split(',').map(Number);
    return { x, y };
  });
}
export function pointsText(points) {
  return (points || []).map((q) => `${q.x || 0},${q.y || 0}`).join('; ');
}

// The consideration-level number fields: label -> [object, key].
const CON_FIELDS = {
  'range min': ['range', 'min'],
  'range max': ['range', 'max'],
  'output floor (min)': ['output', 'min'],
  'output max': ['output', 'max'],
  'consideration weight': [null, 'weight'],
};

function numberField(label, value, placeholder = 'default') {
  return `<label>${esc(label)} <input type="number" step="any" data-field="${esc(label)}"
    value="${value === undefined ? '' : value}" placeholder="${esc(placeholder)}"></label>`;
}

function curveFieldsHtml(con, kinds) {
  const kind = curveKindOf(con.curve, kinds);
  const params = (con.curve || {})[kind] || {};
  let html = `<label>curve <select id="curve-kind" data-field="curve">${Object.keys(kinds).map((k) =>
    `<option value="${esc(k)}" ${k === kind ? 'selected' : ''}>${esc(kinds[k].formatName || k)}</option>`)
    .join('')}</select></label>`;
  for (const p of kinds[kind].params) {
    const label = p.formatName || p.name;
    if (p.type === 'flag') {
      html += `<label>${esc(label)} <input class="curve-flag" data-param="${esc(p.name)}" type="checkbox" ${
        params[p.name] ? 'checked' : ''}></label>`;
    } else if (p.type === 'points') {
      html += `<label>${esc(label)} (x,y; x,y …)</label><textarea class="curve-points" data-param="${
        esc(p.name)}" rows="2">${pointsText(params[p.name])}</textarea>`;
    } else {
      html += `<label>${esc(label)} <input type="number" step="any" class="curve-param" data-field="${
        esc(label)}" data-param="${esc(p.name)}" value="${params[p.name] === undefined ? ''
        : params[p.name]}" placeholder="default ${esc(String(p.default))}"></label>`;
    }
  }
  html += `<label>invert <input id="curve-invert" type="checkbox" ${
    (con.curve || {}).invert ? 'checked' : ''}></label>`;
  for (const [label, [obj, key]] of Object.entries(CON_FIELDS))
    html += numberField(label, obj ? (con[obj] || {})[key] : con[key]);
  return html;
}

// The editor's fields for `action` and, when given, its consideration
// `con`. `kinds` are the curve kinds by JSON name, each {formatName,
// params: [{name, formatName, type, default}]} as /api/v1/curves serves
// them: the set's JSON is edited under the JSON names, the fields are
// labelled with the format's (YAML) names.
export function editorFieldsHtml(action, con, kinds) {
  return numberField('action weight', action.weight) + (con ? curveFieldsHtml(con, kinds) : '');
}

function setOrClear(obj, key, value) {
  if (value === undefined) delete obj[key]; else obj[key] = value;
}

// Applies the change of input `el` (one of the editor's fields) to `action`
// and `con`. Returns 'reopen' when the fields themselves change (a new
// curve kind), 'edited' for any other edit, '' when `el` is not a field.
export function applyEdit(action, con, kinds, el) {
  const number = el.value === '' ? undefined : Number(el.value);
  if (el.dataset.field === 'action weight') {
    setOrClear(action, 'weight', number);
    return 'edited';
  }
  if (!con) return '';
  con.curve = con.curve || {};
  const kind = curveKindOf(con.curve, kinds);
  const params = () => (con.curve[kind] = con.curve[kind] || {});
  if (el.id === 'curve-kind') {
    const invert = con.curve.invert;
    con.curve = { [el.value]: {} };
    if (invert) con.curve.invert = true;
    return 'reopen';
  }
  if (el.id === 'curve-invert') con.curve.invert = el.checked;
  else if (el.classList.contains('curve-flag')) params()[el.dataset.param] = el.checked;
  else if (el.classList.contains('curve-points')) params()[el.dataset.param] = parsePoints(el.value);
  else if (el.classList.contains('curve-param')) setOrClear(params(), el.dataset.param, number);
  else if (CON_FIELDS[el.dataset.field]) {
    const [obj, key] = CON_FIELDS[el.dataset.field];
    setOrClear(obj ? (con[obj] = con[obj] || {}) : con, key, number);
  } else return '';
  return 'edited';
}

// The view: `set()` is the page's working copy, `kinds()` the curve kinds,
// `onEdit()` runs after each edit.
export function createEditorView({ $, set, kinds, onEdit }) {
  let editing = null;  // {action, consideration} being edited

  function target() {
    const action = set().actions.find((a) => a.name === editing.action);
    const con = editing.consideration &&
      action.considerations.find((c) => c.name === editing.consideration);
    return { action, con };
  }

  function open(actionName, conName) {
    editing = { action: actionName, consideration: conName };
    const { action, con } = target();
    $('editor').hidden = false;
    $('editor-title').textContent = con ? `${actionName} / ${conName}` : actionName;
    $('editor-fields').innerHTML = editorFieldsHtml(action, con, kinds());
  }

  function close() {
    editing = null;
    $('editor').hidden = true;
  }

  function wire() {
    $('editor-fields').addEventListener('change', (e) => {
      if (!editing) return;
      const { action, con } = target();
      const result = applyEdit(action, con, kinds(), e.target);
      if (!result) return;
      onEdit();
      if (result === 'reopen') open(editing.action, editing.consideration);
    });
  }

  return { open, close, wire };
}
