"""Dice–Sørensen overlap between a query and labels, with word or character-bigram tokens."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from hybridrag.tools.text import name_pattern, sentences, words

Tokenizer = Literal["bigram", "word"]


def tokens(text: str, tokenizer: Tokenizer = "bigram") -> frozenset[str]:
    """Token set of ``text``: lower-cased words, or character bigrams of each word."""
    ws = words(text)
    if tokenizer == "word":
        return frozenset(ws)
    if tokenizer != "bigram":
        raise ValueError(f"unknown tokenizer {tokenizer!r}; use 'bigram' or 'word'")
    grams: set[str] = set()
    for w in ws:
        grams.update(w[i : i + 2] for i in range(len(w) - 1)) if len(w) > 1 else grams.add(w)
    return frozenset(grams)


def dice(a: frozenset[str], b: frozenset[str]) -> float:
    """2|A∩B| / (|A|+|B|); 0 when both are empty."""
    total = len(a) + len(b)
    return 2.0 * len(a & b) / total if total else 0.0


def triple_score(q: frozenset[str], head: frozenset[str], rel: frozenset[str], tail: frozenset[str]) -> float:
    """The fusion paper's s_graph: mean Dice of the query with head, relation and tail."""
    return (dice(q, head) + dice(q, rel) + dice(q, tail)) / 3.0


class LabelTable:
    """Token sets of many labels packed in CSR arrays, for vectorised Dice against one query."""

    def __init__(self, labels: Sequence[str], tokenizer: Tokenizer = "bigram") -> None:
        """Tokenise every label once."""
        self.tokenizer = tokenizer
        self.vocab: dict[str, int] = {}
        ids: list[int] = []
        self.indptr = np.zeros(len(labels) + 1, dtype=np.int64)
        for i, label in enumerate(labels):
            toks = tokens(label, tokenizer)
            ids.extend(self.vocab.setdefault(t, len(self.vocab)) for t in toks)
            self.indptr[i + 1] = len(ids)
        self.ids = np.asarray(ids, dtype=np.int32)
        self.sizes = np.diff(self.indptr).astype(np.float32)

    def scores(self, query_tokens: frozenset[str], rows: np.ndarray) -> np.ndarray:
        """Dice of the query with the labels at ``rows`` (touches only those rows' tokens)."""
        rows = np.asarray(rows, dtype=np.int64)
        mask = np.zeros(len(self.vocab) + 1, dtype=np.int32)
        known = [self.vocab[t] for t in query_tokens if t in self.vocab]
        mask[known] = 1
        starts, lens = self.indptr[rows], self.sizes[rows].astype(np.int64)
        total_len = int(lens.sum())
        inter: np.ndarray = np.zeros(len(rows), dtype=np.float64)
        if total_len:
            offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
            hits = mask[self.ids[offsets + np.arange(total_len)]]
            owner = np.repeat(np.arange(len(rows)), lens)
            inter = np.bincount(owner, weights=hits, minlength=len(rows))
        total = lens + len(query_tokens)
        return np.where(total > 0, 2.0 * inter / np.maximum(total, 1), 0.0)


def text_facts(
    q: frozenset[str], text: str, subjects: dict[str, str], tokenizer: Tokenizer = "bigram", about: str = ""
) -> list[tuple[float, str, str]]:
    """Facts a text carries about ``subjects`` (id → name), scored like triples, best first.

    A fact is a sentence naming a subject and saying something more. Its score is the
    answer-aware triple score: the mean of Dice(q, subject name) and Dice(q, the rest of the
    sentence), the rest standing for relation and object. ``about`` is the name of the entity
    the text is about: inside it a shorter subject name is no mention ("Alien" in "Alien 3"), and
    it is left out of the rest when it is not the subject (it is then the candidate answer, whose
    own overlap with the question is no evidence, as in the answer-aware triple score).
    Returns (score, sentence, subject id) per sentence and subject it names.
    """
    out = []
    patterns = {sid: (name, name_pattern(name.strip())) for sid, name in subjects.items() if name.strip()}
    own = name_pattern(about.strip()) if about.strip() else None
    for sent in sentences(text):
        masked = own.sub(" ", sent) if own else sent
        for sid, (name, pat) in patterns.items():
            probe = sent if own is None or name.lower() == about.lower() else masked
            rest = tokens(pat.sub(" ", probe), tokenizer) if pat.search(probe) else None
            if rest:
                out.append(((dice(q, tokens(name, tokenizer)) + dice(q, rest)) / 2.0, sent, sid))
    out.sort(key=lambda f: -f[0])
    return out
