// The lanes: one per session on a time axis, a mark per checkpoint (merged per few pixels when crowded).

import { compareWith, select } from './detail.js';
import { age, clock, esc, kind, now, origin, shortSession, what } from './format.js';
import { $, $$, BUCKET, LABEL_WIDTH, LANE_HEIGHT, MARK_GAP, state } from './state.js';

export function sortedSessions() {
  return [...state.sessions].sort((a, b) => b.last - a.last);
}

/** Draw the lanes at the next frame; several calls in one frame draw once. */
export function renderTimeline() {
  if (renderTimeline.queued) return;
  renderTimeline.queued = true;
  requestAnimationFrame(() => { renderTimeline.queued = false; drawTimeline(); });
}

export function drawTimeline() {
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
    const label = `<b>${esc(s.agent || shortSession(s.session))}</b>${s.branch ? ` <span class="muted">⎇ ${esc(s.branch)}</span>` : ''}` +
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
export function placeCursor() {
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
export function showSelectionOnLanes(seq) {
  const mark = $(`#lanes .mark[data-seq="${seq}"]`);
  if (!mark || mark.dataset.count !== '1') { renderTimeline(); return; }
  $$('#lanes .mark.selected').forEach((el) => el.classList.remove('selected'));
  mark.classList.add('selected');
  for (const track of $$('#lanes .lane-track')) track.marks = null;  // the next full draw must not skip a track
  placeCursor();
}

/** A lane's marks: one per checkpoint, nudged apart where they touch, while there is room for that (a few
 *  checkpoints in the same second stay apart); else one per BUCKET pixels, named by its newest checkpoint. */
export function laneMarks(items, buckets, x, width) {
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

export const STEPS = [1, 5, 15, 30, 60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 7 * 86400, 30 * 86400];

export function renderAxis(from, to, width) {
  const span = to - from;
  const step = STEPS.find((s) => (s / span) * width >= 90) || STEPS[STEPS.length - 1];
  const withDate = span > 86400;
  let html = '';
  const n = now();
  const nowLeft = ((n - from) / span) * width;
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) {
    const left = ((t - from) / span) * width;
    if ((n >= from && n <= to && Math.abs(left - nowLeft) < 60) || left < 24 || left > width - 30) continue;
    const text = clock(t, withDate && step >= 3600, step < 60);
    html += `<span class="tick" style="left:${left.toFixed(1)}px">${esc(text)}</span>`;
  }
  if (n >= from && n <= to) html += `<span class="now" style="left:${(((n - from) / span) * width).toFixed(1)}px">now</span>`;
  $('#axis').innerHTML = html;
}

/** The tooltip of a mark, made when the pointer is on it (not for every mark at every render). */
export function showTip(mark) {
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

export function setupTimeline() {
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

export function clampZoom(from, to) {
  const [d0, d1] = state.domain;
  const span = to - from;
  if (span >= d1 - d0) return null;
  if (from < d0) return [d0, d0 + span];
  if (to > d1) return [d1 - span, d1];
  return [from, to];
}
