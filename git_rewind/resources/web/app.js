// The page of `git rewind web`: lanes of sessions on a time axis, a virtual-scrolled list of checkpoints,
// the detail of one (note, diff, files) and the actions, each previewed by a dry run before it runs.
// Plain modern JavaScript, no build step; the API is /work/web-contract.md's (git_rewind/web/).

const TOKEN = document.querySelector('meta[name="rewind-token"]').content;
const ROW_HEIGHT = 54;         // px; the list's rows all have this height (virtual scrolling needs it)
const PAGE = 250;              // items per list request (the first screen shows ~20)
const BULK = 1000;             // items per background request for the lanes: small, so a click's request is not queued behind a big one
const LABEL_WIDTH = 250;       // px of a lane's label column (app.css .lane)
const LANE_HEIGHT = 34;        // px of a lane (app.css .lane)
const MARK_GAP = 13;           // px between marks nudged apart
const BUCKET = 7;              // px; marks closer than this in one lane share one element
const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

const state = {
  info: null,
  skew: 0,                     // server clock minus ours, ms
  sessions: [],
  all: null,                   // Results of the unfiltered query: the lanes
  view: null,                  // Results of the filtered query: the list (=== all when no filter)
  selected: null,              // seq
  detail: null,                // the selected checkpoint's full JSON
  compare: 'previous',         // 'previous' | 'worktree' | an id
  diffMode: localStorage.getItem('rewind.diffMode') || 'unified',
  tab: 'changes',
  trackWidth: 0,               // px of a lane's track (= the axis), kept by a ResizeObserver
  domain: null,                // [t0, t1] of the whole history, seconds
  zoom: null,                  // [t0, t1] shown, or null for the whole domain
  busy: 0,                     // selections being shown: the background loading waits for them
  fresh: new Set(),            // seqs that arrived by a live update, highlighted for a moment
  gen: 0,                      // bumped on every reload, so late answers of an older one are dropped
};

// ---------------------------------------------------------------- the API

async function api(path, body) {
  const opts = { headers: { 'X-Rewind-Token': TOKEN } };
  if (body !== undefined) {
    opts.method = 'POST';
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  const response = await fetch(path, opts);
  let data;
  try { data = await response.json(); } catch { data = null; }
  if (!response.ok || !data || data.error) {
    throw new Error((data && data.error) || `${response.status} ${response.statusText}`);
  }
  return data;
}

/** One query's checkpoints, newest first, loaded page by page into a sparse array. */
class Results {
  constructor(query) {
    this.query = query;        // URLSearchParams without offset/limit
    this.total = 0;
    this.items = [];
    this.pending = new Set();  // offsets being fetched
    this.bySeq = new Map();    // seq -> index
  }

  url(offset, limit) {
    const params = new URLSearchParams(this.query);
    params.set('offset', offset);
    params.set('limit', limit);
    return `/api/checkpoints?${params}`;
  }

  async fetch(offset, limit) {
    if (this.pending.has(offset)) return null;
    this.pending.add(offset);
    const gen = state.gen;
    try {
      const data = await api(this.url(offset, limit));
      if (gen !== state.gen) return null;
      this.total = data.total;
      data.items.forEach((item, i) => { this.items[offset + i] = item; this.bySeq.set(item.seq, offset + i); });
      if (data.sessions) state.sessions = data.sessions;
      return data;
    } finally {
      this.pending.delete(offset);
    }
  }

  /** Fetch the pages covering [from, to) that are not here yet. */
  ensure(from, to) {
    const wanted = [];
    for (let page = Math.floor(from / PAGE) * PAGE; page < Math.min(to, this.total); page += PAGE) {
      if (this.items[page] === undefined && !this.pending.has(page)) wanted.push(page);
    }
    return Promise.all(wanted.map((offset) => this.fetch(offset, PAGE)));
  }

  complete() {
    if (this.items.length < this.total) return false;
    for (let i = 0; i < this.total; i++) if (this.items[i] === undefined) return false;
    return true;
  }
}

// ---------------------------------------------------------------- small helpers

function esc(text) {
  return String(text ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

function now() { return (Date.now() + state.skew) / 1000; }

function age(time) {
  const s = Math.max(0, now() - time);
  if (s < 45) return `${Math.round(s)}s ago`;
  if (s < 45 * 60) return `${Math.round(s / 60)}m ago`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}

// Intl formatters are costly to make: one of each, not one per call (toLocaleTimeString makes one each time)
const HOUR_MINUTE = new Intl.DateTimeFormat([], { hour: '2-digit', minute: '2-digit', hour12: false });
const SECONDS = new Intl.DateTimeFormat([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
const DAY = new Intl.DateTimeFormat([], { month: 'short', day: 'numeric' });

function clock(time, withDate = false) {
  const d = new Date(time * 1000);
  return withDate ? `${DAY.format(d)} ${HOUR_MINUTE.format(d)}` : HOUR_MINUTE.format(d);
}

const PROMPT_TRIGGERS = new Set(['userpromptsubmit', 'beforeagent', 'beforesubmitprompt', 'chat.message']);
const END_TRIGGERS = new Set(['stop', 'afteragent', 'session.idle', 'subagentstop']);

/** What kind of moment a checkpoint is, for its colour. */
function kind(item) {
  const trigger = (item.trigger || '').toLowerCase();
  if (item.rewind || trigger === 'pre-rewind' || trigger.startsWith('pre-')) return 'safety';
  if (PROMPT_TRIGGERS.has(trigger)) return 'prompt';
  if (END_TRIGGERS.has(trigger)) return 'end';
  if (item.tool && !/bash|shell|execute/i.test(item.tool)) return 'edit';
  if (!trigger || trigger === 'manual' || trigger === 'snap') return 'manual';
  return 'other';
}

/** Who changed its files: 'agent', 'outside', 'mixed' or '' (unknown). */
function origin(item) {
  if (!item.origins) return '';
  const values = new Set(Object.values(item.origins));
  if (values.size === 0) return '';
  if (values.size > 1) return 'mixed';
  return values.has('agent') ? 'agent' : 'outside';
}

function what(item) {
  const trigger = item.trigger || 'manual';
  return item.tool ? `${trigger}/${item.tool}` : trigger;
}

function shortSession(session) { return session.length > 14 ? session.slice(0, 12) + '…' : session; }

function toast(message, isError = false) {
  const box = $('#toast');
  box.textContent = message;
  box.classList.toggle('error', isError);
  box.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { box.hidden = true; }, isError ? 9000 : 6000);
}

function debounce(fn, ms) {
  let timer;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
}

// ---------------------------------------------------------------- start, reload, live updates

async function start() {
  const gen = ++state.gen;
  const all = new Results(new URLSearchParams());
  const query = filterQuery();
  const view = query.toString() ? new Results(query) : all;
  state.all = all;
  state.view = view;
  // the first page of checkpoints is asked for beside the info, not after it: one round trip less
  const [info] = await Promise.all([api('/api/info'), all.fetch(0, PAGE), view !== all ? view.fetch(0, PAGE) : null]);
  if (gen !== state.gen) return;
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

  showEmpty(state.info.count === 0 && state.all.total === 0);
  fillFilterChoices();
  renderAll();
  document.body.dataset.ready = '1';  // the first list and lanes are on screen (tests and the bench wait on it)
  performance.mark('rewind-ready');
  loadRest(gen);
}

/** The lanes want every checkpoint: fetch the rest in big pages after the first screen is up. */
async function loadRest(gen) {
  const all = state.all;
  for (let offset = PAGE; offset < all.total; offset += BULK) {
    if (all.items[offset] !== undefined) continue;
    await idle();  // a click or a scroll of the person's goes first
    while (state.busy > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    await all.fetch(offset, Math.min(BULK, all.total - offset));
    if (gen !== state.gen) return;
    renderTimeline();
    renderList();
  }
  document.body.dataset.complete = '1';
  performance.mark('rewind-complete');
}

function idle() {
  return new Promise((resolve) => (window.requestIdleCallback ? requestIdleCallback(resolve, { timeout: 300 }) : setTimeout(resolve, 0)));
}

function showEmpty(empty) {
  $('#empty').hidden = !empty;
  $('#timeline').hidden = empty;
  $('#main').hidden = empty;
  $('#filters').hidden = empty;
  $('#search').hidden = empty;
}

/** A checkpoint was taken (or tags changed, or old ones were dropped): bring the page up to date. */
async function refresh() {
  const all = state.all;
  if (!all || !state.info) return start();
  const info = await api('/api/info');
  const added = info.count - state.info.count;
  if (added < 0 || added > 1000 || !all.complete() || state.info.count === 0) {
    state.info = info;
    await start();
    refreshDetail();
    return;
  }
  state.info = info;
  const gen = state.gen;
  const head = await api(`/api/checkpoints?offset=0&limit=${added + 100}`);
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
  all.bySeq = new Map(merged.map((item, i) => [item.seq, i]));
  state.sessions = head.sessions;
  if (state.view !== all) {
    state.view = new Results(state.view.query);
    await state.view.fetch(0, PAGE);
  }
  fillFilterChoices();
  renderAll();
  refreshDetail();
}

function refreshDetail() {
  if (state.selected == null) return;
  if (state.compare === 'worktree' || state.detail?.tags) select(state.selected, { keepTab: true, quiet: true });
}

function listen() {
  const source = new EventSource(`/api/events?token=${encodeURIComponent(TOKEN)}`);
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

const FILTERS = { q: '#search', path: '#filter-path', tag: '#filter-tag', agent: '#filter-agent',
  session: '#filter-session', since: '#filter-since', until: '#filter-until' };

function filterQuery() {
  const params = new URLSearchParams();
  for (const [key, sel] of Object.entries(FILTERS)) {
    const value = $(sel).value.trim();
    if (value) params.set(key, value);
  }
  return params;
}

async function applyFilters() {
  const query = filterQuery();
  const gen = state.gen;
  const view = query.toString() ? new Results(query) : state.all;
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

function fillFilterChoices() {
  const agents = [...new Set(state.sessions.map((s) => s.agent).filter(Boolean))].sort();
  fillSelect($('#filter-agent'), agents.map((a) => [a, a]));
  fillSelect($('#filter-session'), sortedSessions().map((s) =>
    [s.session, `${shortSession(s.session)}${s.agent ? ' · ' + s.agent : ''} (${s.count})`]));
}

function fillSelect(select, options) {
  const value = select.value;
  const key = JSON.stringify(options);
  if (select.dataset.key === key) return;
  select.dataset.key = key;
  select.replaceChildren(new Option('any', ''), ...options.map(([v, label]) => new Option(label, v)));
  select.value = options.some(([v]) => v === value) ? value : '';
}

function renderCount() {
  const total = state.all ? state.all.total : 0;
  $('#count').textContent = `${total} checkpoint${total === 1 ? '' : 's'}`;
  const filtered = state.view && state.view !== state.all;
  $('#match-count').textContent = filtered ? `${state.view.total} of ${total} match` : '';
  document.body.classList.toggle('filtered', Boolean(filtered));
}

function renderAll() {
  renderCount();
  drawTimeline();
  renderList();
}

// ---------------------------------------------------------------- the lanes

function sortedSessions() {
  return [...state.sessions].sort((a, b) => b.last - a.last);
}

/** Draw the lanes at the next frame; several calls in one frame draw once. */
function renderTimeline() {
  if (renderTimeline.queued) return;
  renderTimeline.queued = true;
  requestAnimationFrame(() => { renderTimeline.queued = false; drawTimeline(); });
}

function drawTimeline() {
  const lanes = $('#lanes');
  const sessions = sortedSessions();
  if (!sessions.length) { lanes.replaceChildren(); $('#axis').replaceChildren(); return; }
  const t0 = Math.min(...sessions.map((s) => s.first));
  const t1 = Math.max(...sessions.map((s) => s.last));
  const pad = Math.max(1, (t1 - t0) * 0.02);
  state.domain = [t0 - pad, t1 + pad];
  const [from, to] = state.zoom || state.domain;

  // one lane element per session, reused between renders
  const existing = new Map($$('.lane', lanes).map((lane) => [lane.dataset.session, lane]));
  const order = sessions.map((s) => {
    let lane = existing.get(s.session);
    if (!lane) {
      lane = document.createElement('div');
      lane.className = 'lane';
      lane.dataset.session = s.session;
      lane.innerHTML = '<div class="lane-label"></div><div class="lane-track"><div class="lane-span"></div></div>';
    }
    const prompt = s.first_prompt ? esc(s.first_prompt) : '<span class="muted">no prompt</span>';
    const label = `<b>${esc(s.agent || 'manual')}</b>${s.branch ? ` <span class="muted">⎇ ${esc(s.branch)}</span>` : ''}` +
      ` <span class="muted">· ${s.count}</span><div class="lane-prompt">${prompt}</div>`;
    const labelBox = lane.firstElementChild;
    if (labelBox.innerHTML !== label) labelBox.innerHTML = label;
    labelBox.title = `session ${s.session}\n${s.first_prompt || ''}`;
    return lane;
  });
  const current = $$('.lane', lanes);
  if (order.length !== current.length || order.some((lane, i) => current[i] !== lane)) {
    lanes.replaceChildren(...order);
  }

  // the tracks' width comes from a ResizeObserver: reading clientWidth here would force a layout per draw
  const width = Math.max(100, state.trackWidth || $('.lane-track', lanes).clientWidth || 600);
  const x = (t) => ((t - from) / (to - from)) * width;
  const sel = state.selected;
  const filtered = state.view !== state.all;
  const matching = filtered ? state.view.bySeq : null;

  // newest first: the first item of a bucket is the newest there, so it names the mark
  const buckets = new Map(sessions.map((s) => [s.session, new Map()]));
  const shown = new Map(sessions.map((s) => [s.session, []]));
  for (const item of state.all.items) {
    if (!item || item.time < from || item.time > to) continue;
    const lane = buckets.get(item.session);
    if (!lane) continue;
    shown.get(item.session).push(item);
    const b = Math.floor(x(item.time) / BUCKET);
    const bucket = lane.get(b);
    const hit = !matching || matching.has(item.seq);
    if (!bucket) lane.set(b, { item, count: 1, hit, selected: item.seq === sel });
    else {
      bucket.count++;
      bucket.hit ||= hit;
      if (item.seq === sel) { bucket.item = item; bucket.selected = true; }
    }
  }
  state.buckets = buckets;
  for (const [i, s] of sessions.entries()) {
    const track = order[i].lastElementChild;
    const span = track.firstElementChild;
    span.style.left = `${Math.max(0, x(s.first))}px`;
    span.style.width = `${Math.max(2, Math.min(width, x(s.last)) - Math.max(0, x(s.first)))}px`;
    track.classList.toggle('dense', shown.get(s.session).length > width / (3 * MARK_GAP));
    let html = '';
    for (const { item, count, hit, selected, left } of laneMarks(shown.get(s.session), buckets.get(s.session), x, width)) {
      const cls = `mark k-${kind(item)}${origin(item) ? ' o-' + origin(item) : ''}${count > 1 ? ' many' : ''}` +
        `${selected ? ' selected' : ''}${filtered && !hit ? ' dim' : ''}`;
      html += `<span class="${cls}" data-seq="${item.seq}" data-count="${count}" style="left:${left.toFixed(1)}px"></span>`;
    }
    const marks = html;
    if (track.marks !== marks) {
      track.marks = marks;
      track.replaceChildren(span);
      track.insertAdjacentHTML('beforeend', marks);
    }
  }
  state.scale = { from, to, width, lanes: order.length };
  placeCursor();
  renderAxis(from, to, width);
}

/** A line across every lane at the selected checkpoint's moment: what the other sessions were doing then. */
function placeCursor() {
  const lanes = $('#lanes');
  const { from, to, width, lanes: count } = state.scale || {};
  const index = state.selected == null ? undefined : state.all.bySeq.get(state.selected);
  const chosen = index === undefined ? null : state.all.items[index];
  let cursor = $('#cursor');
  if (!cursor) { cursor = document.createElement('div'); cursor.id = 'cursor'; }
  if (chosen && width && chosen.time >= from && chosen.time <= to) {
    // constants, not the layout: reading it here would force one
    cursor.style.left = `${LABEL_WIDTH + ((chosen.time - from) / (to - from)) * width}px`;
    cursor.style.height = `${count * LANE_HEIGHT}px`;
    if (cursor.parentNode !== lanes) lanes.append(cursor);
    cursor.hidden = false;
  } else {
    cursor.hidden = true;
  }
}

/** Move the selection's ring and line without drawing the lanes again, when its mark is on screen alone. */
function showSelectionOnLanes(seq) {
  const mark = $(`#lanes .mark[data-seq="${seq}"]`);
  if (!mark || mark.dataset.count !== '1') { renderTimeline(); return; }
  $$('#lanes .mark.selected').forEach((el) => el.classList.remove('selected'));
  mark.classList.add('selected');
  for (const track of $$('#lanes .lane-track')) track.marks = null;  // the next full draw must not skip a track
  placeCursor();
}

/** A lane's marks: one per checkpoint, nudged apart where they touch, while there is room for that (a few
 *  checkpoints in the same second stay apart); else one per BUCKET pixels, named by its newest checkpoint. */
function laneMarks(items, buckets, x, width) {
  const matching = state.view !== state.all ? state.view.bySeq : null;
  if (items.length > width / (3 * MARK_GAP)) {  // (drawTimeline marks such a track .dense)
    return [...buckets.values()].map((b) => ({ ...b, left: x(b.item.time) }));
  }
  const marks = [];
  let previous = -Infinity;
  for (let i = items.length - 1; i >= 0; i--) {  // oldest first
    const item = items[i];
    const left = Math.max(x(item.time), previous + MARK_GAP);
    previous = left;
    marks.push({ item, count: 1, hit: !matching || matching.has(item.seq), selected: item.seq === state.selected, left });
  }
  const overflow = previous - width;  // pushed past the end: move the run back
  if (overflow > 0) {
    for (let i = marks.length - 1, limit = width; i >= 0 && marks[i].left > limit; i--, limit -= MARK_GAP) marks[i].left = limit;
  }
  return marks;
}

const STEPS = [1, 5, 15, 30, 60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 7 * 86400, 30 * 86400];

function renderAxis(from, to, width) {
  const span = to - from;
  const step = STEPS.find((s) => (s / span) * width >= 90) || STEPS[STEPS.length - 1];
  const withDate = span > 86400;
  let html = '';
  const n = now();
  const nowLeft = ((n - from) / span) * width;
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) {
    const left = ((t - from) / span) * width;
    if ((n >= from && n <= to && Math.abs(left - nowLeft) < 60) || left < 24 || left > width - 30) continue;
    const d = new Date(t * 1000);
    const text = step < 60 ? SECONDS.format(d) : clock(t, withDate && step >= 3600);
    html += `<span class="tick" style="left:${left.toFixed(1)}px">${esc(text)}</span>`;
  }
  if (n >= from && n <= to) html += `<span class="now" style="left:${(((n - from) / span) * width).toFixed(1)}px">now</span>`;
  $('#axis').innerHTML = html;
}

/** The tooltip of a mark, made when the pointer is on it (not for every mark at every render). */
function showTip(mark) {
  const tip = $('#tip');
  const index = state.all.bySeq.get(Number(mark.dataset.seq));
  const item = index === undefined ? null : state.all.items[index];
  if (!item) { tip.hidden = true; return; }
  const count = Number(mark.dataset.count || 1);
  tip.innerHTML = `<b>#${item.seq}</b> ${esc(what(item))}${item.agent ? ` · ${esc(item.agent)}` : ''}` +
    ` <span class="muted">${esc(clock(item.time, true))} · ${esc(age(item.time))}</span><br>${esc(item.message)}` +
    (item.paths.length ? `<br><span class="muted">${esc(item.paths.slice(0, 3).join('  '))}</span>` : '') +
    (count > 1 ? `<br><span class="muted">+${count - 1} more here: zoom in (wheel) to tell them apart</span>` : '');
  const r = mark.getBoundingClientRect();
  tip.hidden = false;
  const left = Math.min(window.innerWidth - tip.offsetWidth - 8, Math.max(8, r.left + r.width / 2 - tip.offsetWidth / 2));
  tip.style.left = `${left}px`;
  tip.style.top = `${r.bottom + 6}px`;
}

function setupTimeline() {
  const lanes = $('#lanes');
  lanes.addEventListener('pointerover', (event) => {
    const mark = event.target.closest('.mark');
    if (mark) showTip(mark); else $('#tip').hidden = true;
  });
  lanes.addEventListener('pointerleave', () => { $('#tip').hidden = true; });
  lanes.addEventListener('click', (event) => {
    const mark = event.target.closest('.mark');
    if (!mark) return;
    const seq = Number(mark.dataset.seq);
    if (event.shiftKey && state.selected != null && seq !== state.selected) return compareWith(seq);
    select(seq, { scroll: true });
  });
  lanes.addEventListener('wheel', (event) => {
    const track = event.target.closest('.lane-track');
    if (!track || !state.domain) return;
    event.preventDefault();
    const [from, to] = state.zoom || state.domain;
    const rect = track.getBoundingClientRect();
    const at = from + ((event.clientX - rect.left) / rect.width) * (to - from);
    const factor = event.deltaY > 0 ? 1.25 : 0.8;
    const span = Math.max(2, Math.min(state.domain[1] - state.domain[0], (to - from) * factor));
    const ratio = (at - from) / (to - from);
    state.zoom = clampZoom(at - ratio * span, at - ratio * span + span);
    $('#tip').hidden = true;
    renderTimeline();
  }, { passive: false });
  let drag = null;
  lanes.addEventListener('pointerdown', (event) => {
    const track = event.target.closest('.lane-track');
    if (!track || event.target.closest('.mark') || !state.domain) return;
    drag = { x: event.clientX, zoom: state.zoom || state.domain, width: track.getBoundingClientRect().width };
    lanes.setPointerCapture(event.pointerId);
  });
  lanes.addEventListener('pointermove', (event) => {
    if (!drag) return;
    const [from, to] = drag.zoom;
    const shift = ((drag.x - event.clientX) / drag.width) * (to - from);
    state.zoom = clampZoom(from + shift, to + shift);
    renderTimeline();
  });
  lanes.addEventListener('pointerup', () => { drag = null; });
  lanes.addEventListener('dblclick', () => { state.zoom = null; renderTimeline(); });
  new ResizeObserver((entries) => {
    state.trackWidth = entries[0].contentRect.width;
    renderTimeline();
  }).observe($('#axis'));
}

function clampZoom(from, to) {
  const [d0, d1] = state.domain;
  const span = to - from;
  if (span >= d1 - d0) return null;
  if (from < d0) return [d0, d0 + span];
  if (to > d1) return [d1 - span, d1];
  return [from, to];
}

// ---------------------------------------------------------------- the list

function rowHtml(item, index) {
  const k = kind(item);
  const o = origin(item);
  const paths = item.paths.length
    ? esc(item.paths.slice(0, 4).join('  ')) + (item.paths.length > 4 || item.paths_more ? ` <span class="muted">+${item.paths.length - 4 + (item.paths_more || 0)}</span>` : '')
    : '';
  const tags = item.tags.map((t) => `<span class="tag">${esc(t)}</span>`).join('');
  const badge = o ? `<span class="badge b-${o}" title="changed by ${o === 'mixed' ? 'an agent and from outside' : o === 'agent' ? 'an agent' : 'outside an agent (you, an editor, git)'}">${o}</span>` : '';
  const text = item.prompt && k === 'prompt' ? `“${item.prompt}”` : item.message;
  const cls = `row k-${k}${item.seq === state.selected ? ' selected' : ''}${state.fresh.has(item.seq) ? ' fresh' : ''}`;
  return `<div class="${cls}" data-seq="${item.seq}" data-key="s${item.seq}" style="top:${index * ROW_HEIGHT}px">` +
    `<div class="line1"><span class="seq">#${item.seq}</span><span class="age" title="${esc(item.created)}">${age(item.time)}</span>` +
    `<span class="kind">${esc(what(item))}</span>${item.agent ? `<span class="agent">${esc(item.agent)}</span>` : ''}${badge}${tags}` +
    `<span class="paths">${paths}</span></div>` +
    `<div class="line2">${esc(text)}</div></div>`;
}

function renderList() {
  const list = $('#list');
  const view = state.view;
  if (!view) return;
  const spacer = $('#list-spacer');
  spacer.style.height = `${view.total * ROW_HEIGHT}px`;
  const first = Math.max(0, Math.floor(list.scrollTop / ROW_HEIGHT) - 10);
  const last = Math.min(view.total, Math.ceil((list.scrollTop + list.clientHeight) / ROW_HEIGHT) + 10);
  view.ensure(first, last).then((pages) => { if (pages.some(Boolean)) renderList(); });
  const wanted = [];
  for (let i = first; i < last; i++) {
    const item = view.items[i];
    wanted.push(item ? [`s${item.seq}`, rowHtml(item, i)]
      : [`p${i}`, `<div class="row placeholder" data-key="p${i}" style="top:${i * ROW_HEIGHT}px"><div class="line1 muted">…</div></div>`]);
  }
  if (!view.total) {
    wanted.push(['none', `<div class="no-match muted" data-key="none">${view === state.all ? 'No checkpoints.' : 'No checkpoint matches.'}</div>`]);
  }
  // rows are kept by key while their HTML is the same: a row under the pointer is not replaced under it
  const shown = renderList.shown || new Map();
  const next = new Map();
  let added = '';
  for (const [key, html] of wanted) {
    const old = shown.get(key);
    if (old && old.html === html && old.el && old.el.isConnected) next.set(key, old);
    else { added += html; next.set(key, { html, el: null }); }
  }
  for (const [key, old] of shown) if (next.get(key) !== old && old.el) old.el.remove();
  if (added) {
    list.insertAdjacentHTML('beforeend', added);
    for (const el of $$('[data-key]', list)) {
      const entry = next.get(el.dataset.key);
      if (entry && !entry.el) entry.el = el;
    }
  }
  renderList.shown = next;
}

function setupList() {
  const list = $('#list');
  list.addEventListener('scroll', () => requestAnimationFrame(renderList), { passive: true });
  list.addEventListener('click', (event) => {
    const row = event.target.closest('.row[data-seq]');
    if (!row) return;
    const seq = Number(row.dataset.seq);
    if (event.shiftKey && state.selected != null && seq !== state.selected) return compareWith(seq);
    select(seq);
  });
  document.addEventListener('keydown', (event) => {
    const typing = /INPUT|SELECT|TEXTAREA/.test(document.activeElement?.tagName || '') || $('#confirm').open;
    if (event.key === '/' && !typing) { event.preventDefault(); $('#search').focus(); return; }
    if (typing || !['ArrowDown', 'ArrowUp', 'j', 'k'].includes(event.key) || !state.view) return;
    event.preventDefault();
    const index = state.selected != null ? state.view.bySeq.get(state.selected) : -1;
    const next = Math.max(0, Math.min(state.view.total - 1, (index ?? -1) + (/Down|j/.test(event.key) ? 1 : -1)));
    const item = state.view.items[next];
    if (item) select(item.seq, { scroll: true });
  });
  new ResizeObserver(debounce(renderList, 50)).observe(list);
}

function scrollToSeq(seq) {
  const index = state.view.bySeq.get(seq);
  if (index === undefined) return;
  const list = $('#list');
  const top = index * ROW_HEIGHT;
  if (top < list.scrollTop || top + ROW_HEIGHT > list.scrollTop + list.clientHeight) {
    list.scrollTop = Math.max(0, top - list.clientHeight / 3);
  }
}

// ---------------------------------------------------------------- the detail

async function select(seq, { scroll = false, keepTab = false, quiet = false } = {}) {
  performance.mark('rewind-select');
  const changed = seq !== state.selected;
  state.selected = seq;
  if (changed && state.compare !== 'previous' && state.compare !== 'worktree') setCompare('previous');
  if (scroll) scrollToSeq(seq);
  renderList();
  showSelectionOnLanes(seq);
  $('#detail-empty').hidden = true;
  $('#detail').hidden = false;
  if (!keepTab && changed) $('#file-view').replaceChildren();
  let detail;
  state.busy++;
  try {
    detail = await api(`/api/checkpoints/${seq}`);
  } catch (e) {
    if (!quiet) toast(e.message, true);
    return;
  } finally {
    state.busy--;
  }
  if (state.selected !== seq) return;
  state.detail = detail;
  renderDetail(detail);
  performance.mark('rewind-detail');  // select → detail shown (the bench reads the two marks)
  loadTab(state.tab);
}

function renderDetail(d) {
  const k = kind(d);
  $('#detail').className = `k-${k}`;
  $('#detail-title').innerHTML = `<span class="seq">#${d.seq}</span> ${esc(d.message)}`;
  const prompt = $('#detail-prompt');
  prompt.hidden = !d.prompt;
  prompt.textContent = d.prompt || '';
  const rows = [
    ['when', `${clock(d.time, true)} · ${age(d.time)}`],
    ['what', what(d) + (d.agent ? ` · ${d.agent}` : '')],
    ['session', d.session],
  ];
  if (d.branch) rows.push(['branch', d.branch]);
  if (d.worktree) rows.push(['work tree', d.worktree]);
  if (d.head) rows.push(['HEAD', d.head.slice(0, 12)]);
  rows.push(['commit', d.commit.slice(0, 12)]);
  if (d.parent != null) rows.push(['previous', `#${d.parent}`]);
  if (d.rewind && d.rewind.to != null) rows.push(['safety', `taken before going back to #${d.rewind.to}`]);
  if (d.summary) rows.push(['summary', d.summary]);
  if (d.turn && d.turn.prompt && d.turn.prompt !== d.prompt) rows.push(['turn', `#${d.turn.seq ?? '?'} “${d.turn.prompt}”`]);
  if (d.skipped && d.skipped.length) rows.push(['skipped', typeof d.skipped === 'string' ? d.skipped : JSON.stringify(d.skipped)]);
  if (d.conversation && d.conversation.transcript) rows.push(['conversation', d.conversation.transcript]);
  const meta = rows.map(([k2, v]) => `<dt>${esc(k2)}</dt><dd>${esc(v)}</dd>`).join('');
  const origins = d.origins ? Object.entries(d.origins) : [];
  const changed = origins.length
    ? origins.map(([p, o]) => `<span class="path-o"><span class="badge b-${o}">${o}</span>${esc(p)}</span>`).join(' ')
    : esc(d.paths.join('  ')) || '<span class="muted">the whole tree</span>';
  $('#detail-meta').innerHTML = meta + `<dt>changed</dt><dd class="changed">${changed}</dd>`;
  renderTags(d);
  $('#pane-note').textContent = JSON.stringify(d.note ?? d, null, 2);
  $('#revert').disabled = false;
}

function renderTags(d) {
  const tags = d.tags.map((t) =>
    `<span class="tag">${esc(t)}<button class="action tag-remove" data-tag="${esc(t)}" title="remove the tag ${esc(t)}">×</button></span>`).join('');
  $('#detail-tags').innerHTML = `${tags}<span class="action tag-new"><input id="tag-input" placeholder="add a tag" size="10" spellcheck="false">` +
    '<button id="tag-add">tag</button></span>';
}

async function changeTags(add, remove) {
  const seq = state.selected;
  try {
    const result = await api('/api/tags', { id: String(seq), add, remove });
    if (state.detail && state.detail.seq === seq) { state.detail.tags = result.tags; renderTags(state.detail); }
    const index = state.all.bySeq.get(seq);
    if (index !== undefined) state.all.items[index].tags = result.tags;
    renderList();
  } catch (e) {
    toast(e.message, true);
  }
}

function setupDetail() {
  $('#detail-tags').addEventListener('click', (event) => {
    const remove = event.target.closest('.tag-remove');
    if (remove) changeTags([], [remove.dataset.tag]);
    if (event.target.id === 'tag-add') {
      const tag = $('#tag-input').value.trim();
      if (tag) changeTags([tag], []);
    }
  });
  $('#detail-tags').addEventListener('keydown', (event) => {
    if (event.target.id === 'tag-input' && event.key === 'Enter') {
      const tag = event.target.value.trim();
      if (tag) changeTags([tag], []);
    }
  });
  $$('.tabs button').forEach((button) => button.addEventListener('click', () => loadTab(button.dataset.tab)));
  $('#compare').addEventListener('change', () => {
    const value = $('#compare').value;
    $('#compare-seq').hidden = value !== 'other';
    if (value === 'other') { $('#compare-seq').focus(); return; }
    state.compare = value;
    loadDiff();
  });
  $('#compare-seq').addEventListener('change', () => {
    const value = $('#compare-seq').value.trim().replace(/^#/, '');
    if (value) { state.compare = value; loadDiff(); }
  });
  $('#diff-mode').addEventListener('click', () => {
    state.diffMode = state.diffMode === 'unified' ? 'split' : 'unified';
    localStorage.setItem('rewind.diffMode', state.diffMode);
    renderDiffMode();
    if (state.diff) renderDiff(state.diff);
  });
  $('#diff-collapse').addEventListener('click', () => {
    const files = $$('#diff details.file');
    const open = files.some((f) => f.open);
    files.forEach((f) => { f.open = !open; });
    $('#diff-collapse').textContent = open ? 'Expand all' : 'Collapse all';
  });
  $('#diff').addEventListener('toggle', (event) => {
    const file = event.target;
    if (file.open && file.classList.contains('file') && !file.dataset.rendered) fillFile(file);
  }, true);
  $('#diff').addEventListener('click', (event) => {
    const button = event.target.closest('.restore-file');
    if (button) { event.preventDefault(); restoreFile(button.dataset.path); }
  });
  $('#file-view').addEventListener('click', (event) => {
    const button = event.target.closest('.restore-file');
    if (button) restoreFile(button.dataset.path);
  });
  $('#tree').addEventListener('click', (event) => {
    const file = event.target.closest('.tree-file');
    if (file) { event.preventDefault(); viewFile(file.dataset.path); }
  });
  $('#tree').addEventListener('toggle', (event) => {
    const dir = event.target;
    if (dir.open && dir.classList.contains('dir') && !dir.dataset.rendered) fillDir(dir);
  }, true);
  $('#undo').addEventListener('click', () => {
    const mode = $('#undo-mode').value;
    const agentOnly = $('#undo-agent-only').checked;
    const label = { code: 'the files', conversation: 'the conversation', full: 'the files and the conversation' }[mode];
    act('/api/undo', { id: String(state.selected), mode, agent_only: agentOnly },
      agentOnly ? `Take back the agents' changes since #${state.selected}` : `Undo ${label} to #${state.selected}`, 'Undo');
  });
  $('#revert').addEventListener('click', () => act('/api/revert', { id: String(state.selected) },
    `Revert the turn #${state.selected} begins`, 'Revert'));
}

function setCompare(value) {
  state.compare = value;
  const select = $('#compare');
  if (value === 'previous' || value === 'worktree') {
    select.value = value;
    $('#compare-seq').hidden = true;
  } else {
    select.value = 'other';
    $('#compare-seq').hidden = false;
    $('#compare-seq').value = `#${value}`;
  }
}

function compareWith(seq) {
  setCompare(String(seq));
  loadTab('changes');
}

function renderDiffMode() {
  $('#diff-mode').dataset.mode = state.diffMode;
  $('#diff-mode').textContent = state.diffMode === 'unified' ? 'Side by side' : 'Unified';
}

function loadTab(tab) {
  state.tab = tab;
  $$('.tabs button').forEach((b) => b.classList.toggle('active', b.dataset.tab === tab));
  $('#pane-changes').hidden = tab !== 'changes';
  $('#pane-files').hidden = tab !== 'files';
  $('#pane-note').hidden = tab !== 'note';
  if (tab === 'changes') loadDiff();
  if (tab === 'files') loadTree();
}

// ---------------------------------------------------------------- diffs

async function loadDiff() {
  const seq = state.selected;
  if (seq == null) return;
  const compare = state.compare;
  const params = new URLSearchParams({ from: String(seq), to: compare });
  const box = $('#diff');
  box.classList.add('busy');
  let diff;
  try {
    diff = await api(`/api/diff?${params}`);
  } catch (e) {
    box.classList.remove('busy');
    box.innerHTML = `<p class="error">${esc(e.message)}</p>`;
    $('#diff-stat').textContent = '';
    return;
  }
  if (state.selected !== seq || state.compare !== compare) return;
  box.classList.remove('busy');
  state.diff = diff;
  renderDiff(diff);
}

function side(end) {
  if (!end) return '?';
  if (end.worktree) return 'the working tree';
  if (end.seq == null) return end.commit ? `commit ${end.commit.slice(0, 8)}` : 'nothing';  // a first checkpoint
  return `#${end.seq}`;
}

function renderDiff(diff) {
  const box = $('#diff');
  const adds = diff.files.reduce((n, f) => n + f.additions, 0);
  const dels = diff.files.reduce((n, f) => n + f.deletions, 0);
  $('#diff-stat').innerHTML = `${esc(side(diff.from))} → ${esc(side(diff.to))}: ${diff.files.length} file${diff.files.length === 1 ? '' : 's'}` +
    ` <span class="adds">+${adds}</span> <span class="dels">−${dels}</span>`;
  if (!diff.files.length) {
    box.innerHTML = `<p class="muted nothing">No difference between ${esc(side(diff.from))} and ${esc(side(diff.to))}.</p>`;
    return;
  }
  const restoreFrom = state.selected;
  box.innerHTML = diff.files.map((f, i) => {
    const name = f.old_path && f.old_path !== f.path ? `${esc(f.old_path)} → ${esc(f.path)}` : esc(f.path);
    return `<details class="file" data-index="${i}" data-path="${esc(f.path)}"${i < 25 ? ' open' : ''}>` +
      `<summary><span class="st st-${esc(f.status)}">${esc(f.status)}</span><span class="path">${name}</span>` +
      `<span class="adds">+${f.additions}</span><span class="dels">−${f.deletions}</span>` +
      `<button class="action restore-file" data-path="${esc(f.path)}" title="make this file as it is in #${restoreFrom} (a safety checkpoint first)">Restore as in #${restoreFrom}…</button>` +
      '</summary></details>';
  }).join('');
  $$('#diff details.file[open]').forEach(fillFile);
  $('#diff-collapse').textContent = 'Collapse all';
}

function fillFile(details) {
  const f = state.diff.files[Number(details.dataset.index)];
  details.dataset.rendered = '1';
  let body;
  if (f.binary) body = '<p class="muted note">binary file</p>';
  else if (f.too_large) body = '<p class="muted note">too large to show here (over 1 MiB or 5,000 changed lines): use git rewind diff</p>';
  else if (!f.hunks.length) body = '<p class="muted note">no change in content (mode or rename only)</p>';
  else body = state.diffMode === 'split' ? splitTable(f) : unifiedTable(f);
  details.insertAdjacentHTML('beforeend', `<div class="file-body code">${body}</div>`);
}

const SIGN = { '+': 'add', '-': 'del', ' ': 'ctx' };

function unifiedTable(f) {
  let html = '<table class="diff unified"><colgroup><col class="no"><col class="no"><col class="sign"><col></colgroup>';
  for (const hunk of f.hunks) {
    html += `<tr class="hunk"><td colspan="4">${esc(hunk.header)}</td></tr>`;
    for (const line of hunk.lines) {
      html += `<tr class="${SIGN[line.kind] || 'ctx'}"><td class="no">${line.old ?? ''}</td><td class="no">${line.new ?? ''}</td>` +
        `<td class="sign">${line.kind === ' ' ? '' : line.kind}</td><td class="src">${line.html}</td></tr>`;
    }
  }
  return html + '</table>';
}

function splitTable(f) {
  let html = '<table class="diff split"><colgroup><col class="no"><col class="half"><col class="no"><col class="half"></colgroup>';
  const cell = (line, cls) => line
    ? `<td class="no">${(cls === 'add' ? line.new : line.old) ?? ''}</td><td class="src ${cls}">${line.html}</td>`
    : '<td class="no"></td><td class="src none"></td>';
  for (const hunk of f.hunks) {
    html += `<tr class="hunk"><td colspan="4">${esc(hunk.header)}</td></tr>`;
    const lines = hunk.lines;
    for (let i = 0; i < lines.length;) {
      if (lines[i].kind === ' ') {
        html += `<tr class="ctx"><td class="no">${lines[i].old ?? ''}</td><td class="src">${lines[i].html}</td>` +
          `<td class="no">${lines[i].new ?? ''}</td><td class="src">${lines[i].html}</td></tr>`;
        i++;
        continue;
      }
      const dels = [];
      const adds = [];
      while (i < lines.length && lines[i].kind === '-') dels.push(lines[i++]);
      while (i < lines.length && lines[i].kind === '+') adds.push(lines[i++]);
      for (let j = 0; j < Math.max(dels.length, adds.length); j++) {
        html += `<tr>${cell(dels[j], 'del')}${cell(adds[j], 'add')}</tr>`;
      }
    }
  }
  return html + '</table>';
}

// ---------------------------------------------------------------- files

async function loadTree() {
  const seq = state.selected;
  const box = $('#tree');
  if (box.dataset.seq === String(seq)) return;
  box.innerHTML = '<p class="muted">loading…</p>';
  let data;
  try {
    data = await api(`/api/tree/${seq}`);
  } catch (e) {
    box.innerHTML = `<p class="error">${esc(e.message)}</p>`;
    return;
  }
  if (state.selected !== seq) return;
  box.dataset.seq = String(seq);
  const root = { dirs: new Map(), files: [] };
  for (const file of data.files) {
    const parts = file.path.split('/');
    let node = root;
    for (const part of parts.slice(0, -1)) {
      if (!node.dirs.has(part)) node.dirs.set(part, { dirs: new Map(), files: [] });
      node = node.dirs.get(part);
    }
    node.files.push({ ...file, name: parts[parts.length - 1] });
  }
  state.tree = root;
  const changed = new Set(state.detail?.paths || []);
  state.treeChanged = changed;
  box.innerHTML = `<div class="tree-head muted">${data.files.length} files in #${seq}</div>`;
  const top = document.createElement('div');
  top.className = 'children';
  box.append(top);
  top.innerHTML = dirHtml(root, '');
}

function dirHtml(node, prefix) {
  const dirs = [...node.dirs.keys()].sort();
  const files = [...node.files].sort((a, b) => a.name.localeCompare(b.name));
  return dirs.map((name) => {
    const path = prefix + name + '/';
    const hasChange = [...state.treeChanged].some((p) => p.startsWith(path));
    return `<details class="dir${hasChange ? ' changed' : ''}" data-path="${esc(path)}"><summary>${esc(name)}/</summary></details>`;
  }).join('') + files.map((f) => {
    const path = prefix + f.name;
    return `<a href="#" class="tree-file${state.treeChanged.has(path) ? ' changed' : ''}${f.mode === '120000' ? ' link' : ''}" data-path="${esc(path)}">` +
      `<span>${esc(f.name)}</span><span class="muted size">${size(f.size)}</span></a>`;
  }).join('');
}

function fillDir(dir) {
  dir.dataset.rendered = '1';
  let node = state.tree;
  for (const part of dir.dataset.path.split('/').filter(Boolean)) node = node.dirs.get(part);
  dir.insertAdjacentHTML('beforeend', `<div class="children">${dirHtml(node, dir.dataset.path)}</div>`);
}

function size(n) {
  if (n == null) return '';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

async function viewFile(path) {
  const seq = state.selected;
  $$('#tree .tree-file.open').forEach((el) => el.classList.remove('open'));
  $$('#tree .tree-file').find((el) => el.dataset.path === path)?.classList.add('open');
  const box = $('#file-view');
  box.innerHTML = '<p class="muted">loading…</p>';
  let data;
  try {
    data = await api(`/api/file/${seq}?${new URLSearchParams({ path })}`);
  } catch (e) {
    box.innerHTML = `<p class="error">${esc(e.message)}</p>`;
    return;
  }
  if (state.selected !== seq) return;
  let body;
  if (data.binary) body = '<p class="muted note">binary file</p>';
  else if (data.too_large) body = '<p class="muted note">too large to show here (over 1 MiB)</p>';
  else {
    body = '<table class="fileview">' + data.lines.map((line, i) =>
      `<tr><td class="no">${i + 1}</td><td class="src">${line}</td></tr>`).join('') + '</table>';
  }
  box.innerHTML = `<div class="file-head"><span class="path">${esc(data.path)}</span> <span class="muted">${size(data.size)} · as in #${seq}</span>` +
    `<button class="action restore-file" data-path="${esc(data.path)}">Restore as in #${seq}…</button></div>` +
    `<div class="file-body code">${body}</div>`;
}

// ---------------------------------------------------------------- actions: dry run, confirm, run

function restoreFile(path) {
  act('/api/restore-file', { id: String(state.selected), path }, `Restore ${path} as in #${state.selected}`, 'Restore');
}

function pathList(title, paths, cls) {
  if (!paths || !paths.length) return '';
  const shown = paths.slice(0, 200).map((p) => `<li>${esc(typeof p === 'string' ? p : JSON.stringify(p))}</li>`).join('');
  return `<h4 class="${cls}">${esc(title)} <span class="muted">(${paths.length})</span></h4><ul class="paths ${cls}">${shown}` +
    `${paths.length > 200 ? `<li class="muted">… ${paths.length - 200} more</li>` : ''}</ul>`;
}

/** The dry run, shown; on an explicit confirmation, the real run (the library takes the safety checkpoint). */
async function act(url, body, title, verb) {
  let preview;
  try {
    preview = await api(url, { ...body, dry_run: true });
  } catch (e) {
    toast(e.message, true);
    return;
  }
  const dialog = $('#confirm');
  $('#confirm-title').textContent = title;
  const nothing = !(preview.write?.length || preview.remove?.length || preview.merge?.length || preview.conversation);
  const agents = preview.agents_at_work || [];
  $('#confirm-body').innerHTML =
    pathList('write', preview.write, 'write') + pathList('remove', preview.remove, 'remove') +
    pathList('merge with later changes', preview.merge, 'merge') + pathList('conflicts', preview.conflicts, 'conflict') +
    (preview.conversation ? `<h4>conversation</h4><p>${esc(preview.conversation)}</p>` : '') +
    (nothing ? '<p class="nothing">Nothing to change: the files already match.</p>' : '') +
    (preview.text ? `<details class="cli-text"><summary>as git rewind says it</summary><pre>${esc(preview.text)}</pre></details>` : '') +
    (agents.length ? `<p class="warn">An agent is at work in this work tree: ${esc(agents.join(', '))}</p>` : '') +
    '<p class="muted safety">A safety checkpoint of the current state is taken first: git rewind redo (or this page) goes back.</p>';
  $('#confirm-force-row').hidden = !agents.length;
  $('#confirm-force').checked = false;
  const yes = $('#confirm-yes');
  yes.textContent = verb;
  const conflicts = (preview.conflicts || []).length > 0;
  const updateYes = () => { yes.disabled = nothing || conflicts || (agents.length > 0 && !$('#confirm-force').checked); };
  updateYes();
  $('#confirm-force').onchange = updateYes;
  dialog.returnValue = '';
  dialog.showModal();
  const answer = await new Promise((resolve) => dialog.addEventListener('close', () => resolve(dialog.returnValue), { once: true }));
  if (answer !== 'yes') return;
  try {
    const result = await api(url, { ...body, dry_run: false, force: agents.length > 0 });
    toast(`${result.text || 'done'}${result.safety != null ? ` (safety checkpoint #${result.safety})` : ''}`);
    await refresh();
  } catch (e) {
    toast(e.message, true);
  }
}

// ---------------------------------------------------------------- wiring

function setup() {
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
  start().then(listen).catch((e) => {
    document.body.classList.remove('loading');
    toast(`could not load: ${e.message}`, true);
  });
}

setup();
