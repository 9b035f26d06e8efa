"""The policy presets shipped with memkeeper (`policies/*.yaml`), copied verbatim by `init`."""

from __future__ import annotations

from pathlib import Path

from memkeeper.errors import Invalid


def _presets_dir() -> Path:
    package = Path(__file__).parent.parent  # memkeeper/
    installed = package / "policies"  # the wheel's copy (pyproject: force-include)
    return installed if installed.is_dir() else package.parent / "policies"


def preset_names() -> list[str]:
    """The presets shipped with memkeeper, by name (`default`, `cline-memory-bank`, …)."""
    return sorted(path.stem for path in _presets_dir().glob("*.yaml"))


def preset_bytes(name: str) -> bytes:
    """A preset's file, verbatim (comments kept) for `memkeeper init --preset NAME`."""
    names = preset_names()
    if name not in names:
        message = f"unknown preset '{name}' — choose one of: {', '.join(names)}"
        raise Invalid(message, preset=name, presets=names)
    return (_presets_dir() / f"{name}.yaml").read_bytes()
