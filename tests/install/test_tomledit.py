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


# -- a user's file, every byte it does not own kept ------------------------------------------------

# Comments everywhere, odd spacing, inline tables, a multi-line array with a trailing comma,
# and a comment introducing the table after ours.
BEFORE = """# Codex settings for this project
model   =   "gpt-5.5-codex"   # the team's model
approval_policy='on-request'
tools = { web_search = true,  view_image=false }   # an inline table

[ mcp_servers.docs ]   # a spaced header
command='npx'
args = [ "-y",
   "mcp-docs-server", ]   # a trailing comma

# our server, registered by hand before
"""
OLD_TABLE = """[mcp_servers.memkeeper]
command = "memkeeper"   # found on PATH
args = ["mcp"]
"""
AFTER = """
# the profiles follow
[profiles.fast]
model="o4-mini"
sandbox = {mode="read-only"}
"""
USERS = BEFORE + OLD_TABLE + AFTER


def test_editing_one_table_keeps_every_byte_around_it() -> None:
    """Only the table's own lines change: the comment and blank line before the next table
    are that table's (tomlkit, tried in this module's place, drops them with ours)."""
    updated = put(USERS, PATH, OURS, "c.toml")
    assert updated == BEFORE + table(PATH, OURS) + AFTER
    assert tomllib.loads(updated)["profiles"] == tomllib.loads(USERS)["profiles"]
    assert drop(updated, PATH, "c.toml") == BEFORE + AFTER


def test_adding_the_table_to_a_users_file_only_appends() -> None:
    theirs = BEFORE + AFTER
    added = put(theirs, PATH, OURS, "c.toml")
    assert added == theirs + "\n" + table(PATH, OURS)
    assert drop(added, PATH, "c.toml") == theirs
