"""``Verdicts``: the policy's verdicts for a workspace, cached by the policy's hash, so that a
``read`` or a ``patch`` of an indexed file parses no YAML.

Three levels: this workspace's memory; the store's cache (SQLite), or with a shared store a
file of this root's home (``policy-cache.json``: a policy's verdicts are this root's policy's,
and asking the network for them would cost a round trip each and fail when it is down); and
last, the policy parsed. The policy file itself is read again only when its stat changes.
"""

from __future__ import annotations

import json
import os

from memkeeper import names
from memkeeper.events import digest
from memkeeper.records import Verdict

TYPE_CHECKING = False
if TYPE_CHECKING:
    from memkeeper.ops.shape import WorkspaceShape
else:
    WorkspaceShape = object


class Verdicts(WorkspaceShape):
    """The part of a ``Workspace`` that answers what the policy says of a file."""

    def __init__(self) -> None:
        self._verdicts: dict[str, Verdict] = {}
        self._ttls: dict[str, tuple[int, int, int, int]] = {}
        self._local_cache: dict[str, object] | None = None  # shared store: ``_cached``
        self._policy_seen: tuple[object, bytes | None, str] | None = None
        super().__init__()

    def rule(self, rel: str, key: str | None = None) -> Verdict:
        """The policy's verdict for a file (and section), cached by the policy's hash."""
        policy_bytes, policy_hash = self._policy()
        cache_key = f"rule:{policy_hash}:{rel}#{key or ''}"
        verdict = self._verdicts.get(cache_key)
        if verdict is not None:
            return verdict
        cached = self._cached(cache_key) if self.has_store else None  # creates none
        if cached is not None:
            verdict = Verdict.from_json(json.loads(cached))
        else:
            from memkeeper.policy.loader import parse_policy

            verdict = parse_policy(policy_bytes).verdict(rel, key)
            if self.has_store:
                self._cache(cache_key, json.dumps(verdict.to_json()))
        self._verdicts[cache_key] = verdict
        return verdict

    def remember_rules(self, rels: list[str]) -> None:
        """Work out and cache the file verdicts of ``rels`` that no cache holds yet, as
        ``rule`` does one by one — but parsing the policy once for them all (and, with a
        shared store, writing this root's cache file once)."""
        policy_bytes, policy_hash = self._policy()
        keys = {rel: f"rule:{policy_hash}:{rel}#" for rel in rels}
        missing = [rel for rel, key in keys.items() if key not in self._verdicts]
        if self.has_store:
            missing = [rel for rel in missing if self._cached(keys[rel]) is None]
        if not missing:
            return
        from memkeeper.policy.loader import parse_policy

        policy = parse_policy(policy_bytes)
        found = {keys[rel]: policy.verdict(rel, None) for rel in missing}
        self._verdicts.update(found)
        if self.has_store:
            self._cache_many({key: json.dumps(v.to_json()) for key, v in found.items()})

    def claim_ttls(self) -> tuple[int, int]:
        """The policy's ``leases:`` default and maximum TTL, cached by the policy's hash."""
        default_ttl, max_ttl, _, _ = self.lease_settings()
        return default_ttl, max_ttl

    def lease_settings(self) -> tuple[int, int, int, int]:
        """The policy's ``leases:`` default_ttl, max_ttl, takeover_grace and verify_timeout,
        cached by the policy's hash."""
        policy_bytes, policy_hash = self._policy()
        remembered = self._ttls.get(policy_hash)
        if remembered is not None:
            return remembered
        cache_key = f"leases4:{policy_hash}"
        cached = self._cached(cache_key)
        if cached is None:
            from memkeeper.policy.loader import parse_policy

            p = parse_policy(policy_bytes)
            cached = json.dumps([p.default_ttl, p.max_ttl, p.takeover_grace, p.verify_timeout])
            self._cache(cache_key, cached)
        a, b, c, d = (int(v) for v in json.loads(cached))
        self._ttls[policy_hash] = (a, b, c, d)
        return self._ttls[policy_hash]

    def semantic_threshold(self) -> float:
        """The policy's ``semantic.threshold``, cached by the policy's hash: a comparison of
        claims' objectives then parses no YAML (docs/reference.md §4 "Similar objectives")."""
        policy_bytes, policy_hash = self._policy()
        cache_key = f"semantic:{policy_hash}"
        cached = self._cached(cache_key)
        if cached is None:
            from memkeeper.policy.loader import parse_policy

            cached = json.dumps(parse_policy(policy_bytes).semantic_threshold)
            self._cache(cache_key, cached)
        return float(json.loads(cached))

    def meeting_settings(self) -> tuple[bool, int, int, int]:
        """The policy's ``meetings:`` on_overlap, deadline, keep_days and keep, cached by the
        policy's hash: a claim asks whether to open a meeting without parsing YAML."""
        policy_bytes, policy_hash = self._policy()
        cache_key = f"meetings2:{policy_hash}"
        cached = self._cached(cache_key)
        if cached is None:
            from memkeeper.policy.loader import parse_policy

            p = parse_policy(policy_bytes)
            cached = json.dumps(
                [p.meet_on_overlap, p.meeting_deadline, p.meeting_keep_days, p.meeting_keep]
            )
            self._cache(cache_key, cached)
        meet, deadline, keep_days, keep = json.loads(cached)
        return bool(meet), int(deadline), int(keep_days), int(keep)

    def work_settings(self) -> tuple[int, int]:
        """The policy's ``work:`` keep_days and keep, cached by the policy's hash."""
        policy_bytes, policy_hash = self._policy()
        cache_key = f"work:{policy_hash}"
        cached = self._cached(cache_key)
        if cached is None:
            from memkeeper.policy.loader import parse_policy

            p = parse_policy(policy_bytes)
            cached = json.dumps([p.work_keep_days, p.work_keep])
            self._cache(cache_key, cached)
        keep_days, keep = json.loads(cached)
        return int(keep_days), int(keep)

    def _cached(self, key: str) -> str | None:
        """What the policy's cache holds for ``key``: the store's, or with a shared store
        this root's ``policy-cache.json``."""
        if not self.shared:
            return self.store.cached(key)
        if self._local_cache is None:
            from memkeeper.fs import home

            self._local_cache = home.read_policy_cache(self.home)
        found = self._local_cache.get(key)
        return found if isinstance(found, str) else None

    def _cache(self, key: str, value: str) -> None:
        self._cache_many({key: value})

    def _cache_many(self, values: dict[str, str]) -> None:
        if not self.shared and len(values) == 1:  # in the open transaction, or its own
            self.store.cache(*next(iter(values.items())))
            return
        if not self.shared:
            with self.writing():  # one transaction for them all
                for key, value in values.items():
                    self.store.cache(key, value)
            return
        if all(self._cached(key) == value for key, value in values.items()):
            return
        from memkeeper.fs import home
        from memkeeper.store.sqlite import prepare_home

        prepare_home(self.home)
        assert self._local_cache is not None
        self._local_cache.update(values)
        home.write_policy_cache(self.home, self._local_cache)

    def _policy(self) -> tuple[bytes | None, str]:
        """The policy file's bytes (``None``: there is none) and a hash that tells the two
        apart, re-read only when its stat changes."""
        path = os.path.join(self.top, names.POLICY_FILE)
        try:
            info = os.stat(path)
            signature = (info.st_mtime_ns, info.st_size, info.st_ino, info.st_ctime_ns)
        except FileNotFoundError:
            signature = None
        if self._policy_seen is None or self._policy_seen[0] != signature:
            data = None
            if signature is not None:
                with open(path, "rb") as handle:
                    data = handle.read()
            self._policy_seen = (signature, data, "none" if data is None else digest(data))
        return self._policy_seen[1], self._policy_seen[2]
