"""The KBs of the MoR growth benchmark: MetaQA 1×, 4× and 16× (:mod:`benchmarks.scale.synth`), cheap to build.

Each factor is the real :func:`kb.ingest.ingest` of the synthetic triples with the scale
benchmark's replicated vectors (:func:`benchmarks.scale.ingest_stages.replicated_vectors`, copies
of the 1× KB's real MiniLM vectors plus seeded noise), and one change: the dense index is exact
(``IndexFlatIP``) at every size, because MoR's traversal never searches it (it reads vectors back
for the semantic score), and an HNSW build of 684 k rows takes ~17 min. Built once under
``--work``; a finished factor is reused.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

SIGMA = 0.0275  # the scale benchmark's measured noise (docs/benchmarks_scale.md, "Synthetic KBs")


def build(work: Path, factor: int, base_kb: Path, metaqa: Path) -> Path:
    """The KB directory of ``factor`` under ``work``, built when it is not there yet."""
    from benchmarks.scale import ingest_stages
    from benchmarks.scale.synth import paths, write_synthetic
    from hybridrag.kb.sample import TYPE_MAP

    kb_txt, kb_dir = paths(work, factor)
    if (kb_dir / "manifest.json").exists():
        return kb_dir
    write_synthetic(metaqa / "kb.txt", kb_txt, factor)
    rows, vecs = ingest_stages.base_vectors(base_kb)
    replicated = lambda texts: ingest_stages.replicated_vectors(texts, rows, vecs, SIGMA)  # noqa: E731
    _ingest(kb_dir, [kb_txt], replicated, type_map=TYPE_MAP)
    return kb_dir


def _ingest(kb_dir: Path, triples: list[Path], vectors, **inputs) -> None:  # noqa: ANN001 - texts → array
    """The real ingest with ``vectors(texts)`` in place of the encoder and an exact dense index; timed to a file."""
    import shutil

    import hybridrag.kb.ingest as ki
    import hybridrag.kb.text_index as ti
    from hybridrag.kb.embed_chunks import ChunkedVectors

    def embed_new(*_args, **_kw):  # noqa: ANN002, ANN003 - ingest's factory of its embedding step
        return lambda texts: ChunkedVectors(vectors(texts), 0, 0)

    shutil.rmtree(kb_dir, ignore_errors=True)  # a killed run's half build
    ti.HNSW_THRESHOLD, ki.embed_new = 10**12, embed_new  # exact index: see the module docstring
    t = time.perf_counter()
    ki.ingest(kb_dir, triples, progress=False, **inputs)
    (kb_dir.parent / "build_s.txt").write_text(f"{time.perf_counter() - t:.1f}\n", encoding="utf-8")


def build_prime(work: Path) -> Path:
    """The Prime-sized KB under ``work``/prime (:mod:`benchmarks.scale.prime_synth`, seed 0), built when missing.

    Its entity names are synthetic codes, so instead of encoding 129 k of them (~15 min) each
    name gets a seeded random unit vector: the traversal reads vectors only to rank its
    candidates by cosine, whose cost does not depend on their values. Exact dense index, as above.
    """
    from benchmarks.scale.prime_synth import write_prime

    src, kb_dir = work / "prime" / "src", work / "prime" / "kb"
    if (kb_dir / "manifest.json").exists():
        return kb_dir
    if not (src / "kb.txt").exists():
        write_prime(src)

    def vectors(texts: list[str]) -> np.ndarray:
        vecs = np.random.default_rng(0).normal(size=(len(texts), 384)).astype(np.float32)
        return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)

    inputs = {"entities": src / "entities.jsonl", "type_map": src / "types.json"}
    _ingest(kb_dir, [src / "kb.txt"], vectors, **inputs)
    return kb_dir
