"""What git stores of a generated page: rendered regions as the placeholder, the rest as is;
and the way back (``restore``) for the daemon and ``regen``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memkeeper.errors import Invalid
from memkeeper.regions.gitform import PLACEHOLDER, is_placeholder, restore, stored
from memkeeper.regions.markers import fill, parse

START = b"<!-- memkeeper:generated source=claims -->\n"
EVENTS = b"<!-- memkeeper:generated source=events -->\n"
END = b"<!-- memkeeper:end -->\n"


def rendered(*texts: str, crlf: bool = False) -> bytes:
    """A page of notes around one region per text, each rendered with that text."""
    data = b"# Status\n\nNotes stay.\n\n" + START + b"\n" + END + b"\nMore notes.\n"
    if len(texts) > 1:
        data += b"\n" + EVENTS + END
    if crlf:
        data = data.replace(b"\n", b"\r\n")
    ids = ("claims", "events")
    return fill(data, parse(data, "p.md"), dict(zip(ids, texts, strict=False)))


def test_a_rendered_region_is_stored_as_the_placeholder_and_the_notes_as_they_are() -> None:
    page = rendered("| agent | mode |\n| a1 | write |\n")
    out = stored(page, "p.md")
    assert PLACEHOLDER.encode() in out
    assert b"a1" not in out
    assert out.startswith(b"# Status\n\nNotes stay.\n\n" + START)
    assert out.endswith(b"\nMore notes.\n")
    (region,) = parse(out, "p.md")
    assert is_placeholder(region, out)
    assert not region.edited(out)  # a valid rendered page: check passes it


def test_the_stored_form_does_not_depend_on_what_was_rendered() -> None:
    assert stored(rendered("one claim\n"), "p.md") == stored(rendered("two\nclaims\n"), "p.md")


def test_a_hand_edited_region_and_one_never_rendered_are_stored_as_they_are() -> None:
    page = rendered("rendered\n").replace(b"rendered\n", b"a human wrote this\n")
    assert stored(page, "p.md") == page
    never = b"# S\n" + START + b"draft\n" + END
    assert stored(never, "p.md") == never


def test_a_page_without_regions_is_stored_byte_for_byte() -> None:
    assert stored(b"# Notes\n\nplain\n", "p.md") == b"# Notes\n\nplain\n"


def test_broken_markers_are_invalid_for_the_caller_to_decide() -> None:
    with pytest.raises(Invalid):
        stored(b"# S\n" + START + b"no end\n", "p.md")


def test_line_endings_are_kept() -> None:
    out = stored(rendered("x\n", crlf=True), "p.md")
    assert PLACEHOLDER.encode() + b"\r\n" in out
    assert b"\n" not in out.replace(b"\r\n", b"")


def test_restore_puts_back_what_each_region_held() -> None:
    live = rendered("claims now\n", "events now\n")
    assert restore(stored(live, "p.md"), live, "p.md") == live


def test_restore_keeps_the_notes_git_changed_and_leaves_unknown_regions_as_placeholders() -> None:
    live = rendered("claims now\n")
    checked_out = stored(rendered("older\n", "older events\n"), "p.md")
    checked_out = checked_out.replace(b"Notes stay.", b"Notes from the other branch.")
    out = restore(checked_out, live, "p.md")
    assert b"Notes from the other branch." in out
    assert b"claims now" in out
    claims, events = parse(out, "p.md")
    assert not claims.edited(out)
    assert is_placeholder(events, out)  # the live page had no events region to take it from


def test_restore_changes_nothing_without_placeholders_or_with_broken_markers() -> None:
    live = rendered("claims now\n")
    other = rendered("git's own snapshot\n")
    assert restore(other, live, "p.md") == other
    broken = stored(live, "p.md") + START
    assert restore(broken, live, "p.md") == broken


@given(st.lists(st.text(st.characters(exclude_categories=["Cs"]), max_size=40), max_size=2))
def test_storing_is_idempotent_and_restore_inverts_it(texts: list[str]) -> None:
    lines = [t.replace("<", "&lt;").replace("\r", " ") for t in texts]
    live = rendered(*lines) if lines else rendered()
    once = stored(live, "p.md")
    assert stored(once, "p.md") == once
    assert stored(restore(once, live, "p.md"), "p.md") == once
