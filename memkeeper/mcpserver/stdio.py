"""The stdio transport of ``memkeeper mcp``: the SDK's, without its thread hops.

The SDK's ``mcp.server.stdio.stdio_server`` reads stdin and writes stdout through anyio's
file wrapper, each ``readline``, ``write`` and ``flush`` a hop to a worker thread and back:
three hops a call, about 1 ms of a tool call's round trip on a loaded machine (more than
the tool itself). When stdin and stdout are pipes or sockets (as an MCP host spawns a
server) and the loop is asyncio's, this transport reads and writes them on the event loop
itself, and hands the server the same thing the SDK's does: a stream of ``SessionMessage``
(or the ``Exception`` a line failed to parse with) in, a stream of ``SessionMessage`` out,
one JSON-RPC message a line, parsed and printed as the SDK does. Anything else (a terminal,
a file, trio) gets the SDK's own transport.

As the SDK's does, it takes fd 0 and 1 for the wire while it serves: fd 0 reads the null
device and fd 1 writes to stderr, so a stray ``print`` or a child process cannot corrupt the
protocol; both come back on exit. An answer is in the pipe before the next is written (the
write buffer's high-water mark is 0), as with the SDK's flush after every message.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import stat
from typing import TYPE_CHECKING

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

    Streams = tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage],
    ]

LINE_CHUNK = 1 << 20  # a longer line is read in pieces of this size (the reader's limit)


def on_pipes() -> bool:
    """Whether this transport can serve: an asyncio loop, stdin and stdout pipes or sockets."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # another event loop (trio)
        return False
    for fd in (0, 1):
        try:
            mode = os.fstat(fd).st_mode
        except OSError:
            return False
        if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
            return False
    return True


@contextlib.asynccontextmanager
async def stdio() -> AsyncIterator[Streams]:
    """This transport's streams when it can serve (``on_pipes``), else the SDK's own."""
    if not on_pipes():
        async with stdio_server() as sdk:
            yield sdk  # the SDK's context streams: the same protocol as these
        return
    async with _wire() as (wire_in, wire_out):
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=LINE_CHUNK, loop=loop)
        source = os.fdopen(_dup(wire_in), "rb", buffering=0)
        inbound, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), source
        )
        sink = os.fdopen(_dup(wire_out), "wb", buffering=0)
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sink)
        transport.set_write_buffer_limits(high=0)  # drain() waits until the pipe has it all
        writer = asyncio.StreamWriter(transport, protocol, None, loop)

        read_sender, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception]()
        write_stream, write_receiver = anyio.create_memory_object_stream[SessionMessage]()

        async def stdin_reader() -> None:
            async with read_sender:
                while line := await _line(reader):
                    try:
                        text = line.decode("utf-8", errors="replace")  # as the SDK reads it
                        message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
                    except Exception as exc:  # the server answers what it can (the SDK's way)
                        await read_sender.send(exc)
                        continue
                    await read_sender.send(SessionMessage(message))

        async def stdout_writer() -> None:
            try:
                async with write_receiver:
                    async for session_message in write_receiver:
                        json = session_message.message.model_dump_json(
                            by_alias=True, exclude_unset=True
                        )
                        writer.write(json.encode("utf-8") + b"\n")
                        await writer.drain()
            except ConnectionError:  # the client closed its end: nothing more can be said
                pass
            finally:
                transport.close()

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(stdin_reader)
                tg.start_soon(stdout_writer)
                yield read_stream, write_stream
        finally:
            inbound.close()
            transport.close()


async def _line(reader: asyncio.StreamReader) -> bytes:
    """The next line with its newline (the last may have none); ``b""`` at the end."""
    parts: list[bytes] = []
    while True:
        try:
            parts.append(await reader.readuntil(b"\n"))
            return b"".join(parts)
        except asyncio.LimitOverrunError as exc:  # longer than LINE_CHUNK: take what is there
            parts.append(await reader.readexactly(exc.consumed))
        except asyncio.IncompleteReadError as exc:
            parts.append(exc.partial)
            return b"".join(parts)


@contextlib.asynccontextmanager
async def _wire() -> AsyncIterator[tuple[int, int]]:
    """Private descriptors of the wire (stdin, stdout); fd 0 reads the null device and fd 1
    writes to stderr meanwhile, and both are the wire again afterwards."""
    wire_in, wire_out = _dup(0), _dup(1)
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        try:
            os.dup2(null, 0)
        finally:
            os.close(null)
        os.dup2(2, 1)
        yield wire_in, wire_out
    finally:
        for fd, wire in ((0, wire_in), (1, wire_out)):
            with contextlib.suppress(OSError):
                os.set_blocking(wire, True)  # the loop made the pipe non-blocking
                os.dup2(wire, fd)
            os.close(wire)


def _dup(fd: int) -> int:
    """A close-on-exec duplicate above the standard descriptors."""
    return fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
