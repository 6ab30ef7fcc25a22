"""Bring your own embeddings (issue 28 item 8): an OpenAI-compatible ``/v1/embeddings`` server by URL, and a
LangChain ``Embeddings`` object from Python; the KB keeps the spec it was built with and refuses another.

The server is a real HTTP server on 127.0.0.1 in a thread, answering as TEI / Ollama / vLLM do; its vectors are
deterministic bags of hashed words, so retrieval over them is meaningful and the answers can be checked.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

import hybridrag.kb.embeddings as emb_mod
from hybridrag.app.cli import main
from hybridrag.app.policy import PolicyError, check_settings
from hybridrag.app.server_config import ServerConfig
from hybridrag.graphs import context_class, context_for, get_graph
from hybridrag.kb.base import open_kb
from hybridrag.kb.embeddings import get_embeddings, use_embeddings
from hybridrag.kb.ingest import ingest
from hybridrag.kb.model import KBError

DIM = 64
TRIPLES = "Big|directed_by|Penny Marshall\nBig|starred_actors|Tom Hanks\nApollo 13|directed_by|Ron Howard\n"


def bag_of_words(text: str) -> list[float]:
    """A deterministic vector: each word adds 1 at the dimension its hash picks (then unit length)."""
    vec = np.zeros(DIM, dtype=np.float32)
    for word in re.findall(r"\w+", text.lower()):
        vec[int(hashlib.sha1(word.encode()).hexdigest(), 16) % DIM] += 1.0
    return (vec / max(float(np.linalg.norm(vec)), 1e-9)).tolist()


class BagOfWords(Embeddings):
    """A user's own LangChain embeddings (the Python-object path)."""

    model = "bow-64"

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text."""
        return [bag_of_words(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """The query's vector."""
        return bag_of_words(text)


class _Handler(BaseHTTPRequestHandler):
    requests: list[dict] = []

    def do_POST(self) -> None:  # noqa: N802 - the http.server hook's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "auth": self.headers.get("Authorization"), **body})
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = []
        for i, text in enumerate(texts):
            vec = bag_of_words(text)
            if body.get("encoding_format") == "base64":
                vec = base64.b64encode(np.asarray(vec, dtype=np.float32).tobytes()).decode()
            data.append({"object": "embedding", "index": i, "embedding": vec})
        reply = {
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": 1, "total_tokens": 1},
        }
        raw = json.dumps(reply).encode()
        self.send_response(200 if self.path == "/v1/embeddings" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args) -> None:
        """Quiet."""


@pytest.fixture(scope="module")
def server():
    """A real OpenAI-compatible embeddings server on a free local port."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", _Handler.requests
    httpd.shutdown()
    httpd.server_close()


def _triples(tmp_path: Path) -> Path:
    path = tmp_path / "kb.txt"
    path.write_text(TRIPLES, encoding="utf-8")
    return path


def _manifest_spec(kb: Path) -> str:
    return json.loads((kb / "current" / "manifest.json").read_text())["embeddings"]["spec"]


def _answer(kb: Path, question: str = "who directed Big") -> str:
    return get_graph("fusion").invoke({"question": question}, context=context_for("fusion", kb=str(kb)))["answer"]


def test_openai_compatible_server_builds_and_answers(server, tmp_path) -> None:
    url, seen = server
    spec = f"openai-compatible:toy-embed@{url}"
    ingest(tmp_path / "kb", [_triples(tmp_path)], embeddings=spec, progress=False)
    assert _manifest_spec(tmp_path / "kb") == spec
    built = len(seen)
    assert built >= 1 and {r["model"] for r in seen} == {"toy-embed"} and seen[0]["path"] == "/v1/embeddings"
    assert seen[0]["auth"] == "Bearer not-needed"  # no OPENAI_API_KEY set: no real key is sent
    assert _answer(tmp_path / "kb") == "Penny Marshall"
    assert len(seen) > built, "the query was embedded by the same server"
    assert open_kb(tmp_path / "kb").dense.index.d == DIM


def test_the_cli_takes_an_openai_compatible_spec(server, tmp_path, capsys) -> None:
    url, _ = server
    spec = f"openai-compatible:toy-embed@{url}"
    kb = tmp_path / "cli-kb"
    assert main(["ingest", "--kb", str(kb), "--triples", str(_triples(tmp_path)), "--embeddings", spec]) == 0
    assert _manifest_spec(kb) == spec
    capsys.readouterr()
    assert main(["ask", "who directed Apollo 13", "--kb", str(kb)]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "answer: Ron Howard"


@pytest.mark.parametrize(
    "spec",
    ["openai-compatible:toy-embed", "openai-compatible:@http://127.0.0.1:1/v1", "openai-compatible:m@ftp://host/v1"],
)
def test_a_malformed_openai_compatible_spec_is_one_line(spec) -> None:
    with pytest.raises(KBError, match=r"expected openai-compatible:MODEL@http\(s\)://HOST\[:PORT\]/v1"):
        get_embeddings(spec)


def test_an_unknown_provider_names_every_form() -> None:
    with pytest.raises(KBError, match="openai-compatible:MODEL@URL' or 'python:NAME'"):
        get_embeddings("tei:bge")


def test_a_python_embeddings_object_builds_and_answers(tmp_path) -> None:
    spec = use_embeddings(BagOfWords())
    assert spec == "python:BagOfWords/bow-64"
    ingest(tmp_path / "kb", [_triples(tmp_path)], embeddings=spec, progress=False)
    assert _manifest_spec(tmp_path / "kb") == spec
    assert _answer(tmp_path / "kb") == "Penny Marshall"


def test_a_kb_of_an_unregistered_object_is_refused_naming_the_fix(tmp_path, monkeypatch) -> None:
    spec = use_embeddings(BagOfWords(), name="bow")
    ingest(tmp_path / "kb", [_triples(tmp_path)], embeddings=spec, progress=False)
    monkeypatch.setattr(emb_mod, "_REGISTERED", {})  # a fresh process: nothing registered
    use_embeddings(BagOfWords(), name="other")
    with pytest.raises(KBError) as err:
        open_kb(tmp_path / "kb").embed("who directed Big")
    message = str(err.value)
    assert "use_embeddings(your_embeddings, name='bow')" in message and "registered here: python:other" in message


def test_a_query_with_other_embeddings_is_refused(tmp_path) -> None:
    spec = use_embeddings(BagOfWords(), name="bow")
    ingest(tmp_path / "kb", [_triples(tmp_path)], embeddings=spec, progress=False)
    with pytest.raises(KBError, match="was built with embeddings 'python:bow', not 'local:all-MiniLM-L6-v2'"):
        open_kb(tmp_path / "kb", embeddings="local:all-MiniLM-L6-v2")


def test_only_embeddings_objects_register() -> None:
    with pytest.raises(KBError, match="needs a LangChain Embeddings object, not str"):
        use_embeddings("openai-compatible:m@http://x/v1")  # type: ignore[arg-type]


def test_a_remote_client_cannot_choose_embeddings_or_their_url() -> None:
    """The embeddings are the KB's (its manifest, written by the operator's ingest): no setting names them."""
    cls = context_class("fusion")
    assert not any("embed" in name for name in cls.__dataclass_fields__)
    with pytest.raises(PolicyError):
        check_settings(cls, {"embeddings": "openai-compatible:m@http://attacker/v1"}, ServerConfig())
