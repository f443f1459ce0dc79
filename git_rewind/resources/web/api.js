// The JSON API of git rewind web (web-contract.md): this tab's credential, errors as exceptions, pages of results.

import { PAGE, state } from './state.js';

// The printed link's one-time launch token (in the fragment: never sent to a server), taken out of the
// address bar and the history entry at once. It is traded for this tab's credential, kept in sessionStorage
// (this origin's, so this port's; a reload keeps it) and sent as a header: no cookie, which every other
// server on 127.0.0.1 would receive.
let launch = new URLSearchParams(location.hash.slice(1)).get('launch');
if (location.hash) history.replaceState(history.state, '', location.pathname + location.search);
const STORED = 'rewind.credential';
let credential = sessionStorage.getItem(STORED);

/** This tab's credential, from the launch token when the link brought a new one; an Error with status 403
 * when there is none. */
export async function connect() {
  if (launch) {
    const given = launch;
    launch = null;  // good once: a later start (a live update's reload) does not offer it again
    try {
      credential = (await api('/api/session', { launch: given })).token;
      sessionStorage.setItem(STORED, credential);
    } catch (e) {
      if (!credential) throw e;  // a used link in a tab that already has its credential: go on with that
    }
  }
  if (!credential) {
    throw Object.assign(new Error('open the link `git rewind web` printed in its terminal'), { status: 403 });
  }
}

export async function api(path, body) {
  const opts = { headers: credential ? { 'X-Rewind-Token': credential } : {} };
  if (body !== undefined) {
    opts.method = 'POST';
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  const response = await fetch(path, opts);
  let data;
  try { data = (response.headers.get('content-type') || '').startsWith('application/json') ? await response.json() : null; } catch { data = null; }
  if (!response.ok || !data || data.error) {
    const text = data ? data.error : (await response.text().catch(() => '')).trim();
    throw Object.assign(new Error(text || `${response.status} ${response.statusText}`), { status: response.status });
  }
  return data;
}

/** The live updates (an EventSource cannot send a header: the credential goes in its query, to this origin only). */
export function liveUpdates() {
  return new EventSource(`/api/events?token=${encodeURIComponent(credential)}`);
}

/** One query's checkpoints, newest first, loaded page by page into a sparse array. */
export class Results {
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
      const before = offset > 0 ? this.items[offset - 1] : undefined;
      if (before && data.items.length && data.items[0].seq >= before.seq) return null;  // the list moved under us
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
      let hole = page;  // a live update may have shifted the loaded items off the page boundaries
      const end = Math.min(page + PAGE, this.total);
      while (hole < end && this.items[hole] !== undefined) hole++;
      if (hole < end && !this.pending.has(hole)) wanted.push(hole);
    }
    return Promise.all(wanted.map((offset) => this.fetch(offset, PAGE)));
  }

  /** The first index not loaded yet, or -1. */
  firstMissing() {
    for (let i = 0; i < this.total; i++) if (this.items[i] === undefined) return i;
    return -1;
  }
}
