"""Query-time encodes run on few threads, bulk encodes on torch's default; both are settings."""

import pytest

from kb.embeddings import SMALL_BATCH, encode_threads, get_embeddings
from kb.model import KBError


def test_query_time_encodes_default_to_one_thread(monkeypatch):
    monkeypatch.delenv("HYBRIDRAG_QUERY_THREADS", raising=False)
    monkeypatch.delenv("HYBRIDRAG_EMBED_THREADS", raising=False)
    assert encode_threads(1) == encode_threads(SMALL_BATCH) == 1
    assert encode_threads(SMALL_BATCH + 1) == 0  # torch's default


def test_thread_counts_are_settings_and_bad_values_are_named(monkeypatch):
    monkeypatch.setenv("HYBRIDRAG_QUERY_THREADS", "2")
    monkeypatch.setenv("HYBRIDRAG_EMBED_THREADS", "3")
    assert encode_threads(1) == 2 and encode_threads(1000) == 3
    monkeypatch.setenv("HYBRIDRAG_QUERY_THREADS", "many")
    with pytest.raises(KBError, match="HYBRIDRAG_QUERY_THREADS must be a whole number"):
        encode_threads(1)


def test_the_real_model_encodes_a_query_on_the_query_threads(monkeypatch):
    import torch

    monkeypatch.delenv("HYBRIDRAG_QUERY_THREADS", raising=False)
    emb = get_embeddings()
    before = emb.encode(["who directed Alien"])[0]
    assert torch.get_num_threads() == 1
    monkeypatch.setenv("HYBRIDRAG_QUERY_THREADS", "2")
    after = emb.encode(["who directed Alien"])[0]
    assert torch.get_num_threads() == 2
    assert abs(float(before @ after) - 1.0) < 1e-5  # the same vector whatever the threads
