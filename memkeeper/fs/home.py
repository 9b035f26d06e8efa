"""The memory home and its own files beside the store: the home itself (``prepare_home``:
its ``.gitignore`` of everything, ``locks/``), the id of the store it holds (``store-id``),
this root's id among the roots sharing a store (``root-id``), a shared store's cache of the
policy's verdicts (``policy-cache.json``) and the links to replaced files kept in ``kept/``,
each with its ``.base``.

Files are written to a temp file beside them, then renamed or linked into place.
"""

from __future__ import annotations

import contextlib
import json
import os

from memkeeper.names import (
    BASE_SUFFIX,
    KEPT_DIR,
    LOCKS_DIR,
    POLICY_CACHE,
    ROOT_ID,
    STORE_MARK,
    home_temp,
)


def prepare_home(home: str) -> None:
    """Create ``.memkeeper/`` with its ``.gitignore`` of ``*`` and its lock directory."""
    os.makedirs(os.path.join(home, LOCKS_DIR), exist_ok=True)
    ignore = os.path.join(home, ".gitignore")
    if not os.path.exists(ignore):
        with open(ignore, "w", encoding="utf-8") as handle:
            handle.write("*\n")


def read_store_mark(home: str) -> str | None:
    """The id of the store this home holds, if it was ever named."""
    try:
        with open(os.path.join(home, STORE_MARK), encoding="utf-8") as handle:
            return handle.read().strip() or None
    except FileNotFoundError:
        return None


def write_store_mark(home: str, store_id: str) -> None:
    """Name the home's store, durably (file and directory synced)."""
    path = os.path.join(home, STORE_MARK)
    temp = home_temp(path, os.getpid())
    with open(temp, "w", encoding="utf-8") as handle:
        handle.write(store_id + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, path)
    directory = os.open(home, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


def read_root_id(home: str) -> str | None:
    """This root's id, if one was made (``None``: none yet, or an empty file)."""
    try:
        with open(os.path.join(home, ROOT_ID), encoding="utf-8") as handle:
            return handle.read().strip() or None
    except FileNotFoundError:
        return None


def make_root_id(home: str) -> str | None:
    """Make this root's id (six random bytes, in hex). The first id made stays: ``None``
    when another maker's got there first (read that one)."""
    path = os.path.join(home, ROOT_ID)
    made = os.urandom(6).hex()
    temp = home_temp(path, os.getpid())
    with open(temp, "w", encoding="utf-8") as handle:
        handle.write(made + "\n")
    try:
        os.link(temp, path)
    except FileExistsError:
        return None
    finally:
        os.unlink(temp)
    return made


def read_policy_cache(home: str) -> dict[str, object]:
    """The verdicts cached in ``policy-cache.json`` (empty when it is missing or unreadable:
    each is parsed again, then)."""
    try:
        with open(os.path.join(home, POLICY_CACHE), encoding="utf-8") as handle:
            loaded = json.load(handle)
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def write_policy_cache(home: str, cache: dict[str, object]) -> None:
    """Replace ``policy-cache.json`` with ``cache``."""
    where = os.path.join(home, POLICY_CACHE)
    temp = home_temp(where, os.getpid())
    with open(temp, "w", encoding="utf-8") as handle:
        json.dump(cache, handle)
    os.replace(temp, where)


def make_kept_dir(home: str) -> str:
    """``kept/``, made if missing."""
    kept_dir = os.path.join(home, KEPT_DIR)
    os.makedirs(kept_dir, exist_ok=True)
    return kept_dir


def kept_links(home: str) -> list[str] | None:
    """The names of the kept links in ``kept/`` (not their ``.base`` files), sorted: by file,
    then oldest first (see ``names.kept_name``); ``None`` when there is no ``kept/``."""
    try:
        found = os.listdir(os.path.join(home, KEPT_DIR))
    except FileNotFoundError:
        return None
    return sorted(name for name in found if not name.endswith(BASE_SUFFIX))


def kept_base(keep: str, rel: str, old: bytes) -> tuple[str, bytes]:
    """The ``.base`` beside the kept link ``keep`` of ``rel``, should a writer still save
    into the replaced file: its path, and the file's path, NUL and the bytes ``rel`` held
    (what to merge a save against)."""
    return keep + BASE_SUFFIX, rel.encode() + b"\0" + old


def read_kept_base(link: str) -> tuple[str, bytes]:
    """What a ``kept_base`` holds: the file's path and its bytes (``FileNotFoundError``: the
    ``.base`` was never written)."""
    rel, _, base = read_bytes(link + BASE_SUFFIX).partition(b"\0")
    return rel.decode(), base


def drop_kept(link: str) -> None:
    """Remove a kept link and its ``.base`` (either may be gone already)."""
    for path in (link + BASE_SUFFIX, link):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


def read_bytes(path: str) -> bytes:
    """A home file's bytes (a kept link's, a ``.base``'s)."""
    with open(path, "rb") as handle:
        return handle.read()
