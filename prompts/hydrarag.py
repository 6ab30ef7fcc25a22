"""HydraRAG prompts: one template pair (system, human) per LLM role of the method.

Written for this project after the roles of the HydraRAG paper (§4, App. E); the wording
and the examples are ours. Paths are shown as ``{A} → relation → {B, C}`` (KG, entity
sets after clustering) or ``A → relation → B`` (paths built from document or web text).
Everything taken from a source, or written by a model from it (topic names, skyline,
sub-questions, paths, paragraphs, results, summaries), is filled in as data blocks
(:mod:`prompts.data_block`); only the question is plain text.
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
list), and the kind of the answer (from the list). Reply with JSON only.
{examples}"""),
    ("examples",),
)

PLAN = Prompt(
    "hydrarag.plan",
    """\
Relations: {relations}
Answer kinds: {kinds}
Question: {question}
Topic entities (quoted data):
{topics}""",
    ("relations", "kinds", "question", "topics"),
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

BUNDLED: dict[str, list[str]] = {  # the project's movie examples (examples="bundled")
    "topics": [
        'Example: "Which country is the director of Amelie from?" -> ["Amelie"]',
        'Example: "what films did Kevin Bacon and Tom Hanks both star in" -> ["Kevin Bacon", "Tom Hanks"]',
    ],
    "analysis": [
        'Example: question "Which country is the director of Amelie from?", topic entities ["Amelie"]: '
        'sub-questions ["Who directed Amelie?", "Which country is that director from?"]; '
        'skyline "Amelie - directed by - director - citizen of - answer(country)"',
        'Example: question "what genre are the films Kevin Bacon acted in", topic entities '
        '["Kevin Bacon"]: sub-questions ["Which films did Kevin Bacon act in?", "What genre are '
        'those films?"]; skyline "Kevin Bacon - starred actors - movie - has genre - answer(genre)"',
    ],
    "text_paths": [
        'Example: paragraph 1 "Apollo 13 is a 1995 film directed by Ron Howard, who was born in '
        'Duncan, Oklahoma." -> paragraph 1, "Apollo 13 - directed by - Ron Howard - born in - '
        'Duncan, Oklahoma"',
        'Example: paragraph 2 "Tremors stars Kevin Bacon." -> paragraph 2, "Tremors - starred actors - Kevin Bacon"',
    ],
    "plan": [
        'Example: "who directed the films Tom Hanks starred in" → {"topic": "Tom Hanks", '
        '"relations": ["starred_actors", "directed_by"], "answer_type": "person"}',
        'Example: "what genre are the films Kevin Bacon acted in" → {"topic": "Kevin Bacon", '
        '"relations": ["starred_actors", "has_genre"], "answer_type": "genre"}',
    ],
    "selector": [
        'Example: question "who directed Big", available kg, docs, skyline "Big - directed by - answer(person)" -> '
        "a stable fact between two named entities, which the graph holds: kg",
        'Example: question "what happens to the hero at the end of Heat", available kg, docs -> the graph has the '
        "film but no plot relation, the documents may describe it: kg + docs",
    ],
    "follow_up": [
        'Example: question "who directed the films Tom Hanks starred in", paths "{Tom Hanks} ← starred actors ← '
        '{Big, Splash}", check "no: the directors are missing" -> missing: who directed Big and Splash; follow-up '
        '"who directed Big and Splash"; skyline "Big - directed by - answer(person)"; entities ["Big", "Splash"]',
        'Example: question "which language is Amelie in", paths "{Amelie} → directed by → {Jean-Pierre Jeunet}", '
        'check "no: no path names a language" -> missing: the language of the film; follow-up "what language is '
        'the film Amelie in"; skyline "Amelie - in language - answer(language)"; entities ["Amelie"]',
    ],
    "predict": [
        'Example: question "who directed Big", paths "{Big} → release year → {1988}", check "no: the director '
        'is missing" -> prediction "Penny Marshall", skyline "Big - directed by - Penny Marshall"',
        'Example: question "what genre is Tremors", paths "{Tremors} → starred actors → {Kevin Bacon}" -> '
        'predictions "Horror", skyline "Tremors - has genre - Horror"; "Comedy", skyline "Tremors - has genre - '
        'Comedy"',
    ],
    "select_paths": [
        'Example: question "who directed Big", skyline "Big - directed by - answer(person)", paths 1 "{Big} → '
        'release year → {1988}", 2 "{Big} → directed by → {Penny Marshall}" -> path 2 follows the skyline and '
        "names a person: [2]",
        'Example: question "what films did Kevin Bacon act in", skyline "Kevin Bacon - starred actors - '
        'answer(movie)", paths 1 "{Kevin Bacon} ← starred actors ← {Tremors, Apollo 13}", 2 "{Kevin Bacon} ← '
        'has tags ← {Footloose}" -> path 1 carries the relation asked for, path 2 only a tag: [1]',
    ],
    "refine": [
        'Example: question "who directed the films Tom Hanks starred in", paths "{Tom Hanks} ← starred actors ← '
        '{Big} → directed by → {Penny Marshall}", "{Big} → release year → {1988}" -> "Tom Hanks starred in '
        'Big; Big was directed by Penny Marshall."',
        'Example: question "who directed Apollo 13", paths "{Apollo 13} → directed by → {Ron Howard}", '
        '"Ron Howard - born in - Duncan, Oklahoma" -> "Apollo 13 was directed by Ron Howard."',
    ],
    "generate": [
        'Example: question "who directed Big", evidence "{Big} → directed by → {Penny Marshall}" -> answer '
        '"Penny Marshall"',
        'Example: question "what year was Tremors released", evidence "{Tremors} → starred actors → {Kevin Bacon}" '
        '-> the evidence does not say; from what is known of the film: answer "1990"',
    ],
    "path_summary": [
        'Example: skyline "Apollo 13 - directed by - director - born in - answer(place)", paths 1 "Apollo 13 - '
        'directed by - Ron Howard", 2 "Ron Howard - born in - Duncan, Oklahoma", 3 "Apollo 13 - released in - '
        '1995" -> "Apollo 13 - directed by - Ron Howard - born in - Duncan, Oklahoma" from [1, 2]',
        'Example: skyline "Big - directed by - answer(person)", paths 1 "Big - directed by - Penny Marshall", 2 '
        '"Big - directed by - Penny Marshall" -> "Big - directed by - Penny Marshall" from [1, 2]',
    ],
    "check": [
        'Example: question "who directed Big", evidence "{Big} → directed_by → {Penny Marshall}" -> yes, '
        'answer "Penny Marshall"',
        'Example: question "who directed Big", evidence "{Big} → release_year → {1988}" -> no, missing '
        '"the director of Big"',
    ],
}

ALL = [
    TOPICS_SYSTEM,
    TOPICS,
    ANALYSIS_SYSTEM,
    ANALYSIS,
    PLAN_SYSTEM,
    PLAN,
    SELECTOR_SYSTEM,
    SELECTOR,
    TEXT_PATHS_SYSTEM,
    TEXT_PATHS,
    WEB_SELECT_SYSTEM,
    WEB_SELECT,
    FOLLOW_UP_SYSTEM,
    FOLLOW_UP,
    PREDICT_SYSTEM,
    PREDICT,
    PATH_SUMMARY_SYSTEM,
    PATH_SUMMARY,
    SELECT_PATHS_SYSTEM,
    SELECT_PATHS,
    REFINE_SYSTEM,
    REFINE,
    CHECK_SYSTEM,
    CHECK,
    GENERATE_SYSTEM,
    GENERATE,
]
