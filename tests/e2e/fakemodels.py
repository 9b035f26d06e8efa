"""Scripted model servers on 127.0.0.1 for running real agent CLIs offline: each answers the
first turn with one shell tool call running ``command``, every later turn with a final text,
and keeps each request's body (so a test reads what the tool call returned to the model —
a gate's refusal, or the command's output).

``Anthropic``: the Messages API as Claude Code speaks it (``POST /v1/messages``, SSE when
``stream``), the call a ``Bash`` ``tool_use``. ``Responses``: OpenAI's Responses API as
Codex speaks it (``POST /v1/responses``, SSE), the call an ``exec_command`` ``function_call``.
``Gemini``: ``generateContent`` / ``streamGenerateContent`` as Gemini CLI speaks it, the call
a ``run_shell_command`` ``functionCall``. Any other path gets a harmless empty answer.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import TracebackType


def sse(events: list[dict[str, Any]]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


class Scripted:
    """A server thread answering from a script; use as a context manager."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.bodies: list[dict[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return None

            def do_GET(self) -> None:
                self._send(200, "application/json", b"{}")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length") or 0))
                body = json.loads(raw or b"{}")
                owner.bodies.append(body)
                answer = owner.answer(self.path, body)
                if answer is None:
                    self._send(200, "application/json", b'{"input_tokens": 1, "totalTokens": 1}')
                elif isinstance(answer, dict):
                    if "streamGenerateContent" in self.path:
                        data = b"data: " + json.dumps(answer).encode() + b"\r\n\r\n"
                        self._send(200, "text/event-stream", data)
                    else:
                        self._send(200, "application/json", json.dumps(answer).encode())
                else:
                    self._send(200, "text/event-stream", sse(answer))

            def _send(self, code: int, kind: str, data: bytes) -> None:
                self.send_response(code)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def answer(
        self, path: str, body: dict[str, Any]
    ) -> list[dict[str, Any]] | dict[str, Any] | None:
        """SSE events, one JSON object (Gemini's), or None for a harmless empty answer."""
        raise NotImplementedError

    def __enter__(self) -> Scripted:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.server.shutdown()
        self.server.server_close()

    def sent(self) -> Iterator[str]:
        """Every request body as text (where a tool result shows up)."""
        for body in self.bodies:
            yield json.dumps(body)


class Anthropic(Scripted):
    def answer(self, path: str, body: dict[str, Any]) -> list[dict[str, Any]] | None:
        if not path.startswith("/v1/messages") or "count_tokens" in path:
            return None
        messages = body.get("messages") or [{}]
        content = messages[-1].get("content")
        answered = isinstance(content, list) and any(
            isinstance(c, dict) and c.get("type") == "tool_result" for c in content
        )
        if body.get("tools") and not answered:
            block = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}
            delta = {
                "type": "input_json_delta",
                "partial_json": json.dumps({"command": self.command}),
            }
            return _message(block, delta, "tool_use")
        return _message(
            {"type": "text", "text": ""}, {"type": "text_delta", "text": "done"}, "end_turn"
        )


def _message(block: dict[str, Any], delta: dict[str, Any], stop: str) -> list[dict[str, Any]]:
    usage = {"input_tokens": 1, "output_tokens": 1}
    start = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5"}
    return [
        {"type": "message_start", "message": {**start, "content": [], "usage": usage}},
        {"type": "content_block_start", "index": 0, "content_block": block},
        {"type": "content_block_delta", "index": 0, "delta": delta},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": stop}, "usage": usage},
        {"type": "message_stop"},
    ]


class Responses(Scripted):
    def answer(self, path: str, body: dict[str, Any]) -> list[dict[str, Any]] | None:
        if not path.endswith("/responses"):
            return None
        items = body.get("input") or []
        answered = any(
            isinstance(i, dict) and i.get("type") == "function_call_output" for i in items
        )
        if answered:
            text = [{"type": "output_text", "text": "done"}]
            item = {"type": "message", "role": "assistant", "id": "msg_1", "content": text}
        else:
            args = json.dumps({"cmd": self.command})
            item = {
                "type": "function_call",
                "id": "fc_1",
                "call_id": "call_1",
                "name": "exec_command",
                "arguments": args,
            }
        usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
        return [
            {"type": "response.created", "response": {"id": "resp_1"}},
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": {"id": "resp_1", "usage": usage}},
        ]


class Gemini(Scripted):
    def answer(self, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
        if "generatecontent" not in path.lower():
            return None
        contents = body.get("contents") or [{}]
        answered = any("functionResponse" in part for part in contents[-1].get("parts", []))
        config = body.get("generationConfig") or {}
        if body.get("tools") and not answered:
            call = {"name": "run_shell_command", "args": {"command": self.command}}
            parts: list[dict[str, Any]] = [{"functionCall": call}]
        elif config.get("responseMimeType") == "application/json":
            # a side call wanting JSON (Gemini CLI's model router): schema-shaped, else it retries
            parts = [{"text": json.dumps(_shaped(config.get("responseJsonSchema") or {}))}]
        else:
            parts = [{"text": "done"}]
        usage = {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}
        content = {"role": "model", "parts": parts}
        return {
            "candidates": [{"content": content, "finishReason": "STOP", "index": 0}],
            "usageMetadata": usage,
        }


def _shaped(schema: dict[str, Any]) -> Any:
    """A value of the JSON schema's shape (the least one: 1, "x", false, [], each property)."""
    kind = str(schema.get("type", "OBJECT")).upper()
    if kind == "OBJECT":
        properties = schema.get("properties") or {}
        return {name: _shaped(sub) for name, sub in properties.items()}
    return {"INTEGER": 1, "NUMBER": 1, "BOOLEAN": False, "ARRAY": []}.get(kind, "x")
