"""A scripted Anthropic Messages API on 127.0.0.1, for driving the real Claude Code CLI offline:
``POST /v1/messages`` answers the next step of a script (tool calls, or a final text) — as
server-sent events when the request says ``stream: true``, else as one JSON message — and
every request body is kept, so a test can assert what the model was sent (a hook's
``additionalContext``, a tool's result, a deny reason). Other paths get a harmless ``{}``.

Claude Code also sends side requests of its own (a title, a quota probe); only requests that
offer tools are the session's turns and advance the script: the others are answered with a
short text and logged apart.
"""

from __future__ import annotations

import http.server
import itertools
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

Body = dict[str, Any]


@dataclass(frozen=True)
class Text:
    """A final answer: the turn ends."""

    text: str


@dataclass(frozen=True)
class Tool:
    """One call of the tool ``name`` with ``input``: Claude Code runs it and sends the result."""

    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class Again:
    """What a step's function answers when it is not time for it yet (a tool it needs is not
    offered yet): ``reply`` now, and the same step again on the next turn."""

    reply: Reply


@dataclass(frozen=True)
class Call:
    """A tool call the model made, and what came back."""

    name: str
    input: dict[str, Any]
    result: str
    error: bool


@dataclass(frozen=True)
class Tools:
    """Several tool calls in one message: Claude Code may run them at once."""

    tools: tuple[Tool, ...]


Reply = Text | Tool | Tools
# A step of a script: a reply, or a function of the request (its body) that makes one.
Step = Reply | Callable[[Body], Reply | Again]
_ids = itertools.count(1)


@dataclass
class FakeModel:
    """The server; ``with FakeModel(steps) as model:`` serves ``model.url`` until the block
    ends. ``turns``: the bodies of the requests that took a step; ``others``: the rest."""

    steps: Sequence[Step]
    turns: list[Body] = field(default_factory=list)
    others: list[Body] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _next: int = 0
    _server: http.server.ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None, "not serving"
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeModel:
        model = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b"{}"
                if self.path.split("?")[0].rstrip("/").endswith("/v1/messages"):
                    body = json.loads(raw)
                    _answer(self, body, model.reply(body))
                else:
                    _json(self, {})

            def do_GET(self) -> None:
                _json(self, {})

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet: the test reads the bodies, not a log

        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    def reply(self, body: Body) -> Reply:
        """The answer to one request: the script's next step for a turn (the last text again
        once the script has run out), a short text for a side request."""
        if not body.get("tools"):
            with self._lock:
                self.others.append(body)
            return Text("ok")
        with self._lock:
            self.turns.append(body)
            index = self._next
            self._next += 1
        if index >= len(self.steps):
            return Text("done")
        step = self.steps[index]
        made = step(body) if callable(step) else step
        if isinstance(made, Again):
            with self._lock:
                self._next = index
            return made.reply
        return made

    def sent(self, turn: int) -> str:
        """Everything the model was sent in turn ``turn`` (0-based) as one string: the
        system prompt and every message's text, tool results included."""
        return "\n".join(_texts(self.turns[turn]))

    def calls(self) -> list[Call]:
        """Every tool call of the session so far, in order, with its result (as the last
        request carries the conversation)."""
        if not self.turns:
            return []
        blocks = [
            block
            for message in self.turns[-1].get("messages", [])
            if isinstance(message.get("content"), list)
            for block in message["content"]
            if isinstance(block, dict)
        ]
        done = {b["tool_use_id"]: b for b in blocks if b.get("type") == "tool_result"}
        return [
            Call(
                b["name"],
                b["input"],
                "\n".join(_texts(done[b["id"]].get("content", ""))),
                bool(done[b["id"]].get("is_error")),
            )
            for b in blocks
            if b.get("type") == "tool_use" and b["id"] in done
        ]


def offers(body: Body, tool: str) -> bool:
    """Whether the request offers the model ``tool``."""
    return any(t.get("name") == tool for t in body.get("tools", []))


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in ("tools", "input_schema"):
                yield from _texts(item)


def last_tool_result(body: Body) -> str:
    """The text of the last tool result in a request (what the last tool call gave)."""
    for message in reversed(body.get("messages", [])):
        content = message.get("content")
        if isinstance(content, list):
            for block in reversed(content):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    return "\n".join(_texts(block.get("content", "")))
    return ""


def _message(body: Body, reply: Reply) -> tuple[Body, list[dict[str, Any]], str]:
    """The message's envelope, its content blocks, and the stop reason."""
    envelope = {
        "id": f"msg_fake{next(_ids)}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "fake"),
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    if isinstance(reply, Text):
        return envelope, [{"type": "text", "text": reply.text}], "end_turn"
    tools = reply.tools if isinstance(reply, Tools) else (reply,)
    blocks = [
        {"type": "tool_use", "id": f"toolu_fake{next(_ids)}", "name": t.name, "input": t.input}
        for t in tools
    ]
    return envelope, blocks, "tool_use"


def _block_events(index: int, block: dict[str, Any]) -> list[tuple[str, Body]]:
    """One content block streamed: its start, one delta with all of it, its stop."""
    if block["type"] == "tool_use":
        start = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    else:
        start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
    return [
        (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        ),
        ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": index}),
    ]


def _answer(handler: http.server.BaseHTTPRequestHandler, body: Body, reply: Reply) -> None:
    envelope, blocks, stop = _message(body, reply)
    if not body.get("stream"):
        _json(handler, {**envelope, "content": blocks, "stop_reason": stop})
        return
    end = {"stop_reason": stop, "stop_sequence": None}
    events = [
        ("message_start", {"type": "message_start", "message": envelope}),
        *(event for index, block in enumerate(blocks) for event in _block_events(index, block)),
        ("message_delta", {"type": "message_delta", "delta": end, "usage": {"output_tokens": 1}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    stream = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Content-Length", str(len(stream.encode())))
    handler.end_headers()
    handler.wfile.write(stream.encode())


def _json(handler: http.server.BaseHTTPRequestHandler, data: Body) -> None:
    raw = json.dumps(data).encode()
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)
