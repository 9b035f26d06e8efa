"""The etcd store's key layout, format version ``FORMAT_VERSION`` (the ``P/format`` key).

Keys, under the prefix ``P`` (bytes ending in ``/``); ``\\0`` separates a path from what
follows it (neither paths nor keys hold one); numbers are zero-padded to 20 digits so key
order is numeric order; values are compact JSON (``codec``):

- ``P/format``: the layout's version, ``FORMAT_VERSION`` in ASCII digits — written by the first
  memkeeper to use the prefix (or the first of this release to use a prefix an older one
  wrote), checked by every store that opens it: one of another version is refused;
- ``P/file/<path>``: ``[file_rev, file_hash]``;
- ``P/sec/<path>``: every section row of the file in ONE key,
  ``{key: [ord, rev, hash, present, title, level, base, heading, body, lines]}``;
- ``P/body/<path>\\0<key>\\0<rev>``: a section's body at an older rev (the merge bases);
- ``P/ev/<id>``: an event, ``[ts, actor, type, path, section, data, prev, hash]``;
- ``P/cache/<key>``: cached text; ``P/cache/events:head`` is the chain's head ``"ID HASH"``
  (the same cache key as SQLite's);
- ``P/evp/<path>\\0<s>\\0<id>`` (empty): the events about a path, ``s`` being ``-`` for
  the whole file and ``+KEY`` for a section; ``P/evl/<path>\\0<s>``: the id of the last one;
- ``P/evt/<type>\\0<ts>\\0<id>``: ``data.reason`` as JSON — events by type from a time on,
  and their count by reason, without reading the events;
- ``P/evc/<claim id>\\0<id>`` (empty): claim.released / expired / aborted events by claim;
- ``P/chk/<kind>``: the event chain's checkpoint of that kind (``verified``, ``compacted``),
  its record as JSON (``checkpoints.encode``); once ``compacted`` is there, the events up to
  its id (and their ``evt``/``evp``/``evc`` keys) are gone, and an ``evl`` key may name one
  of them (keys an older memkeeper never reads; its ``verify`` would report the missing
  events as a broken chain);
- ``P/tally/<kind>\\0<at>\\0<random>``: ``at`` (``%020.6f`` in the key, exact in the value);
- ``P/rec/<id>``: a reconciliation; ``P/reco/<path>\\0<region>``: the id of the open one;
- ``P/prop/<id>``: a proposal;
- ``P/ver/<path>\\0<file hash>``: the ``file_rev`` at which the file had those bytes (the
  last ``KEEP_VERSIONS``): how a root tells a version it is behind on from an edit;
- ``P/pend/<path>\\0<seq>``: a pending write; ``P/gen/pend`` changes on every drop;
- ``P/msg/<id>``: a message, ``[id, sender, to, kind, about, text, sent_at]``;
  ``P/to/<recipient>\\0<id>`` (empty): the messages to a recipient (``all`` is one);
  ``P/dlv/<recipient>\\0<key>``: ``[delivered_at, acked_at]`` of a message (``m:ID``) or a
  computed notice's key, for that recipient;
- ``P/read/<reader>\\0<path>\\0<key>``: ``[rev, told]``, the rev of a section an identity
  last read and the last rev it was told of (keys an older memkeeper never reads);
- ``P/meet/<id>``: a meeting, its record as JSON (``meetings.records.encode``);
- ``P/work/<id>``: a work item not done (open, claimed, failed), its record as JSON
  (``work.items.encode``); ``P/workdone/<id>``: a done one, moved there when done (keys an
  older memkeeper never reads);
- ``P/seq/<name>``: the last id handed out (``rec``, ``prop``, ``pend``, ``msg``, ``meet``,
  ``work``);
- ``P/lease/claim\\0<id>``: a live claim, ``[token, agent, mode, targets, priority, strict,
  granted_at, expires_at, objective, lease, lease TTL, plan]`` (``plan`` from format 4), held
  by that etcd lease: etcd deletes it when the claim expires (format 3; before, the lease
  outlived it by 2 s and each machine's clock ended it);
- ``P/lease/grant\\0<id>``: the same, without a lease, until a sweep drops it: a grant
  without its claim key is a claim that expired (format 3);
- ``P/lease/wait\\0<id>``: a queued request and its wait, ``[arrival, agent, mode, targets,
  priority, strict, ttl, objective, pid, deadline, state, reason, plan, lease]`` (``plan``,
  what the claim announces, from format 4; ``lease``, the etcd lease holding the key until
  ``ABANDON_GRACE_S`` past the deadline — a reader that knows it not ignores it);
- ``P/crec/<id>``: a claim's record (``claims.lifecycle.ClaimRecord`` as JSON), written at
  its first change after the grant (a scope change, its end) and kept (format 4);
- ``P/crecs/<state>\\0<id>``: the same record again, while it is in ``state``: the index by
  state (``recordindex``, format 5; a prefix of format 4 gets it when it is marked 5);
- ``P/meetser/<id>``: while meeting ``id`` is ``serializing`` (format 5);
- ``P/lease/claim\\0`` and ``P/lease/wait\\0`` (the empty id: claim and request ids are
  never empty): a random value, changed by every drop of a claim / a waiter;
- ``P/ctr/<name>``: a counter of ``bump`` (``token``: the highest fencing token ever issued;
  ``request``: the last arrival number).

Why the section rows of a file share one key, not one key each (a first design's):
every change of a section changes its file's ``file_rev`` and ``file_hash`` too, so two writes
to one file conflict whatever the granularity — and one key makes indexing a file of any
section count one operation, and reading a section one get. Bodies bytes are stored as text
when they are UTF-8 (memkeeper indexes only UTF-8 files), else as ``{"b64": …}``.

A change of this layout that an older memkeeper would misread raises ``FORMAT_VERSION``.
"""

from __future__ import annotations

# 1: the layout; 2: an event's value may carry its signer and signature (ten fields); 3: a
# claim's key is held by an etcd lease of exactly its TTL, its grant beside it (etcd ends
# claims; a claim a release before 3 stored keeps its own lease, 2 s past its TTL, and leaves
# no claim.expired); 4: a claim's and a waiter's value end with its plan, and claims have
# records (``P/crec/``); 5: claim records indexed by state (``P/crecs/``), meetings that
# serialize (``P/meetser/``, and a meeting's record its turns). A prefix of an older version
# this one only extends (``UPGRADES``) is marked as this one on first use, so that a memkeeper
# too old to read it refuses the prefix instead of misreading it.
FORMAT_VERSION = 5
UPGRADES = (b"1", b"2", b"3", b"4")
EVENTS_HEAD = "events:head"  # as in SQLite's store: the cache key of the chain's head
CLAIMS, GRANTS, WAITERS = "claim", "grant", "wait"  # the tables under P/lease/
_N = "{:020d}"


def key(prefix: bytes, table: str, *parts: str) -> bytes:
    """``P/<table>/<parts joined by NUL>``."""
    return prefix + table.encode() + b"/" + "\0".join(parts).encode()


def format_key(prefix: bytes) -> bytes:
    """``P/format``: the version of the layout the prefix holds."""
    return prefix + b"format"


def number(value: int) -> str:
    """A number as it sorts in a key: zero-padded to 20 digits."""
    return _N.format(value)


def number_of(key_: bytes) -> int:
    """The number a key ends with (``number``'s 20 digits)."""
    return int(key_[-20:])


def about(section: str | None) -> str:
    """An event's section in an index key: ``-`` for the whole file, ``+KEY`` for one."""
    return "-" if section is None else "+" + section


def at(seconds: float) -> str:
    """A time as it sorts in a key: ``%020.6f``."""
    return f"{seconds:020.6f}"
