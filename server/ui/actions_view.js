// The decision's actions as cards, the winner first: each action's score, weight,
// aggregate and commitment, whether it won, ran up or was vetoed, and each
// consideration's curve with the values along its way (raw, normalised,
// curved, output, contribution). Pure functions, unit-tested under Node
// (tests/ui/modules_test.mjs); app.js puts the markup on the page.
import { curveSvg } from './plot.js';
import { factorOf } from './snapshot.js';
import { esc, fmt } from './text.js';

function sameRow(action, target, otherAction, otherTarget) {
  return action === otherAction && (target || '') === (otherTarget || '');
}

function winTag(ex) {
  if (!ex.runnerUpAction) return 'winner';
  return ex.margin >= 0 ? `winner by ${Number(ex.margin).toFixed(3)}` : 'winner (higher rank)';
}

function considerationHtml(set, action, a, c, curves) {
  const def = action.considerations.find((x) => x.name === c.consideration) || {};
  const f = factorOf(set, def);
  const key = action.name + '/' + c.consideration;
  const vetoing = a.vetoed && a.vetoedBy === c.consideration;
  return `<div class="con${vetoing ? ' vetoing' : ''}" data-key="${esc(key)}"
            data-consideration="${esc(c.consideration)}">
            <div class="cname"><span>${esc(c.consideration)}</span>
            <span class="muted">${esc(def.factor || '')}</span></div>
            ${curveSvg(curves[key], c.raw, [f.min, f.max], 190, 56)}
            <div class="vals"><span>raw</span><span>${fmt(c.raw)} ${esc(f.unit || '')}</span>
            <span>normalised</span><span>${fmt(c.normalised)}</span>
            <span>curved</span><span>${fmt(c.curved)}</span>
            <span>output</span><span class="output">${fmt(c.output)}</span>
            <span>contribution</span><span class="contribution">${fmt(c.contribution)}</span></div>
            <button class="edit-con">edit curve</button></div>`;
}

function actionHtml(set, d, a, curves) {
  const ex = d.explanation || {};
  const action = set.actions[a.actionIndex];
  const label = a.targetId ? `${a.action} → ${a.targetId}` : a.action;
  const win = sameRow(a.action, a.targetId, d.action, d.targetId);
  const runner = sameRow(a.action, a.targetId, ex.runnerUpAction, ex.runnerUpTarget);
  const cls = ['action', win ? 'winner' : '', a.vetoed ? 'vetoed' : ''].join(' ');
  const commitment = a.commitmentFactor && a.commitmentFactor !== 1
    ? ` · commitment ×${fmt(a.commitmentFactor)}` : '';
  return `<div class="${cls}" data-action="${esc(a.action)}" data-target="${esc(a.targetId || '')}">
        <div class="head"><span class="title">${esc(label)}</span>
        <div class="bar"><div style="width:${(100 * Math.min(1, a.score)).toFixed(1)}%"></div></div>
        <span class="score">${a.score.toFixed(3)}</span>
        ${win ? `<span class="tag win">${winTag(ex)}</span>` : ''}
        ${runner ? '<span class="tag runner">runner-up</span>' : ''}
        ${a.vetoed ? `<span class="veto">vetoed by <span class="vetoed-by">${esc(a.vetoedBy)}</span></span>` : ''}
        </div><div class="muted">weight ${fmt(action.weight)} · aggregate ${fmt(a.aggregate)}
          · compensated ${fmt(a.compensated)}${commitment}
          <button class="edit-action" data-action="${esc(action.name)}">edit</button></div>
        <div class="cons">${(a.considerations || []).map((c) =>
          considerationHtml(set, action, a, c, curves)).join('')}</div></div>`;
}

// The order the cards are shown in, so the answer comes first: the
// competing rank, then the others from the highest; in a rank the winner,
// then the runner-up, then by score, vetoed rows last. Returns [rank,
// rows] pairs.
export function cardOrder(d) {
  const ex = d.explanation || {};
  const rows = ex.actions || [];
  const competing = ex.rank || 0;
  const ranks = [...new Set(rows.map((a) => a.rank || 0))]
    .sort((a, b) => (b === competing) - (a === competing) || b - a);
  const place = (a) => sameRow(a.action, a.targetId, d.action, d.targetId) ? 0
    : sameRow(a.action, a.targetId, ex.runnerUpAction, ex.runnerUpTarget) ? 1
    : a.vetoed ? 3 : 2;
  // Array sort is stable: equal scores keep the server's order.
  return ranks.map((rank) => [rank, rows.filter((r) => (r.rank || 0) === rank)
    .sort((x, y) => place(x) - place(y) || y.score - x.score)]);
}

// A row's considerations from the one pulling its score down most (lowest
// output) up.
function weakest(row) {
  return (row.considerations || []).slice().sort((x, y) => (x.output || 0) - (y.output || 0));
}

function rowLabel(action, target) { return target ? `${action} → ${target}` : action; }

// The answer pinned above the cards: who won, over whom and by how much, in
// words (a negative margin is a win by rank; a score above 1 is the
// commitment bonus), and the considerations that separate the two — each
// side's weakest, since a product or mean is held down by its lowest.
export function duelText(d) {
  const ex = d.explanation || {};
  const rows = ex.actions || [];
  const find = (action, target) => rows.find((a) => sameRow(a.action, a.targetId, action, target));
  const win = find(d.action, d.targetId);
  if (!win) return { head: d.action ? `${d.action} wins.` : 'No action can be chosen.', lines: [] };
  const run = ex.runnerUpAction ? find(ex.runnerUpAction, ex.runnerUpTarget) : null;
  let head = `${rowLabel(win.action, win.targetId)} wins with ${win.score.toFixed(3)}`;
  if (!run) head += ', unopposed.';
  else if (ex.margin >= 0) {
    head += ` over ${rowLabel(run.action, run.targetId)} (${run.score.toFixed(3)}), by ${Number(ex.margin).toFixed(3)}.`;
  } else {
    head += `, by rank: it is in rank ${win.rank || 0}, where it competes; ` +
      `${rowLabel(run.action, run.targetId)} scores more (${run.score.toFixed(3)}) in rank ${run.rank || 0}.`;
  }
  const lines = [];
  if (win.score > 1 && win.commitmentFactor > 1) {
    lines.push(`Its score is above 1 because it is the current action: ` +
      `the commitment bonus multiplies it by ${fmt(win.commitmentFactor)}.`);
  }
  for (const [who, row] of [['winner', win], ['runner-up', run]]) {
    const low = row && weakest(row)[0];
    if (low) {
      lines.push(`The ${who}'s weakest consideration: ${low.consideration} ` +
        `(output ${fmt(low.output)}).`);
    }
  }
  return { head, lines };
}

// The winner's and the runner-up's considerations one against the other,
// each side's by contribution, lowest (holding its score down most) first:
// considerations that read the same factor on both sides share a row, so a
// factor that favours one side shows against the other. Rows of
// [winnerCell, factor, runnerCell] (a cell: {name, contribution} or null);
// empty without a runner-up. `set` gives each consideration's factor.
export function duelRows(set, d) {
  const ex = d.explanation || {};
  const rows = ex.actions || [];
  const find = (action, target) => rows.find((a) => sameRow(a.action, a.targetId, action, target));
  const win = find(d.action, d.targetId);
  const run = ex.runnerUpAction ? find(ex.runnerUpAction, ex.runnerUpTarget) : null;
  if (!win || !run) return [];
  const cells = (row) => {
    const def = (set.actions || []).find((a) => a.name === row.action) || { considerations: [] };
    return (row.considerations || []).map((c) => ({
      name: c.consideration, contribution: c.contribution ?? 1,
      factor: ((def.considerations || []).find((x) => x.name === c.consideration) || {}).factor || '',
    })).sort((x, y) => x.contribution - y.contribution);
  };
  const w = cells(win), r = cells(run);
  const shared = w.filter((c) => r.some((o) => o.factor && o.factor === c.factor));
  const out = shared.map((c) => {
    const o = r.find((x) => x.factor === c.factor);
    return { low: Math.min(c.contribution, o.contribution), row: [c, c.factor, o] };
  }).sort((x, y) => x.low - y.low).map((x) => x.row);
  const used = new Set(out.flatMap(([a, , b]) => [a, b]));
  const restW = w.filter((c) => !used.has(c)), restR = r.filter((c) => !used.has(c));
  for (let i = 0; i < Math.max(restW.length, restR.length); i++) {
    out.push([restW[i] || null, '', restR[i] || null]);
  }
  return out;
}

function duelCell(c) {
  if (!c) return '<td></td>';
  return `<td><span class="duel-name">${esc(c.name)}</span> ${fmt(c.contribution)}
    <div class="bar"><div style="width:${(100 * Math.min(1, Math.max(0, c.contribution))).toFixed(1)}%"></div></div></td>`;
}

export function duelHtml(d, set = { actions: [] }) {
  const t = duelText(d);
  const rows = duelRows(set, d);
  const ex = d.explanation || {};
  const table = rows.length ? `<table class="duel-table"><caption>What separates them: each
      consideration's contribution, lowest first; a row in the middle names a factor both read</caption>
      <thead><tr><th scope="col">${esc(rowLabel(d.action, d.targetId))}</th><th scope="col">factor</th>
      <th scope="col">${esc(rowLabel(ex.runnerUpAction, ex.runnerUpTarget))}</th></tr></thead><tbody>${
      rows.map(([a, f, b]) => `<tr>${duelCell(a)}<td class="muted">${esc(f)}</td>${duelCell(b)}</tr>`).join('')
    }</tbody></table>` : '';
  return `<p class="duel-head">${esc(t.head)}</p>` +
    (t.lines.length ? `<ul>${t.lines.map((l) => `<li>${esc(l)}</li>`).join('')}</ul>` : '') + table;
}

// Decision `d` of `set` (the page's working copy) as cards (in
// `cardOrder`); `curves` are the sweeps' points by "action/consideration".
export function actionsHtml(set, d, curves) {
  const competing = (d.explanation || {}).rank || 0;
  return cardOrder(d).map(([rank, rows]) => `<div class="rank"><div class="rank-title">rank ${rank}${
      rank === competing ? ' (competing)' : ''}</div>${
      rows.map((a) => actionHtml(set, d, a, curves)).join('')}</div>`).join('');
}
