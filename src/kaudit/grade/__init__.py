"""LLM judges of transcripts, graded beside the state and measured against it.

`kaudit grade` asks a judge model about each run's transcript (never its database or
verdict) under a versioned rubric and chains the answers in the ledger's grades table;
`judge_tables` measures each judge against the state verdicts.
"""

from kaudit.grade._agreement import CellId, JudgeTable, cell_of, judge_tables, kappa_interval
from kaudit.grade._call import Graded, judge_ledger
from kaudit.grade._case import JudgeCase, case_of, judge_messages, render_case
from kaudit.grade._config import judge_config
from kaudit.grade._grade import GradingResult, TaskPrompts, grade_ledger, prompts_for
from kaudit.grade._judge import ANSWER_SCHEMA, Judge, JudgeAnswer, MalformedAnswer, parse_answer
from kaudit.grade._rubric import RUBRIC, RUBRIC_VERSION, Rubric, load_rubric

__all__ = [
    "ANSWER_SCHEMA",
    "RUBRIC",
    "RUBRIC_VERSION",
    "CellId",
    "Graded",
    "GradingResult",
    "Judge",
    "JudgeAnswer",
    "JudgeCase",
    "JudgeTable",
    "MalformedAnswer",
    "Rubric",
    "TaskPrompts",
    "case_of",
    "cell_of",
    "grade_ledger",
    "judge_config",
    "judge_ledger",
    "judge_messages",
    "judge_tables",
    "kappa_interval",
    "load_rubric",
    "parse_answer",
    "prompts_for",
    "render_case",
]
