"""MoR prompts: the planner (reasoning paths or triplets), its re-planning turn, and the answerer.

Written for this project after the roles the MoR paper describes (§3.1, §4.1, App. B.2, App. E);
the paper's own prompt text is not reproduced. Few-shot examples come from the KB's solved
examples (:mod:`agents.mor.examples`) or, for MetaQA, ``prompts/examples/`` (``mor_planner.json``,
``mor_triplets.json``). The re-planning turn lists the problems :mod:`agents.mor.critique` found.
"""

from __future__ import annotations

from hybridrag.prompts import Prompt
from hybridrag.prompts.data_block import guarded

PLANNER_SYSTEM = Prompt(
    "mor.planner_system",
    """\
You turn a question into a search plan over a knowledge graph whose entities carry text.
The plan is a small graph of entity types. Write it as routes: each route is a chain of
entity types that starts at something the question names and ends at the type of the answer.
Rules:
1. Use only the given entity types, spelled exactly as listed.
2. Every route ends at the same type: the type of the answer.
3. Give a node a restriction when the question says something specific about it (a name, a
   year, a topic, a description); copy those words from the question. Leave it empty otherwise.
   The first node of every route must have a restriction.
4. Consecutive types in a route must be linked by one of the relation types. Name that
   relation on the later node when more than one relation links the two types.
5. Use one route per separate condition the answer must meet; keep routes short (at most
   three hops).
6. If nothing in the question points into the graph, return a single route with a single node:
   the answer type with the question's description as its restriction.
Follow the pattern of the examples.""",
)

# The examples come before the schema, although the schema is fixed for a KB and would be reused
# by llama.cpp as a shared prefix if it came first: with the schema first, a small model plans a
# lone answer node (no restricted topic node) for questions it plans right in this order.
# With a grammar that holds the KB's types and relations, a small model is not shown the schema at
# all (``planner_schema=auto``, :func:`agents.mor.roles.schema_shown`).
PLANNER = Prompt(
    "mor.planner",
    """\
Examples:
{examples}

{schema}Question: {question}
Plan:""",
    ("examples", "schema", "question"),
)

# The schema block of the planner and triplet prompts (empty when ``planner_schema`` leaves it out).
SCHEMA = Prompt(
    "mor.schema",
    """\
Entity types: {entity_types}
Relation types: {relation_types}
""",
    ("entity_types", "relation_types"),
)

PLANNER_EXAMPLE = Prompt(
    "mor.planner_example",
    """\
Question: {question}
Plan: {plan}""",
    ("question", "plan"),
)

REPLAN = Prompt(
    "mor.replan",
    """\
Searching the knowledge graph with that plan went wrong here:
{problems}
Question: {question}
Write the plan again. Repair each part named above (a type, a relation, a restriction), using only
the listed entity types, relations that link consecutive types, and restrictions copied from the
question; keep the parts that worked.""",
    ("problems", "question"),
)

TRIPLETS_SYSTEM = Prompt(
    "mor.triplets_system",
    """\
You read a question and write down the facts its answer takes part in, as triplets over a
knowledge graph: head entity, relation, tail entity. Each entity has a type from the given
entity types and, when the question says something specific about it, a restriction copied
from the question. The unknown answer is an entity of the target type with no restriction;
use it in every triplet that concerns it, so that triplets sharing entities form one graph.
Use only the given entity and relation types. Follow the pattern of the examples.""",
)

TRIPLETS = Prompt(
    "mor.triplets",
    """\
Examples:
{examples}

{schema}Question: {question}
Triplets:""",
    ("examples", "schema", "question"),
)

TRIPLET_EXAMPLE = Prompt(
    "mor.triplet_example",
    """\
Question: {question}
Triplets: {triplets}""",
    ("question", "triplets"),
)

ANSWER_SYSTEM = Prompt(
    "mor.answer_system",
    guarded("""\
Answer the question using only the retrieved entities below. Each is a data block with its
name, the path that reached it in the knowledge graph and its best matching text. Reason in
one or two sentences, then give a short answer (names or values, comma separated) taken from
the retrieved entities. If none of them answers the question, say you do not know."""),
)

ANSWER = Prompt(
    "mor.answer",
    """\
Question: {question}
Retrieved entities (quoted data, one block each):
{references}""",
    ("question", "references"),
)

ALL = [
    PLANNER_SYSTEM,
    PLANNER,
    SCHEMA,
    PLANNER_EXAMPLE,
    REPLAN,
    TRIPLETS_SYSTEM,
    TRIPLETS,
    TRIPLET_EXAMPLE,
    ANSWER_SYSTEM,
    ANSWER,
]
