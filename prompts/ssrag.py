"""SSRAG prompts: query augmentation, routing, graph-to-text, deduplication and answering.

Written for this project after the roles described in the SSRAG paper (Yang et al.,
"Augmenting Question Answering with a Hybrid RAG Approach", §III-A to §III-D); the wording is
ours, not the paper's. Knowledge-base content (entity names canonicalised through the alias
store, graph facts, passages, web snippets) and model output written from it (the augmented
query, graph-to-text paragraphs) are filled in as data blocks (:mod:`prompts.data_block`);
the question and its sub-questions are the user's text.
"""

from __future__ import annotations

from hybridrag.prompts import Prompt
from hybridrag.prompts.data_block import guarded

DECOMPOSE_SYSTEM = Prompt(
    "ssrag.decompose_system",
    """\
You prepare user questions for a search system. Split the question into the smallest
self-contained sub-questions that together answer it. A question that asks one thing
stays as a single sub-question. Keep every name exactly as the user wrote it.""",
)

DECOMPOSE = Prompt(
    "ssrag.decompose",
    """\
Question: {question}
List its sub-questions.""",
    ("question",),
)

ENTITIES_SYSTEM = Prompt(
    "ssrag.entities_system",
    """\
You pick out the named entities of a question: people, organisations, places, works,
products, events, dates and other proper names. Copy each one exactly as it is written in
the question and give its kind in one word. Do not add entities the question does not
mention.""",
)

ENTITY_KINDS = Prompt(
    "ssrag.entity_kinds",
    """\
The knowledge base holds entities of these kinds: {kinds}.""",
    ("kinds",),
)

EXAMPLES_HEAD = Prompt(
    "ssrag.examples_head",
    """\
Solved examples from the same knowledge base:""",
)

ENTITIES = Prompt(
    "ssrag.entities",
    """\
Question: {question}
Sub-questions: {sub_questions}
Which named entities does it mention?""",
    ("question", "sub_questions"),
)

ENTITY_SPELLINGS = Prompt(
    "ssrag.entity_spellings",
    """\
The knowledge base spells some names of this question differently (as written → as the
knowledge base spells it); give such an entity as the knowledge base spells it:
{spellings}""",
    ("spellings",),
)

INTENT_SYSTEM = Prompt(
    "ssrag.intent_system",
    guarded("""\
You read what a user is really asking. Give:
- intent: the kind of answer wanted, one of who, what, when, where, which, why, how
  (infer one when the question has no question word);
- subtopics: implicit aspects the answer should cover, if any;
- time_hints: words of the question that tie it to a time (today, currently, lately,
  latest, this week, in 2023...), empty when there are none;
- factual_cues: proper nouns, historical periods or scientific terms of the question."""),
)

INTENT = Prompt(
    "ssrag.intent",
    """\
Question: {question}
Sub-questions: {sub_questions}
Entities (quoted data):
{entities}""",
    ("question", "sub_questions", "entities"),
)

REWRITE_SYSTEM = Prompt(
    "ssrag.rewrite_system",
    guarded("""\
You rewrite a user question into one search query that is clearer and more specific.
Rules: spell out each acronym where it first appears and keep the acronym after it in
parentheses; copy every listed entity character for character; use the intent and the
time hints to make the query explicit; stay within the token limit; return one query."""),
)

REWRITE = Prompt(
    "ssrag.rewrite",
    """\
Entities (quoted data):
{entities}
Time hints: {time_hints}
Intent: {intent}
Aspects to cover (quoted data):
{aspects}
Token limit: {max_tokens}
Question: {question}
Write the augmented query.""",
    ("entities", "time_hints", "intent", "aspects", "max_tokens", "question"),
)

ROUTER_SYSTEM = Prompt(
    "ssrag.router_system",
    guarded("""\
You choose where a search query is answered. Label it TEMPORAL when the answer depends on
recent or changing information (news, current events, prices, trends, "latest", "today",
this year). Label it FACTUAL when it asks about stable knowledge: people, works, places,
history, science, definitions. Give the label only."""),
)

ROUTER = Prompt(
    "ssrag.router",
    """\
Query (quoted data):
{query}""",
    ("query",),
)

GRAPH_TEXT_SYSTEM = Prompt(
    "ssrag.graph_text_system",
    guarded("""\
You turn knowledge-graph facts about one entity into a short plain-English paragraph.
Use only the given facts, keep every name exactly as given, and leave nothing out."""),
)

GRAPH_TEXT = Prompt(
    "ssrag.graph_text",
    """\
Entity (quoted data):
{entity}
Facts, one "subject relation object" sentence a line (quoted data):
{facts}""",
    ("entity", "facts"),
)

DEDUP_SYSTEM = Prompt(
    "ssrag.dedup_system",
    guarded("""\
You clean up the context given to a question-answering model. Contexts are numbered data
blocks (n="1", n="2"...) sorted from most to least relevant. A context is redundant when an
earlier context already states everything it says. Give one short sentence of reasoning,
then the numbers of the redundant contexts (an empty list when none is redundant)."""),
)

DEDUP = Prompt(
    "ssrag.dedup",
    """\
Query (quoted data):
{query}
Contexts (quoted data, one block each):
{contexts}""",
    ("query", "contexts"),
)

ANSWER_SYSTEM = Prompt(
    "ssrag.answer_system",
    guarded("""\
Answer the question from the contexts only. Reason in one or two sentences, then give a
short answer (names or values, comma separated) taken from the contexts. If the contexts
do not contain the answer, say you do not know."""),
)

ANSWER = Prompt(
    "ssrag.answer",
    """\
Question: {question}
Contexts (quoted data, one block each):
{contexts}""",
    ("question", "contexts"),
)

# Corrective feedback (ours: the paper is a single pass). Each is sent as a user turn after the
# role's earlier reply, so the role sees what it said and why it is asked again.
ENTITY_UNLINKED = Prompt(
    "ssrag.entity_unlinked",
    """\
The knowledge base has no entity named {names}.""",
    ("names",),
)

ENTITY_NONE = Prompt(
    "ssrag.entity_none",
    """\
No entity was extracted, but the question must name at least one.""",
)

ENTITY_KNOWN = Prompt(
    "ssrag.entity_known",
    """\
Names in the question that the knowledge base knows: {names}.""",
    ("names",),
)

ANSWER_FAILED = Prompt(
    "ssrag.answer_failed",
    """\
The search with the entities {names} gave no supported answer ({why}); the contexts found were
about {found}.""",
    ("names", "why", "found"),
)

ENTITY_RETRY = Prompt(
    "ssrag.entity_retry",
    """\
{feedback}
Question: {question}
Extract the named entities again, copied exactly as written in the question.""",
    ("feedback", "question"),
)

ROUTE_NO_CUE = Prompt(
    "ssrag.route_no_cue",
    """\
The query was labelled TEMPORAL, but it holds no time cue (today, latest, currently, this year, a recent
year); {web}.""",
    ("web",),
)

ROUTE_CUE = Prompt(
    "ssrag.route_cue",
    """\
The query was labelled FACTUAL, but it holds the time cue(s) {cues}.""",
    ("cues",),
)

ROUTE_RETRY = Prompt(
    "ssrag.route_retry",
    """\
{feedback}
Query (quoted data):
{query}
Give the label again.""",
    ("feedback", "query"),
)

ALL = [
    DECOMPOSE_SYSTEM,
    DECOMPOSE,
    ENTITIES_SYSTEM,
    ENTITIES,
    INTENT_SYSTEM,
    INTENT,
    REWRITE_SYSTEM,
    REWRITE,
    ROUTER_SYSTEM,
    ROUTER,
    GRAPH_TEXT_SYSTEM,
    GRAPH_TEXT,
    DEDUP_SYSTEM,
    DEDUP,
    ANSWER_SYSTEM,
    ANSWER,
    ENTITY_KINDS,
    ENTITY_SPELLINGS,
    EXAMPLES_HEAD,
    ENTITY_UNLINKED,
    ENTITY_NONE,
    ENTITY_KNOWN,
    ANSWER_FAILED,
    ENTITY_RETRY,
    ROUTE_NO_CUE,
    ROUTE_CUE,
    ROUTE_RETRY,
]
