"""Typed retrieval functions over an opened KB; results are plain JSON-ready dicts."""

from __future__ import annotations

import re

from hybridrag.kb.base import Hit, KnowledgeBase
from hybridrag.kb.model import Triple, UnknownEntityError
from hybridrag.kb.store import Direction
from hybridrag.tools.text import WORD, name_pattern

MAX_MENTION_WORDS = 8
_PLAIN = re.compile(r"[\w']+(?: [\w']+)*")
_JOINED = set("!?.()*#$¡¿")  # punctuation a name may start or end with


def _hit(kb: KnowledgeBase, h: Hit) -> dict:
    d = h.doc
    name = kb.name(d.id) if d.kind == "entity" else d.id
    return {"kind": d.kind, "id": d.id, "entity_id": d.entity_id, "name": name, "text": d.text, "score": h.score}


def _triple(kb: KnowledgeBase, t: Triple) -> dict:
    return {
        "head": t.head,
        "relation": t.type,
        "tail": t.tail,
        "text": t.verbalise({t.head: kb.name(t.head), t.tail: kb.name(t.tail)}),
    }


def dense_search(kb: KnowledgeBase, query: str, k: int = 10, kind: str | None = None) -> list[dict]:
    """Top-k entity documents/passages by cosine similarity to ``query``."""
    return [_hit(kb, h) for h in kb.dense_search(query, k, kind)]


def lexical_search(kb: KnowledgeBase, query: str, k: int = 10, kind: str | None = None) -> list[dict]:
    """Top-k entity documents/passages by BM25."""
    return [_hit(kb, h) for h in kb.lexical_search(query, k, kind)]


def _forms(text: str, start: int, end: int) -> list[str]:
    """Ways a name may be written over ``text[start:end]``, most specific first.

    The forms are: with the punctuation that touches it ("Hello, Dolly!", "(500) Days of Summer",
    "Jr."; never a separator ``,;:`` or a quote), as written inside ("Albert S. Rogell"), without
    edge apostrophes ('Heat'), then word by word ("spider man" for "spider-man"). One form a
    case-folded spelling.
    """
    left, right = start, end
    while left > 0 and text[left - 1] in _JOINED:
        left -= 1
    while right < len(text) and text[right] in _JOINED:
        right += 1
    core = text[start:end]
    if left == start and right == end and _PLAIN.fullmatch(core) and "'" not in (core[0], core[-1]):
        return [core]  # words and single spaces only: every form below is this one
    spans = dict.fromkeys([(left, right), (start, right), (left, end), (start, end)])
    forms = [" ".join(text[a:b].split()) for a, b in spans]
    forms += [forms[-1].strip("'"), " ".join(WORD.findall(core)).lower()]
    unique: dict[str, str] = {}
    for form in forms:
        if form:
            unique.setdefault(form.casefold(), form)
    return list(unique.values())


def mention_spans(kb: KnowledgeBase, text: str) -> list[tuple[int, str, list[str]]]:
    """(start offset, form as written, entity ids) of each KB name or alias ``text`` writes.

    Matching is case-insensitive and keeps punctuation (see :func:`_forms`). Longest mentions come
    first, then text order; a shorter mention inside a longer matched one is skipped.
    """
    toks = list(WORD.finditer(text))
    taken = [False] * len(toks)
    found: list[tuple[int, str, list[str]]] = []
    for n in range(min(MAX_MENTION_WORDS, len(toks)), 0, -1):
        for i in range(len(toks) - n + 1):
            if any(taken[i : i + n]):
                continue
            start, end = toks[i].start(), toks[i + n - 1].end()
            for form in _forms(text, start, end):
                if ents := kb.graph.lookup(form):
                    found.append((start, form, [e.id for e in ents]))
                    taken[i : i + n] = [True] * n
                    break
    return found


def mentions_in(kb: KnowledgeBase, text: str) -> list[str]:
    """Entity ids whose name or alias appears verbatim (case-insensitive) in ``text``, punctuation and all.

    Examples: "Hello, Dolly!", "The World, the Flesh and the Devil". Longest mentions win; a shorter
    mention inside a longer matched one is skipped.
    """
    return list(dict.fromkeys(i for _, _, ids in mention_spans(kb, text) for i in ids))


def link_entities(kb: KnowledgeBase, mentions: list[str], min_score: float = 0.5) -> dict[str, list[dict]]:
    """Link each mention: exact/alias/case-insensitive name, then dense name match."""
    return {
        m: [{"id": e.id, "name": e.name, "type": e.type} for e in kb.link(m, k=3, min_score=min_score)]
        for m in mentions
    }


def neighbors(
    kb: KnowledgeBase,
    ids: list[str],
    relations: list[str] | None = None,
    direction: Direction = "both",
    target_type: str | None = None,
) -> list[dict]:
    """Triples touching ``ids`` filtered by relation, direction and neighbour type."""
    return [_triple(kb, t) for t in kb.graph.neighbors(ids, relations, direction, target_type)]


def ego_graph(kb: KnowledgeBase, ids: list[str], radius: int = 2, relations: list[str] | None = None) -> dict:
    """Entities within ``radius`` hops of ``ids`` with the path reaching each."""
    sub = kb.graph.ego_graph(ids, radius, relations)
    return {
        "seeds": sub.seeds,
        "nodes": [
            {"id": n, "name": kb.name(n), "hops": d, "path": [_triple(kb, t)["text"] for t in sub.path_to(n)]}
            for n, d in sub.distance.items()
        ],
    }


def paths(kb: KnowledgeBase, sources: list[str], targets: list[str], max_hops: int = 2, limit: int = 20) -> list:
    """Paths of at most ``max_hops`` between two entity sets, each a list of triples."""
    return [[_triple(kb, t) for t in p] for p in kb.graph.paths(sources, targets, max_hops, limit)]


JOIN_RUNS = 4  # a title's capitalised runs are at most 4 runs apart ("It's a Mad, Mad, Mad, Mad World")
MAX_SPAN_CHARS = 120  # longer than any KB name (MetaQA's longest has 79 characters)
MAX_CHECKED_SPANS = 32  # the spans admission links: a question naming more is refused on these
NAMED_SPANS = 3  # the spans a refusal names
_EXPLICIT = re.compile(r"\[([^\]]+)\]|\"([^\"]+)\"")
_CAPS = re.compile(r"(?:[A-Z0-9][\w'&.-]*)(?:\s+(?:of|the|and|de|la|[A-Z0-9][\w'&.-]*))*")


def explicit_mentions(question: str) -> list[str]:
    """Spans a user marked as entities: [brackets], "quotes", or Capitalised Word runs.

    A single capitalised first word ("Who", "What") is not a mention.
    """
    found = [a or b for a, b in _EXPLICIT.findall(question)]
    plain = _EXPLICIT.sub(" ", question)
    runs: list[tuple[int, int]] = []
    for m in _CAPS.finditer(plain):
        span = m.group(0).strip(" .?!,")
        start = m.start()
        if start == 0 and " " not in span:
            continue
        if start == 0:  # drop a capitalised question word in front of a name
            first, _, rest = span.partition(" ")
            if first.lower() in {"who", "what", "which", "when", "where", "how", "did", "is"}:
                span, start = rest, start + len(first) + 1
        if span:
            found.append(span)
            runs.append((start, start + len(span)))
    # a title with lower-case words inside ("Miracle on 34th Street", "A View to a Kill") is
    # split into runs: the text from each run to each of the next few is a mention too (a few,
    # and short: every pair of runs would make a long question cost quadratic time)
    joined = [
        plain[a:b].strip(" .?!,")
        for i, (a, _) in enumerate(runs)
        for _, b in runs[i + 1 : i + 1 + JOIN_RUNS]
        if b - a <= MAX_SPAN_CHARS
    ]
    return list(dict.fromkeys(found + sorted(joined, key=len, reverse=True)))


def checked_spans(question: str) -> list[str]:
    """The explicit mentions admission links.

    At most ``MAX_CHECKED_SPANS``, none longer than any name (``MAX_SPAN_CHARS``); marked ones and
    single runs first, then joined ones longest first.
    """
    spans = [s for s in explicit_mentions(question) if len(s) <= MAX_SPAN_CHARS]
    return spans[:MAX_CHECKED_SPANS]


CLOSE_SCORE = 0.45  # a KB name this close to a refused span is offered in the refusal
TEXT_CHECKED_SPANS = 8  # spans looked up in the passages (one BM25 search each) before a refusal


def check_mentions(kb: KnowledgeBase, question: str, min_score: float = 0.8) -> None:
    """Raise UnknownEntityError when the question names entities and none of them is in the KB.

    Costs at most ``MAX_CHECKED_SPANS`` exact name lookups, then (when none matches) one
    embedding call and one vector search for all of them.
    """
    if not question.strip():
        raise ValueError("empty question: ask something, e.g. 'who directed Forrest Gump'")
    spans = checked_spans(question)
    if not spans or any(kb.graph.lookup(s) for s in spans):
        return
    scored = kb.dense_scored_many(spans, k=1)
    if any(s >= min_score for hits in scored for _, s in hits) or named_in_passages(kb, spans):
        return
    names = ", ".join(repr(s) for s in spans[:NAMED_SPANS])
    more = f" and {len(spans) - NAMED_SPANS} more" if len(spans) > NAMED_SPANS else ""
    near = dict.fromkeys(e.name for hits in scored[:NAMED_SPANS] for e, s in hits if s >= CLOSE_SCORE)
    hint = f"; closest names in it: {', '.join(repr(n) for n in near)}" if near else ""
    raise UnknownEntityError(f"unknown entity: {names}{more} is not in the knowledge base at {kb.directory}{hint}")


def named_in_passages(kb: KnowledgeBase, spans: list[str]) -> bool:
    """Whether a passage of the KB writes one of the first ``TEXT_CHECKED_SPANS`` spans (case-insensitive).

    A documents KB knows names its graph does not: the text side answers questions about them.
    """
    for span in spans[:TEXT_CHECKED_SPANS]:
        pattern = name_pattern(span)
        if any(pattern.search(h.doc.text) for h in kb.lexical_search(span, k=5, kind="passage")):
            return True
    return False
