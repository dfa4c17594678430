// The what-if editor: an action's weight, and a consideration's curve (its
// kind and parameters from the engine's registry, /api/v1/curves), invert
// flag, input range, output range and weight. It edits the page's working
// copy of the set in place; the page then scores with the edited copy. The
// markup and the edits are pure functions, unit-tested under Node
// (tests/ui/modules_test.mjs).
import {
  applyHandle, curveKindOf, dragValue, handlesOf, keyValue, plotSvg, presetsOf, readout, scales,
} from './curve_editor.js';
import { esc } from './text.js';

export { curveKindOf };

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
// `onEdit()` runs after each edit, `onDrag()` while a handle moves (the
// scores follow), `fetchCurve(set, action, consideration)` gets a curve's
// samples from the engine, `original()` is the set as loaded (the ghost),
// `factorOf(con)` the consideration's factor: {unit, value} (the agent's).
// `provenance(actionName)`: what the editor says of where the action was
// written ('' for the set's own; provenance.js).
export function createEditorView({
  $, set, kinds, onEdit, onDrag, fetchCurve, original, factorOf, provenance = () => '',
}) {
  let editing = null;  // {action, consideration} being edited
  let plot = null;     // {from, to, factor, points, ghost}
  let ticket = null;   // the newest curve call's (older answers are dropped)
  let drag = null;     // {handle, start} while a handle moves
  let undo = [];       // snapshots of the action and consideration

  function target() {
    const action = set().actions.find((a) => a.name === editing.action);
    const con = editing.consideration &&
      action.considerations.find((c) => c.name === editing.consideration);
    return { action, con };
  }

  function handles() {
    const { con } = target();
    return handlesOf(con, kinds(), plot.from, plot.to, plot.points);
  }

  function drawPlot() {
    const { con } = target();
    if (!con || !plot) return;
    const focused = document.activeElement?.closest?.('.handle')?.dataset.handle;
    const f = factorOf(con);
    $('curve-plot-box').innerHTML = plotSvg({ ...plot, unit: f.unit, handles: handles(), agentX: f.value });
    if (focused) $('curve-plot-box').querySelector(`[data-handle="${focused}"]`)?.focus();
    $('curve-undo').disabled = !undo.length;
  }

  // The engine's samples of the edited curve (`ghost`: of the loaded one).
  async function refreshPlot(ghost = false) {
    const { action, con } = target();
    const from = ghost ? original() : set();
    const mine = ghost ? null : (ticket = {});
    try {
      const r = await fetchCurve(from, action.name, con.name);
      if (!editing || (!ghost && mine !== ticket)) return;
      if (ghost) plot.ghost = r.points;
      else Object.assign(plot, { from: r.from, to: r.to, factor: r.factor, points: r.points });
      drawPlot();
    } catch {
      // An edit the engine refuses: the page's error says why; the plot stays.
    }
  }

  function snapshot() {
    const { action, con } = target();
    undo.push({ weight: action.weight, con: con && JSON.parse(JSON.stringify(con)) });
    if (undo.length > 100) undo.shift();
  }

  function undoLast() {
    const last = undo.pop();
    if (!last || !editing) return;
    const { action, con } = target();
    setOrClear(action, 'weight', last.weight);
    if (con) {
      for (const k of Object.keys(con)) delete con[k];
      Object.assign(con, last.con);
    }
    changed('reopen');
  }

  function changed(result) {
    onEdit();
    if (result === 'reopen') fields();
    if (target().con) refreshPlot();
  }

  function fields() {
    const { action, con } = target();
    $('editor-fields').innerHTML = editorFieldsHtml(action, con, kinds());
  }

  function open(actionName, conName) {
    const same = editing && editing.action === actionName && editing.consideration === conName;
    editing = { action: actionName, consideration: conName };
    if (!same) undo = [];
    const { con } = target();
    $('editor').hidden = false;
    $('editor-title').textContent = con ? `${actionName} / ${conName}` : actionName;
    const origin = provenance(actionName);
    $('editor-origin').textContent = origin;
    $('editor-origin').hidden = !origin;
    fields();
    $('curve-editor').hidden = !con;
    if (!con) return;
    $('curve-presets').innerHTML = presetsOf(kinds()).map((p) =>
      `<button type="button" data-preset="${esc(p.name)}">${esc(p.name)}</button>`).join('');
    plot = { from: 0, to: 1, factor: con.factor, points: [], ghost: [] };
    refreshPlot();
    refreshPlot(true);
  }

  function close() {
    editing = null;
    plot = null;
    $('editor').hidden = true;
  }

  // Plot coordinates of a pointer event.
  function at(e) {
    const r = $('curve-plot-box').querySelector('svg').getBoundingClientRect();
    return { x: e.clientX - r.left, y: e.clientY - r.top };
  }

  function moveHandle(h, value, yValue) {
    applyHandle(target().con, kinds(), h, value, yValue);
    drawPlot();
    refreshPlot();
  }

  function wirePlot() {
    const box = $('curve-plot-box');
    box.addEventListener('pointerdown', (e) => {
      const g = e.target.closest('.handle');
      if (!g || !editing) return;
      e.preventDefault();
      g.focus();
      snapshot();
      drag = { handle: handles().find((h) => h.id === g.dataset.handle), start: at(e), asked: 0 };
      box.setPointerCapture(e.pointerId);
    });
    box.addEventListener('pointermove', (e) => {
      if (!editing || !plot) return;
      if (!drag) {
        const out = box.querySelector('#curve-readout');
        if (out) out.textContent = readout(plot.points, plot.from, plot.to, factorOf(target().con).unit, at(e).x);
        return;
      }
      const s = scales(plot.from, plot.to);
      const v = dragValue(target().con, drag.handle, drag.start, at(e), s);
      applyHandle(target().con, kinds(), drag.handle, v.value, v.yValue);
      drawPlot();
      // The engine is asked at most every 40 ms while the pointer moves.
      if (e.timeStamp - drag.asked < 40) return;
      drag.asked = e.timeStamp;
      refreshPlot();
      onDrag();
    });
    const end = () => {
      if (!drag) return;
      drag = null;
      changed('reopen');
    };
    box.addEventListener('pointerup', end);
    box.addEventListener('pointercancel', end);
    box.addEventListener('keydown', (e) => {
      const g = e.target.closest('.handle');
      if (!g || !editing) return;
      const h = handles().find((x) => x.id === g.dataset.handle);
      const v = h && keyValue(h, e.key, e.shiftKey);
      if (!v) return;
      e.preventDefault();
      snapshot();
      moveHandle(h, v.value, v.yValue);
      onEdit();
      fields();
    });
    $('curve-presets').addEventListener('click', (e) => {
      const name = e.target.dataset.preset;
      const preset = name && presetsOf(kinds()).find((p) => p.name === name);
      if (!preset || !editing) return;
      snapshot();
      target().con.curve = JSON.parse(JSON.stringify(preset.curve));
      changed('reopen');
    });
    $('curve-undo').addEventListener('click', undoLast);
    $('editor').addEventListener('keydown', (e) => {
      if ((e.ctrlKey || e.metaKey) && e.key === 'z' && e.target.tagName !== 'INPUT') {
        e.preventDefault();
        undoLast();
      }
    });
  }

  function wire() {
    $('editor-fields').addEventListener('change', (e) => {
      if (!editing) return;
      const { action, con } = target();
      snapshot();
      const result = applyEdit(action, con, kinds(), e.target);
      if (!result) {
        undo.pop();
        return;
      }
      changed(result);
    });
    wirePlot();
  }

  return { open, close, wire };
}
