"""The etcd user's token kept across processes (``tokens``): one login for many commands, a
new one for another user, password or cluster, a token etcd forgot replaced, the file its
owner's alone and never holding the password. In this process: ``authenticate`` is scripted."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

from memkeeper.store.etcd.access import Access
from memkeeper.store.etcd.tokens import FILE, Login, Tokens, token_key
from memkeeper.store.etcd.wire import EtcdError

CLUSTER = [("10.0.0.1", 2379), ("10.0.0.2", 2379)]
USER = Access(user="memkeeper", password="hunter2")


class Etcd:
    """A scripted ``/v3/auth/authenticate``: a new token at each call."""

    def __init__(self, enabled: bool = True) -> None:
        self.logins: list[dict[str, Any]] = []
        self.enabled = enabled

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        self.logins.append(body)
        if not self.enabled:
            raise EtcdError("etcd: etcdserver: authentication is not enabled", 9)
        return {"token": f"token-{len(self.logins)}"}


def test_a_second_process_sends_the_token_the_first_one_got(tmp_path: Path) -> None:
    etcd = Etcd()
    first = Login(USER, CLUSTER, Tokens(str(tmp_path)))
    assert first.headers(etcd) == {"Authorization": "token-1"}
    assert first.headers(etcd) == {"Authorization": "token-1"}
    second = Login(USER, CLUSTER, Tokens(str(tmp_path)))
    assert second.headers(etcd) == {"Authorization": "token-1"}
    assert etcd.logins == [{"name": "memkeeper", "password": "hunter2"}]


@pytest.mark.parametrize(
    ("access", "cluster"),
    [
        (Access(user="memkeeper", password="changed"), CLUSTER),
        (Access(user="someone-else", password="hunter2"), CLUSTER),
        (USER, CLUSTER[:1]),
    ],
)
def test_another_password_user_or_cluster_logs_in_again(
    tmp_path: Path, access: Access, cluster: list[tuple[str, int]]
) -> None:
    etcd = Etcd()
    Login(USER, CLUSTER, Tokens(str(tmp_path))).headers(etcd)
    assert Login(access, cluster, Tokens(str(tmp_path))).headers(etcd) == {
        "Authorization": "token-2"
    }


def test_a_token_got_over_tls_is_never_sent_in_the_clear() -> None:
    assert token_key("u", "p", CLUSTER, tls=True) != token_key("u", "p", CLUSTER, tls=False)


def test_a_token_etcd_forgot_is_dropped_and_a_new_one_kept(tmp_path: Path) -> None:
    etcd = Etcd()
    login = Login(USER, CLUSTER, Tokens(str(tmp_path)))
    login.headers(etcd)
    login.expired()
    assert not (tmp_path / FILE).exists()
    assert login.headers(etcd) == {"Authorization": "token-2"}
    assert Login(USER, CLUSTER, Tokens(str(tmp_path))).headers(etcd) == {"Authorization": "token-2"}


def test_an_expired_token_does_not_drop_a_newer_one_another_process_kept(tmp_path: Path) -> None:
    etcd = Etcd()
    old = Login(USER, CLUSTER, Tokens(str(tmp_path)))
    old.headers(etcd)
    Tokens(str(tmp_path)).save(old.key, "token-from-elsewhere")
    old.expired()
    assert Tokens(str(tmp_path)).load(old.key) == "token-from-elsewhere"


def test_the_file_is_its_owners_alone_and_never_holds_the_password(tmp_path: Path) -> None:
    Login(USER, CLUSTER, Tokens(str(tmp_path))).headers(Etcd())
    kept = tmp_path / FILE
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert "hunter2" not in kept.read_text()
    assert token_key("memkeeper", "hunter2", CLUSTER, tls=False) in kept.read_text()


def test_a_cluster_without_authentication_is_sent_no_token(tmp_path: Path) -> None:
    etcd = Etcd(enabled=False)
    login = Login(USER, CLUSTER, Tokens(str(tmp_path)))
    assert login.headers(etcd) == {}
    assert login.headers(etcd) == {}
    assert len(etcd.logins) == 1
    assert not (tmp_path / FILE).exists()


def test_without_a_user_nothing_is_asked(tmp_path: Path) -> None:
    etcd = Etcd()
    assert Login(Access(), CLUSTER, Tokens(str(tmp_path))).headers(etcd) == {}
    assert etcd.logins == []


@pytest.mark.parametrize("content", ["", "not json", "[1]", '{"for": 1}', '{"token": 5}'])
def test_a_damaged_file_is_no_token(tmp_path: Path, content: str) -> None:
    (tmp_path / FILE).write_text(content)
    assert Tokens(str(tmp_path)).load(token_key("u", "p", CLUSTER)) is None


def test_a_home_that_cannot_be_written_only_logs_in_more(tmp_path: Path) -> None:
    etcd = Etcd()
    missing = str(tmp_path / "no" / "such" / "home")
    assert Login(USER, CLUSTER, Tokens(missing)).headers(etcd) == {"Authorization": "token-1"}
    assert Login(USER, CLUSTER, Tokens(missing)).headers(etcd) == {"Authorization": "token-2"}
