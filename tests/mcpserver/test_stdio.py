"""memkeeper's stdio transport in this process: its line reader takes lines of any length,
the last one with or without a newline. The transport over the real ``memkeeper mcp``'s
pipes: tests/e2e/test_mcp_stdio.py."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is not installed: pip install 'memkeeper[mcp]'")

from memkeeper.mcpserver import stdio


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"a\nbb\n", [b"a\n", b"bb\n"]),
        (b"x" * 40 + b"\nlast", [b"x" * 40 + b"\n", b"last"]),  # longer than the limit
        (b"y" * 40, [b"y" * 40]),
        (b"", []),
    ],
)
def test_lines_of_any_length_and_the_last_without_a_newline(
    data: bytes, expected: list[bytes]
) -> None:
    async def read_all() -> list[bytes]:
        reader = asyncio.StreamReader(limit=16)
        reader.feed_data(data)
        reader.feed_eof()
        found = []
        while line := await stdio._line(reader):
            found.append(line)
        return found

    assert asyncio.run(read_all()) == expected
