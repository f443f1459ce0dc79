// Small pure helpers: escaping, ages and clocks, what kind of moment a checkpoint is, messages.

import { $, state } from './state.js';

export function esc(text) {
  return String(text ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

export function now() { return (Date.now() + state.skew) / 1000; }

export function age(time) {
  const s = Math.max(0, now() - time);
  if (s < 45) return `${Math.round(s)}s ago`;
  if (s < 45 * 60) return `${Math.round(s / 60)}m ago`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}

// Clocks by hand, in local time: the first Intl.DateTimeFormat of a page costs 50-70 ms (locale data),
// on the way to the first screen
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n) => String(n).padStart(2, '0');

/** HH:MM (with SECONDS, HH:MM:SS), after "Nov 26 " WITH_DATE. */
export function clock(time, withDate = false, seconds = false) {
  const d = new Date(time * 1000);
  const hm = `${two(d.getHours())}:${two(d.getMinutes())}${seconds ? ':' + two(d.getSeconds()) : ''}`;
  return withDate ? `${MONTHS[d.getMonth()]} ${d.getDate()} ${hm}` : hm;
}

export const PROMPT_TRIGGERS = new Set(['userpromptsubmit', 'beforeagent', 'beforesubmitprompt', 'chat.message']);
export const END_TRIGGERS = new Set(['stop', 'afteragent', 'session.idle', 'subagentstop']);

/** What kind of moment a checkpoint is, for its colour. */
export function kind(item) {
  const trigger = (item.trigger || '').toLowerCase();
  if (item.rewind || trigger === 'pre-rewind' || trigger.startsWith('pre-')) return 'safety';
  if (PROMPT_TRIGGERS.has(trigger)) return 'prompt';
  if (END_TRIGGERS.has(trigger)) return 'end';
  if (item.tool && !/bash|shell|execute/i.test(item.tool)) return 'edit';
  if (!trigger || trigger === 'manual' || trigger === 'snap') return 'manual';
  return 'other';
}

/** Who changed its files: 'agent', 'outside', 'mixed' or '' (unknown). */
export function origin(item) {
  if (!item.origins) return '';
  const values = new Set(Object.values(item.origins));
  if (values.size === 0) return '';
  if (values.size > 1) return 'mixed';
  return values.has('agent') ? 'agent' : 'outside';
}

export function what(item) {
  const trigger = item.trigger || 'manual';
  return item.tool ? `${trigger}/${item.tool}` : trigger;
}

export function shortSession(session) { return session.length > 14 ? session.slice(0, 12) + '…' : session; }

export function toast(message, isError = false) {
  const box = $('#toast');
  box.textContent = message;
  box.classList.toggle('error', isError);
  box.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { box.hidden = true; }, isError ? 9000 : 6000);
}

export function debounce(fn, ms) {
  let timer;
  return (...args) => { clearTimeout(timer); timer = setTimeout(() => fn(...args), ms); };
}

export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function idle() {
  return new Promise((resolve) => (window.requestIdleCallback ? requestIdleCallback(resolve, { timeout: 300 }) : setTimeout(resolve, 0)));
}

export function size(n) {
  if (n == null) return '';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}
