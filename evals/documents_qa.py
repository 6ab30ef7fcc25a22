"""Question answering over a folder of documents: AdvHotpotQA and any documents KB with gold.

``--dataset advhotpotqa`` (``../shared/datasets/advhotpotqa/dev.json``) or ``advhotpotqa:PATH``
writes every distinct paragraph of the file as one text document and builds the KB through the
documents pipeline a user runs (``hybridrag ingest --kb K --documents DIR``, no extraction model).
A real paragraph's file is named after its title; a planted paragraph (``"title": "added"``, an
adversarial near-duplicate stating a wrong fact) is named after the supporting paragraph of its
question it imitates most, as two conflicting files on one topic would be in a user's folder, so
nothing a method reads marks it. Which documents support a question and which were planted is
kept on the :class:`~hybridrag.evals.datasets.Question` for scoring only.

Scores (:func:`document_scores`): supporting-document recall@2/5/10 over the method's evidence
(each evidence item's document; passages are ``<file>#<chunk>``; the ranked list's when no
evidence item names a document, as hybgrag's text references do not), the share of questions with
every supporting document in the top k, and the misled rate: the top evidence document is a
planted one, or the answer is stated by a planted paragraph of the question and by none of its
real ones.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from pathlib import Path

from hybridrag.evals.datasets import Question
from hybridrag.evals.metrics import normalize_answer
from hybridrag.kb.model import KBError, MalformedInputError

PLANTED_TITLE = "added"
RECALL_KS = (2, 5, 10)
DOCUMENT_METRICS = (*(f"support_recall@{k}" for k in RECALL_KS), *(f"support_all@{k}" for k in RECALL_KS), "misled")
_UNSAFE = re.compile(r"[^\w.-]+")


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def _file_name(title: str, context: str) -> str:
    """``<Title_with_underscores>_<10 hex of the text>.txt``: one file per distinct paragraph."""
    digest = hashlib.sha1(context.encode("utf-8")).hexdigest()[:10]
    return f"{_UNSAFE.sub('_', title).strip('_')[:80] or 'document'}_{digest}.txt"


def _imitated(paragraph: dict, real: Sequence[dict]) -> dict:
    """The real paragraph a planted one imitates: the most words in common (supporting first)."""
    words = _words(paragraph["context"])
    ranked = sorted(real, key=lambda p: (-len(words & _words(p["context"])), not p.get("is_supp")))
    return ranked[0] if ranked else {"title": "document"}


def _read(path: Path) -> list[dict]:
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise KBError(f"{path}: no such AdvHotpotQA file") from None
    except json.JSONDecodeError as exc:
        raise MalformedInputError(str(path), exc.lineno, f"not JSON ({exc.msg})") from None
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise MalformedInputError(str(path), 1, "expected a JSON list of question objects")
    for n, item in enumerate(items, 1):
        missing = [k for k in ("qas_id", "question", "answer", "paragraphs") if k not in item]
        if missing:
            raise MalformedInputError(str(path), 1, f"question {n} has no {', '.join(missing)}")
    return items


def load_advhotpotqa(path: str | Path) -> tuple[list[Question], dict[str, str]]:
    """The questions (gold documents attached for scoring) and the corpus ``{file name: text}``."""
    corpus: dict[str, str] = {}
    questions = []
    for item in _read(Path(path)):
        real = [p for p in item["paragraphs"] if p.get("title") != PLANTED_TITLE]
        supporting, planted = [], []
        for p in item["paragraphs"]:
            is_planted = p.get("title") == PLANTED_TITLE
            title = _imitated(p, real)["title"] if is_planted else p["title"]
            name = _file_name(title, p["context"])
            corpus.setdefault(name, p["context"])
            if is_planted:
                planted.append(name)
            elif p.get("is_supp"):
                supporting.append(name)
        topics = list((item.get("topic_entity") or {}).values())
        questions.append(
            Question(
                id=str(item["qas_id"]),
                question=item["question"],
                answers=(item["answer"],),
                topic=topics[0] if topics else None,
                supporting=tuple(supporting),
                planted=tuple(planted),
                unsupported=tuple(_file_name(p["title"], p["context"]) for p in real if not p.get("is_supp")),
            )
        )
    return questions, corpus


def write_corpus(corpus: dict[str, str], folder: Path) -> Path:
    """Write each document as ``folder/<name>``; files already holding the same text are kept."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in corpus.items():
        target = folder / name
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
    return folder


def documents_kb(path: str | Path, cache: Path, progress: bool = False) -> tuple[list[Question], Path]:
    """Questions of an AdvHotpotQA file and the documents KB built from its paragraphs (cached)."""
    from hybridrag.agents.extraction import ingest_documents
    from hybridrag.kb.base import KnowledgeBase

    questions, corpus = load_advhotpotqa(path)
    key = hashlib.sha1("\n".join(sorted(corpus)).encode()).hexdigest()[:12]
    root = cache / f"advhotpotqa-{key}"
    docs, kb_dir = write_corpus(corpus, root / "documents"), root / "kb"
    try:
        KnowledgeBase(kb_dir)
    except Exception:  # noqa: BLE001 - not built yet (or damaged): build it
        ingest_documents(kb_dir, [docs], progress=progress)
    return questions, kb_dir


def evidence_documents(evidence: Sequence[dict]) -> list[str]:
    """The documents of the evidence, best first, each once (``file#chunk`` → ``file``)."""
    out: dict[str, None] = {}
    for item in evidence:
        if not isinstance(item, dict) or item.get("source") not in (None, "doc", "text", "vector", "passage"):
            continue
        doc = str(item.get("id") or "").split("#", 1)[0]
        if doc:
            out.setdefault(doc)
    return list(out)


def record_documents(record: dict) -> list[str]:
    """A record's documents, best first: its evidence's, else its ranked list's (evidence without ids)."""
    return evidence_documents(record.get("evidence") or []) or evidence_documents(record.get("ranked") or [])


def states(answer: str, texts: Sequence[str]) -> bool:
    """Whether some text states ``answer`` (normalised, as whole words)."""
    norm = normalize_answer(answer)
    return bool(norm) and any(f" {norm} " in f" {normalize_answer(t)} " for t in texts)


def planted_answer(answer: str, texts: dict[str, str], gold: dict) -> bool:
    """Whether a planted document states ``answer`` and none of the question's real ones does.

    Args:
        answer: The method's answer.
        texts: Document name -> its text.
        gold: The record's gold (``supporting``, ``planted``, ``unsupported`` document names).
    """
    real = [texts[d] for d in [*gold.get("supporting", ()), *gold.get("unsupported", ())] if d in texts]
    fake = [texts[d] for d in gold.get("planted", ()) if d in texts]
    return states(answer, fake) and not states(answer, real)


def document_scores(record: dict) -> dict[str, float]:
    """Supporting-document recall and all-found at each k, and the misled flag, of one record."""
    gold = record.get("gold") or {}
    supporting, planted = set(gold.get("supporting") or ()), set(gold.get("planted") or ())
    if not supporting:
        return {}
    docs = record_documents(record)
    scores: dict[str, float] = {}
    for k in RECALL_KS:
        found = len(supporting & set(docs[:k]))
        scores[f"support_recall@{k}"] = found / len(supporting)
        scores[f"support_all@{k}"] = float(found == len(supporting))
    scores["misled"] = float((bool(docs) and docs[0] in planted) or bool(record.get("planted_answer")))
    return scores
