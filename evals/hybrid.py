"""MetaQA knowledge bases for evaluation: the full KB and the incomplete-KG + text (hybrid) KBs.

MetaQA-hybrid follows the incomplete-KB setting of GRAFT-Net/PullNet and HydraRAG's
incomplete-KG study: a seeded fraction ``1 - completeness`` of the unique triples is held
out of the graph and rendered as one passage per head movie
(:func:`kb.verbalise.passages_about_heads`), so those facts are reachable only through
text. Every MetaQA entity stays in the graph (typed as in the full KB), so entity linking
still works when all of an entity's triples are held out. Completeness 1.0 is the full KB.

Built KBs are cached under ``$HYBRIDRAG_CACHE`` (default ``~/.cache/hybridrag``) as
``metaqa-full`` and ``metaqa-hybrid-c<percent>-s<seed>``; a file lock lets concurrent
processes share one build. The shared datasets folder is ``$HYBRIDRAG_DATASETS``, by
default the ``shared/datasets`` folder beside the repository.
"""

from __future__ import annotations

import json
import os
import random
from functools import lru_cache
from pathlib import Path

from filelock import FileLock

from hybridrag.kb.build import assemble
from hybridrag.kb.loaders import read_triples, read_type_map
from hybridrag.kb.memory_store import InMemoryGraphStore
from hybridrag.kb.model import KBError, Triple
from hybridrag.kb.sample import TYPE_MAP, cache_root
from hybridrag.kb.store import GraphStore
from hybridrag.kb.verbalise import passages_about_heads

COMPLETENESS = {"100": 1.0, "50": 0.5, "0": 0.0}


def datasets_root() -> Path:
    """Folder of shared datasets: ``$HYBRIDRAG_DATASETS`` or ``<repo>/../shared/datasets``."""
    env = os.environ.get("HYBRIDRAG_DATASETS")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "datasets"


def metaqa_dir() -> Path:
    """The MetaQA folder (``kb.txt`` and ``dev_{k}hop.txt``); raises when it is missing."""
    path = datasets_root() / "metaqa"
    if not (path / "kb.txt").exists():
        raise KBError(f"MetaQA not found at {path}; set HYBRIDRAG_DATASETS to the folder holding metaqa/")
    return path


def metaqa_kb_dir() -> Path:
    """Where the full MetaQA KB is built in the cache (:func:`full_kb` builds it)."""
    return cache_root() / "metaqa-full"


@lru_cache(maxsize=1)
def metaqa_triples() -> tuple[Triple, ...]:
    """The unique MetaQA triples in file order."""
    return tuple(dict.fromkeys(read_triples(metaqa_dir() / "kb.txt")))


def _build_once(out: Path, build) -> Path:
    if (out / "manifest.json").exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(out) + ".lock"):
        if not (out / "manifest.json").exists():
            build(out)
    return out


def full_kb(progress: bool = True) -> Path:
    """The KB of all MetaQA triples (no passages), built once into the cache."""
    from hybridrag.kb.ingest import ingest

    return _build_once(
        metaqa_kb_dir(),
        lambda out: ingest(out, [metaqa_dir() / "kb.txt"], type_map=TYPE_MAP, progress=progress),
    )


def split_triples(
    triples: tuple[Triple, ...] | list[Triple], completeness: float, seed: int = 0
) -> tuple[list[Triple], list[Triple]]:
    """Return (kept, held out): a seeded ``completeness`` fraction stays, order preserved."""
    if not 0.0 <= completeness <= 1.0:
        raise ValueError(f"completeness must be in [0, 1], got {completeness}")
    n_keep = round(completeness * len(triples))
    order = list(range(len(triples)))
    random.Random(seed).shuffle(order)
    keep = set(order[:n_keep])
    kept = [t for i, t in enumerate(triples) if i in keep]
    held = [t for i, t in enumerate(triples) if i not in keep]
    return kept, held


def _write_inputs(folder: Path, completeness: float, seed: int) -> tuple[Path, Path, Path]:
    triples = metaqa_triples()
    kept, held = split_triples(triples, completeness, seed)
    folder.mkdir(parents=True, exist_ok=True)
    tri, ents, pas = folder / "triples.txt", folder / "entities.jsonl", folder / "passages.jsonl"
    tri.write_text("".join(f"{t.head}|{t.type}|{t.tail}\n" for t in kept), encoding="utf-8")
    typed = assemble(triples, {}, read_type_map(TYPE_MAP))[0]
    with open(ents, "w", encoding="utf-8") as f:
        for e in typed:
            f.write(json.dumps({"id": e.id, "name": e.name, "type": e.type}, ensure_ascii=False) + "\n")
    with open(pas, "w", encoding="utf-8") as f:
        for p in passages_about_heads(held):
            row = {"id": p.id, "text": p.text, "entity_id": p.entity_id, "source": p.source}
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    split = {"completeness": completeness, "seed": seed, "kept": len(kept), "held_out": len(held)}
    (folder / "split.json").write_text(json.dumps(split), encoding="utf-8")
    return tri, ents, pas


def hybrid_kb(completeness: float, seed: int = 0, progress: bool = True) -> Path:
    """The MetaQA-hybrid KB at ``completeness`` (1.0, 0.5, 0.0, ...) and ``seed``, built once."""
    if completeness >= 1.0:
        return full_kb(progress)
    from hybridrag.kb.ingest import ingest

    def build(out: Path) -> None:
        tri, ents, pas = _write_inputs(out / "inputs", completeness, seed)
        try:
            ingest(out, [tri], entities=ents, passages=pas, type_map=TYPE_MAP, progress=progress)
        except KBError as exc:
            raise KBError(
                f"building MetaQA-hybrid at completeness {completeness}: {exc} "
                "(kb.ingest must accept an entity-only graph for completeness 0)"
            ) from exc

    return _build_once(cache_root() / f"metaqa-hybrid-c{round(completeness * 100)}-s{seed}", build)


@lru_cache(maxsize=1)
def metaqa_graph() -> GraphStore:
    """The complete MetaQA graph (for the reachable-answer ceiling of the hybrid settings)."""
    built = metaqa_kb_dir()
    if (built / "manifest.json").exists():
        return InMemoryGraphStore.load(built)
    ents, heads, rels, tails, names, schema = assemble(metaqa_triples(), {}, read_type_map(TYPE_MAP))
    return InMemoryGraphStore(ents, heads, rels, tails, names, schema)
