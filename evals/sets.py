"""Named datasets of ``hybridrag eval``: questions plus the KB they are asked against.

- ``metaqa-1hop``, ``metaqa-2hop``, ``metaqa-3hop``: MetaQA dev questions on the full
  MetaQA KB (built once into the cache).
- ``metaqa-hybrid-100``, ``-50``, ``-0``: the incomplete-KG + text setting at that
  completeness (see :mod:`hybridrag.evals.hybrid`); 1-hop questions unless a suffix says
  otherwise, e.g. ``metaqa-hybrid-50:2hop``. The ceiling is computed on the complete graph
  (held-out facts are still reachable through text); ``ceiling_kg`` on the incomplete graph.
- ``metaqa-paraphrase-test[:Khop][:original]``: the held-out set, other dev questions in other wordings
  (:func:`held_out`); without ``:Khop`` its 61 1-hop questions.
- ``metaqa-paraphrase[:Khop|original[:Khop]]``: MetaQA dev questions in people's words, or as MetaQA
  wrote them.
- ``advhotpotqa[:PATH]``: a documents KB built from AdvHotpotQA paragraphs
  (:mod:`hybridrag.evals.documents_qa`).
- ``stark:DIR``: ``DIR/qa.csv`` (``id,query,answer_ids``) with the SKB ``DIR/skb``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hybridrag.evals.datasets import Question, load_jsonl, load_metaqa, load_stark_csv, stark_kb
from hybridrag.kb.model import KBError
from hybridrag.kb.store import GraphStore

_METAQA = re.compile(r"^metaqa-(\d)hop$")
_HYBRID = re.compile(r"^metaqa-hybrid-(100|50|0)(?::(\d)hop)?$")


@dataclass
class EvalSet:
    """Questions plus the KB they are asked against (None: the method's default KB)."""

    name: str
    questions: list[Question]
    kb_dir: Path | None
    ceiling_graph: GraphStore | None = None
    notes: dict = field(default_factory=dict)


def _metaqa_questions(hops: int) -> list[Question]:
    from hybridrag.evals.hybrid import metaqa_dir

    return load_metaqa(metaqa_dir() / f"dev_{hops}hop.txt", prefix=f"metaqa-{hops}hop")


PARAPHRASES = Path(__file__).resolve().parent / "data" / "metaqa_paraphrases.jsonl"
PARAPHRASES_TEST = PARAPHRASES.with_name("metaqa_paraphrases_test.jsonl")  # held out (1 hop, other wordings)
PARAPHRASES_TEST_MULTIHOP = PARAPHRASES.with_name("metaqa_paraphrases_test_multihop.jsonl")  # held out, 2-3 hops


def paraphrases(variant: str = "", path: Path = PARAPHRASES) -> list[Question]:
    """MetaQA dev questions in people's words (``scripts/make_paraphrases.py``).

    Args:
        variant: "" for all, ``1hop``..``3hop`` for one hop count, ``original`` for the same
            questions as MetaQA wrote them (brackets removed), ``original:Khop`` for those of one hop count.
        path: the paraphrase file (:data:`PARAPHRASES_TEST` for the held-out set).
    """
    questions = load_jsonl(path)
    wording, _, hop = variant.partition(":") if variant.startswith("original") else ("", "", variant)
    if wording == "original":
        rows = {r["id"]: r["original"] for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}
        questions = [replace(q, question=rows[q.id].replace("[", "").replace("]", "")) for q in questions]
    if re.fullmatch(r"[123]hop", hop):
        questions = [q for q in questions if q.hops == int(hop[0])]
    elif hop or wording not in ("", "original"):
        raise KBError(f"metaqa-paraphrase:{variant}: use 1hop, 2hop, 3hop, original or original:Khop")
    return questions


def held_out(variant: str = "") -> list[Question]:
    """The held-out paraphrase set (``scripts/make_paraphrases.py --held-out``): no tuning sees its questions.

    Args:
        variant: ``Khop`` and/or ``original`` joined by ``:`` in either order (``2hop``, ``original``,
            ``2hop:original``); without ``Khop`` the 1-hop questions, so the name means what it meant before the
            2- and 3-hop questions were added.
    """
    tokens = variant.split(":") if variant else []
    hops = [t for t in tokens if re.fullmatch(r"[123]hop", t)]
    original = [t for t in tokens if t == "original"]
    if len(hops) > 1 or len(original) > 1 or len(hops) + len(original) != len(tokens):
        raise KBError(
            f"unknown variant metaqa-paraphrase-test:{variant}; use metaqa-paraphrase-test[:1hop|2hop|3hop][:original]"
        )
    hop = hops[0] if hops else "1hop"
    path = PARAPHRASES_TEST if hop == "1hop" else PARAPHRASES_TEST_MULTIHOP
    return paraphrases(":".join([*original, hop]), path)


def resolve_dataset(name: str, seed: int = 0, progress: bool = True, build_kb: bool = True) -> EvalSet:
    """Questions and KB of a named dataset (building the KB into the cache when needed).

    ``build_kb=False`` (the caller names its own KB: ``hybridrag eval --kb DIR``) reads the questions
    only; the dataset's KB is neither built nor opened.
    """
    from hybridrag.evals import hybrid
    from hybridrag.kb.sample import cache_root

    def kb_of(build: Any) -> Path | None:
        return build() if build_kb else None

    if m := _METAQA.match(name):
        return EvalSet(name, _metaqa_questions(int(m.group(1))), kb_of(lambda: hybrid.full_kb(progress)))
    if m := _HYBRID.match(name):
        completeness = hybrid.COMPLETENESS[m.group(1)]
        kb_dir = kb_of(lambda: hybrid.hybrid_kb(completeness, seed, progress))
        ceiling = hybrid.metaqa_graph() if completeness < 1.0 else None
        return EvalSet(
            name,
            _metaqa_questions(int(m.group(2) or 1)),
            kb_dir,
            ceiling,
            {"completeness": completeness, "split_seed": seed},
        )
    if name == "metaqa-paraphrase-test" or name.startswith("metaqa-paraphrase-test:"):  # held out: other wordings
        return EvalSet(name, held_out(name.partition(":")[2]), kb_of(lambda: hybrid.full_kb(progress)))
    if name == "metaqa-paraphrase" or name.startswith("metaqa-paraphrase:"):
        return EvalSet(name, paraphrases(name.partition(":")[2]), kb_of(lambda: hybrid.full_kb(progress)))
    if name == "advhotpotqa" or name.startswith("advhotpotqa:"):
        from hybridrag.evals.documents_qa import documents_kb, load_advhotpotqa
        from hybridrag.evals.hybrid import datasets_root

        path = name.partition(":")[2] or datasets_root() / "advhotpotqa" / "dev.json"
        if build_kb:
            questions, kb_dir = documents_kb(path, cache_root(), progress)
        else:
            questions, kb_dir = load_advhotpotqa(path)[0], None
        return EvalSet(
            name,
            questions,
            kb_dir,
            notes={"documents": "one per paragraph, planted ones unmarked", "documents_file": str(path)},
        )
    if name.startswith("stark:"):
        root = Path(name.removeprefix("stark:"))
        return EvalSet(
            name, load_stark_csv(root / "qa.csv"), kb_of(lambda: stark_kb(root / "skb", cache_root(), progress))
        )
    raise KBError(
        f"unknown dataset {name!r}; use metaqa-1hop|2hop|3hop, "
        "metaqa-hybrid-100|50|0[:Khop], metaqa-paraphrase[:Khop|original[:Khop]], "
        "metaqa-paraphrase-test[:Khop][:original], "
        "advhotpotqa[:PATH], stark:DIR, "
        "or --questions FILE"
    )
