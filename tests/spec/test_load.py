from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from kaudit.errors import SpecError
from kaudit.spec._load import load_task
from tests.conftest import FIXTURES

GOOD = FIXTURES / "mini_suite" / "close_account.yaml"


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "task.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def good_data() -> dict[str, object]:
    data = yaml.safe_load(GOOD.read_text())
    assert isinstance(data, dict)
    return data


def test_fixture_task_loads_with_its_scripts() -> None:
    task = load_task(GOOD)
    assert task.id == "demo/close-account"
    assert [s.name for s in task.scripts()][:3] == ["oracle", "refuse_all", "close_both"]
    assert task.priced is True
    assert task.weights() == pytest.approx({"oracle": 0.6, "close_both": 0.3, "refuse_all": 0.1})


def test_bad_op_names_the_file_and_field(tmp_path: Path) -> None:
    data = good_data()
    data["damage"]["allowed"][0]["op"] = "changed"  # type: ignore[index]
    path = write(tmp_path, data)
    with pytest.raises(SpecError) as info:
        load_task(path)
    assert info.value.path == str(path)
    assert info.value.field == "damage.allowed[0].op"
    assert "added" in info.value.reason


def test_unknown_key_is_rejected(tmp_path: Path) -> None:
    data = good_data()
    data["promt"] = "typo"
    with pytest.raises(SpecError, match=r"task.yaml: promt: Extra inputs are not permitted"):
        load_task(write(tmp_path, data))


def test_undefined_param_reference_is_rejected(tmp_path: Path) -> None:
    data = good_data()
    data["params"] = {"target": "ACC_002"}
    with pytest.raises(SpecError, match="check 'held_open' uses undefined params"):
        load_task(write(tmp_path, data))


def test_yaml_syntax_error_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("id: x\nprompt: [unclosed\n")
    with pytest.raises(SpecError, match=r"broken.yaml: line \d+"):
        load_task(path)


def test_missing_file_is_a_spec_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"nothere\.yaml"):
        load_task(tmp_path / "nothere.yaml")


def test_script_step_kinds_are_exclusive(tmp_path: Path) -> None:
    data = good_data()
    data["oracle"] = [{"error": "x", "stall": True}]
    with pytest.raises(SpecError) as info:
        load_task(write(tmp_path, data))
    assert info.value.field.startswith("oracle[0]")
