// This tab's credential and the first screen's requests, sent before the page has been parsed.
// A classic script, the first thing index.html loads, and parser-blocking on purpose: it runs the moment it
// arrives, before the first layout and before any module is compiled (as an async module it waited for both,
// ~100-150 ms on a cold tab), so the launch-token exchange and the first /api/info and page of checkpoints are
// answered while the page's modules load. It defines window.rewindBoot, which api.js reads.
//
// The printed link's one-time launch token (in the fragment: never sent to a server) is taken out of the
// address bar and the history entry at once. It is traded for this tab's credential, kept in sessionStorage
// (this origin's, so this port's; a reload keeps it) and sent as a header: no cookie, which every other
// server on 127.0.0.1 would receive.

'use strict';

window.rewindBoot = (() => {
  performance.mark('rewind-boot');  // when this script ran (the bench and a person's devtools read it)
  const STORED = 'rewind.credential';
  // what the first screen asks for (app.js start() with no filter set: the filters are never restored)
  const FIRST = ['/api/info', '/api/checkpoints?offset=0&limit=250'];

  let launch = new URLSearchParams(location.hash.slice(1)).get('launch');
  if (location.hash) history.replaceState(history.state, '', location.pathname + location.search);
  let credential = sessionStorage.getItem(STORED);
  const early = new Map();  // path → the promise of its Response, asked for before app.js wanted it

  /** The credential header of this tab (empty when it has none). */
  function headers() {
    return credential ? { 'X-Rewind-Token': credential } : {};
  }

  /** The launch token traded (when the link brought one), then the first screen's requests sent; resolves to
   * an Error with status 403 when the tab has no credential, else null. */
  const connected = (async () => {
    if (launch) {
      const given = launch;
      launch = null;  // good once: a later start (a live update's reload) does not offer it again
      let refusal = null;
      try {
        const response = await fetch('/api/session', { method: 'POST', headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ launch: given }) });
        const text = await response.text();
        let data = null;
        try { data = JSON.parse(text); } catch { data = null; }
        if (response.ok && data && data.token) {
          credential = data.token;
          sessionStorage.setItem(STORED, credential);
        } else {  // as api() words a refusal: the server's error, else its plain line
          refusal = Object.assign(new Error((data && data.error) || text.trim() || `${response.status} ${response.statusText}`),
            { status: response.status });
        }
      } catch (e) {
        refusal = e;
      }
      if (refusal && !credential) return refusal;  // a used link in a tab that already has its credential: go on
    }
    if (!credential) {
      return Object.assign(new Error('open the link `git rewind web` printed in its terminal'), { status: 403 });
    }
    for (const path of FIRST) early.set(path, fetch(path, { headers: headers() }));
    return null;
  })();

  /** Resolves once this tab has its credential; throws (status 403) when it has none. */
  async function connect() {
    const refusal = await connected;
    if (refusal) throw refusal;
  }

  /** The answer to a GET of PATH already asked for, once; null when there is none. */
  function taken(path) {
    const response = early.get(path);
    early.delete(path);
    return response || null;
  }

  return Object.freeze({ FIRST, headers, connect, taken });
})();
