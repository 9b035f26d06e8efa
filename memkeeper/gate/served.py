"""The gate served over HTTP by ``memkeeper watch`` (docs/reference.md §4.18, §7): Claude
Code's ``type: "http"`` hooks POST the JSON a command hook reads on stdin to
``http://127.0.0.1:PORT/hook/claude-code``, and get the answer the command hook prints —
``gate.hook.run`` itself answers, in this process, so a tool call costs a local round trip
instead of starting Python.

``answer`` judges one request (pure but for the gate it calls): only a POST to the hook's
path, with the loopback Host of our port (a page another site serves cannot reach us through
DNS rebinding), no Origin (browsers send one; Claude Code does not), a body within
``MAX_BODY`` and the token (``Authorization: Bearer``, compared in constant time). Claude Code
lets a call through on any non-2xx answer, so where a pre-tool call could be meant the
refusal is a 200 with a deny instead: a stale token in the settings denies edits rather than
letting them pass unchecked. ``serving`` is the shell: the standard library's threading HTTP
server on the loopback address, and the ``flock`` on ``gate.lock`` held exactly while it
answers, which the command hook tests to step aside (``install.command``).
"""

from __future__ import annotations

import contextlib
import hmac
import io
import json
import os
from dataclasses import dataclass, field

from memkeeper.fs.gateconfig import HOST, LOCK_FILE, PATH, GateConfig
from memkeeper.names import AGENT_ENV

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    # (agent kind, root, body, environ, stderr) -> (exit code, stdout)
    Gate = Callable[[str, str | None, bytes, Mapping[str, str], io.StringIO], tuple[int, str]]

MAX_BODY = 32 * 1024 * 1024  # a Write of a whole file is in the body: far above any memory file
AGENT_HEADER = "x-memkeeper-agent"  # $MEMKEEPER_AGENT of the agent's environment, if set
ROOT_HEADER = "x-memkeeper-root"  # $MEMKEEPER_ROOT of the agent's environment, if set
SERVED_AGENTS = ("claude-code",)  # the agents with HTTP hooks
IDLE_S = 30.0
_LOOPBACK = ("127.0.0.1", "localhost")


@dataclass(frozen=True, slots=True)
class Request:
    method: str
    path: str
    headers: Mapping[str, str]  # names in lower case
    body: bytes = b""


@dataclass(frozen=True, slots=True)
class Reply:
    status: int
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = field(default=(("Content-Type", "application/json"),))


def deny(reason: str) -> Reply:
    """A 200 whose body is Claude Code's PreToolUse deny for ``reason``."""
    out = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": f"memkeeper's served gate: {reason}",
        }
    }
    return Reply(200, json.dumps(out).encode())


def refused(status: int, what: str) -> Reply:
    return Reply(status, json.dumps({"error": what}).encode())


def precheck(request: Request, config: GateConfig) -> Reply | None:
    """The refusal of a request by its line and headers alone (None: read its body)."""
    if request.method != "POST":
        return refused(405, "only POST")
    host, _, port = request.headers.get("host", "").rpartition(":")
    if host not in _LOOPBACK or port != str(config.port):
        return refused(403, "the Host header must name this port on the loopback address")
    if "origin" in request.headers:
        return refused(403, "requests from web pages are refused")
    if agent_of(request.path) is None:
        return refused(404, f"POST {PATH}/AGENT, AGENT one of {', '.join(SERVED_AGENTS)}")
    length = request.headers.get("content-length", "")
    if not (length.isascii() and length.isdigit()):
        return refused(411, "a Content-Length is needed")
    if int(length) > MAX_BODY:
        why = f"the hook input is over {MAX_BODY} bytes; the call is denied unchecked"
        return deny(why) if authorized(request, config) else refused(413, "too large")
    return None


def answer(request: Request, config: GateConfig, gate: Gate, log: Callable[[str], None]) -> Reply:
    """The reply to a whole request (``precheck`` passed): the gate's answer to its body,
    given the agent's identity and root as the headers carry them."""
    agent = agent_of(request.path) or ""
    if not authorized(request, config):
        if _pre_tool(request.body):
            return deny(
                "the request's token is not this machine's — run memkeeper install-hooks "
                "claude-code --served, then restart the session"
            )
        return refused(401, "Authorization: Bearer TOKEN (the served gate's) is needed")
    environ = {AGENT_ENV: who} if (who := _header(request, AGENT_HEADER)) else {}
    stderr = io.StringIO()
    try:
        root = _header(request, ROOT_HEADER) or None
        code, stdout = gate(agent, root, request.body, environ, stderr)
    except Exception as exc:  # the gate's own boundary failed: deny, never a 5xx (= allow)
        log(f"memkeeper watch: the served gate failed ({type(exc).__name__}: {exc})")
        return deny(f"the gate failed ({type(exc).__name__}: {exc})")
    if stderr.getvalue():
        log(stderr.getvalue().rstrip("\n"))
    if code != 0:  # an exit code the agent reads as a refusal: say it as one
        return deny(stderr.getvalue().strip() or f"the gate exited {code}")
    return Reply(200, stdout.encode())


def agent_of(path: str) -> str | None:
    prefix, _, agent = path.partition("?")[0].rpartition("/")
    return agent if prefix == PATH and agent in SERVED_AGENTS else None


def authorized(request: Request, config: GateConfig) -> bool:
    given = request.headers.get("authorization", "")
    expected = f"Bearer {config.token}"
    return hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode())


def _header(request: Request, name: str) -> str:
    """A header carrying an environment variable: "" when the agent had none to put in it
    (Claude Code leaves a variable it did not interpolate as ``$NAME``)."""
    value = request.headers.get(name, "").strip()
    return "" if value.startswith("$") else value


def _pre_tool(body: bytes) -> bool:
    try:
        payload = json.loads(body)
    except ValueError:
        return True  # unreadable: it could be one
    return not isinstance(payload, dict) or payload.get("hook_event_name") == "PreToolUse"


def run_gate(
    agent: str, root: str | None, body: bytes, environ: Mapping[str, str], stderr: io.StringIO
) -> tuple[int, str]:
    """``memkeeper hook AGENT`` in this process: its exit code and what it printed."""
    from memkeeper.gate.hook import run

    stdout = io.StringIO()
    code = run(agent, root, None, io.BytesIO(body), stdout, stderr, environ=environ)
    return code, stdout.getvalue()


# -- the shell: a threading HTTP server on the loopback address ---------------------------------


@contextlib.contextmanager
def serving(
    home: str, config: GateConfig, log: Callable[[str], None], gate: Gate = run_gate
) -> Iterator[int]:
    """Serve the gate on ``config.port`` (yields the port) while holding ``home``'s
    ``gate.lock``; the lock is let go before the server stops, so the command hook never
    steps aside for a server that no longer answers."""
    import fcntl
    import threading

    from memkeeper.errors import EnvironmentFailure

    try:
        server = _server(config, log, gate)
    except OSError as exc:
        raise EnvironmentFailure(
            f"cannot serve the gate on {HOST}:{config.port} ({exc.strerror}) — stop what "
            f"listens there, or delete {home}/gate.json and run memkeeper install-hooks "
            "claude-code --served again (a new port and token)"
        ) from exc
    thread = threading.Thread(target=server.serve_forever, name="served-gate", daemon=True)
    fd = os.open(os.path.join(home, LOCK_FILE), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        # blocking: a command hook's guard holds it for an instant (flock -n … true)
        fcntl.flock(fd, fcntl.LOCK_EX)
        thread.start()
        yield server.server_address[1]
    finally:
        os.close(fd)
        if thread.is_alive():
            server.shutdown()
        server.server_close()


def _server(config: GateConfig, log: Callable[[str], None], gate: Gate) -> _Server:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = IDLE_S  # a connection that stalls (or idles between calls) is dropped

        def do_POST(self) -> None:
            self._reply(self._judge())

        do_GET = do_PUT = do_DELETE = do_HEAD = do_OPTIONS = do_PATCH = do_POST

        def _judge(self) -> Reply:
            headers = {name.lower(): value for name, value in self.headers.items()}
            request = Request(self.command, self.path, headers)
            early = precheck(request, config)
            if early is not None:
                self.close_connection = True
                return early
            body = self.rfile.read(int(headers["content-length"]))
            try:
                return answer(Request(self.command, self.path, headers, body), config, gate, log)
            except Exception as exc:  # never a 5xx, which Claude Code takes for an allow
                return deny(f"the gate failed ({type(exc).__name__}: {exc})")

        def _reply(self, reply: Reply) -> None:
            self.send_response(reply.status)
            for name, value in reply.headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(reply.body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # one line per tool call would drown the daemon's own output

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        allow_reuse_address = True

    return Server((HOST, config.port), Handler)


if TYPE_CHECKING:
    from http.server import ThreadingHTTPServer as _Server
