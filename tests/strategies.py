"""Hypothesis strategies shared by the property tests."""

from __future__ import annotations

from hypothesis import strategies as st

from tests.markdown.test_sections_props import documents

__all__ = ["body_texts", "documents"]

# Lines a body may hold, including every kind that can move a heading boundary.
body_line = st.one_of(
    st.sampled_from(["", "plain text", "- list item", "1. step", "> quote", "    indented code"]),
    st.sampled_from(["# heading", "## Sub", "  ### spaced", "#nospace", "\\# escaped"]),
    st.sampled_from(["===", "---", "- - -", "***", "```", "```py", "~~~", "<div>", "</div>"]),
    st.sampled_from(["<!-- c -->", "<!--", "<!-- memkeeper:section id=x -->", "[ref]: /u"]),
    st.sampled_from(["> # quoted heading", "- # listed heading", "text <b>bold</b>", "é 日本"]),
    st.text(alphabet=st.sampled_from("ab #=-`~<>[]:*\t"), max_size=8),
)


@st.composite
def body_texts(draw: st.DrawFn) -> str:
    """Section bodies built from hostile line kinds, with varied line endings."""
    lines = draw(st.lists(body_line, max_size=6))
    endings = [draw(st.sampled_from(["\n", "\r\n", "\r"])) for _ in lines]
    text = "".join(a + b for a, b in zip(lines, endings, strict=True))
    return text if draw(st.booleans()) else text.rstrip("\r\n")
