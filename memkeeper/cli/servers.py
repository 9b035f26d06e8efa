"""The CLI verbs that serve a protocol until the client leaves (docs/reference.md §4): ``mcp``.
Their extras are imported only when they run; without the extra, a clear error says what to
install."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memkeeper.errors import EnvironmentFailure

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable

    Verb = Callable[[str, str], argparse.ArgumentParser]


def add_verbs(verb: Verb) -> None:
    """Declare the verbs with ``verb(name, help)`` (which adds the common options)."""
    verb("mcp", "serve memkeeper's tools over MCP on stdio (extra: memkeeper[mcp])")


def run_mcp(args: argparse.Namespace) -> int:
    """Serve MCP on stdio until the client closes it; stdout belongs to the protocol."""
    try:
        from memkeeper.mcpserver.server import serve
    except ImportError as exc:
        if exc.name is None or not exc.name.startswith(("mcp", "pydantic", "anyio")):
            raise
        raise EnvironmentFailure(
            f"memkeeper mcp needs the MCP SDK ({exc.name} is not installed) — "
            "install it with: pip install 'memkeeper[mcp]'"
        ) from None
    return serve(args.root, args.agent)


COMMANDS: dict[str, object] = {}  # `mcp` owns stdout: cli.main runs it before any payload
