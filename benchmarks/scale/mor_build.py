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
