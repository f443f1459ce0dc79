// What every part of the page shares: its state, the sizes the CSS and the code agree on, and $/$$.

export const ROW_HEIGHT = 54;         // px; the list's rows all have this height (virtual scrolling needs it)
export const PAGE = 250;              // items per list request (the first screen shows ~20)
export const BULK = 1000;             // items per background request for the lanes: small, so a click's request is not queued behind a big one
export const LABEL_WIDTH = 250;       // px of a lane's label column (app.css .lane)
export const LANE_HEIGHT = 34;        // px of a lane (app.css .lane)
export const MARK_GAP = 13;           // px between marks nudged apart
export const BUCKET = 7;              // px; marks closer than this in one lane share one element
export const $ = (sel, root = document) => root.querySelector(sel);
export const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

export const state = {
  info: null,
  skew: 0,                     // server clock minus ours, ms
  sessions: [],
  all: null,                   // Results of the unfiltered query: the lanes
  view: null,                  // Results of the filtered query: the list (=== all when no filter)
  selected: null,              // seq
  detail: null,                // the selected checkpoint's full JSON
  compare: 'previous',         // 'previous' | 'worktree' | an id
  diffMode: 'unified',          // or 'split'; the last choice is read from localStorage once the page asked for its data
  tab: 'changes',
  trackWidth: 0,               // px of a lane's track (= the axis), kept by a ResizeObserver
  domain: null,                // [t0, t1] of the whole history, seconds
  zoom: null,                  // [t0, t1] shown, or null for the whole domain
  busy: 0,                     // selections being shown: the background loading waits for them
  fresh: new Set(),            // seqs that arrived by a live update, highlighted for a moment
  gen: 0,                      // bumped on every reload, so late answers of an older one are dropped
};
