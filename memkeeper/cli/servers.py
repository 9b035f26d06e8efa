"""The CLI verbs that serve until they are stopped (docs/reference.md §4): ``mcp`` (MCP on
stdio, until the client leaves) and ``serve`` (the dashboard, until SIGINT/SIGTERM). Their
extras are imported only when they run; without the extra, a clear error says what to
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
    serve = verb("serve", "the live dashboard for humans, on 127.0.0.1 (extra: memkeeper[serve])")
    serve.add_argument("--port", type=int, default=8765, help="port (8765; 0: any free one)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
    serve.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a --host other machines can reach (the token is still required)",
    )


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


def run_serve(args: argparse.Namespace) -> int:
    """Serve the dashboard until SIGINT/SIGTERM; its URL, with the token, goes to stdout."""
    try:
        import sse_starlette  # noqa: F401  # the extra, whole: serve() imports these
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401

        from memkeeper.dashboard.serve import serve
    except ImportError as exc:
        if exc.name is None or not exc.name.startswith(("starlette", "uvicorn", "sse_starlette")):
            raise
        raise EnvironmentFailure(
            f"memkeeper serve needs the dashboard's server ({exc.name} is not installed) — "
            "install it with: pip install 'memkeeper[serve]'"
        ) from None
    return serve(
        args.root, args.agent, host=args.host, port=args.port, allow_remote=args.allow_remote
    )


COMMANDS: dict[str, object] = {}  # `mcp` and `serve` own stdout: cli.main runs them first
