"""Messages in the etcd store (``keys``: ``P/msg/<id>``, ids from ``P/seq/msg``; the index
``P/to/<recipient>\\0<id>``, ``all`` being a recipient; what each recipient was told and
acknowledged, ``P/dlv/<recipient>\\0<key>``). Not a mixin of ``EtcdStore``: ``EtcdStore.mail``,
loaded on first use, through the store's core (its transactions, its raw access to keys)."""

from __future__ import annotations

import json

from memkeeper.coordination import Message
from memkeeper.store.etcd import codec, keys
from memkeeper.store.etcd import gateway as etcdgw
from memkeeper.store.etcd.core import EtcdDomain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


class MailKeys(EtcdDomain):
    def post_message(
        self, sender: str, to: str, kind: str, about: str | None, text: str, at: str
    ) -> Message:
        result: Message = self._core._alone(self._post_message, sender, to, kind, about, text, at)
        return result

    def _post_message(
        self, sender: str, to: str, kind: str, about: str | None, text: str, at: str
    ) -> Message:
        message_id = self._core._next_id("msg")
        message = Message(message_id, sender, to, kind, about, text, at)
        self._core._put(
            self._core._key("msg", keys.number(message_id)), codec.encode(list(message)[:7])
        )
        self._core._put(self._core._key("to", to, keys.number(message_id)), b"")
        return message

    def message(self, message_id: int) -> Message | None:
        raw = self._core._get(self._core._key("msg", keys.number(message_id)))
        return None if raw is None else Message(*json.loads(raw))

    def messages_for(self, recipient: str, *, acked: bool = False) -> list[Message]:
        """The messages ``recipient`` receives (named, or ``all`` from someone else), oldest
        first, with its delivery and acknowledgement; the acknowledged ones only with
        ``acked``."""
        ids = sorted(
            keys.number_of(key)
            for to in dict.fromkeys((recipient, "all"))
            for key, _ in self._core._scan_prefix(self._core._key("to", to, ""))
        )
        told = {
            key.rsplit(b"\0", 1)[1].decode(): json.loads(value)
            for key, value in self._core._scan_prefix(self._core._key("dlv", recipient, ""))
        }
        wanted = [
            mid for mid in ids if acked or told.get(f"m:{mid}", (None, None))[1] is None
        ]  # an acknowledged one is not read at all
        out = []
        for message in self._messages(wanted):
            if message.to == "all" and message.sender == recipient:
                continue
            delivered_at, acked_at = told.get(f"m:{message.id}", (None, None))
            out.append(message._replace(delivered_at=delivered_at, acked_at=acked_at))
        return out

    def _messages(self, wanted: list[int]) -> list[Message]:
        """The messages ``wanted`` (ids, ascending) that are still kept: one range read from
        the first to the last (others' messages between are read and left), not a get each."""
        if len(wanted) < 2:
            return [m for m in map(self.message, wanted) if m is not None]
        start = self._core._key("msg", keys.number(wanted[0]))
        end = self._core._key("msg", keys.number(wanted[-1] + 1))
        found = {keys.number_of(key): raw for key, raw in self._core._scan(start, end)}
        return [Message(*json.loads(found[mid])) for mid in wanted if mid in found]

    def mark_delivered(self, recipient: str, marks: Sequence[str], at: str) -> list[str]:
        """Mark ``marks`` delivered to ``recipient``: those that were not yet, in order."""
        result: list[str] = self._core._alone(self._mark_delivered, recipient, marks, at)
        return result

    def _mark_delivered(self, recipient: str, marks: Sequence[str], at: str) -> list[str]:
        fresh = []
        for key in marks:
            where = self._core._key("dlv", recipient, key)
            raw = self._core._get(where)
            acked_at = None if raw is None else json.loads(raw)[1]
            if raw is None or json.loads(raw)[0] is None:
                self._core._put(where, codec.encode([at, acked_at]))
                fresh.append(key)
        return fresh

    def ack_message(self, recipient: str, message_id: int, at: str) -> bool:
        """Acknowledge a message for ``recipient`` (delivered too, if it was not): False when
        it already was."""
        result: bool = self._core._alone(self._ack_message, recipient, message_id, at)
        return result

    def _ack_message(self, recipient: str, message_id: int, at: str) -> bool:
        where = self._core._key("dlv", recipient, f"m:{message_id}")
        raw = self._core._get(where)
        delivered_at, acked_at = (None, None) if raw is None else json.loads(raw)
        if acked_at is not None:
            return False
        self._core._put(where, codec.encode([delivered_at or at, at]))
        return True

    def kept_messages(self) -> list[tuple[int, str, str, bool, str, str | None]]:
        """Every message kept, oldest first: ``(id, to, sent_at, given, kind, about)``,
        ``given`` when its named recipient was given it (delivered or acknowledged). Read
        without comparing them at the commit: what the trim decides stays right whatever
        another writer does meanwhile (a message is given once and for good; one posted since
        is not looked at; one dropped since is dropped again; an overlap notice given
        meanwhile was moot) — so a send never conflicts with an ``ack``, nor with another send
        over these reads."""
        given = {
            key
            for key, value in self._untracked(self._core._key("dlv", ""))
            if json.loads(value)[0] is not None
        }
        out = []
        for _, raw in self._untracked(self._core._key("msg", "")):
            mid, _, to, kind, about, _, sent_at = json.loads(raw)
            out.append(
                (mid, to, sent_at, self._core._key("dlv", to, f"m:{mid}") in given, kind, about)
            )
        return out

    def _untracked(self, prefix: bytes) -> list[tuple[bytes, bytes]]:
        return self._core._scan(prefix, etcdgw.prefix_end(prefix), track=False)

    def _deliveries(self) -> list[tuple[bytes, bytes]]:
        return self._core._scan_prefix(self._core._key("dlv", ""))

    def drop_messages(self, message_ids: Sequence[int], notices_before: str) -> None:
        """Drop these messages with what any recipient was told of them, and what computed
        notices were told before ``notices_before``."""
        self._core._alone(self._drop_messages, list(message_ids), notices_before)

    def _drop_messages(self, message_ids: list[int], notices_before: str) -> None:
        dropped = {f"m:{mid}" for mid in message_ids}
        for mid in message_ids:
            raw = self._core._get(self._core._key("msg", keys.number(mid)))
            if raw is not None:
                self._core._delete(self._core._key("msg", keys.number(mid)))
                self._core._delete(self._core._key("to", json.loads(raw)[2], keys.number(mid)))
        for key, value in self._deliveries():
            told = key.rsplit(b"\0", 1)[1].decode()
            delivered_at = json.loads(value)[0]
            if told in dropped or (
                not told.startswith("m:")
                and delivered_at is not None
                and delivered_at < notices_before
            ):
                self._core._delete(key)
