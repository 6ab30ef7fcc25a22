"""Knowledge-graph extraction prompts: entities with types and relations from one chunk of text.

The chunk is the document's text, untrusted: it is filled in as a data block
(:mod:`prompts.data_block`), and the system prompt carries the data rule. The optional schema
(allowed entity types and relations) is the operator's and is stated as plain instructions.
"""

from __future__ import annotations

from hybridrag.prompts import Prompt
from hybridrag.prompts.data_block import guarded

VERSION = "2"  # part of the extraction cache key: a changed prompt re-extracts every chunk

SYSTEM = Prompt(
    "extract.system",
    guarded("""\
You build a knowledge graph from text. From the passage you are given, list:
- entities: every named thing the passage states a fact about (people, organisations,
  places, works, products, events, dates, quantities that matter), each with its name
  copied exactly as the passage writes it, a short lower-case type in one or two words,
  and any other names the passage gives it (aliases, abbreviations);
- relations: facts stated by the passage, each as head entity name, a short relation
  in snake_case (founded_by, born_in, located_in, part_of...), and tail entity name.
  Use the entity names exactly as in your entity list. Write each relation in the
  direction the passage states it.
State only what the passage says; do not add outside knowledge. Return empty lists for a
passage that states no facts.

Example passage: "Ada Lovelace, born in London, worked with Charles Babbage."
Example answer: entities Ada Lovelace (person), London (city), Charles Babbage (person);
relations Ada Lovelace born_in London, Ada Lovelace worked_with Charles Babbage."""),
)

SCHEMA = Prompt(
    "extract.schema",
    """\
Use only these entity types: {entity_types}.
Use only these relations (head type -> tail type where given): {relations}.
Leave out entities and facts that fit none of them.""",
    ("entity_types", "relations"),
)

CHUNK = Prompt(
    "extract.chunk",
    """\
Passage (quoted data):
{passage}
List its entities and relations.""",
    ("passage",),
)

ALL = [SYSTEM, SCHEMA, CHUNK]
