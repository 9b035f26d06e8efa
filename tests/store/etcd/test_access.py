"""Reaching a guarded etcd (reference §12): the TLS and authentication settings
``Access.from_environ`` reads from the environment, every setting that cannot work refused
with the variable to fix (and never the password), and what a member's refusal is said to
mean. In this process: the certificates are minted here, nothing is sent."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.store.etcd.access import Access, gateway_refusal, refusal, tls_refusal
from tests.etcd_pki import Pki, mint


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return mint(tmp_path_factory.mktemp("pki"))


def password_file(tmp_path: Path, text: str = "hunter2\n") -> str:
    path = tmp_path / "password"
    path.write_text(text)
    return str(path)


def refused(environ: dict[str, str], *, tls: bool = True) -> str:
    with pytest.raises(ValueError, match=r"MEMKEEPER_ETCD_") as raised:
        Access.from_environ(environ, tls=tls)
    return str(raised.value)


def test_without_settings_a_plain_store_is_reached_as_before() -> None:
    access = Access.from_environ({}, tls=False)
    assert access == Access()
    assert (access.context, access.user, access.password) == (None, None, None)


def test_an_etcds_store_checks_the_members_certificates_against_the_ca_given(pki: Pki) -> None:
    access = Access.from_environ({"MEMKEEPER_ETCD_CACERT": str(pki.ca)}, tls=True)
    assert access.context is not None
    assert access.context.verify_mode == ssl.CERT_REQUIRED
    assert access.context.check_hostname
    assert access.user is None


def test_a_client_certificate_and_key_are_loaded_for_mutual_tls(pki: Pki) -> None:
    environ = {
        "MEMKEEPER_ETCD_CACERT": str(pki.ca),
        "MEMKEEPER_ETCD_CERT": str(pki.client_cert),
        "MEMKEEPER_ETCD_KEY": str(pki.client_key),
    }
    access = Access.from_environ(environ, tls=True)
    assert access.context is not None
    assert access.cert == str(pki.client_cert)


@pytest.mark.parametrize("name", ["MEMKEEPER_ETCD_CACERT", "MEMKEEPER_ETCD_CERT"])
def test_tls_settings_for_a_plain_etcd_name_are_refused_naming_etcds(name: str) -> None:
    message = refused({name: "/some/file.pem"}, tls=False)
    assert message.startswith(f"{name} is set, but the store is named etcd://… (no TLS)")
    assert "etcds://HOST:PORT/PREFIX" in message


@pytest.mark.parametrize(
    ("given", "missing"),
    [("MEMKEEPER_ETCD_CERT", "MEMKEEPER_ETCD_KEY"), ("MEMKEEPER_ETCD_KEY", "MEMKEEPER_ETCD_CERT")],
)
def test_a_client_certificate_without_its_key_is_refused(
    pki: Pki, given: str, missing: str
) -> None:
    message = refused({given: str(pki.client_cert)})
    assert f"{missing} is not set — set both (mutual TLS), or neither" in message


def test_a_ca_file_that_is_missing_or_not_a_certificate_is_refused(
    pki: Pki, tmp_path: Path
) -> None:
    missing = refused({"MEMKEEPER_ETCD_CACERT": str(tmp_path / "nope.pem")})
    assert missing.startswith(f"MEMKEEPER_ETCD_CACERT={tmp_path / 'nope.pem'}: no such file")
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    assert "name a PEM file holding the CA" in refused({"MEMKEEPER_ETCD_CACERT": str(garbage)})


def test_a_key_that_does_not_match_the_certificate_is_refused(pki: Pki) -> None:
    environ = {
        "MEMKEEPER_ETCD_CERT": str(pki.client_cert),
        "MEMKEEPER_ETCD_KEY": str(pki.other_key),
    }
    message = refused(environ)
    assert message.startswith(f"MEMKEEPER_ETCD_CERT={pki.client_cert}, MEMKEEPER_ETCD_KEY=")
    assert "name the client certificate and its private key" in message


def test_the_password_comes_from_its_file_without_the_line_end(tmp_path: Path) -> None:
    environ = {
        "MEMKEEPER_ETCD_USER": "memkeeper",
        "MEMKEEPER_ETCD_PASSWORD_FILE": password_file(tmp_path, "hunter2\r\n"),
    }
    access = Access.from_environ(environ, tls=False)
    assert (access.user, access.password) == ("memkeeper", "hunter2")
    assert "hunter2" not in repr(access)


def test_the_password_may_be_the_variable_itself() -> None:
    environ = {"MEMKEEPER_ETCD_USER": "memkeeper", "MEMKEEPER_ETCD_PASSWORD": "hunter2"}
    assert Access.from_environ(environ, tls=False).password == "hunter2"


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        (
            {"MEMKEEPER_ETCD_USER": "memkeeper"},
            "MEMKEEPER_ETCD_USER is set but no password — set MEMKEEPER_ETCD_PASSWORD_FILE",
        ),
        (
            {"MEMKEEPER_ETCD_PASSWORD": "hunter2"},
            "MEMKEEPER_ETCD_PASSWORD is set but MEMKEEPER_ETCD_USER is not",
        ),
        (
            {
                "MEMKEEPER_ETCD_USER": "memkeeper",
                "MEMKEEPER_ETCD_PASSWORD": "hunter2",
                "MEMKEEPER_ETCD_PASSWORD_FILE": "/run/secrets/etcd",
            },
            "both MEMKEEPER_ETCD_PASSWORD_FILE and MEMKEEPER_ETCD_PASSWORD are set",
        ),
        (
            {"MEMKEEPER_ETCD_USER": "memkeeper:hunter2"},
            "MEMKEEPER_ETCD_USER holds a ':' — it names the user alone",
        ),
    ],
)
def test_credentials_that_cannot_work_are_refused_without_the_password(
    environ: dict[str, str], message: str
) -> None:
    said = refused(environ, tls=False)
    assert said.startswith(message)
    assert "hunter2" not in said


def test_a_password_file_missing_or_empty_is_refused_naming_it(tmp_path: Path) -> None:
    environ = {"MEMKEEPER_ETCD_USER": "memkeeper"}
    nope = str(tmp_path / "nope")
    missing = refused({**environ, "MEMKEEPER_ETCD_PASSWORD_FILE": nope}, tls=False)
    assert missing == f"MEMKEEPER_ETCD_PASSWORD_FILE={nope}: no such file or directory"
    empty = password_file(tmp_path, "\n")
    said = refused({**environ, "MEMKEEPER_ETCD_PASSWORD_FILE": empty}, tls=False)
    assert said.endswith("the file is empty — write the password in it")


@given(st.text(min_size=1).filter(lambda s: s.strip("\r\n") and "\0" not in s))
def test_no_refusal_of_a_user_name_holding_a_password_repeats_it(password: str) -> None:
    environ = {"MEMKEEPER_ETCD_USER": f"memkeeper:{password}"}
    with pytest.raises(ValueError, match="MEMKEEPER_ETCD_USER holds a ':'") as raised:
        Access.from_environ(environ, tls=False)
    assert f"memkeeper:{password}" not in str(raised.value)


WITH_USER = Access(user="memkeeper", password="hunter2")


def test_permission_denied_names_the_user_and_the_grant_it_needs() -> None:
    said = refusal("etcd: etcdserver: permission denied", 7, WITH_USER)
    assert said is not None
    assert "for etcd user 'memkeeper' — grant one of its roles readwrite" in said
    anonymous = refusal("etcd: etcdserver: permission denied", 7, Access())
    assert anonymous is not None
    assert anonymous.endswith("set MEMKEEPER_ETCD_USER and MEMKEEPER_ETCD_PASSWORD_FILE")


def test_a_wrong_password_says_which_settings_to_check_and_never_the_password() -> None:
    message = "etcd: etcdserver: authentication failed, invalid user ID or password"
    said = refusal(message, 3, WITH_USER)
    assert said is not None
    assert said.startswith("etcd refused user 'memkeeper': wrong user name or password")
    assert "hunter2" not in said


def test_other_errors_are_no_refusal() -> None:
    assert refusal("etcd: etcdserver: request timed out", 4, WITH_USER) is None
    assert (
        refusal("etcd: etcdserver: mvcc: required revision has been compacted", 11, WITH_USER)
        is None
    )
    assert gateway_refusal(b"404 page not found") is None


def test_a_client_certificate_with_a_common_name_is_refused_by_the_gateway_saying_so() -> None:
    answer = (
        b"CommonName of client sending a request against gateway will be ignored and not used "
        b"as expected\n"
    )
    said = gateway_refusal(answer)
    assert said is not None
    assert "without one (e.g. subject O=memkeeper)" in said


def test_a_connection_cut_during_tls_is_no_refusal_but_a_plain_member_is() -> None:
    assert tls_refusal("h:1", ssl.SSLEOFError(8, "EOF occurred"), Access()) is None
    plain = ssl.SSLError(1, "[SSL: WRONG_VERSION_NUMBER] wrong version number")
    plain.reason = "WRONG_VERSION_NUMBER"
    assert tls_refusal("h:1", plain, Access()) == (
        "etcd at h:1 does not speak TLS — name the store etcd://…, not etcds://…"
    )
