"""The serving verbs, in process through ``main(argv)``, never left serving: ``mcp`` takes
only the common options, ``serve`` its ``--port``/``--host``/``--allow-remote`` (8765,
127.0.0.1, off) and hands them to the dashboard. Without an extra's package each verb says
what to install (exit 1, nothing created) instead of crashing; a failed import of anything
else is not taken for a missing extra.

A package is made "not installed" for one test by a real import finder that refuses it,
its cached modules and memkeeper's modules that import it forgotten (all put back after).
"""

from __future__ import annotations

import argparse
import importlib.abc
import importlib.machinery
import sys
import types
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from memkeeper.cli.parser import parse_args
from memkeeper.cli.servers import run_mcp, run_serve
from memkeeper.errors import Invalid
from tests.conftest import run_main

MCP_SERVER = "memkeeper.mcpserver.server"
DASHBOARD = ("memkeeper.dashboard.serve", "memkeeper.dashboard.app")


class NotInstalled(importlib.abc.MetaPathFinder):
    """Finds ``package`` and its modules nowhere, as where it is not installed."""

    def __init__(self, package: str) -> None:
        self.package = package

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: types.ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname == self.package or fullname.startswith(self.package + "."):
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)
        return None


def not_installed(monkeypatch: pytest.MonkeyPatch, package: str, *importers: str) -> None:
    """``package`` not installed for this test; ``importers`` (memkeeper's modules that
    import it) forgotten, so that running the verb imports them again."""
    for name in importers:
        if name in sys.modules:
            parent, _, leaf = name.rpartition(".")
            monkeypatch.setattr(sys.modules[parent], leaf, sys.modules[name])  # put back as is
            monkeypatch.delitem(sys.modules, name)
    for cached in [m for m in sys.modules if m == package or m.startswith(package + ".")]:
        monkeypatch.delitem(sys.modules, cached)
    monkeypatch.setattr(sys, "meta_path", [NotInstalled(package), *sys.meta_path])


# -- the command line ------------------------------------------------------------------------------


def test_serve_listens_on_the_loopback_port_8765_unless_told() -> None:
    args = parse_args(["serve"])
    assert (args.command, args.port, args.host, args.allow_remote) == (
        "serve",
        8765,
        "127.0.0.1",
        False,
    )


def test_serve_reads_its_port_host_and_allow_remote_among_the_common_options() -> None:
    args = parse_args(["--json", "serve", "--port", "0", "--host", "::1", "--allow-remote"])
    assert (args.port, args.host, args.allow_remote, args.json) == (0, "::1", True, True)


def test_mcp_takes_the_common_options_and_none_of_serves() -> None:
    args = parse_args(["mcp", "--agent", "a1", "--root", "/r"])
    assert vars(args) == {
        "root": "/r",
        "agent": "a1",
        "json": False,
        "debug": False,
        "command": "mcp",
    }
    with pytest.raises(Invalid, match=r"^memkeeper: unrecognized arguments: --port 9 "):
        parse_args(["mcp", "--port", "9"])


def test_a_port_that_is_no_number_is_a_usage_error() -> None:
    with pytest.raises(Invalid) as caught:
        parse_args(["serve", "--port", "http"])
    assert caught.value.message == (
        "memkeeper serve: argument --port: invalid int value: 'http' — see memkeeper serve --help"
    )


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--port", "70000"], "--port 70000 is not a port number (0 picks a free one)"),
        (["--host", "10.1.2.3", "--allow-remote", "--port", "-1"], "--port -1 is not a port"),
        (["--host", "::1", "--port", "65536"], "--port 65536 is not a port number"),
        (["--host", "10.1.2.3", "--port", "0"], "--host 10.1.2.3 would let other machines"),
    ],
    ids=["port", "remote-allowed", "loopback-v6", "remote-refused"],
)
def test_serve_hands_its_options_to_the_dashboard(
    tmp_path: Path, options: list[str], says: str
) -> None:
    done = run_main(tmp_path, "serve", *options, "--json")
    assert done.code == 2, done.stdout + done.stderr
    assert done.json["status"] == "invalid"
    assert done.json["message"].startswith(says)
    assert list(tmp_path.iterdir()) == []


# -- without the extras ----------------------------------------------------------------------------


def mcp_sdk_missing(package: str) -> str:
    return (
        f"memkeeper mcp needs the MCP SDK ({package} is not installed) — "
        "install it with: pip install 'memkeeper[mcp]'"
    )


@pytest.mark.parametrize("package", ["mcp", "anyio"])  # what the server imports first
def test_mcp_without_the_sdk_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, package: str
) -> None:
    not_installed(monkeypatch, package, MCP_SERVER)
    done = run_main(tmp_path, "mcp", "--json")
    assert (done.code, done.json) == (1, {"status": "error", "message": mcp_sdk_missing(package)})
    assert list(tmp_path.iterdir()) == []  # no store opened, nothing logged


def test_for_people_the_missing_sdk_is_one_line_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    not_installed(monkeypatch, "mcp", MCP_SERVER)
    done = run_main(tmp_path, "mcp")
    assert (done.code, done.stdout) == (1, "")
    assert done.stderr == f"memkeeper: {mcp_sdk_missing('mcp')}\n"


@pytest.mark.parametrize(
    ("verb", "run", "module"),
    [("mcp", run_mcp, MCP_SERVER), ("serve", run_serve, DASHBOARD[0])],
    ids=["mcp", "serve"],
)
def test_a_module_of_memkeepers_own_failing_to_import_is_no_missing_extra(
    monkeypatch: pytest.MonkeyPatch,
    verb: str,
    run: Callable[[argparse.Namespace], int],
    module: str,
) -> None:
    args = parse_args([verb])
    not_installed(monkeypatch, module, module)
    with pytest.raises(ModuleNotFoundError) as caught:
        run(args)
    assert caught.value.name == module


@pytest.mark.parametrize("package", ["uvicorn", "starlette", "sse_starlette"])
def test_serve_without_the_dashboards_packages_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, package: str
) -> None:
    for name in ("uvicorn", *DASHBOARD):  # for real first: what they import stays as it is
        pytest.importorskip(name, reason="memkeeper[serve] is not installed here")
    not_installed(monkeypatch, package, *DASHBOARD)
    done = run_main(tmp_path, "serve", "--port", "0", "--json")
    assert (done.code, done.json) == (
        1,
        {
            "status": "error",
            "message": f"memkeeper serve needs the dashboard's server ({package} is not "
            "installed) — install it with: pip install 'memkeeper[serve]'",
        },
    )
