"""Loading hand-written files into models, with errors that name the file and field."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from kaudit.errors import SpecError
from kaudit.spec._task import Task
from kaudit.spec._yaml import read_yaml

M = TypeVar("M", bound=BaseModel)


def field_path(loc: tuple[int | str, ...]) -> str:
    """Render a pydantic error location as `damage.allowed[0].op`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "<root>"


def validate_file_data(model: type[M], data: Any, path: Path | str) -> M:
    """Validate already-parsed data; the first error names the file, the field and why."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        reason = first["msg"].removeprefix("Value error, ")
        raise SpecError(path, field_path(tuple(first["loc"])), reason) from None


def load_task(path: Path) -> Task:
    """Load and validate one task file."""
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise SpecError(path, "<root>", "a task file must be a mapping")
    return validate_file_data(Task, data, path)
