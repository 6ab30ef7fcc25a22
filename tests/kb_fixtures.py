"""A small movie KB built with the real ingest (local MiniLM embeddings), for unit-test fixtures."""

from __future__ import annotations

import json

import pytest


def movie_kb(tmp_path_factory: pytest.TempPathFactory, name: str, triples: str, passages: list[dict]) -> str:
    """Directory of a KB of ``triples`` (``head|relation|tail`` lines) and ``passages`` (JSONL rows),
    typed with the MetaQA type map."""
    from hybridrag.kb.ingest import ingest
    from hybridrag.kb.sample import TYPE_MAP

    src = tmp_path_factory.mktemp(f"{name}-src")
    (src / "triples.txt").write_text(triples, encoding="utf-8")
    (src / "passages.jsonl").write_text("\n".join(json.dumps(p) for p in passages), encoding="utf-8")
    out = tmp_path_factory.mktemp(f"{name}-kb") / "kb"
    ingest(out, [src / "triples.txt"], passages=src / "passages.jsonl", type_map=TYPE_MAP, progress=False)
    return str(out)
