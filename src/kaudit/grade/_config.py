"""The judge's model config: a spec or YAML, with `kaudit run`'s model options.

A judge defaults to temperature 0 (a grader is asked for its most likely answer); a
YAML config's own temperature, or `--temperature`, replaces that.
"""

from __future__ import annotations

from typing import Any

from kaudit.agents.chat import ModelConfig, is_config_path, load_model_config, short_config
from kaudit.errors import InputError

__all__ = ["JUDGE_TEMPERATURE", "judge_config"]

JUDGE_TEMPERATURE = 0.0


def judge_config(spec: str, **overrides: Any) -> ModelConfig:
    """`openai:NAME`, `anthropic:NAME` or a model YAML; overrides that are not None win."""
    if is_config_path(spec):
        return load_model_config(spec, **overrides)
    provider, _, name = spec.partition(":")
    if provider not in ("openai", "anthropic"):
        raise InputError(
            "judge", f"{spec!r} is not a model spec (use openai:NAME, anthropic:NAME or a YAML)"
        )
    if overrides.get("temperature") is None:
        overrides["temperature"] = JUDGE_TEMPERATURE
    return short_config(provider, name, **overrides)  # type: ignore[arg-type]
