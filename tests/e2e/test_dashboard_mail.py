"""The dashboard's messages in a real headless Chromium (docs/reference.md §4.24, §4.28): a
human writes into an agent's inbox from the page — the agent's ``inbox`` has it, from
``human``; a message an agent sends appears without a reload, its text as text (never
markup), and turns "acknowledged" when its recipient acknowledges it; a refused message says
why and sends nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.conftest import run_cli

pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
)

from playwright.sync_api import expect

from tests.e2e.test_dashboard_browser import (  # the served page and its browser
    XSS,
    Served,
    browser,
    no_horizontal_scroll,
    open_dashboard,
    served,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser

AGENT = "claude-code:s1"
__all__ = ["browser", "served"]  # fixtures, imported to be used here


def test_a_human_writes_into_an_agents_inbox_from_the_page(
    served: Served, browser: Browser
) -> None:
    watched = open_dashboard(browser, served.url)
    page = watched.page
    root = served.root

    # an agent's message shows up without a reload, as text
    sent = run_cli(root, "--agent", AGENT, "send", "--to", "human", "--text", XSS)
    assert sent.code == 0, sent.stderr
    row = page.locator("#messages-body tr", has_text=AGENT)
    expect(row).to_be_visible(timeout=3_000)
    expect(row.locator("td.text")).to_have_text(XSS)
    assert page.locator("img").count() == 0

    # the human answers from the form: the agent's inbox has it, from human
    page.fill("#message-to", AGENT)
    page.fill("#message-about", "CLAUDE.md#build")
    page.fill("#message-text", "please stop the deploy")
    page.click("#message-send")
    expect(page.locator("#message-notice")).to_contain_text(f"to {AGENT}", timeout=3_000)
    inbox = run_cli(root, "--agent", AGENT, "inbox", "--json").json["messages"]
    assert [(m["sender"], m["about"], m["text"]) for m in inbox] == [
        ("human", "CLAUDE.md#build", "please stop the deploy")
    ]
    mine = page.locator("#messages-body tr", has_text="please stop the deploy")
    expect(mine).to_contain_text("waiting")
    assert run_cli(root, "--agent", AGENT, "ack", str(inbox[0]["id"])).code == 0
    expect(mine).to_contain_text("acknowledged", timeout=3_000)

    # a refused one says why, and nothing is sent
    page.fill("#message-to", AGENT)
    page.fill("#message-about", "c404")
    page.fill("#message-text", "about nothing")
    page.click("#message-send")
    expect(page.locator("#message-notice")).to_contain_text("Not sent", timeout=3_000)
    assert run_cli(root, "--agent", AGENT, "inbox", "--json").json["messages"] == []
    no_horizontal_scroll(page)
    refused = "the server responded with a status of 400"  # the browser logs the refusal
    assert [p for p in watched.problems if refused not in p] == []
    assert watched.dialogs == []
