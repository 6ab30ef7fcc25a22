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
    import hybridrag.kb.text_index as ti
    from benchmarks.scale import ingest_stages
    from benchmarks.scale.synth import paths, write_synthetic

    kb_txt, kb_dir = paths(work, factor)
    if (kb_dir / "manifest.json").exists():
        return kb_dir
    write_synthetic(metaqa / "kb.txt", kb_txt, factor)
    ti.HNSW_THRESHOLD = 10**12  # exact index: see the module docstring
    t = time.perf_counter()
    ingest_stages.full_ingest(kb_txt, kb_dir, replicate={"base": str(base_kb), "sigma": SIGMA})
    (work / f"x{factor}" / "build_s.txt").write_text(f"{time.perf_counter() - t:.1f}\n", encoding="utf-8")
    return kb_dir


def build_prime(work: Path) -> Path:
    """The Prime-sized KB under ``work``/prime (:mod:`benchmarks.scale.prime_synth`, seed 0), built when missing.

    Its entity names are synthetic codes, so instead of encoding 129 k of them (~15 min) each
    name gets a seeded random unit vector: the traversal reads vectors only to rank its
    candidates by cosine, whose cost does not depend on their values. Exact dense index, as above.
    """
    import hybridrag.kb.ingest as ki
    import hybridrag.kb.text_index as ti
    from benchmarks.scale.prime_synth import write_prime
    from hybridrag.kb.embed_chunks import ChunkedVectors

    src, kb_dir = work / "prime" / "src", work / "prime" / "kb"
    if (kb_dir / "manifest.json").exists():
        return kb_dir
    if not (src / "kb.txt").exists():
        write_prime(src)

    def embed(emb, spec, texts, folder, size=None, progress=False, on_chunk=None):  # noqa: ANN001 - ingest's hook
        vecs = np.random.default_rng(0).normal(size=(len(texts), 384)).astype(np.float32)
        return ChunkedVectors(vecs / np.linalg.norm(vecs, axis=1, keepdims=True), 0, 0)

    ti.HNSW_THRESHOLD = 10**12
    ki.embed_in_chunks = embed
    t = time.perf_counter()
    ki.ingest(kb_dir, [src / "kb.txt"], entities=src / "entities.jsonl", type_map=src / "types.json", progress=False)
    (work / "prime" / "build_s.txt").write_text(f"{time.perf_counter() - t:.1f}\n", encoding="utf-8")
    return kb_dir
