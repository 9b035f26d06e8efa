"""``memkeeper serve`` in a subprocess and its page in a real headless Chromium (docs/reference.md
§4.24): a claim taken from the CLI appears without a reload, its objective as text (never markup)
and its countdown ticking; a waiter shows whom it waits on; a patch shows its writer and, on a
click, the section's text and history; the events list filters; a reconciliation appears with its
diff and "Keep human" resolves it; the page fits 1280 and 400 px without horizontal scrolling; and
it says "reconnecting" when the server goes away.

With ``MEMKEEPER_SCREENSHOT=1`` the 1280 px page is saved to ``docs/dashboard.png``."""

from __future__ import annotations

import http.server
import os
import queue
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import pytest

from memkeeper import Memory
from tests.conftest import MEMKEEPER, run_cli

pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install playwright)"
)

from playwright.sync_api import Browser, ConsoleMessage, Dialog, Page, expect, sync_playwright

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None:
    pytest.skip(
        "no chromium binary on PATH (apt-get install chromium); playwright's own browsers are "
        "never downloaded",
        allow_module_level=True,
    )

CHROMIUM_ARGS = [
    *("--no-sandbox", "--disable-background-networking", "--disable-component-update"),
    *("--disable-sync", "--no-first-run", "--disable-dev-shm-usage"),
]
DOCS_SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "dashboard.png"
XSS = "<img src=x onerror=alert(1)>"
URL_LINE = re.compile(r"memkeeper dashboard: (http://127\.0\.0\.1:\d+/\?token=\S+)")
CLAIMS_MARKER = "<!-- memkeeper:generated source=claims -->\n"


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("MEMKEEPER_")}


@dataclass
class Served:
    """A running ``memkeeper serve`` on the sample copy."""

    root: Path
    url: str
    process: subprocess.Popen[str]
    others: list[subprocess.Popen[str]] = field(default_factory=list)

    def stop(self) -> None:
        for proc in [*self.others, self.process]:
            if proc.poll() is None:
                proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


def first_line(proc: subprocess.Popen[str], timeout: float) -> str:
    out = proc.stdout
    assert out is not None
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(out.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout).rstrip("\n")
    except queue.Empty:
        pytest.fail(f"memkeeper serve printed no URL within {timeout} s")


@pytest.fixture
def served(sample: Path, tmp_path: Path) -> Iterator[Served]:
    assert run_cli(sample, "init").code == 0
    with (tmp_path / "serve.stderr").open("w") as stderr:
        proc = subprocess.Popen(
            [MEMKEEPER, "serve", "--port", "0"],
            cwd=sample,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=clean_env(),
        )
        running = Served(sample, "", proc)
        try:
            line = first_line(proc, timeout=30)
            found = URL_LINE.fullmatch(line)
            assert found, f"unexpected first line {line!r}"
            running.url = found.group(1)
            yield running
        finally:
            running.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert CHROMIUM is not None
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@dataclass
class Watched:
    """A page and what went wrong on it: script errors, console errors, dialogs opened."""

    page: Page
    problems: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)


def open_dashboard(browser: Browser, url: str) -> Watched:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    watched = Watched(page)

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error":
            watched.problems.append(f"console: {message.text}")

    def on_dialog(dialog: Dialog) -> None:
        watched.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("console", on_console)
    page.on("pageerror", lambda error: watched.problems.append(f"page error: {error}"))
    page.on("dialog", on_dialog)
    page.goto(url)
    expect(page.locator("#conn-text")).to_have_text("live", timeout=15_000)
    return watched


def no_horizontal_scroll(page: Page) -> None:
    widths = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], f"the page scrolls sideways: {widths}"


def seconds(countdown: str) -> int:
    found = re.fullmatch(r"(?:(\d+) m )?(\d+) s", countdown)
    assert found, countdown
    return int(found.group(1) or 0) * 60 + int(found.group(2))


def test_the_page_follows_claims_files_events_and_resolves_a_reconciliation(
    served: Served, browser: Browser, tmp_path: Path
) -> None:
    root = served.root
    watched = open_dashboard(browser, served.url)
    page = watched.page
    assert "token=" not in page.url  # the token went into the tab's storage, out of the address bar
    expect(page.locator("h1")).to_have_text(re.compile(rf"memkeeper — /.*/{root.name}"))
    expect(page.locator("#files-list article.file")).not_to_have_count(0)

    # a claim: its row within 2 s, the objective as text, the countdown moving on its own
    claim = run_cli(
        root, "claim", "CLAUDE.md#build", "--ttl", "120", "--objective", XSS,
        "--agent", "agent-a", "--json",
    )  # fmt: skip
    assert claim.code == 0, claim.stderr
    row = page.locator("#claims-body tr", has_text="agent-a")
    expect(row).to_be_visible(timeout=2_000)
    expect(row.locator("td.objective")).to_have_text(XSS)
    assert page.locator("img").count() == 0
    expect(row).to_contain_text("CLAUDE.md#inventory-service/build")
    expect(row).to_contain_text("advisory")
    expect(row).to_contain_text("write")
    expect(row.locator(".token")).to_have_text(str(claim.json["token"]))
    record = page.locator(f"#records-body tr[data-record='{claim.json['id']}']")
    expect(record).to_have_attribute("data-state", "active", timeout=2_000)
    expect(record.locator("td.objective")).to_have_text(XSS)  # as text, never as markup
    countdown = row.locator(".countdown")
    before = countdown.inner_text()
    assert 100 <= seconds(before) <= 121, before
    expect(countdown).not_to_have_text(before, timeout=2_500)

    # a waiter queued behind it: its place in line and whom it waits on
    served.others.append(
        subprocess.Popen(
            [MEMKEEPER, "claim", "CLAUDE.md#build", "--wait", "60", "--agent", "agent-b"],
            cwd=root,
            env=clean_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
        )
    )
    waiter = page.locator("#waiters-body tr", has_text="agent-b")
    expect(waiter).to_contain_text("agent-a", timeout=5_000)
    expect(waiter).to_contain_text("1 · next")
    contention = page.locator("#contention-body tr", has_text="agent-b")
    expect(contention).to_contain_text("waiting", timeout=3_000)

    # a patch: its writer on the section's row; a click shows the text and the history
    body = tmp_path / "testing.md"
    body.write_text(
        "\n- Run `make test` before every commit.\n- The dashboard has a browser test.\n\n"
    )
    patched = run_cli(
        root, "patch", "CLAUDE.md#testing", "--expect-rev", "1", "--body-file", str(body),
        "--agent", "agent-c",
    )  # fmt: skip
    assert patched.code == 0, patched.stderr
    section = page.get_by_role("button", name="inventory-service/testing", exact=True)
    section_row = page.locator("#files-list tr", has=section)
    expect(section_row).to_contain_text("agent-c", timeout=3_000)
    expect(section_row).to_contain_text("section.patched")
    section.click()
    expect(page.locator("#detail-h")).to_have_text("CLAUDE.md#inventory-service/testing")
    expect(page.locator("pre#detail-content")).to_contain_text("The dashboard has a browser test.")
    expect(page.locator("#history-body tr", has_text="section.patched")).to_contain_text("agent-c")

    # a hand edit inside a generated region opens a reconciliation, shown with its diff
    assert run_cli(root, "regen").code == 0
    status = root / "memory" / "status.md"
    text = status.read_text()
    assert CLAIMS_MARKER in text
    status.write_text(text.replace(CLAIMS_MARKER, CLAIMS_MARKER + "A hand edit by a human.\n", 1))
    regen = run_cli(root, "regen", "--json")
    assert regen.code == 0, regen.stderr
    assert regen.json["reconciliations"], regen.stdout
    recon = page.locator("#recons-list article.recon")
    expect(recon).to_have_count(1, timeout=3_000)
    expect(recon.locator("pre.diff")).to_contain_text("+A hand edit by a human.")
    expect(recon.get_by_role("button", name="Keep human")).to_be_enabled()
    expect(recon.get_by_role("button", name="Take generated")).to_be_enabled()

    # the events, newest first, filtered by type and by agent
    events = page.locator("#events-body tr.ev")
    for kind in ("claim.granted", "claim.queued", "section.patched", "reconcile.opened"):
        expect(events.filter(has_text=kind).first).to_be_visible()
    ids = [int(i) for i in events.evaluate_all("rows => rows.map(r => r.dataset.id)")]
    assert ids == sorted(ids, reverse=True)
    page.select_option("#filter-type", "claim.granted")
    shown = page.locator("#events-body tr.ev:visible")
    expect(shown).not_to_have_count(0)
    assert all("claim.granted" in t for t in shown.all_inner_texts())
    page.select_option("#filter-type", "")
    page.fill("#filter-agent", "agent-c")
    expect(shown).to_have_count(1)
    expect(shown).to_contain_text("section.patched")
    page.fill("#filter-agent", "")
    page.locator("#filter-agent").blur()

    # the demo state, at 1280 and at 400 px
    page.mouse.move(0, 0)
    no_horizontal_scroll(page)
    demo = os.environ.get("MEMKEEPER_SCREENSHOT") == "1"
    wide = DOCS_SCREENSHOT if demo else tmp_path / "wide.png"
    page.screenshot(path=str(wide), full_page=True, animations="disabled")
    page.set_viewport_size({"width": 400, "height": 900})
    expect(recon.locator("pre.diff")).to_be_visible()
    no_horizontal_scroll(page)
    page.screenshot(path=str(tmp_path / "narrow.png"), full_page=True, animations="disabled")

    # "Keep human" resolves it: gone from the page and from the CLI's list
    recon.get_by_role("button", name="Keep human").click()
    expect(recon).to_have_count(0, timeout=3_000)
    expect(page.locator("#recons-notice")).to_contain_text("resolved")
    listed = run_cli(root, "reconcile", "list", "--json")
    assert listed.code == 0, listed.stderr
    assert listed.json["reconciliations"] == []
    expect(events.filter(has_text="reconcile.resolved")).to_contain_text("human", timeout=3_000)

    assert watched.dialogs == []
    assert watched.problems == []
    assert page.locator("img").count() == 0

    # the server goes away: the page says so
    served.stop()
    expect(page.locator("#conn-text")).to_have_text("reconnecting…", timeout=5_000)
    page.close()


def emit(root: Path, count: int, **data: str) -> int:
    """``count`` events from agent-d (in this process: a subprocess each would take minutes);
    the id of the last one."""
    memory = Memory.open(root, agent="agent-d")
    try:
        return [memory.emit("task.progress", {"n": n, **data}) for n in range(count)][-1].id
    finally:
        memory.close()


def test_the_events_list_keeps_the_newest_500_as_more_stream_in(
    served: Served, browser: Browser
) -> None:
    first = emit(served.root, 620)
    watched = open_dashboard(browser, served.url)
    rows = watched.page.locator("#events-body tr.ev")
    expect(rows).to_have_count(500)
    expect(rows.first.locator("td").first).to_have_text(str(first))
    expect(watched.page.locator("#filter-type option", has_text="task.progress")).to_have_count(1)

    last = emit(served.root, 40, note=XSS)
    expect(rows.first.locator("td").first).to_have_text(str(last), timeout=3_000)
    expect(rows).to_have_count(500)
    expect(rows.last.locator("td").first).to_have_text(str(last - 499))
    expect(rows.first).to_contain_text(XSS)
    assert watched.page.locator("img").count() == 0
    assert watched.dialogs == []
    assert watched.problems == []
    watched.page.close()


class Recorder(http.server.BaseHTTPRequestHandler):
    """Another web server on this host, on another port: it keeps every request's headers."""

    seen: ClassVar[list[dict[str, str]]] = []

    def do_GET(self) -> None:
        Recorder.seen.append({k.lower(): v for k, v in self.headers.items()})
        body = b"<!doctype html><title>elsewhere</title><p>another server</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_another_server_on_this_host_never_receives_the_token(
    served: Served, browser: Browser
) -> None:
    # cookies ignore ports: a token kept in one would go to every server on 127.0.0.1
    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        token = served.url.partition("?token=")[2]
        context = browser.new_context()
        page = context.new_page()
        page.goto(served.url)
        expect(page.locator("#conn-text")).to_have_text("live", timeout=15_000)
        page.reload()  # the token survives a reload in this tab, without a cookie
        expect(page.locator("#conn-text")).to_have_text("live", timeout=15_000)
        assert context.cookies() == []
        Recorder.seen.clear()
        page.goto(f"http://127.0.0.1:{other.server_address[1]}/")
        expect(page.locator("p")).to_have_text("another server")
        assert Recorder.seen, "the other server got no request"
        assert all(token not in value for seen in Recorder.seen for value in seen.values())
        assert "cookie" not in Recorder.seen[0]
        assert page.evaluate("JSON.stringify(window.sessionStorage)") == "{}"
        context.close()
    finally:
        other.shutdown()
        other.server_close()
