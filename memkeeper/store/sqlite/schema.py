"""The SQLite store's tables and their version: every statement is ``IF NOT EXISTS``, so an
upgrade re-runs them all and adds what a store of an older version lacks."""

from __future__ import annotations

from memkeeper.errors import EnvironmentFailure

TYPE_CHECKING = False
if TYPE_CHECKING:
    import sqlite3

# 1: files, sections, events, cache; 2: + claims, waiters, counters, tallies, reconciliations;
# 3: + bodies, proposals; 4: + events_by_path; 5: + pending; 6: + events.signer, events.sig;
# 7: + messages, deliveries; 8: + claim_records, claims.plan, waiters.plan; 9: + reads;
# 10: + meetings; 11: + work; 12: a meeting's record carries a serialize's turns (state
# serializing), which an older memkeeper cannot read; 13: bodies kept lazily (a present
# section's current body is its row's alone), which an older memkeeper would miss, and a
# section's hash as 32 bytes (rows written before stay text; both are read); 14: + stamps
# (this checkout's files' stat stamps); 16: + checkpoints (the event chain's verified head and
# compaction point; an older memkeeper would judge a compacted log broken); 17: +
# events_by_type_ts (the metrics' counts of an hour read that hour's events of a type, not all
# of them; a store of 16 gets it on open).
SCHEMA_VERSION = 17

SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    file_rev INTEGER NOT NULL,
    file_hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sections (
    path TEXT NOT NULL,
    key TEXT NOT NULL,
    ord INTEGER NOT NULL,          -- position in the file, meaningless when absent
    rev INTEGER NOT NULL,          -- never goes back, even across absence
    hash,                          -- sha256 as 32 bytes (text before 13), NULL while absent
    present INTEGER NOT NULL,
    title TEXT NOT NULL,
    level INTEGER NOT NULL,
    base TEXT NOT NULL,            -- last key segment without the duplicate suffix
    heading BLOB NOT NULL,
    body BLOB NOT NULL,
    size INTEGER NOT NULL,         -- len(heading) + len(body)
    lines INTEGER NOT NULL,
    PRIMARY KEY (path, key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sections_by_ord ON sections (path, present, ord);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY,
    ts TEXT NOT NULL,
    actor TEXT NOT NULL,
    type TEXT NOT NULL,
    path TEXT,
    section TEXT,
    data TEXT NOT NULL,
    prev TEXT NOT NULL,
    hash TEXT NOT NULL,
    signer TEXT,                   -- the public key that signed hash (NULL: unsigned)
    sig TEXT
);
CREATE INDEX IF NOT EXISTS events_by_type ON events (type, id);
CREATE INDEX IF NOT EXISTS events_by_type_ts ON events (type, ts);
CREATE INDEX IF NOT EXISTS events_by_path ON events (path, section, id);
CREATE TABLE IF NOT EXISTS cache (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS claims (  -- granted claims, expired ones until swept
    id TEXT PRIMARY KEY,
    token INTEGER NOT NULL UNIQUE,
    agent TEXT NOT NULL,
    mode TEXT NOT NULL,
    targets TEXT NOT NULL,         -- JSON list of normalized targets
    priority INTEGER NOT NULL,
    strict INTEGER NOT NULL,
    granted_at REAL NOT NULL,
    expires_at REAL NOT NULL,
    objective TEXT NOT NULL,
    plan TEXT                      -- JSON: what the claim announces (NULL: nothing)
);
CREATE INDEX IF NOT EXISTS claims_by_expiry ON claims (expires_at);
CREATE TABLE IF NOT EXISTS waiters (  -- queued requests, until their process collects the outcome
    id TEXT PRIMARY KEY,
    arrival INTEGER NOT NULL,
    agent TEXT NOT NULL,
    mode TEXT NOT NULL,
    targets TEXT NOT NULL,
    priority INTEGER NOT NULL,
    strict INTEGER NOT NULL,
    ttl REAL NOT NULL,
    objective TEXT NOT NULL,
    pid INTEGER NOT NULL,          -- the waiting process: once it is gone the wait is abandoned
    deadline REAL NOT NULL,
    state TEXT NOT NULL,           -- waiting, granted or aborted
    reason TEXT,
    plan TEXT                      -- JSON: what the claim announces (NULL: nothing)
);
CREATE TABLE IF NOT EXISTS claim_records (  -- claims changed or ended since their grant, kept
    id TEXT PRIMARY KEY,
    state TEXT NOT NULL,           -- active, suspended, completed, abandoned, expired, …
    agent TEXT NOT NULL,
    rev INTEGER NOT NULL,
    body TEXT NOT NULL             -- JSON: ClaimRecord.to_json()
);
CREATE INDEX IF NOT EXISTS claim_records_by_state ON claim_records (state, id);
CREATE TABLE IF NOT EXISTS counters (  -- token: the highest fencing token ever issued
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tallies (  -- lightweight counts kept out of the event log
    kind TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS tallies_by_kind ON tallies (kind, at);
CREATE TABLE IF NOT EXISTS reconciliations (  -- hand edits of generated regions, until resolved
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    region TEXT NOT NULL,
    human TEXT NOT NULL,           -- the region's text as the human left it
    generated TEXT NOT NULL,       -- what memkeeper would have written there
    opened_by TEXT NOT NULL,
    opened_at TEXT NOT NULL,
    resolution TEXT,               -- NULL while open, else keep-human, take-generated, undone
    resolved_by TEXT,
    resolved_at TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS reconciliations_open ON reconciliations (path, region)
    WHERE resolution IS NULL;
CREATE TABLE IF NOT EXISTS bodies (  -- sections' earlier bodies (the current: its row's)
    path TEXT NOT NULL,
    key TEXT NOT NULL,
    rev INTEGER NOT NULL,
    body BLOB NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS bodies_by_rev ON bodies (path, key, rev);
CREATE TABLE IF NOT EXISTS proposals (  -- bodies of merges that could not land
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    section TEXT NOT NULL,
    base_rev INTEGER NOT NULL,
    body BLOB NOT NULL,
    agent TEXT NOT NULL,
    opened_at TEXT NOT NULL,
    state TEXT NOT NULL,           -- open, applied or dropped
    closed_by TEXT,
    closed_at TEXT,
    rev INTEGER                    -- applied: the rev it landed as
);
CREATE TABLE IF NOT EXISTS pending (  -- file replaces committed before they happen on disk
    seq INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    old_inode INTEGER,             -- the file replaced (NULL: the write creates it) …
    old_mtime_ns INTEGER,
    old_size INTEGER,
    old_hash TEXT,
    new_inode INTEGER NOT NULL,    -- … and the temp file renamed over it
    new_hash TEXT NOT NULL,
    temp TEXT NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS pending_by_path ON pending (path, seq);
CREATE TABLE IF NOT EXISTS messages (  -- to an identity, or to all
    id INTEGER PRIMARY KEY,
    sender TEXT NOT NULL,
    recipient TEXT NOT NULL,
    kind TEXT NOT NULL,
    about TEXT,
    text TEXT NOT NULL,
    sent_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_recipient ON messages (recipient, id);
CREATE TABLE IF NOT EXISTS deliveries (  -- what each recipient was told (m:ID, a notice's key)
    recipient TEXT NOT NULL,
    key TEXT NOT NULL,
    delivered_at TEXT,
    acked_at TEXT,
    PRIMARY KEY (recipient, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS reads (  -- what each identity last read of a section
    reader TEXT NOT NULL,
    path TEXT NOT NULL,
    key TEXT NOT NULL,
    rev INTEGER NOT NULL,          -- the rev it read
    told INTEGER NOT NULL,         -- the last rev it was told of (its rev until then)
    PRIMARY KEY (reader, path, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meetings (  -- overlaps between agents' claims, until resolved
    id INTEGER PRIMARY KEY,
    state TEXT NOT NULL,           -- open, escalated, serializing or resolved
    record TEXT NOT NULL           -- the whole record as JSON (meetings.records.encode)
);
CREATE INDEX IF NOT EXISTS meetings_by_state ON meetings (state, id);
CREATE TABLE IF NOT EXISTS work (  -- work items, kept after they end
    id INTEGER PRIMARY KEY,
    state TEXT NOT NULL,           -- open, claimed, done or failed
    record TEXT NOT NULL           -- the whole record as JSON (work.items.encode)
);
CREATE INDEX IF NOT EXISTS work_by_state ON work (state, id);
CREATE TABLE IF NOT EXISTS checkpoints (  -- the event chain's: verified, compacted
    kind TEXT PRIMARY KEY,
    record TEXT NOT NULL           -- the whole record as JSON (checkpoints.encode)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS stamps (  -- this checkout's files' stat stamps (memkeeper.stamps)
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    device INTEGER NOT NULL,
    hash TEXT NOT NULL,            -- of the bytes read at this stamp
    taken_ns INTEGER NOT NULL,     -- wall clock, before the lstat: a racy stamp is not trusted
    clean TEXT                     -- the key of the check that found those bytes clean
) WITHOUT ROWID;
"""


def create_or_upgrade(db: sqlite3.Connection) -> None:
    """Bring the schema of ``db`` to ``SCHEMA_VERSION``, inside the caller's transaction;
    ``EnvironmentFailure`` for a store of a newer (or unknown) version."""
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version < SCHEMA_VERSION:
        for statement in SCHEMA.split(";"):
            if statement.strip():
                db.execute(statement)
        columns = {row[1] for row in db.execute("PRAGMA table_info(events)")}
        for column in ("signer", "sig"):  # an events table made before events were signed
            if column not in columns:
                db.execute(f"ALTER TABLE events ADD COLUMN {column} TEXT")
        for table in ("claims", "waiters"):  # made before claims had plans
            if "plan" not in {row[1] for row in db.execute(f"PRAGMA table_info({table})")}:
                db.execute(f"ALTER TABLE {table} ADD COLUMN plan TEXT")
        if version < 13:  # a present section's current body: its row's copy alone
            db.execute(
                "DELETE FROM bodies WHERE EXISTS (SELECT 1 FROM sections s WHERE "
                "s.path = bodies.path AND s.key = bodies.key AND s.rev = bodies.rev "
                "AND s.present)"
            )
        db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
    elif version != SCHEMA_VERSION:
        raise EnvironmentFailure(
            f"the state store has schema version {version}, this memkeeper knows "
            f"{SCHEMA_VERSION} — upgrade memkeeper or remove .memkeeper/ to rebuild it"
        )
