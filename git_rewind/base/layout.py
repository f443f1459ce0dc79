"""Every file and folder git-rewind keeps inside the git directory, named once.

Two places. A work tree's own (`Repo.rewind_dir`: `.git/rewind/` for the main work tree,
`.git/worktrees/<name>/rewind/` for a linked one), for what belongs to that work tree alone; and the
repository's store (`Repo.store_dir`, `rewind/` in the common git directory), shared by every work tree.
Nothing else spells these names: a module joins one of them to the place it belongs to. (For the main
work tree both places are the same folder: the names never collide.)
"""

# A work tree's own: Repo.rewind_dir ------------------------------------------------------------------

LOCK = "lock"  # the work-tree lock (Repo.worktree_lock): one writer of this work tree's files at a time
INDEX = "index"  # the private index checkpoints are scanned into (never the user's)
SCAN_STATE = "scan-state"  # what the last whole scan saw (snapshot.py), to skip the next when nothing moved
OBJECTS = "objects"  # a scan's quarantined objects, before the checkpoint keeps them (snapshot.py)
SKIPPED = "skipped.json"  # files the last scan left out (too large), for status (snapshot.py)
TRACKED_IGNORED = "tracked-ignored"  # tracked files git's ignore rules match (snapshot.py)
REFERENCE_INDEX = "reference-index"  # a scratch index for hashing as git add would (conversion.py)
REFERENCE_FILES = "reference-files"  # files checked against the user's index, by stat (conversion.py)
REFERENCE = "reference"  # what the user's index and attributes were at the last check (conversion.py)
LAST = "last"  # the work tree's newest checkpoint, any session (store.py)
RESTORED = "restored"  # the safety checkpoint of the newest restore (store.py)
SESSIONS = "sessions"  # each session's hook state (hook.py)
TIPS = "tips"  # each session's tip, cached (store.py)
TURNS = "turns"  # the agent turns open here (turns.py)
REWINDS = "rewinds.jsonl"  # the rewinds made here, for the sessions living here (rewinds.py)
JOURNAL = "restore.journal"  # what a restore is writing, swept after a kill (journal.py)
TARGET_EXCLUDES = "target-excludes"  # a restore target's ignore rules (restore.py, patch.py)
GITIGNORES = "gitignores"  # a cache of targets' ignore rules, by tree (ignore.py)
CONFIG_CACHE = "config-cache.json"  # the hooks' parse of the config files, by mtime (config.py)
HOOK_LOG = "hook.log"  # every hook decision (hook.py)
HOOK_ERRORS = "hook-errors.log"  # a hook's internal errors, which never reach the agent (hook.py)
GIT_HOOK_ERRORS = "git-hook-errors.log"  # the git hooks' internal errors, which never fail a commit (githook.py)
DAEMON_SOCKET = "daemon.sock"  # the file-watcher daemon's socket (daemon.py)
DAEMON_STATE = "daemon.json"  # its pid, start time, why it is not running
DAEMON_LOCK = "daemon.lock"  # held by the running daemon for its whole life: one per work tree
DAEMON_COOKIES = "daemon-cookies"  # its watcher's barrier files
WATCH_COOKIES = "watch-cookies-"  # + pid: a `git rewind watch` run's barrier files
# Scratch folders a command makes for itself (fsutil.scratch_dir: named by pid, swept after a kill).
SCRATCH_PATCH = "patch"
SCRATCH_BLAME = "blame"
SCRATCH_CAT = "cat"
SCRATCH_RESTORE = "restore"
SCRATCH_INDEX = "scratch-index-"  # + pid-job: a throwaway index (scratchindex.py)

# The repository's store: Repo.store_dir ---------------------------------------------------------------

STORE_LOCK = "store.lock"  # the store lock (Repo.store_lock): refs and notes move under it
REF_MOVES = "ref-moves"  # a ref transaction under way: the next holder of the store lock completes it (repo.py)
SEQ = "seq"  # the last sequence id given (checkpoints.py)
LAST_PACK = "last-pack"  # its mtime: when checkpoints were last packed (store.py)
STORAGE_STATE = "storage.json"  # the last exact measure of the store's size, for the hooks' estimate (storage.py)
CAP_CHECK = "last-cap-check"  # its mtime: when a hook last estimated (storage.py)
CAP_LOCK = "cap.lock"  # one background enforcement of max_store_size at a time (gc.py)
TOKEN_KEY = "token-key"  # the key two-phase restores' tokens are signed with (ops/token.py)
NOTES_CACHE = "notes-cache"  # refs/notes/rewind's notes parsed, by blob id (notecache.py)
FETCHED_NOTES_CACHE = "fetched-notes-cache"  # the same for every fetched copy, refs/notes/rewind-remote/ (notecache.py)
SHARE = "share"  # what push keeps: the copies made, the purge marker (share.py, sync.py)
# Inside SHARE (Repo.share_dir)
PUSHED = "pushed"  # + /<remote>: what was pushed there last (sync.py)
AUTO_PUSH_LOG = "auto-push.log"  # the background push's output (sync.py)
PURGED = "purged"  # a purge happened: push --prune must replace this machine's copy (share.py)
PUSH_LOCK = "push.lock"  # one push at a time (share.py)

# What `purge --text` does with each name above (ops/purge.py), so that a text purged from the checkpoints
# is gone from every file git-rewind keeps as well; every name has one (tests/test_layout.py):
#   json     a JSON file, or a folder of them: the text replaced in every string, keys included
#   lines    a log or a JSON-lines file (and the log's rotated `.1`): the text replaced in each line
#   index    a git index: the entries whose path holds the text dropped (the next scan hashes those files
#            again); the whole file dropped if the text is still in it (a cached tree's folder names)
#   drop     a cache, rebuilt when missing: deleted when it holds the text (and after any rewrite)
#   copy     this machine's shareable copy and what push keeps: dropped with it (share.discard_copy)
#   scratch  exists only while a command holding the work tree's lock runs (purge holds every one), or
#            after a kill until the next command sweeps it
#   nothing  holds no text anyone typed and no path of the work tree: ids, counters, times, stat data, pids
PURGE = {
    LOCK: "nothing", INDEX: "index", SCAN_STATE: "drop", OBJECTS: "scratch", SKIPPED: "json",
    TRACKED_IGNORED: "drop", REFERENCE_INDEX: "scratch", REFERENCE_FILES: "drop", REFERENCE: "nothing",
    LAST: "nothing", RESTORED: "nothing", SESSIONS: "json", TIPS: "nothing", TURNS: "json", REWINDS: "lines",
    JOURNAL: "scratch", TARGET_EXCLUDES: "drop", GITIGNORES: "drop", CONFIG_CACHE: "drop", HOOK_LOG: "lines",
    HOOK_ERRORS: "lines", GIT_HOOK_ERRORS: "lines", DAEMON_SOCKET: "nothing", DAEMON_STATE: "json",
    DAEMON_LOCK: "nothing",
    DAEMON_COOKIES: "nothing", WATCH_COOKIES: "nothing", SCRATCH_PATCH: "scratch", SCRATCH_BLAME: "scratch",
    SCRATCH_CAT: "scratch", SCRATCH_RESTORE: "scratch", SCRATCH_INDEX: "scratch",
    STORE_LOCK: "nothing", REF_MOVES: "nothing", SEQ: "nothing", LAST_PACK: "nothing", STORAGE_STATE: "nothing",
    CAP_CHECK: "nothing", CAP_LOCK: "nothing", NOTES_CACHE: "drop", FETCHED_NOTES_CACHE: "drop", SHARE: "copy",
    PUSHED: "copy", AUTO_PUSH_LOG: "copy", PURGED: "copy", PUSH_LOCK: "copy", TOKEN_KEY: "nothing",
}
