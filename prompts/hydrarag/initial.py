"""HydraRAG prompts of initialization (paper §4.1).

Topic entities, question analysis, the small model's plan (as fields), and the agentic source selector.
"""

from __future__ import annotations

from hybridrag.prompts import Prompt
from hybridrag.prompts.data_block import guarded

TOPICS_SYSTEM = Prompt(
    "hydrarag.topics_system",
    """\
List the topic entities of a question: the specific named things it mentions (people,
works, places, organisations, dates, titles) that a search would start from. Copy each
name as written in the question. Do not list the answer, generic nouns or descriptions.
{examples}""",
    ("examples",),
)

TOPICS = Prompt("hydrarag.topics", "Question: {question}", ("question",))

ANALYSIS_SYSTEM = Prompt(
    "hydrarag.analysis_system",
    guarded("""\
Analyse a multi-hop question before any search.
1. Split it into simple sub-questions, each linking one topic entity to the answer or to
   another topic entity; answered together they answer the question.
2. Write a skyline: one chain that lists every topic entity and the answer in reasoning
   order, alternating entity and relation, separated by " - ". Mark the answer as
   answer(kind).
{examples}"""),
    ("examples",),
)

ANALYSIS = Prompt(
    "hydrarag.analysis",
    """\
Question: {question}
Topic entities (quoted data):
{topics}""",
    ("question", "topics"),
)

PLAN_SYSTEM = Prompt(
    "hydrarag.plan_system",
    guarded("""\
Analyse a question before any search. Name its topic entity as written in the question,
the relations that lead from it to the answer in order (one relation per hop, from the
list), and the kind of the answer (from the list). Reply with JSON only.""")
    + """
Relations: {relations}
Answer kinds: {kinds}
{examples}""",
    ("relations", "kinds", "examples"),
)  # the KB's lists before the question's examples: llama.cpp reuses this prefix from one question to the next

PLAN = Prompt(
    "hydrarag.plan",
    """\
Question: {question}
Topic entities (quoted data):
{topics}""",
    ("question", "topics"),
)

SELECTOR_SYSTEM = Prompt(
    "hydrarag.selector_system",
    guarded("""\
Choose where to search first. Possible sources:
- kg: the local knowledge graph; exact relations between named entities.
- docs: the document collection; descriptions and facts the graph may lack.
- web: a web search engine; recent or fast-changing facts.
Weigh how time-sensitive the question is, how many reasoning steps it needs and which
domain it belongs to. Prefer kg when it is available and likely sufficient; add docs when
the graph may miss a fact; add web only when the local sources are unlikely to hold the
answer or the question is about recent events. Use only the sources listed as available.
Give your reasoning first, then the chosen sources.
{examples}"""),
    ("examples",),
)

SELECTOR = Prompt(
    "hydrarag.selector",
    """\
Question: {question}
Available sources: {available}
Question analysis (quoted data):
{analysis}""",
    ("question", "available", "analysis"),
)
