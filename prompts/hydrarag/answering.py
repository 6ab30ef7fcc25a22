"""HydraRAG prompts of answering (paper §4.4): the answer check and the final answer."""

from __future__ import annotations

from hybridrag.prompts import Prompt
from hybridrag.prompts.data_block import guarded

CHECK_SYSTEM = Prompt(
    "hydrarag.check_system",
    guarded("""\
Decide whether the evidence is enough to answer each sub-question and then the question.
Reason step by step first. If it is enough, say "yes" and give the answer; when the
evidence names the answer, copy that name. If not, say "no", leave the answer empty and
state what is missing: the sub-question left open, and the entity, relation or fact the
evidence lacks (so the next search can aim at it).
{examples}"""),
    ("examples",),
)

CHECK = Prompt(
    "hydrarag.check",
    """\
Question: {question}
Skyline (quoted data):
{skyline}
Sub-questions (quoted data):
{splits}
Evidence (quoted data):
{evidence}""",
    ("question", "skyline", "splits", "evidence"),
)

GENERATE_SYSTEM = Prompt(
    "hydrarag.generate_system",
    guarded("""\
Answer the question using the evidence paths and your own knowledge. Reason briefly, then
give a short answer (names or values, comma separated).
{examples}"""),
    ("examples",),
)

GENERATE = Prompt(
    "hydrarag.generate",
    """\
Question: {question}
Skyline (quoted data):
{skyline}
Sub-questions (quoted data):
{splits}
Evidence (quoted data):
{evidence}""",
    ("question", "skyline", "splits", "evidence"),
)
