"""Query-time encodes: the numpy encoder (no torch import) on few threads; batches on torch."""

import subprocess
import sys

import numpy as np
import pytest

from hybridrag.kb.bert_numpy import supported
from hybridrag.kb.embeddings import SMALL_BATCH, bundled_minilm_path, encode_threads, get_embeddings
from hybridrag.kb.model import KBError


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


@pytest.mark.parametrize("text", ["who directed Alien", "Ámélie à Paris – 1988!", "", "a " * 300])
def test_the_numpy_encoder_gives_the_sentence_transformers_vector(text):
    emb = get_embeddings()
    one = emb.encode([text])[0]  # numpy path
    batch = emb.encode([text, "padding partner of another length"])[0]  # sentence-transformers path
    assert one.dtype == np.float32 and np.abs(one - batch).max() < 1e-5


def test_a_query_encode_in_a_fresh_process_imports_no_torch():
    code = (
        "import sys; from kb.embeddings import get_embeddings; v = get_embeddings().encode(['who directed Big']);"
        "assert v.shape == (1, 384); print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert out.stdout.strip() == "False", out.stderr[-2000:]


def test_other_architectures_keep_the_torch_path(tmp_path):
    assert supported(bundled_minilm_path())
    (tmp_path / "config.json").write_text('{"model_type": "roberta", "hidden_act": "gelu"}')
    (tmp_path / "modules.json").write_text("[]")
    assert not supported(tmp_path)
