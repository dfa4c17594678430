// The live feed: the server's sampled recent decisions
// (/api/v1/decisions/recent), filtered by set, action and switches; a row
// loads its snapshot into the page. The query and the markup come from pure
// functions (unit-tested under Node); the view takes the page's element
// lookup, API call and callbacks, and holds no page state but the rows on
// show.
import { esc } from './text.js';

// The feed's query: the newest 30, of `set` when given, with the action and
// switched filters when set.
export function feedQuery({ set, action, switched }) {
  const q = new URLSearchParams({ limit: '30' });
  if (set) q.set('set', set);
  if (action) q.set('action', action);
  if (switched) q.set('switched', switched);
  return q.toString();
}

// One row per decision: its time, agent, action (and target), score and
// whether it switched.
export function feedRowsHtml(rows) {
  return rows.map((e, i) =>
    `<tr class="feed-row" data-index="${i}" data-agent="${esc(e.agentId)}">
        <td>${esc(new Date(e.time).toLocaleTimeString())}</td><td>${esc(e.agentId)}</td>
        <td>${esc(e.action)}${e.targetId ? ' → ' + esc(e.targetId) : ''}</td>
        <td>${Number(e.score).toFixed(3)}</td><td>${e.switched ? 'yes' : ''}</td></tr>`).join('');
}

export function feedText(rows) {
  return rows.length
    ? 'Click a row to load its snapshot.'
    : 'No sampled decisions yet (the server samples --recent_sample of real traffic).';
}

// The view. `currentSet()` names the page's set (or nothing); `onRow(e)`
// loads a feed entry into the page; `showError` reports a failed load.
export function createFeedView({ $, api, currentSet, onRow, showError }) {
  let rows = [];

  async function refresh() {
    const query = feedQuery({
      set: $('feed-this-set').checked ? currentSet() : '',
      action: $('feed-action').value,
      switched: $('feed-switched').value,
    });
    try {
      const res = await api('/api/v1/decisions/recent?' + query);
      rows = res.decisions || [];
      $('feed').querySelector('tbody').innerHTML = feedRowsHtml(rows);
      $('feed-text').textContent = feedText(rows);
    } catch (e) { $('feed-text').textContent = String(e.message || e); }
  }

  function wire() {
    for (const id of ['feed-this-set', 'feed-action', 'feed-switched'])
      $(id).addEventListener('change', refresh);
    $('feed').addEventListener('click', (e) => {
      const row = e.target.closest('.feed-row');
      if (row) onRow(rows[Number(row.dataset.index)]).catch(showError);
    });
  }

  return { refresh, wire };
}
