"""HybGRAG prompts: router, validator, commentor, answerer and the corrective feedback.

Written for this project after the roles described in the HybGRAG paper (its App. C.2 and
Table 4); the wording is ours. Few-shot examples live in ``prompts/examples/``.
"""

from __future__ import annotations

from hybridrag.prompts import Prompt
from hybridrag.prompts.data_block import guarded

ROUTER_SYSTEM = Prompt(
    "hybgrag.router_system",
    guarded("""\
You plan searches over a knowledge base made of a knowledge graph and text documents.
For a question, pick out its relational side: the topic entities it names and the graph
relations that lead from them to the answer. Then pick the retrieval module.
Rules:
1. Every relation must be one of the given relation types, spelled exactly as listed; when
   none are given, name each relation as a short phrase with words joined by "_".
2. Every topic entity gets exactly one entity type from the given entity types.
3. A topic entity is a specific named thing (a person, a title, a year, a language...).
   Descriptions, themes and qualities are textual aspects: leave them to the text ranking.
4. Choose the module last: "hybrid" when the topic entities and relations narrow down
   the knowledge graph, "text" when nothing relational was found.
Follow the pattern of the examples (each a quoted data block: a question and its answer)."""),
)

# Everything fixed for a KB comes first and the per-question parts (the retrieved examples, the
# question) last: llama.cpp reuses the evaluated prefix of the previous prompt, so only the
# examples and the question are evaluated for each new question.
ROUTER_FIRST = Prompt(
    "hybgrag.router_first",
    """\
Entity types: {entity_types}
Relation types: {relation_types}
Examples:
{examples}
Now extract the topic entities and useful relations of this question, then choose the module.
Question: {question}""",
    ("examples", "entity_types", "relation_types", "question"),
)

NO_RELATION_TYPES = (
    "(none: this knowledge base states its facts only in text; name each relation "
    'the question follows as a short phrase with words joined by "_", e.g. born_in)'
)

ROUTER_REFLECT = Prompt(
    "hybgrag.router_reflect",
    """\
The reference retrieved with your last choice was rejected.
Feedback: {feedback}
Question: {question}
Extract the topic entities and useful relations again, applying the feedback, then choose
the module again ("hybrid" for the knowledge graph, "text" for text documents).""",
    ("feedback", "question"),
)

# router_calls=2 (the paper's two router calls): the first reply is the extraction alone, the second the module
ROUTER_EXTRACT_ONLY = Prompt(
    "hybgrag.router_extract_only",
    """\
For now give only the topic entities and useful relations; the module is asked next.""",
)

ROUTER_MODULE = Prompt(
    "hybgrag.router_module",
    """\
Every entity of the knowledge graph has a text document. With the entities and relations you
extracted, which would narrow down the search for the answer: the knowledge graph ("hybrid")
or the text documents ("text")?""",
)

ROUTER_EXAMPLE = Prompt(
    "hybgrag.router_example",
    """\
{block}""",
    ("block",),
)

VALIDATOR_SYSTEM = Prompt(
    "hybgrag.validator_system",
    guarded("""\
You check retrieved references against a question. A reference is a data block with the
retrieved item's name, its text and, when it came from the knowledge graph, the reasoning
paths that connect the question's topic entities to it, written as topic → relation → ... → item.
Say "yes" when the reference meets what the question asks for (the paths and the text
satisfy its constraints), otherwise "no". Give one short sentence of reasoning first.
Follow the pattern of the examples."""),
)

VALIDATOR = Prompt(
    "hybgrag.validator",
    """\
Examples:
{examples}

Question: {question}
References (quoted data, one block each):
{references}
Do the references meet the requirements of the question?""",
    ("examples", "question", "references"),
)

VALIDATOR_EXAMPLE = Prompt(
    "hybgrag.validator_example",
    """\
Question: {question}
Reference:
{reference}
Verdict: {verdict}""",
    ("question", "reference", "verdict"),
)

COMMENTOR_SYSTEM = Prompt(
    "hybgrag.commentor_system",
    guarded("""\
A router extracted topic entities and relations from a question to search a knowledge
graph, or chose plain text search. The reference it retrieved was rejected. Diagnose the
most likely mistake as one error type:
- incorrect_entity_relation: an extracted entity or relation is wrong (often a textual
  aspect taken for an entity, or a relation that does not lead to the answer); name them.
- missing_entity: only one entity was extracted but the question names more.
- no_entity: no entity was extracted although the question names one.
- no_intersection: several entities whose graph neighbourhoods share nothing.
- incorrect_intersection: several entities whose shared neighbourhood misses the answer.
- incorrect_retrieval_module: the chosen module (text or hybrid) does not suit the question.
Give one short sentence of reasoning first. Follow the examples (each a quoted data block:
a rejected action and its critique)."""),
)

COMMENTOR = Prompt(
    "hybgrag.commentor",
    """\
Examples:
{examples}

Question: {question}
Retrieval module: {module}
Topic entities: {entities}
Useful relations: {relations}
Which entity or relation is wrong, if any, and what is the error type?""",
    ("examples", "question", "module", "entities", "relations"),
)

COMMENTOR_EXAMPLE = Prompt(
    "hybgrag.commentor_example",
    """\
Example {n}:
{block}""",
    ("n", "block"),
)

ANSWER_SYSTEM = Prompt(
    "hybgrag.answer_system",
    guarded("""\
Answer the question from the references only. Reason in one or two sentences, then give
a short answer (names or values, comma separated) taken from the references. If the
references do not contain the answer, say you do not know."""),
)

ANSWER = Prompt(
    "hybgrag.answer",
    """\
Question: {question}
References (quoted data, one block each):
{references}""",
    ("question", "references"),
)

FEEDBACK_PREFIX = "The retrieved reference is incorrect."

FEEDBACK = {
    "incorrect_entity": Prompt(
        "hybgrag.feedback.incorrect_entity",
        """\
Entity {names} is incorrect. Remove it or replace it with another entity.""",
        ("names",),
    ),
    "incorrect_relation": Prompt(
        "hybgrag.feedback.incorrect_relation",
        """\
Relation {names} is incorrect. Remove it or replace it with a relation from the relation types.""",
        ("names",),
    ),
    "missing_entity": Prompt(
        "hybgrag.feedback.missing_entity",
        """\
Only one entity was used, but the question may name more. Extract one more entity and relation.""",
    ),
    "no_entity": Prompt(
        "hybgrag.feedback.no_entity",
        """\
No entity was extracted. Extract at least one entity and one relation.""",
    ),
    "no_intersection": Prompt(
        "hybgrag.feedback.no_intersection",
        """\
The neighbourhoods of the entities do not intersect. Remove or replace one entity and its relation.""",
    ),
    "incorrect_intersection": Prompt(
        "hybgrag.feedback.incorrect_intersection",
        """\
The neighbourhoods of the entities intersect, but the answer is not in the intersection. \
Remove or replace one entity and its relation.""",
    ),
    "incorrect_retrieval_module": Prompt(
        "hybgrag.feedback.incorrect_retrieval_module",
        """\
The current retrieval module may not help narrow down the search; try the other module.""",
    ),
}

ALL = [
    ROUTER_SYSTEM,
    ROUTER_FIRST,
    ROUTER_REFLECT,
    ROUTER_EXTRACT_ONLY,
    ROUTER_MODULE,
    ROUTER_EXAMPLE,
    VALIDATOR_SYSTEM,
    VALIDATOR,
    VALIDATOR_EXAMPLE,
    COMMENTOR_SYSTEM,
    COMMENTOR,
    COMMENTOR_EXAMPLE,
    ANSWER_SYSTEM,
    ANSWER,
    *FEEDBACK.values(),
]
