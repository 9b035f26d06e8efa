"""Naming the shared store (reference §12): every spelling of ``etcd://HOST:PORT[,…]/PREFIX``
that ``parse_store_url`` accepts, with the endpoints and the prefix it makes of it, every one
it refuses, with its exact message, and the policy's ``store:`` line as ``policy_store``
finds it without the YAML parser."""

from __future__ import annotations

import re

import pytest

from memkeeper.policy.storeurl import SPELLING, StoreUrl, parse_store_url, policy_store

ACCEPTED = [
    ("etcd://127.0.0.1:2379/myrepo", [("127.0.0.1", 2379)], "/myrepo/"),
    ("etcd://localhost:2379/myrepo", [("localhost", 2379)], "/myrepo/"),
    ("etcd://a:1,b:2,c:65535/p", [("a", 1), ("b", 2), ("c", 65535)], "/p/"),
    ("etcd://a:1, b:2 /p", [("a", 1), ("b", 2)], "/p/"),  # blanks around each endpoint
    ("etcd://[::1]:2379/p", [("::1", 2379)], "/p/"),
    ("etcd://[fe80::1]:2379,10.0.0.2:2379/p", [("fe80::1", 2379), ("10.0.0.2", 2379)], "/p/"),
    ("etcd://::1:2379/p", [("::1", 2379)], "/p/"),  # the port is after the last colon
    ("etcd://h:2379/myrepo/", [("h", 2379)], "/myrepo/"),
    ("etcd://h:2379//myrepo//", [("h", 2379)], "/myrepo/"),
    ("etcd://h:2379/team/repo", [("h", 2379)], "/team/repo/"),
    ("etcd://h:2379/A-z_0.9~x", [("h", 2379)], "/A-z_0.9~x/"),
    ("etcd://h:02379/p", [("h", 2379)], "/p/"),
]


@pytest.mark.parametrize(("text", "endpoints", "prefix"), ACCEPTED)
def test_an_accepted_spelling_gives_its_endpoints_and_a_slashed_prefix(
    text: str, endpoints: list[tuple[str, int]], prefix: str
) -> None:
    url = parse_store_url(text)
    assert url.endpoints == tuple(endpoints)
    assert url.prefix == prefix
    assert url.text == text  # as written, for messages and ``status``


def _no_prefix(text: str) -> str:
    return (
        f"{text!r} names no PREFIX: write {SPELLING}, e.g. etcd://127.0.0.1:2379/myrepo "
        "(the roots that name one prefix share one state)"
    )


def _not_endpoint(text: str, part: str) -> str:
    return f"{text!r}: {part!r} is not HOST:PORT"


def _bad_prefix(text: str) -> str:
    return f"{text!r}: the PREFIX may hold letters, digits and . _ ~ / - only"


def _not_etcd(text: str) -> str:
    return f"{text!r} is not {SPELLING} (the only shared store is etcd)"


REFUSED = [
    ("redis://127.0.0.1:6379/team", _not_etcd("redis://127.0.0.1:6379/team")),
    ("ETCD://h:2379/p", _not_etcd("ETCD://h:2379/p")),
    ("etcd:/h:2379/p", _not_etcd("etcd:/h:2379/p")),
    (" etcd://h:2379/p", _not_etcd(" etcd://h:2379/p")),
    ("", _not_etcd("")),
    ("etcd://h:2379", _no_prefix("etcd://h:2379")),
    ("etcd://h:2379/", _no_prefix("etcd://h:2379/")),
    ("etcd://h:2379///", _no_prefix("etcd://h:2379///")),
    ("etcd://", _no_prefix("etcd://")),
    ("etcd://h:2379/te am", _bad_prefix("etcd://h:2379/te am")),
    ("etcd://h:2379/a?b", _bad_prefix("etcd://h:2379/a?b")),
    ("etcd://h:2379/a#b", _bad_prefix("etcd://h:2379/a#b")),
    ("etcd://h:2379/caf\u00e9", _bad_prefix("etcd://h:2379/caf\u00e9")),
    ("etcd://h:2379/a\0b", _bad_prefix("etcd://h:2379/a\0b")),
    ("etcd://h/p", _not_endpoint("etcd://h/p", "h")),
    ("etcd://h:/p", _not_endpoint("etcd://h:/p", "h:")),
    ("etcd://:2379/p", _not_endpoint("etcd://:2379/p", ":2379")),
    ("etcd://[]:2379/p", _not_endpoint("etcd://[]:2379/p", "[]:2379")),
    ("etcd://h:0/p", _not_endpoint("etcd://h:0/p", "h:0")),
    ("etcd://h:65536/p", _not_endpoint("etcd://h:65536/p", "h:65536")),
    ("etcd://h:-1/p", _not_endpoint("etcd://h:-1/p", "h:-1")),
    ("etcd://h:+1/p", _not_endpoint("etcd://h:+1/p", "h:+1")),
    ("etcd://h:port/p", _not_endpoint("etcd://h:port/p", "h:port")),
    ("etcd://[::1]/p", _not_endpoint("etcd://[::1]/p", "[::1]")),
    ("etcd://a:1,,b:2/p", _not_endpoint("etcd://a:1,,b:2/p", "")),
    ("etcd://a:1,b/p", _not_endpoint("etcd://a:1,b/p", "b")),
    ("etcd:///p", _not_endpoint("etcd:///p", "")),
]


@pytest.mark.parametrize(("text", "message"), REFUSED)
def test_a_refused_spelling_says_exactly_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        parse_store_url(text)


def test_a_port_of_non_ascii_digits_is_refused_as_not_host_port() -> None:
    text = "etcd://h:2\u00b2/p"
    with pytest.raises(ValueError, match=f"^{re.escape(_not_endpoint(text, 'h:2²'))}$"):
        parse_store_url(text)


def test_the_endpoints_print_back_with_ipv6_hosts_bracketed() -> None:
    url = parse_store_url("etcd://a:1, [::1]:2380,::2:3/p")
    assert url.endpoints_text() == "a:1,[::1]:2380,[::2]:3"
    assert parse_store_url(f"etcd://{url.endpoints_text()}/p") == url


def test_urls_are_equal_by_endpoints_and_prefix_whatever_the_spelling() -> None:
    url = parse_store_url("etcd://h:2379/p")
    assert url == parse_store_url("etcd://h:02379//p/")
    assert url == StoreUrl([("h", 2379)], "/p/", "anything")
    assert url != parse_store_url("etcd://h:2379/q")
    assert url != parse_store_url("etcd://h:2380/p")
    assert url != parse_store_url("etcd://h:2379,h:2380/p")
    assert url != "etcd://h:2379/p"
    assert repr(url) == "StoreUrl('etcd://h:2379/p')"


def test_etcds_names_members_that_serve_tls_and_is_another_store_than_etcd() -> None:
    plain, tls = parse_store_url("etcd://h:2379/p"), parse_store_url("etcds://h:2379/p")
    assert (plain.tls, tls.tls) == (False, True)
    assert (tls.endpoints, tls.prefix) == (plain.endpoints, plain.prefix)
    assert tls != plain


@pytest.mark.parametrize(
    "text",
    [
        "etcds://memkeeper:hunter2@h:2379/p",
        "etcd://memkeeper:hunter2@h:2379,g:2379/p",
        "etcds://memkeeper@h:2379/p",
        "etcds://me:hun/ter2@h:2379/p",  # a password with a slash: still never repeated
        "etcds://me:hunter2@h:2379",
    ],
)
def test_a_name_holding_credentials_is_refused_without_repeating_them(text: str) -> None:
    with pytest.raises(ValueError, match="names credentials") as refused:
        parse_store_url(text)
    message = str(refused.value)
    assert "hun" not in message
    assert "memkeeper@" not in message
    assert "***@h:2379" in message
    assert "MEMKEEPER_ETCD_USER and MEMKEEPER_ETCD_PASSWORD_FILE" in message


def test_a_url_is_not_hashable() -> None:
    with pytest.raises(TypeError, match="unhashable"):
        hash(parse_store_url("etcd://h:2379/p"))


URL = "etcd://127.0.0.1:2379/team"
POLICY_LINES = [
    (None, None),
    (b"", None),
    (b"version: 1\nfiles: []\n", None),
    (b"store: etcd://127.0.0.1:2379/team\n", URL),
    (b"version: 1\nstore: etcd://127.0.0.1:2379/team\nfiles: []\n", URL),
    (b"store:etcd://127.0.0.1:2379/team", URL),  # no blank, no final newline
    (b"store: \tetcd://127.0.0.1:2379/team \t\n", URL),
    (b"store: etcd://127.0.0.1:2379/team  # the fleet's\n", URL),
    (b"store: 'etcd://127.0.0.1:2379/team'\n", URL),
    (b'store: "etcd://127.0.0.1:2379/team" # quoted\n', URL),
    (b"store: 'has # inside'\n", "has # inside"),
    (b"store: anything-at-all\n", "anything-at-all"),  # as written: parse_store_url judges it
    (b"store:\n", None),
    (b"store: # not yet\n", None),
    (b"store: ''\n", ""),
    (b"store:\n  etcd://127.0.0.1:2379/team\n", None),  # not on the key's line
    (b"store: etcd://127.0.0.1:2379/team extra\n", None),
    (b"store: 'unterminated\n", None),
    (b"  store: etcd://127.0.0.1:2379/team\n", None),  # not at the top level
    (b"leases:\n  store: etcd://127.0.0.1:2379/team\n", None),
    (b"restore: etcd://127.0.0.1:2379/team\n", None),
    (b"# store: etcd://127.0.0.1:2379/team\n", None),
    (b"store: etcd://h:1/caf\xc3\xa9\n", "etcd://h:1/caf\u00e9"),
    (b"store: etcd://h:1/\xff\n", "etcd://h:1/\ufffd"),
]


@pytest.mark.parametrize(("policy", "found"), POLICY_LINES)
def test_the_policys_store_line_is_found_on_its_own_line_at_the_top_level(
    policy: bytes | None, found: str | None
) -> None:
    assert policy_store(policy) == found


def test_a_store_line_ending_in_crlf_is_found() -> None:
    assert policy_store(b"version: 1\r\nstore: etcd://127.0.0.1:2379/team\r\n") == URL


def test_the_first_top_level_store_line_wins() -> None:
    policy = b"store: etcd://a:1/first\nstore: etcd://b:2/second\n"
    assert policy_store(policy) == "etcd://a:1/first"
