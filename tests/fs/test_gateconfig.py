"""The served gate's config in the memory home: this machine's port and token, 0600."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from memkeeper.errors import Invalid
from memkeeper.fs import gateconfig
from memkeeper.fs.gateconfig import GateConfig


def test_a_saved_config_loads_back_readable_by_its_owner_alone(tmp_path: Path) -> None:
    home = str(tmp_path / ".memkeeper")
    config = gateconfig.new_config(40001)
    gateconfig.save(home, config)
    assert gateconfig.load(home) == config
    assert stat.S_IMODE((tmp_path / ".memkeeper" / "gate.json").stat().st_mode) == 0o600
    assert len(config.token) >= 43  # 256 bits
    assert config.url("claude-code") == "http://127.0.0.1:40001/hook/claude-code"


def test_no_config_is_none_and_removing_it_says_whether_there_was_one(tmp_path: Path) -> None:
    assert gateconfig.load(str(tmp_path)) is None
    assert gateconfig.remove(str(tmp_path)) is False
    gateconfig.save(str(tmp_path), GateConfig(1, "t"))
    assert gateconfig.remove(str(tmp_path)) is True
    assert gateconfig.load(str(tmp_path)) is None


@pytest.mark.parametrize(
    "text",
    ["", "{", "[]", '{"port": 0, "token": "t"}', '{"port": 80, "token": ""}', '{"port": "80"}'],
)
def test_a_broken_config_is_an_error_naming_the_file_and_the_fix(tmp_path: Path, text: str) -> None:
    (tmp_path / "gate.json").write_text(text)
    with pytest.raises(Invalid, match=r"gate\.json: .* install-hooks claude-code --served"):
        gateconfig.load(str(tmp_path))


def test_new_tokens_differ() -> None:
    assert gateconfig.new_config(1).token != gateconfig.new_config(1).token
