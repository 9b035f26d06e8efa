"""Codex's ``config.toml``: memkeeper's table appended or rewritten as text, the user's bytes
kept, taken out again exactly, and refused where the table is spelled another way."""

from __future__ import annotations

import tomllib

import pytest

from memkeeper.errors import Invalid
from memkeeper.install.tomledit import drop, put, table

PATH = ("mcp_servers", "memkeeper")
OURS = {"command": "sh", "args": ["-c", 'exec "$m" mcp']}
CONFIG = """# Codex settings (checked in)
model = "gpt-5.5-codex"   # the team's model

[mcp_servers.docs]
command = "npx"
args = ["-y", "mcp-docs-server"]
"""


def test_the_table_is_appended_after_a_blank_line_and_dropped_exactly() -> None:
    added = put(CONFIG, PATH, OURS, ".codex/config.toml")
    assert added == CONFIG + "\n" + table(PATH, OURS)
    assert tomllib.loads(added)["mcp_servers"]["memkeeper"] == OURS
    assert put(added, PATH, OURS, ".codex/config.toml") == added
    assert drop(added, PATH, ".codex/config.toml") == CONFIG


@pytest.mark.parametrize("text", ["", 'model = "x"', 'model = "x"\n\n'])
def test_any_ending_comes_back(text: str) -> None:
    added = put(text, PATH, OURS, "c.toml")
    assert tomllib.loads(added)["mcp_servers"]["memkeeper"] == OURS
    back = drop(added, PATH, "c.toml")
    assert back == (text + "\n" if text == 'model = "x"' else text)  # a last line gets its end


def test_the_table_is_rewritten_where_it_stands_and_what_follows_it_stays() -> None:
    text = (
        CONFIG + '\n[mcp_servers.memkeeper]\ncommand = "memkeeper"\n\n# next\n[features]\nx = 1\n'
    )
    updated = put(text, PATH, OURS, "c.toml")
    assert updated == CONFIG + "\n" + table(PATH, OURS) + "\n# next\n[features]\nx = 1\n"
    assert drop(updated, PATH, "c.toml") == CONFIG + "\n# next\n[features]\nx = 1\n"


def test_a_quoted_header_is_the_same_table() -> None:
    text = '[mcp_servers."memkeeper"]\ncommand = "old"\n'
    assert put(text, PATH, OURS, "c.toml") == table(PATH, OURS)


@pytest.mark.parametrize(
    "text",
    [
        'mcp_servers = { memkeeper = { command = "old" } }\n',
        '[mcp_servers]\nmemkeeper.command = "old"\n',
        '[mcp_servers.memkeeper]\ncommand = "old"\n[mcp_servers.memkeeper.env]\nA = "1"\n',
    ],
)
def test_a_table_spelled_another_way_is_refused_with_what_to_do(text: str) -> None:
    with pytest.raises(Invalid, match=r"\[mcp_servers\.memkeeper\] is written in a way"):
        put(text, PATH, OURS, "c.toml")


def test_toml_that_does_not_parse_is_a_usage_error() -> None:
    with pytest.raises(Invalid, match=r"^c\.toml: not valid TOML"):
        put("model = \n", PATH, OURS, "c.toml")
