// The candidate view ("compare"): the feed's recent decisions of a set
// replayed by the server (/api/v1/candidate) with a candidate — the shadow
// set, or the page's edits — against the live set: churn, the transition
// matrix, the flipped decisions, and a flip's two breakdowns side by side.
// The text is built by pure functions (unit-tested under Node); the view
// takes the page's element lookup and API call, so it holds no page state
// but the flips on show.
import { esc } from './text.js';

// "attack@goblin-2", "(none)".
export function sideText(d) {
  return (d.action || '(none)') + (d.targetId ? '@' + d.targetId : '');
}

// The summary line of one set's comparison (`set` from the answer's sets).
export function candidateSummary(set) {
  const compared = Number(set.decisions || 0);
  const flipped = Number(set.flipped || 0);
  return `churn ${(100 * (set.churn || 0)).toFixed(1)}%: ${flipped} of ` +
    `${compared} recent decisions change (candidate ` +
    `${set.candidateRevision}, live ${set.baselineRevision})` +
    (Number(set.errors || 0) ? `; ${set.errors} refused: ${set.firstError}` : '');
}

// The transitions worth a row: a change of action, or of target.
export function movedTransitions(set) {
  return (set.transitions || []).filter(
    (t) => t.from !== t.to || Number(t.targetChanged || 0) > 0);
}

export function createCandidateView({ $, api }) {
  let flips = [];

  function render(r) {
    const set = r && (r.sets || [])[0];
    const compared = set ? Number(set.decisions || 0) : 0;
    $('candidate-matrix').hidden = $('candidate-flips').hidden = !compared;
    flips = compared ? (r.examples || []) : [];
    if (!r) return;
    if (!compared) {
      $('candidate-text').textContent = 'No recent decisions of this set to ' +
        'replay yet (the feed keeps --recent_sample of real traffic).';
      return;
    }
    $('candidate-text').textContent = candidateSummary(set);
    $('candidate-matrix').querySelector('tbody').innerHTML =
      movedTransitions(set).map((t) =>
        `<tr class="move" data-from="${esc(t.from)}" data-to="${esc(t.to)}"
          data-count="${Number(t.count)}"><td>${esc(t.from || '(none)')}</td>
          <td>${esc(t.to || '(none)')}${t.from === t.to ? ' (other target)' : ''}</td>
          <td>${Number(t.from === t.to ? t.targetChanged : t.count)}</td></tr>`)
        .join('') ||
      '<tr><td colspan="3" class="muted">no decision changes</td></tr>';
    $('candidate-flips').querySelector('tbody').innerHTML = flips.map((x, i) =>
      `<tr class="flip-row" data-index="${i}"><td>${esc(x.agentId)}</td>
        <td>${esc(sideText(x.baseline))} → ${esc(sideText(x.candidate))}</td>
        <td>${Number(x.margin || 0).toFixed(3)}</td></tr>`).join('');
  }

  // Replays against `candidate` (a set's JSON), or the shadow set when
  // it is undefined.
  async function compare(setName, candidate) {
    const body = { behaviourSet: setName };
    if (candidate) body.candidate = candidate;
    try {
      render(await api('/api/v1/candidate', body));
    } catch (e) {
      render(null);
      $('candidate-text').textContent = String(e.message || e);
    }
  }

  // Both breakdowns of flip `index`, side by side, in the modal.
  function openFlip(index) {
    const x = flips[index];
    if (!x) return;
    const side = (title, d) => `<div class="flip-side"><h3>${esc(title)}:
      ${esc(sideText(d))} ${Number(d.score || 0).toFixed(3)}</h3>
      <ul>${String(d.summary || '').split(' | ').map((s) =>
        `<li>${esc(s)}</li>`).join('')}</ul></div>`;
    $('modal-body').innerHTML = `<h2>${esc(x.agentId)} <span class="muted">
      decision ${esc(x.decisionId)}, margin ${Number(x.margin || 0).toFixed(3)}</span></h2>
      <div class="flip" data-testid="flip">${side('live', x.baseline)}${side('candidate', x.candidate)}</div>`;
    $('modal').hidden = false;
  }

  return { render, compare, openFlip };
}
