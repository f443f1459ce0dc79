// The page of `git rewind web`: lanes of sessions on a time axis, a virtual-scrolled list of checkpoints,
// the detail of one (note, diff, files) and the actions, each previewed by a dry run before it runs.
// Plain modern JavaScript in ES modules, no build step; the JSON API is git_rewind/web/app.py's.

import { api, connect, liveUpdates, Results } from './api.js';
import { renderDiffMode, select, setupDetail } from './detail.js';
import { debounce, idle, shortSession, sleep, toast } from './format.js';
import { drawTimeline, renderTimeline, setupTimeline, sortedSessions } from './lanes.js';
import { listBox, renderList, setupList } from './list.js';
import { $, BULK, PAGE, state } from './state.js';

// ---------------------------------------------------------------- start, reload, live updates

export async function start() {
  const gen = ++state.gen;
  const all = new Results(baseQuery());
  const query = filterQuery();
  const view = query.toString() !== all.query.toString() ? new Results(query) : all;
  state.all = all;
  state.view = view;
  await connect();
  // the first page of checkpoints is asked for beside the info, not after it: one round trip less
  const [info] = await Promise.all([api('/api/info'), all.fetch(0, PAGE), view !== all ? view.fetch(0, PAGE) : null]);
  if (gen !== state.gen) return;
  const box = listBox();  // before the first change below: read after them, it would lay the page out twice
  state.info = info;
  state.skew = info.now * 1000 - Date.now();
  document.title = `git rewind · ${info.name}`;
  $('#repo-name').textContent = info.name;
  $('#repo-name').title = info.repo;
  $('#branch').hidden = !info.branch;
  $('#branch').textContent = info.branch ? `⎇ ${info.branch}` : '';
  $('#worktree').hidden = !info.worktree;
  $('#worktree').textContent = info.worktree ? `work tree ${info.worktree}` : '';
  $('#readonly-badge').hidden = !info.read_only;
  document.body.classList.toggle('read-only', info.read_only);
  document.body.classList.remove('loading');

  fillEmpty(info.agents);
  showEmpty(state.info.count === 0 && state.all.total === 0);
  fillFilterChoices();
  renderAll(box);
  document.body.dataset.ready = '1';  // the first list and lanes are on screen (tests and the bench wait on it)
  performance.mark('rewind-ready');
  loadRest(gen);
}

/** The lanes want every checkpoint: fetch the rest in big pages after the first screen is up. */
export async function loadRest(gen) {
  const all = state.all;
  // the first hole each time, not a fixed walk: a live update may have shifted everything by new checkpoints
  for (let offset = all.firstMissing(); offset >= 0; offset = all.firstMissing()) {
    await idle();  // a click or a scroll of the person's goes first
    while (state.busy > 0) await sleep(50);
    if (gen !== state.gen) return;
    const data = await all.fetch(offset, Math.min(BULK, all.total - offset));
    if (gen !== state.gen) return;
    if (!data) { await sleep(250); continue; }  // newer checkpoints than this page knows: the live update comes
    renderTimeline();
    renderList();
  }
  document.body.dataset.complete = '1';
  performance.mark('rewind-complete');
}

/** The empty page's commands, naming every agent the registry knows (/api/info's agents). */
function fillEmpty(agents) {
  const [first, ...others] = agents.install;
  $('#empty-install').textContent = `git rewind install --agent ${first}`;
  $('#empty-agents').textContent = others.length ? `(or ${others.join(', ')})` : '';
  $('#empty-watch').hidden = $('#empty-watch-command').hidden = !agents.watch.length;
  $('#empty-watch-command').textContent = agents.watch.map((program) => `git rewind watch -- ${program}`).join('\n');
}

export function showEmpty(empty) {
  $('#empty').hidden = !empty;
  $('#timeline').hidden = empty;
  $('#main').hidden = empty;
  $('#filters').hidden = empty;
  $('#search').hidden = empty;
}

/** No credential for this tab (a used or foreign link, a server started again): say how to get one. */
export function showLocked(reason) {
  showEmpty(false);
  for (const id of ['#timeline', '#main', '#filters', '#search', '#live']) $(id).hidden = true;
  $('#locked-reason').textContent = reason;
  $('#locked').hidden = false;
}

/** A checkpoint was taken (or tags changed, or old ones were dropped): bring the page up to date. */
export async function refresh() {
  const all = state.all;
  if (!all || !state.info) return start();
  const info = await api('/api/info');
  const added = info.count - state.info.count;
  if (added < 0 || added > 1000 || state.info.count === 0) {
    state.info = info;
    await start();
    refreshDetail();
    return;
  }
  state.info = info;
  const gen = state.gen;
  const head = await api(`/api/checkpoints?${baseQuery()}&offset=0&limit=${added + 100}`);
  if (gen !== state.gen) return;
  const known = all.items.length ? all.items[0].seq : 0;
  const fresh = head.items.filter((item) => item.seq > known);
  state.fresh = new Set(fresh.map((item) => item.seq));
  const rest = head.items.slice(fresh.length);
  const merged = fresh.concat(all.items);
  const consistent = rest.every((item, i) => merged[fresh.length + i] && merged[fresh.length + i].seq === item.seq);
  if (!consistent) { await start(); refreshDetail(); return; }
  rest.forEach((item, i) => { merged[fresh.length + i] = item; });  // tags may have changed
  all.items = merged;
  all.total = head.total;
  all.bySeq = new Map();
  merged.forEach((item, i) => all.bySeq.set(item.seq, i));  // forEach skips the holes not loaded yet
  state.sessions = head.sessions;
  if (state.view !== all) {
    state.view = new Results(state.view.query);
    await state.view.fetch(0, PAGE);
  }
  fillFilterChoices();
  renderAll();
  refreshDetail();
}

export function refreshDetail() {
  if (state.selected == null) return;
  if (state.compare === 'worktree' || state.detail?.tags) select(state.selected, { keepTab: true, quiet: true });
}

export function listen() {
  const source = liveUpdates();
  const live = $('#live');
  const update = debounce(() => refresh().catch((e) => toast(e.message, true)), 150);
  source.addEventListener('open', () => live.classList.add('on'));
  source.addEventListener('error', () => live.classList.remove('on'));
  source.addEventListener('checkpoint', () => {
    live.classList.add('on');
    update();  // sent only when the notes or refs moved: a tag changed elsewhere counts too, same count or not
  });
}

// ---------------------------------------------------------------- filters

export const FILTERS = { q: '#search', path: '#filter-path', tag: '#filter-tag', agent: '#filter-agent',
  session: '#filter-session', since: '#filter-since', until: '#filter-until' };

/** What every list starts from, the lanes' too: safety checkpoints only when asked for (the API hides them). */
export function baseQuery() {
  const params = new URLSearchParams();
  if ($('#filter-safety').checked) params.set('safety', '1');
  return params;
}

export function filterQuery() {
  const params = baseQuery();
  for (const [key, sel] of Object.entries(FILTERS)) {
    const value = $(sel).value.trim();
    if (value) params.set(key, value);
  }
  return params;
}

export async function applyFilters() {
  if (!state.all || baseQuery().toString() !== state.all.query.toString()) return start();  // the lanes change too
  const query = filterQuery();
  const gen = state.gen;
  const view = query.toString() !== state.all.query.toString() ? new Results(query) : state.all;
  $('#list').classList.add('busy');
  try {
    if (view !== state.all) await view.fetch(0, PAGE);
  } catch (e) {
    toast(e.message, true);
    return;
  } finally {
    $('#list').classList.remove('busy');
  }
  if (gen !== state.gen || query.toString() !== filterQuery().toString()) return;
  state.view = view;
  $('#list').scrollTop = 0;
  renderList();
  renderTimeline();
  renderCount();
}

export function fillFilterChoices() {
  const agents = [...new Set(state.sessions.map((s) => s.agent).filter(Boolean))].sort();
  fillSelect($('#filter-agent'), agents.map((a) => [a, a]));
  fillSelect($('#filter-session'), sortedSessions().map((s) =>
    [s.session, `${shortSession(s.session)}${s.agent ? ' · ' + s.agent : ''} (${s.count})`]));
}

export function fillSelect(select, options) {
  const value = select.value;
  const key = JSON.stringify(options);
  if (select.dataset.key === key) return;
  select.dataset.key = key;
  select.replaceChildren(new Option('any', ''), ...options.map(([v, label]) => new Option(label, v)));
  select.value = options.some(([v]) => v === value) ? value : '';
}

export function renderCount() {
  const total = state.all ? state.all.total : 0;
  $('#count').textContent = `${total} checkpoint${total === 1 ? '' : 's'}`;
  const filtered = state.view && state.view !== state.all;
  $('#match-count').textContent = filtered ? `${state.view.total} of ${total} match` : '';
  document.body.classList.toggle('filtered', Boolean(filtered));
}

/** The count, the lanes and the list; BOX is the list's listBox() when the caller read it before changing the page. */
export function renderAll(box = null) {
  renderCount();
  drawTimeline();
  renderList(box);
}

// ---------------------------------------------------------------- wiring

export function setup() {
  const started = start();  // its requests leave now; the wiring below is done long before the answers
  state.diffMode = localStorage.getItem('rewind.diffMode') === 'split' ? 'split' : 'unified';
  renderDiffMode();
  setupTimeline();
  setupList();
  setupDetail();
  const onFilter = debounce(applyFilters, 200);
  $('#search').addEventListener('input', onFilter);
  $('#search').addEventListener('keydown', (event) => { if (event.key === 'Escape') { event.target.value = ''; onFilter(); } });
  $('#filters').addEventListener('input', onFilter);
  $('#filters').addEventListener('change', onFilter);
  $('#filters').addEventListener('submit', (event) => event.preventDefault());
  $('#filters').addEventListener('reset', () => setTimeout(applyFilters, 0));
  setInterval(() => { renderList(); }, 30000);
  started.then(listen).catch((e) => {
    document.body.classList.remove('loading');
    if (e.status === 403) showLocked(e.message);
    else toast(`could not load: ${e.message}`, true);
  });
}

setup();
