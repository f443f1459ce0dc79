// The actions: each one's dry run shown in the dialog, then run on an explicit confirmation.

import { api } from './api.js';
import { refresh } from './app.js';
import { esc, toast } from './format.js';
import { $, state } from './state.js';

export function restoreFile(path) {
  act('/api/restore-file', { id: String(state.selected), path }, `Restore ${path} as in #${state.selected}`, 'Restore');
}

export function pathList(title, paths, cls) {
  if (!paths || !paths.length) return '';
  const shown = paths.slice(0, 200).map((p) => `<li>${esc(typeof p === 'string' ? p : JSON.stringify(p))}</li>`).join('');
  return `<h4 class="${cls}">${esc(title)} <span class="muted">(${paths.length})</span></h4><ul class="paths ${cls}">${shown}` +
    `${paths.length > 200 ? `<li class="muted">… ${paths.length - 200} more</li>` : ''}</ul>`;
}

/** What the person's index stages that the rewind contradicts (the library never writes the index): the paths and the command. */
function indexNote(index) {
  if (!index) return '';
  return `<p class="warn">The index stages something else for these paths: the next commit would record the index's version. ` +
    `To unstage them afterwards: <code>${esc(index.command)}</code></p>` +
    pathList('staged otherwise in the index', index.paths.map((p) => `${p.staged}  ${p.path}`), 'staged');
}

/** The dry run, shown; on an explicit confirmation, the real run (the library takes the safety checkpoint). */
export async function act(url, body, title, verb) {
  let preview;
  try {
    preview = await api(url, { ...body, dry_run: true });
  } catch (e) {
    toast(e.message, true);
    return;
  }
  const dialog = $('#confirm');
  $('#confirm-title').textContent = title;
  const nothing = !(preview.write?.length || preview.remove?.length || preview.merged?.length || preview.conversation);
  const agents = preview.agents_at_work || [];
  $('#confirm-body').innerHTML =
    (preview.target_checkpoint ? `<p class="target">${esc(preview.target_checkpoint.named)}</p>` : '') +
    pathList('write', preview.write, 'write') + pathList('remove', preview.remove, 'remove') +
    pathList('merge with later changes', preview.merged, 'merge') +
    pathList('conflicts', (preview.conflicts || []).map((c) => c.text), 'conflict') +
    indexNote(preview.index) +
    pathList('changed since outside any agent turn: put back too (the safety checkpoint keeps them; ' +
      '"only the agents\' changes" keeps them in place)', preview.changed_outside, 'outside') +
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
    toast(`${result.text || 'done'}${result.safety_checkpoint != null ? ` (safety checkpoint #${result.safety_checkpoint})` : ''}`);
    await refresh();
  } catch (e) {
    toast(e.message, true);
  }
}
