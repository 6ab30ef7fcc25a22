"""The CLI as a new user meets it: answers with ranked evidence, one-line errors."""

import json

import pytest

from hybridrag.app.cli import main


def test_ask_sample_kb_prints_ranked_evidence(capsys):
    assert main(["ask", "who directed Forrest Gump"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("answer: ")
    assert " 1. " in out and "10. " in out


def test_ask_json(capsys):
    assert main(["ask", "what movies did Tom Hanks star in", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ranked"] and data["trace"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ask", "who directed The Matrix Reloaded Forever"], "unknown entity: 'The Matrix Reloaded Forever'"),
        (["ask", "   "], "empty question"),
        (["ask", "who directed Forrest Gump", "--kb", "/nonexistent/kb"], "KB directory not found"),
        (["ask", "who directed Forrest Gump", "--top-k", "0"], "--top-k must be at least 1, not 0"),
        (["ask", "who directed Forrest Gump", "--max-iterations", "-1"], "--max-iterations must be at least 1"),
    ],
)
def test_bad_input_gets_one_line_error(capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err
    assert err.count("\n") == 1


def test_ingest_then_ask(tmp_path, capsys):
    triples = tmp_path / "t.txt"
    triples.write_text("Kismet|directed_by|William Dieterle\nKismet|release_year|1944\n", encoding="utf-8")
    assert main(["ingest", "--kb", str(tmp_path / "kb"), "--triples", str(triples)]) == 0
    assert "2 triples" in capsys.readouterr().out
    assert main(["ask", "who directed Kismet", "--kb", str(tmp_path / "kb"), "--json"]) == 0
    names = [r["name"] for r in json.loads(capsys.readouterr().out)["ranked"]]
    assert "William Dieterle" in names


def test_ingest_malformed_file_names_the_line(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_text("A|r|B\nA|r\n", encoding="utf-8")
    assert main(["ingest", "--kb", str(tmp_path / "kb"), "--triples", str(bad)]) == 2
    assert "bad.txt:2: expected 3 fields" in capsys.readouterr().err


def test_ask_hybgrag_with_llm_spec_and_trace(fake_llm, capsys):
    from hybridrag.agents.hybgrag.roles import RouterAction, TopicEntity, Validation

    fake_llm(
        RouterAction(
            entities=[TopicEntity(name="Forrest Gump", type="movie")], relations=["directed_by"], module="hybrid"
        ),
        Validation(reasoning="the director of the movie", verdict="yes"),
    )
    assert main(["ask", "who directed Forrest Gump", "--method", "hybgrag", "--llm", "fake:test", "--trace"]) == 0
    out = capsys.readouterr().out
    assert "Action 1: hybrid module" in out and "Accept" in out


def test_ask_hybgrag_openai_without_key_is_one_line(monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["ask", "who directed Forrest Gump", "--method", "hybgrag", "--llm", "openai:gpt-4o-mini"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "OPENAI_API_KEY" in err and err.count("\n") == 1


def test_text_only_kb_from_passages(tmp_path, capsys):
    passages = tmp_path / "p.jsonl"
    passages.write_text(
        json.dumps({"id": "p1", "text": "The Eiffel Tower is in Paris."})
        + "\n"
        + json.dumps({"id": "p2", "text": "Big is a 1988 comedy."})
        + "\n",
        encoding="utf-8",
    )
    assert main(["ingest", "--kb", str(tmp_path / "kb"), "--passages", str(passages)]) == 0
    capsys.readouterr()
    assert main(["ask", "where is the tower", "--kb", str(tmp_path / "kb"), "--json"]) == 0
    ranked = json.loads(capsys.readouterr().out)["ranked"]
    assert ranked[0]["id"] == "p1"


def test_ingest_with_nothing_is_a_clear_error(tmp_path, capsys):
    assert main(["ingest", "--kb", str(tmp_path / "kb")]) == 2
    assert "no triples and no entities" in capsys.readouterr().err


def test_eval_llm_method_without_key_fails_before_the_first_question(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        '{"question": "who directed [Forrest Gump]", "answers": ["Robert Zemeckis"]}\n', encoding="utf-8"
    )
    out = tmp_path / "run"
    argv = [
        "eval",
        "--method",
        "hybgrag",
        "--questions",
        str(questions),
        "--llm",
        "openai:gpt-4o-mini",
        "--out",
        str(out),
        "--no-progress",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "OPENAI_API_KEY" in err and err.count("\n") == 1
    assert not (out / "records.jsonl").exists()  # no question was recorded as an error


# -- serve: the operator's configuration (docs/serving.md) --


def test_serve_flags_and_config_file_build_the_server_config(tmp_path):
    from hybridrag.app.cli import build_parser
    from hybridrag.app.operator import operator_config
    from hybridrag.app.server_config import ModelChoice

    cfg_file = tmp_path / "server.json"
    cfg_file.write_text(
        json.dumps(
            {
                "kbs": {"movies": "/srv/kb"},
                "limits": {"max_iterations": 3},
                "settings": {"hybgrag": {"few_shot": "/srv/shots.json"}},
            }
        ),
        encoding="utf-8",
    )
    args = build_parser().parse_args(
        [
            "serve",
            "--config",
            str(cfg_file),
            "--kb",
            "sample=sample",
            "--llm",
            "smol=local:smollm2",
            "--llm",
            "vllm=openai:qwen@http://10.0.0.5:8000/v1",
            "--default-llm",
            "vllm",
            "--max-top-k",
            "20",
            "--max-batch",
            "3",
            "--run-timeout",
            "30",
        ]
    )
    config = operator_config(args)
    assert dict(config.kbs) == {"movies": "/srv/kb", "sample": "sample"} and config.kb_name() == "movies"
    assert config.models["vllm"] == ModelChoice("openai:qwen", "http://10.0.0.5:8000/v1")
    assert config.models["smol"] == ModelChoice("local:smollm2", "")
    assert config.model_name() == "vllm"
    assert dict(config.limits) == {"max_top_k": 20, "max_iterations": 3}
    assert (config.max_batch, config.run_timeout) == (3, 30.0)
    assert config.settings["hybgrag"]["few_shot"] == "/srv/shots.json"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["serve", "--kb", "movies=/nonexistent/kb"], "KB 'movies': no KB at /nonexistent/kb"),
        (["serve", "--kb", "movies"], "--kb 'movies': expected NAME=VALUE"),
        (["serve", "--kb", "../x=sample"], "KB name '../x'"),
        (["serve", "--llm", "m=local:nope"], "model 'm': unknown local model 'nope'"),
        (["serve", "--default-kb", "nope"], "default KB 'nope'"),
        (["serve", "--config", "/nonexistent/server.json"], "--config /nonexistent/server.json"),
    ],
)
def test_serve_refuses_a_bad_operator_config_in_one_line(capsys, argv, message):
    assert main(argv) == 2  # before the server starts
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
