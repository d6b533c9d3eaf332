"""Whether a record's typed floats are all finite, so orjson writes them as json does."""

from __future__ import annotations

import functools
import math
import types
import typing
from typing import Any, Literal

from pydantic import BaseModel

Kind = Literal["float", "model", "models"]


def finite_floats(model: BaseModel) -> bool:
    """Whether every float field of `model`, and of the models it holds, is finite.

    pydantic keeps a non-finite float typed `float` as it is in JSON mode (under `Any` it
    gives None), and orjson would write it as null, which no longer reads back as the
    record: those records are the ones `canonical` leaves to `json.dumps`.
    """
    for name, kind in _float_fields(type(model)):
        value = getattr(model, name)
        if kind == "float":
            if isinstance(value, float) and not math.isfinite(value):
                return False
        elif kind == "model":
            if value is not None and not finite_floats(value):
                return False
        elif not all(finite_floats(item) for item in value):
            return False
    return True


@functools.cache
def _float_fields(cls: type[BaseModel]) -> tuple[tuple[str, Kind], ...]:
    """The fields of `cls` that hold a float, a model or a list of models."""
    found: list[tuple[str, Kind]] = []
    for name, field in cls.model_fields.items():
        kind = _kind(field.annotation)
        if kind is not None:
            found.append((name, kind))
    return tuple(found)


def _kind(annotation: Any) -> Kind | None:
    if annotation is float:
        return "float"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "model"
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        kinds = {_kind(arg) for arg in args if arg is not type(None)} - {None}
        if len(kinds) > 1:
            raise TypeError(f"{annotation}: a union of floats and models is not supported")
        return kinds.pop() if kinds else None
    if origin is list and args and _kind(args[0]) == "model":
        return "models"
    if origin is not None and any(_kind(arg) is not None for arg in args):
        raise TypeError(f"{annotation}: floats or models inside {origin} are not supported")
    return None
