"""The bank of solved examples of one KB and the nearest-example search over masked questions.

Where it lives: ``<KB dir>/bank.jsonl``, at the top of the KB directory beside ``current``,
not inside ``builds/<id>/``. A re-ingest makes a new build and keeps only the newest builds,
so a bank inside a build would be lost with it (and with it the user's own examples); at the
top it survives re-ingest. Examples naming a relation the live build no longer has are left
out when the bank is opened and counted in :attr:`Bank.stale` (``hybridrag bank show``
prints the count; ``hybridrag bank build`` rebuilds). The masked-question vectors are cached
beside it in ``bank.vectors.npz``, keyed by a hash of the masked questions and the embedding
model (``schema-bank.vectors.npz`` for the synthesized bank of a KB without a bank file).
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import secrets
import threading
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from hybridrag.agents.shots.cues import follow_cues
from hybridrag.agents.shots.example import SolvedExample, example_from_dict
from hybridrag.agents.shots.mask import find_mentions, mask_spans
from hybridrag.kb.base import KnowledgeBase
from hybridrag.kb.embeddings import embed_matrix
from hybridrag.kb.loaders import json_lines
from hybridrag.kb.model import KBError

BANK_FILE, VECTORS_FILE, SCHEMA_VECTORS_FILE = "bank.jsonl", "bank.vectors.npz", "schema-bank.vectors.npz"
log = logging.getLogger(__name__)


def bank_path(kb_dir: str | Path) -> Path:
    """The bank file of a KB directory (see the module docstring for why at the top)."""
    return Path(kb_dir) / BANK_FILE


def read_bank_file(path: Path) -> list[SolvedExample]:
    """Examples of a bank file; a malformed line is a ValueError naming ``file:line``."""
    with open(path, encoding="utf-8") as f:
        return [example_from_dict(row, f"{path}:{no}") for no, row in json_lines(f, path)]


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(3)}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write_bank_file(path: Path, examples: Iterable[SolvedExample]) -> int:
    """Replace the bank file atomically (readers see the old or the new bank); returns the count."""
    lines = [e.to_json() for e in examples]
    _atomic_write(path, ("\n".join(lines) + ("\n" if lines else "")).encode("utf-8"))
    return len(lines)


_MEMO: dict[tuple[str, str], np.ndarray] = {}
MEMO_MAX = 20_000  # about 30 MB of MiniLM vectors


def embed_texts(kb: KnowledgeBase, texts: list[str], progress: bool = False) -> np.ndarray:
    """Normalised vectors of ``texts`` in the KB's model; each text is embedded once per process."""
    spec = kb.embeddings_spec or ""
    todo = list(dict.fromkeys(t for t in texts if (spec, t) not in _MEMO))
    if todo:
        if len(_MEMO) + len(todo) > MEMO_MAX:
            _MEMO.clear()
        for t, v in zip(todo, embed_matrix(kb.embeddings, todo, progress=progress), strict=True):
            _MEMO[(spec, t)] = v
    if not texts:
        return np.zeros((0, 1), np.float32)
    return np.stack([_MEMO[(spec, t)] for t in texts])


def _normalise(text: str) -> str:
    return " ".join(text.replace("[", "").replace("]", "").casefold().split())


class Bank:
    """Solved examples of one KB with nearest-neighbour search over their masked questions."""

    def __init__(
        self, kb: KnowledgeBase, examples: list[SolvedExample], path: Path | None = None, cache: Path | None = None
    ) -> None:
        """Keep the examples whose relations the KB has; the others are counted in ``stale``.

        ``cache`` is where the vectors are kept between processes (beside ``path`` by default).
        """
        rels = set(kb.graph.schema().relation_types)
        self.kb, self.path = kb, path
        self.cache = cache or (path.with_name(VECTORS_FILE) if path else None)
        self.examples = [e for e in examples if set(e.relations) <= rels]
        self.stale = len(examples) - len(self.examples)
        if self.stale:
            log.warning(
                "bank %s: %d examples name relations the KB no longer has; left out "
                "(rebuild with `hybridrag bank build`)",
                path,
                self.stale,
            )
        self._matrix: np.ndarray | None = None
        self._lock = threading.Lock()
        self._questions = [_normalise(e.question) for e in self.examples]
        self._topic_types = [frozenset(e.topic_types) for e in self.examples]

    def __len__(self) -> int:
        return len(self.examples)

    def _cache_key(self) -> str:
        digest = hashlib.sha1(f"{self.kb.embeddings_spec}\n".encode())
        for e in self.examples:
            digest.update(e.masked.encode("utf-8") + b"\n")
        return digest.hexdigest()

    def vectors(self, progress: bool = False) -> np.ndarray:
        """Normalised vectors of the masked questions (embedded once; cached on disk beside the bank)."""
        with self._lock:
            if self._matrix is None:
                self._matrix = self._load_or_embed(progress)
            return self._matrix

    def _load_or_embed(self, progress: bool) -> np.ndarray:
        if not self.examples:
            return np.zeros((0, 1), np.float32)
        key = self._cache_key()
        cache = self.cache
        if cache is not None and cache.exists():
            try:
                with np.load(cache) as npz:
                    if str(npz["key"]) == key:
                        return npz["vectors"]
            except (OSError, ValueError, KeyError):
                pass  # a damaged cache is re-embedded
        mat = embed_texts(self.kb, [e.masked for e in self.examples], progress=progress)
        if cache is not None:
            try:
                buf = io.BytesIO()
                np.savez(buf, key=np.array(key), vectors=mat)
                _atomic_write(cache, buf.getvalue())
            except OSError as exc:
                log.warning("bank vectors not cached at %s: %s", cache, exc)
        return mat

    def nearest(self, question: str, k: int, role: str | None = None, cues: bool = True) -> list[SolvedExample]:
        """The ``k`` examples whose masked questions are closest to the masked ``question``.

        Candidates: examples whose topic type is one of the types of the entities the question
        mentions (or unknown), and with ``role`` examples carrying outputs for that role; each
        filter is dropped when no example passes it. An example whose question is the asked
        question itself is never returned. When the best candidate's masked question is the asked
        one word for word, only examples of its relation path are returned: "who directed <E>"
        then shows one-hop examples, not a longer path that happens to start with the same words.
        Then, with ``cues``, the best candidates are re-ranked by how their relation paths follow the
        question's relation cues (:mod:`agents.shots.cues`: "who wrote movies starring <E>" asks for
        the starring relation first).
        """
        if k <= 0 or not self.examples:
            return []
        mat = self.vectors()
        mentions = find_mentions(question, self.kb)
        masked = mask_spans(question, [(m.start, m.end) for m in mentions])
        scores = mat @ self.kb.embed(masked)
        asked = _normalise(question)
        keep = np.array([q != asked for q in self._questions])
        types = {e.type for m in mentions for e in m.entities}
        if types:  # examples about the same kind of topic (a person's films, not a genre's) when there are any
            same = np.array([not t or bool(types & t) for t in self._topic_types])
            if (same & keep).any():
                keep &= same
        if role is not None:
            has_role = np.array([role in e.outputs for e in self.examples])
            if (has_role & keep).any():
                keep &= has_role
        scores = np.where(keep, scores, -np.inf)
        same = self._same_wording(masked, scores)
        if same is not None:  # the question is worded as an example is: its path, not look-alike paths
            scores = np.where(same, scores, -np.inf)
        if cues:
            scores = follow_cues(masked, tuple(self.kb.graph.schema().relation_types), self.examples, scores)
        order = np.argsort(-scores, kind="stable")[:k]
        return [self.examples[i] for i in order if np.isfinite(scores[i])]

    def _same_wording(self, masked: str, scores: np.ndarray) -> np.ndarray | None:
        """Examples on the path of the best candidate when its masked question is ``masked`` word for word."""
        best = int(np.argmax(scores))
        if not np.isfinite(scores[best]) or _normalise(self.examples[best].masked) != _normalise(masked):
            return None
        path = (self.examples[best].relations, self.examples[best].directions)
        return np.array([(e.relations, e.directions) == path for e in self.examples])

    def by_type(self, per_type: int = 2) -> dict[str, list[SolvedExample]]:
        """Up to ``per_type`` examples per answer type, distinct relation paths first."""
        out: dict[str, list[SolvedExample]] = {}
        for pass_ in (0, 1):
            for e in self.examples:
                got = out.setdefault(e.answer_type, [])
                if len(got) >= per_type or e in got:
                    continue
                if pass_ == 0 and any(g.relations == e.relations for g in got):
                    continue
                got.append(e)
        return out


_BANKS: dict[tuple, Bank] = {}
_BANKS_LOCK = threading.Lock()


def _file_key(path: Path) -> tuple | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def open_bank(kb: KnowledgeBase) -> Bank | None:
    """The KB's built bank, or None when it has none (errors name the file and line)."""
    path = bank_path(kb.directory)
    if not path.exists():
        return None
    try:
        return Bank(kb, read_bank_file(path), path)
    except ValueError as exc:
        raise KBError(f"bank of KB {kb.directory} is damaged: {exc}; rebuild with `hybridrag bank build`") from None


def bank_for(kb: KnowledgeBase) -> Bank:
    """The KB's bank file if built, else examples synthesized from its schema (once per process)."""
    from hybridrag.agents.shots.synth import synthesize

    key = (str(kb.directory), kb.build_token, _file_key(bank_path(kb.directory)))
    with _BANKS_LOCK:
        bank = _BANKS.get(key)
        if bank is None:
            bank = open_bank(kb)  # a built bank, even an empty one, is used as built
            if bank is None:
                bank = Bank(kb, synthesize(kb), cache=Path(kb.directory) / SCHEMA_VECTORS_FILE)
            _BANKS[key] = bank
        return bank
