// The JSON API of git rewind web (web-contract.md): this tab's credential, errors as exceptions, pages of results.

import { PAGE, state } from './state.js';

// boot.js, a classic script index.html ran first, has traded the launch token and asked for the first screen
const { connect, headers, taken } = window.rewindBoot;

export { connect };

export async function api(path, body) {
  const opts = { headers: headers() };
  if (body !== undefined) {
    opts.method = 'POST';
    opts.headers['Content-Type'] = 'application/json';
    opts.body = JSON.stringify(body);
  }
  const response = await ((body === undefined && taken(path)) || fetch(path, opts));  // boot.js may have asked
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
  return new EventSource(`/api/events?token=${encodeURIComponent(headers()['X-Rewind-Token'] || '')}`);
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
