// The checkpoint list: virtual-scrolled rows of one height, kept by key while unchanged.

import { compareWith, select } from './detail.js';
import { age, debounce, esc, kind, origin, what } from './format.js';
import { $, $$, ROW_HEIGHT, state } from './state.js';

export function rowHtml(item, index) {
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

/** Where the list is scrolled and how tall it is, read from the layout: before any change to the page, where
 *  that read is free (after one, it makes the browser lay the page out then and there, and again for the frame). */
export function listBox() {
  const list = $('#list');
  return { top: list.scrollTop, height: list.clientHeight };
}

/** The rows on screen (and ten either side) for the list scrolled as BOX says (listBox(); read now if not given). */
export function renderList(box = null) {
  const list = $('#list');
  const view = state.view;
  if (!view) return;
  const { top, height } = box || listBox();
  const spacer = $('#list-spacer');
  spacer.style.height = `${view.total * ROW_HEIGHT}px`;
  const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - 10);
  const last = Math.min(view.total, Math.ceil((top + height) / ROW_HEIGHT) + 10);
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

export function setupList() {
  const list = $('#list');
  list.addEventListener('scroll', () => requestAnimationFrame(() => renderList()), { passive: true });
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
  new ResizeObserver(debounce(() => renderList(), 50)).observe(list);
}

export function scrollToSeq(seq) {
  const index = state.view.bySeq.get(seq);
  if (index === undefined) return;
  const list = $('#list');
  const top = index * ROW_HEIGHT;
  if (top < list.scrollTop || top + ROW_HEIGHT > list.scrollTop + list.clientHeight) {
    list.scrollTop = Math.max(0, top - list.clientHeight / 3);
  }
}
