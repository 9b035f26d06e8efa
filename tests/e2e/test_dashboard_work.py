"""The dashboard's work queue in a real headless Chromium (docs/reference.md §4.24, §4.33):
two items added and one taken with ``work next`` through the CLI — without a reload the page
shows the taken one claimed by that identity, with its claim, and the other ready; the item
given back with ``work return`` moves to the ready list."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.conftest import run_cli

pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
)

from playwright.sync_api import expect

from tests.e2e.test_dashboard_browser import (  # the served page and its browser
    Served,
    browser,
    no_horizontal_scroll,
    open_dashboard,
    served,
)

if TYPE_CHECKING:
    from playwright.sync_api import Browser

WORKER = "claude-code:s1"
__all__ = ["browser", "served"]  # fixtures, imported to be used here


def test_the_page_shows_who_works_on_what_and_what_is_ready(
    served: Served, browser: Browser
) -> None:
    watched = open_dashboard(browser, served.url)
    page = watched.page
    root = served.root
    expect(page.locator("#working-body")).to_contain_text("Nobody works on an item.")

    for title, priority in (("Fix the build", "5"), ("Write the docs", "0")):
        added = run_cli(root, "--agent", WORKER, "work", "add", title, "--priority", priority)
        assert added.code == 0, added.stderr
    taken = run_cli(root, "--agent", WORKER, "work", "next", "--json")
    assert taken.code == 0, taken.stderr
    claim = taken.json["claim"]["id"]

    working = page.locator("#working-body tr", has_text="Fix the build")
    expect(working).to_be_visible(timeout=3_000)
    expect(working).to_contain_text(WORKER)
    expect(working).to_contain_text(claim)
    ready = page.locator("#ready-body tr")
    expect(ready).to_have_count(1)
    expect(ready).to_contain_text("Write the docs")
    expect(page.locator("#work-counts")).to_contain_text("1 claimed · 1 ready")

    item = str(taken.json["item"]["id"])
    assert run_cli(root, "--agent", WORKER, "work", "return", item).code == 0
    expect(page.locator("#ready-body tr")).to_have_count(2, timeout=3_000)
    expect(page.locator("#working-body")).to_contain_text("Nobody works on an item.")
    no_horizontal_scroll(page)
    assert watched.problems == []
    assert watched.dialogs == []
