"""JSONC read as JSON: comments, trailing commas and a byte-order mark blanked to spaces of
the same length, line breaks and every offset kept, strings left alone."""

from __future__ import annotations

import json

from memkeeper.gate.jsonc import blank, scan


def test_comments_trailing_commas_and_a_bom_are_blanked_to_spaces_of_the_same_length() -> None:
    text = '\ufeff{\n  // a "quoted" comment\n  "a": "http://x/*y*/", /* b\nc */ "d": [1,],\n}\n'
    plain = blank(text)
    assert len(plain) == len(text)
    assert [i for i, c in enumerate(plain) if c == "\n"] == [
        i for i, c in enumerate(text) if c == "\n"
    ]
    assert json.loads(plain) == {"a": "http://x/*y*/", "d": [1]}


def test_the_trailing_commas_blanked_are_reported_where_they_were() -> None:
    text = '{"a": [1, 2,], "b": {"c": 3 ,} , "d": ",}"}'
    plain, commas = scan(text)
    assert plain == blank(text)
    assert sorted(commas) == [text.index(",]"), text.index(" ,}") + 1]
    assert json.loads(plain) == {"a": [1, 2], "b": {"c": 3}, "d": ",}"}


def test_an_unterminated_string_or_comment_runs_to_the_end() -> None:
    assert blank('{"a": "x // y') == '{"a": "x // y'
    assert blank("[1] /* open") == "[1]" + " " * 8
