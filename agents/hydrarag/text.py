"""HydraRAG unstructured retrieval (paper §4.2.1, Algorithm 2): documents and web → paths.

- Documents: the topic entities' own documents (attached to them, or naming them: a KB's
  passages need not be attached to every entity they mention) plus the ``doc_pool`` best
  corpus passages for the query (our addition), split into sentences; the dense retrieval
  model keeps the top sentences by similarity to the skyline indicator (not the question),
  and one LLM call turns them into knowledge paths.
- Web: the query goes to the search engine (:func:`tools.web.web_search`), the LLM picks
  the top W_max results, and their text goes through the same sentence screening and
  path construction.
- Path entities are aligned to the KB (exact name, else embedding match) so verification
  can check them against the question subgraph.

Fallback when the path construction is unparseable: each selected sentence becomes a one-step
path whose entities are the KB names it mentions. Each candidate keeps the sentence it was built
from and, under ``instructions``, the sentences shown to the path-construction call that read as
instructions (usually none), so the answer support check knows what the model may have been told
(:mod:`prompts.grounding`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from hybridrag.agents import vector_table
from hybridrag.agents.hydrarag import roles as roles
from hybridrag.agents.hydrarag.analysis import link_names, split_chain
from hybridrag.agents.hydrarag.pruning import SENTENCE_TABLE, apply_choice, embed_texts
from hybridrag.agents.hydrarag.text_rules import rule_paths
from hybridrag.agents.llm.structured import add_usage
from hybridrag.kb.base import KnowledgeBase
from hybridrag.prompts.data_block import data_block, data_list
from hybridrag.prompts.grounding import is_instruction
from hybridrag.tools import web
from hybridrag.tools.fused_text import hybrid_search
from hybridrag.tools.retrieval import mentions_in
from hybridrag.tools.text import name_pattern
from hybridrag.tools.text import sentences as split_sentences


@dataclass(frozen=True)
class TextSettings:
    """Settings of unstructured retrieval."""

    num_sentences: int = 3
    doc_pool: int = 5
    web_results: int = 5
    max_width: int = 3
    link_threshold: float = 0.75
    method: str = "function_calling"
    rules: bool = False  # paragraph → path by rule (:mod:`agents.hydrarag.text_rules`), no LLM call


def sentences(text: str) -> list[str]:
    """The sentences of a text, each at least three characters long.

    An initial or a title ("Albert S. Rogell", "Dr.") ends none, nor does a mark before a lower-case
    word ("Railroaded! was").
    """
    return split_sentences(text, before="not lower", min_chars=3)


NAMING_PER_POOL = 4  # passages naming a topic entity: up to 4 x doc_pool
_FOLDED: dict[int, tuple[KnowledgeBase, list]] = {}
_FOLDED_LOCK = threading.Lock()


def _folded(kb: KnowledgeBase) -> list:
    """(passage, case-folded text) of every passage of ``kb`` (built once per opened KB)."""
    with _FOLDED_LOCK:
        if id(kb) not in _FOLDED or _FOLDED[id(kb)][0] is not kb:
            _FOLDED[id(kb)] = (kb, [(d, d.text.casefold()) for d in kb.docs if d.kind == "passage"])
        return _FOLDED[id(kb)][1]


def naming(kb: KnowledgeBase, name: str, k: int) -> list:
    """Up to ``k`` passages that name ``name`` as a whole phrase (case-insensitive, in KB order)."""
    low = name.casefold().strip()
    if len(low) < 3 or k <= 0:
        return []
    rx = name_pattern(low)  # both sides case-folded
    out = []
    for d, text in _folded(kb):
        if low in text and rx.search(text):
            out.append(d)
            if len(out) == k:
                break
    return out


def gather_docs(kb: KnowledgeBase, topic_ids: list[str], query: str, pool: int) -> list[tuple[str, str, str]]:
    """``(id, name, text)`` of the topic entities' documents and the ``pool`` best corpus passages.

    Doc(e) is the passages attached to e and (ours) up to ``4·pool`` passages naming e as a whole phrase.
    """
    own = kb.passages_of(set(topic_ids))
    names = kb.names({d.id for d in own if d.kind != "passage"} | set(topic_ids)) if own or topic_ids else {}
    docs = [d for d in own if d.kind == "passage" or d.text != names[d.id]]
    for tid in dict.fromkeys(topic_ids) if pool > 0 else ():
        docs += naming(kb, names[tid], NAMING_PER_POOL * pool)
    docs += [h.doc for h in hybrid_search(kb, query, pool, "passage")] if pool > 0 else []  # dense + BM25 fused
    owners = {d.entity_id for d in docs if d.entity_id and d.entity_id not in names}
    names.update(kb.names(owners) if owners else {})  # one more read, for the owners of the passages found
    out: dict[str, tuple[str, str, str]] = {}
    for d in docs:
        out.setdefault(d.id, (d.id, names[d.entity_id] if d.entity_id else d.id, d.text))
    return list(out.values())


def build_sentence_table(kb: KnowledgeBase, progress: bool = False) -> int:
    """Encode every sentence of the KB's documents into the vector table; returns the number of sentences.

    The documents are those :func:`gather_docs` can return; the table is the one
    :func:`agents.hydrarag.pruning.embed_texts` reads.
    """
    texts = {s for d in kb.docs if d.kind == "passage" or d.text != kb.name(d.id) for s in sentences(d.text)}
    vector_table.build(kb, SENTENCE_TABLE, texts, progress)
    return len(texts)


def top_sentences(kb: KnowledgeBase, docs: list[tuple[str, str, str]], indicator: str, k: int) -> list[dict]:
    """The ``k`` sentences most similar to the indicator, with the document they come from."""
    rows = [(doc_id, name, s) for doc_id, name, text in docs for s in sentences(text)]
    if not rows or k <= 0:
        return []
    scores = embed_texts(kb, [s for _, _, s in rows]) @ embed_texts(kb, [indicator])[0]
    order = sorted(range(len(rows)), key=lambda i: -scores[i])
    out, seen = [], set()
    for i in order:
        if rows[i][2] not in seen:
            seen.add(rows[i][2])
            out.append(
                {"doc_id": rows[i][0], "doc_name": rows[i][1], "sentence": rows[i][2], "score": float(scores[i])}
            )
        if len(out) == k:
            break
    return out


def _paragraphs(sents: list[dict]) -> str:
    return "\n".join(data_block(s["sentence"], n=i) for i, s in enumerate(sents, 1))


def _fallback_paths(kb: KnowledgeBase, sents: list[dict]) -> list[dict]:
    return [{"sent": s, "tokens": [s["sentence"]], "ids": mentions_in(kb, s["sentence"])} for s in sents]


def _parsed_paths(kb: KnowledgeBase, reply: roles.TextPaths, sents: list[dict], threshold: float) -> list[dict]:
    raw = [(sents[p.paragraph - 1], split_chain(p.path)) for p in reply.paths if 1 <= p.paragraph <= len(sents)]
    raw = [(s, toks) for s, toks in raw if len(toks) >= 3]
    linked = link_names(kb, [n for _, toks in raw for n in toks[0::2]], threshold)
    return [
        {"sent": s, "tokens": toks, "names": toks[0::2], "ids": [linked.get(n) for n in toks[0::2]]} for s, toks in raw
    ]


def to_candidates(
    kb: KnowledgeBase,
    reply: roles.TextPaths | None,
    sents: list[dict],
    source: str,
    phase: str,
    threshold: float,
    built: list[dict] | None = None,
) -> tuple[list[dict], str | None]:
    """Candidate paths and the fallback note (None when no fallback was taken).

    The paths are the LLM's, or ``built`` ones (:mod:`agents.hydrarag.text_rules`), or the sentence fallback.
    """
    if built is None:
        built = _parsed_paths(kb, reply, sents, threshold) if reply is not None else []
    note = None
    if not built:
        note = (
            "unparseable path construction: sentences kept as paths"
            if reply is None
            else "no usable path in the reply: sentences kept as paths"
        )
        built = _fallback_paths(kb, sents)
    flagged = [s["sentence"] for s in sents if is_instruction(s["sentence"])]
    out = []
    for n, b in enumerate(built):
        names = b.get("names", [])
        keys = (
            [f"id:{i}" if i else f"name:{nm.lower()}" for nm, i in zip(names, b["ids"], strict=True)]
            if names
            else [f"id:{i}" for i in b["ids"]]
        )
        out.append(
            {
                "id": f"{source}:{phase}:{n}",
                "source": source,
                "phase": phase,
                "text": " → ".join(b["tokens"]),
                "keys": list(dict.fromkeys(keys)),
                "answers": [i for i in b["ids"] if i],
                "doc_id": b["sent"]["doc_id"],
                "doc_name": b["sent"]["doc_name"],
                "path": b["tokens"],
                "sentence": b["sent"]["sentence"],
                "instructions": flagged,
                "follows": b.get("follows", False),
            }
        )
    return out, note


def _select_sentences(kb: KnowledgeBase, chains: list[dict], docs_of, k: int) -> list[dict]:
    picked: dict[str, dict] = {}
    for ch in chains:
        for s in top_sentences(kb, docs_of(ch), ch["indicator"], k):
            picked.setdefault(s["sentence"], s)
    return list(picked.values())


def _build_paths(
    kb, model, question: str, probe: dict, sents: list[dict], source: str, s: TextSettings
) -> tuple[list[dict], dict, str | None]:
    note: str | None
    if not sents:
        return [], {}, f"no {source} sentences"
    names = sorted({n for ch in probe["chains"] for n in ch["names"]})
    if s.rules:
        built = rule_paths(kb, probe["chains"], sents)
        note = "judge rules (small model): paths from the sentences naming a topic" + (
            "" if built else "; none found: sentences kept as paths"
        )
        return to_candidates(kb, None, sents, source, probe["phase"], s.link_threshold, built)[0], {}, note
    skyline = data_list(dict.fromkeys(ch["indicator"] for ch in probe["chains"]))
    reply, usage = roles.paths_from_text(
        model, question, data_list(names), skyline, _paragraphs(sents), s.method, probe.get("examples", "")
    )
    cands, note = to_candidates(kb, reply, sents, source, probe["phase"], s.link_threshold)
    return cands, usage, note


def explore_docs(kb: KnowledgeBase, model, question: str, probe: dict, s: TextSettings):
    """Document exploration: returns (candidates, usage, note)."""
    sents = _select_sentences(
        kb, probe["chains"], lambda ch: gather_docs(kb, ch["doc_topics"], ch["query"], s.doc_pool), s.num_sentences
    )
    return _build_paths(kb, model, question, probe, sents, "doc", s)


def explore_web(kb: KnowledgeBase, model, question: str, probe: dict, s: TextSettings):
    """Web exploration; raises :class:`tools.web.WebSearchError` when search is unavailable."""
    results: dict[str, dict] = {}
    for q in dict.fromkeys(ch["query"] for ch in probe["chains"]):
        for r in web.web_search(q, k=s.web_results):
            results.setdefault(r["id"], r)
    found = list(results.values())
    if not found:
        return [], {}, "web search returned nothing"
    listing = "\n".join(
        data_block([("title", r["name"]), ("snippet", r["text"][:300])], n=i) for i, r in enumerate(found, 1)
    )
    skyline = data_block(probe["chains"][0]["indicator"])
    choice, usage = roles.select_web(model, question, skyline, listing, s.max_width, s.method)
    chosen, used = apply_choice(found, choice.selected if choice else None, s.max_width)
    docs = [(r["id"], r["name"] or r["id"], r["text"]) for r in chosen]
    sents = _select_sentences(kb, probe["chains"], lambda ch: docs, s.num_sentences)
    cands, more, note = _build_paths(kb, model, question, probe, sents, "web", s)
    pick_note = None if used else "web selection unusable: top results by engine order"
    return cands, add_usage(usage, more), "; ".join(n for n in (pick_note, note) if n) or None
