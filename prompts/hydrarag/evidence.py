"""HydraRAG prompts of evidence pruning and refinement (paper §4.3-4.4): path selection, path refinement."""

from __future__ import annotations

from hybridrag.prompts import Prompt
from hybridrag.prompts.data_block import guarded

SELECT_PATHS_SYSTEM = Prompt(
    "hydrarag.select_paths_system",
    guarded("""\
Score candidate reasoning paths against a question, its skyline and its sub-questions, and
keep the paths most likely to lead to the answer. The paths are numbered data blocks
(n="1", n="2"...); answer with path numbers. Reasoning first.
{examples}"""),
    ("examples",),
)

SELECT_PATHS = Prompt(
    "hydrarag.select_paths",
    """\
Question: {question}
Skyline (quoted data):
{skyline}
Sub-questions (quoted data):
{splits}
Candidate paths (quoted data, one block each):
{paths}
Keep at most {width} paths.""",
    ("question", "skyline", "splits", "paths", "width"),
)

REFINE_SYSTEM = Prompt(
    "hydrarag.refine_system",
    guarded("""\
Summarise reasoning paths into a short chain of reasoning that links the topic entities of
a question towards its answer. Use only facts stated in the paths, keep entity names
exactly as written, skip no step, and leave out paths that do not bear on the question.
{examples}"""),
    ("examples",),
)

REFINE = Prompt(
    "hydrarag.refine",
    """\
Question: {question}
Skyline (quoted data):
{skyline}
Sub-questions (quoted data):
{splits}
Paths (quoted data, one block each):
{paths}""",
    ("question", "skyline", "splits", "paths"),
)
