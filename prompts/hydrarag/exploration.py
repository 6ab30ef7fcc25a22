"""HydraRAG prompts of exploration (paper §4.2).

Paragraph → paths, web selection, the follow-up and the predictions after a {No}, and the path summary.
"""

from __future__ import annotations

from hybridrag.prompts import Prompt
from hybridrag.prompts.data_block import guarded

TEXT_PATHS_SYSTEM = Prompt(
    "hydrarag.text_paths_system",
    guarded("""\
Turn evidence paragraphs into knowledge paths. A path is a chain "entity - relation -
entity - relation - entity" that restates facts from one paragraph; never add facts the
paragraph does not state. Paragraphs are numbered data blocks (n="1", n="2"...); give the
paragraph number of each path. When a paragraph mentions a topic entity, at least one of
its paths should start or end at it.
{examples}"""),
    ("examples",),
)

TEXT_PATHS = Prompt(
    "hydrarag.text_paths",
    """\
Question: {question}
Topic entities (quoted data):
{topics}
Skyline (quoted data):
{skyline}
Paragraphs (quoted data):
{paragraphs}""",
    ("question", "topics", "skyline", "paragraphs"),
)

WEB_SELECT_SYSTEM = Prompt(
    "hydrarag.web_select_system",
    guarded("""\
You screen web search results for a question. The results are numbered data blocks
(n="1", n="2"...). Pick the results (by number) whose title and snippet most likely contain
the facts the skyline needs. Reasoning first."""),
)

WEB_SELECT = Prompt(
    "hydrarag.web_select",
    """\
Question: {question}
Skyline (quoted data):
{skyline}
Search results (quoted data):
{results}
Pick at most {width} results.""",
    ("question", "skyline", "results", "width"),
)

FOLLOW_UP_SYSTEM = Prompt(
    "hydrarag.follow_up_system",
    guarded("""\
The evidence found so far does not settle the question. The last answer check says what
was missing and how the round searched (sources searched and not, KG depth, topic entities
no path names). State which evidence is still missing, then write one follow-up search
question aimed at it (new or recent facts the knowledge graph may not hold), a skyline for
the follow-up in the same " - " chain format, and the named entities the follow-up question
mentions. If a topic entity looks wrong or was never found, name the right one; if the
skyline's relations or length look wrong, write the corrected skyline. Use the paths, the
check's account and your own knowledge.
{examples}"""),
    ("examples",),
)

# The state after a rejected answer: the follow-up writer and the predictor both read it.
_AFTER_NO = """\
Question: {question}
Topic entities (quoted data):
{topics}
Skyline (quoted data):
{skyline}
Sub-questions (quoted data):
{splits}
Paths found so far (quoted data, one block each):
{paths}
Why the last answer check said no (quoted data):
{feedback}"""
_AFTER_NO_INPUTS = ("question", "topics", "skyline", "splits", "paths", "feedback")

FOLLOW_UP = Prompt("hydrarag.follow_up", _AFTER_NO, _AFTER_NO_INPUTS)

PREDICT_SYSTEM = Prompt(
    "hydrarag.predict_system",
    guarded("""\
Use the paths found so far, the last answer check's account of what was missing, and your
own knowledge to propose up to three likely answers.
For each, write a skyline in the " - " chain format that would connect the topic entities
to that answer, so the sources can confirm or refute it. Name each answer exactly.
{examples}"""),
    ("examples",),
)

PREDICT = Prompt("hydrarag.predict", _AFTER_NO, _AFTER_NO_INPUTS)

PATH_SUMMARY_SYSTEM = Prompt(
    "hydrarag.path_summary_system",
    guarded("""\
Summarise the knowledge paths a round built from documents and web pages. The paths are
numbered data blocks (n="1", n="2"...). Write the paths that bear on the skyline, each as
"entity - relation - entity ..." separated by " - ": join two paths into one where the end of
one is the start of the other, drop repeats and paths that do not bear on the question, and
use only facts the cited paths state. Give with each path the numbers of the paths it restates.
{examples}"""),
    ("examples",),
)

PATH_SUMMARY = Prompt(
    "hydrarag.path_summary",
    """\
Question: {question}
Skyline (quoted data):
{skyline}
Paths (quoted data, one block each):
{paths}""",
    ("question", "skyline", "paths"),
)
