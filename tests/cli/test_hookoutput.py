"""What install-hooks and uninstall-hooks say to people."""

from __future__ import annotations

from memkeeper.cli.output import render


def test_install_hooks_says_what_it_installed_and_kept() -> None:
    legacy = ".git/hooks/pre-commit.legacy"
    fresh = {"git_hook": ".git/hooks/pre-commit", "git_hook_changed": True,
             "legacy_hook": legacy, "moved_existing_hook": True}  # fmt: skip
    assert render("install-hooks", fresh).splitlines() == [
        "git pre-commit hook installed: .git/hooks/pre-commit (runs memkeeper check --staged)",
        "  moved the existing hook to .git/hooks/pre-commit.legacy",
    ]
    cline = {"label": "Cline", "mcp": None, "todo": ["Nothing in Cline."],
             "hooks": [{"path": ".clinerules/hooks/PreToolUse", "changed": True,
                        "kept": ".clinerules/hooks/PreToolUse.legacy"}]}  # fmt: skip
    codex = {"label": "Codex", "todo": ["In Codex, run /hooks once."],
             "hooks": [{"path": ".codex/hooks.json", "changed": False}],
             "mcp": {"path": ".codex/config.toml", "changed": True}}  # fmt: skip
    again = {**fresh, "git_hook_changed": False, "moved_existing_hook": False,
             "agents": {"codex": codex, "cline": cline}}  # fmt: skip
    assert render("install-hooks", again).splitlines()[1:] == [
        "  runs first: .git/hooks/pre-commit.legacy",
        "Codex gate already in .codex/hooks.json",
        "Codex MCP server added to .codex/config.toml",
        "  to do: In Codex, run /hooks once.",
        "Cline gate added to .clinerules/hooks/PreToolUse",
        "  the hook that was there is kept as .clinerules/hooks/PreToolUse.legacy and runs first",
        "  to do: Nothing in Cline.",
    ]


def test_uninstall_hooks_says_what_it_took_out_and_put_back() -> None:
    settings = ".gemini/settings.json"
    gemini = {"label": "Gemini CLI", "todo": [],
              "hooks": [{"path": settings, "changed": True, "deleted": True}],
              "mcp": {"path": settings, "changed": True, "deleted": True}}  # fmt: skip
    cline = {"label": "Cline", "mcp": None, "todo": [],
             "hooks": [{"path": ".clinerules/hooks/PreToolUse", "changed": True, "deleted": True,
                        "restored": ".clinerules/hooks/PreToolUse.legacy"}]}  # fmt: skip
    cursor = {"label": "Cursor", "todo": [], "hooks": [{"path": ".cursor/hooks.json",
              "changed": True}], "mcp": {"path": ".cursor/mcp.json", "changed": False}}  # fmt: skip
    codex = {"label": "Codex", "todo": [], "hooks": [{"path": ".codex/hooks.json",
             "changed": False}], "mcp": None}  # fmt: skip
    agents = {"gemini": gemini, "cline": cline, "cursor": cursor, "codex": codex}
    done = {"git_hook": ".git/hooks/pre-commit", "git_hook_removed": True,
            "legacy_hook_restored": True, "agents": agents}  # fmt: skip
    assert render("uninstall-hooks", done).splitlines() == [
        "git pre-commit hook removed: .git/hooks/pre-commit",
        "  put back the hook it had moved to pre-commit.legacy",
        "Gemini CLI: deleted .gemini/settings.json",
        "Cline: deleted .clinerules/hooks/PreToolUse",
        "  put back .clinerules/hooks/PreToolUse.legacy as .clinerules/hooks/PreToolUse",
        "Cursor: removed memkeeper's entries from .cursor/hooks.json",
        "Codex: nothing of memkeeper's installed",
    ]
    kept = {"git_hook": ".git/hooks/pre-commit", "git_hook_removed": False,
            "legacy_hook_restored": False, "agents": {}}  # fmt: skip
    assert render("uninstall-hooks", kept) == (
        "git pre-commit hook - nothing of memkeeper's at .git/hooks/pre-commit\n"
    )
