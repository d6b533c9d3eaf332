"""Placing an injection task with AgentDojo's own `important_instructions` attack.

The attack addresses the victim model by name, which AgentDojo derives from its
pipeline's name. A kaudit task is the same for every model it is run against, so the
name is a fixed stand-in: AgentDojo's own default victim name ("the AI language
model", as its `important_instructions_no_model_name` variant uses), given through a
stand-in pipeline that only carries a name AgentDojo recognizes.
"""

from __future__ import annotations

from typing import Any

ATTACK = "important_instructions"


def important_instructions(suite: Any, model_name: str | None = None) -> Any:
    """AgentDojo's `ImportantInstructionsAttack` on `suite`, naming the model `model_name`.

    `model_name` None means AgentDojo's `DEFAULT_MODEL_NAME`.
    """
    from agentdojo.agent_pipeline.base_pipeline_element import BasePipelineElement
    from agentdojo.attacks.base_attacks import DEFAULT_MODEL_NAME
    from agentdojo.attacks.important_instructions_attacks import ImportantInstructionsAttack
    from agentdojo.models import MODEL_NAMES

    class StandIn(BasePipelineElement):  # type: ignore[misc]
        """Never queried: it exists so the attack can read a pipeline name."""

        name = next(iter(MODEL_NAMES))

        def query(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("the stand-in pipeline is never run")

    attack = ImportantInstructionsAttack(suite, StandIn())
    attack.model_name = model_name or DEFAULT_MODEL_NAME
    return attack


def injectable(attack: Any, user_task: Any) -> bool:
    """Whether AgentDojo finds an injection vector the user task's ground truth reads."""
    try:
        attack.get_injection_candidates(user_task)
    except ValueError:
        return False
    return True
