"""LLM judges of transcripts, graded beside the state and measured against it.

`kaudit grade` asks a judge model about each run's transcript (never its database or
verdict) under a versioned rubric and chains the answers in the ledger's grades table;
`judge_tables` measures each judge against the state verdicts.
"""

from kaudit.grade._call import Graded
from kaudit.grade._judge import Judge, MalformedAnswer
from kaudit.grade._rubric import RUBRIC, RUBRIC_VERSION

__all__ = [
    "RUBRIC",
    "RUBRIC_VERSION",
    "Graded",
    "Judge",
    "MalformedAnswer",
]
