// The detail of the selected checkpoint: its note, the diff (unified or side by side) and its files.

import { act, restoreFile } from './actions.js';
import { api } from './api.js';
import { age, clock, esc, kind, size, toast, what } from './format.js';
import { showSelectionOnLanes } from './lanes.js';
import { renderList, scrollToSeq } from './list.js';
import { $, $$, state } from './state.js';

export async function select(seq, { scroll = false, keepTab = false, quiet = false } = {}) {
  performance.mark('rewind-select');
  state.busy++;
  const asked = api(`/api/checkpoints/${seq}`);  // first: the answer is on its way while the list changes
  const changed = seq !== state.selected;
  state.selected = seq;
  if (changed && state.compare !== 'previous' && state.compare !== 'worktree') setCompare('previous');
  if (scroll) scrollToSeq(seq);
  renderList();
  $('#detail-empty').hidden = true;
  $('#detail').hidden = false;
  if (!keepTab && changed) $('#file-view').replaceChildren();
  let detail;
  try {
    detail = await asked;
  } catch (e) {
    if (!quiet) toast(e.message, true);
    return;
  } finally {
    state.busy--;
    afterNextPaint(() => { if (state.selected === seq) showSelectionOnLanes(seq); });
  }
  if (state.selected !== seq) return;
  state.detail = detail;
  renderDetail(detail);
  performance.mark('rewind-detail');  // select → detail shown (the bench reads the two marks)
  loadTab(state.tab);
}

/** FN once the next frame has been painted: the selection's ring on the lanes follows the detail by a frame,
 *  as a mark that stands for several checkpoints draws every lane again, which the detail need not wait for. */
function afterNextPaint(fn) {
  requestAnimationFrame(() => setTimeout(fn, 0));
}

export function renderDetail(d) {
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
    : esc(d.paths.join('  ')) || '<span class="muted">nothing since the previous checkpoint</span>';
  $('#detail-meta').innerHTML = meta + `<dt>changed</dt><dd class="changed">${changed}</dd>`;
  renderTags(d);
  $('#pane-note').textContent = JSON.stringify(d.note ?? d, null, 2);
  $('#revert').disabled = false;
}

export function renderTags(d) {
  const tags = d.tags.map((t) =>
    `<span class="tag">${esc(t)}<button class="action tag-remove" data-tag="${esc(t)}" title="remove the tag ${esc(t)}">×</button></span>`).join('');
  $('#detail-tags').innerHTML = `${tags}<span class="action tag-new"><input id="tag-input" placeholder="add a tag" size="10" spellcheck="false">` +
    '<button id="tag-add">tag</button></span>';
}

export async function changeTags(add, remove) {
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

export function setupDetail() {
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

export function setCompare(value) {
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

export function compareWith(seq) {
  setCompare(String(seq));
  loadTab('changes');
}

export function renderDiffMode() {
  $('#diff-mode').dataset.mode = state.diffMode;
  $('#diff-mode').textContent = state.diffMode === 'unified' ? 'Side by side' : 'Unified';
}

export function loadTab(tab) {
  state.tab = tab;
  $$('.tabs button').forEach((b) => b.classList.toggle('active', b.dataset.tab === tab));
  $('#pane-changes').hidden = tab !== 'changes';
  $('#pane-files').hidden = tab !== 'files';
  $('#pane-note').hidden = tab !== 'note';
  if (tab === 'changes') loadDiff();
  if (tab === 'files') loadTree();
}

// ---------------------------------------------------------------- diffs

export async function loadDiff() {
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

export function side(end) {
  if (!end) return '?';
  if (end.worktree) return 'the working tree';
  if (end.seq == null) return end.commit ? `commit ${end.commit.slice(0, 8)}` : 'nothing';  // a first checkpoint
  return `#${end.seq}`;
}

export function renderDiff(diff) {
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

export function fillFile(details) {
  const f = state.diff.files[Number(details.dataset.index)];
  details.dataset.rendered = '1';
  let body;
  if (f.binary) body = '<p class="muted note">binary file</p>';
  else if (f.too_large) body = '<p class="muted note">too large to show here (over 1 MiB or 5,000 changed lines): use git rewind diff</p>';
  else if (!f.hunks.length) body = '<p class="muted note">no change in content (mode or rename only)</p>';
  else body = state.diffMode === 'split' ? splitTable(f) : unifiedTable(f);
  details.insertAdjacentHTML('beforeend', `<div class="file-body code">${body}</div>`);
}

export const SIGN = { '+': 'add', '-': 'del', ' ': 'ctx' };

export function unifiedTable(f) {
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

export function splitTable(f) {
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

export async function loadTree() {
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

export function dirHtml(node, prefix) {
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

export function fillDir(dir) {
  dir.dataset.rendered = '1';
  let node = state.tree;
  for (const part of dir.dataset.path.split('/').filter(Boolean)) node = node.dirs.get(part);
  dir.insertAdjacentHTML('beforeend', `<div class="children">${dirHtml(node, dir.dataset.path)}</div>`);
}

export async function viewFile(path) {
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
