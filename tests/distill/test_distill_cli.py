"""``ark distill export|train|report`` and ``--model hf:PATH`` end to end through the CLI, on the clinical graph.

The teacher is the offline policy; the student is a tiny Qwen3 built from a config with a tokenizer trained on the
exported chats and trained for a handful of LoRA steps (a pipeline check: it is not expected to answer well).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ark.cli.main import app
from ark.storage.jsonl import read_jsonl
from tests.support.graphs import save_clinical_graph

QUESTIONS = [
    {"id": "q1", "query": "Which genes are implicated in Marfan syndrome?", "answer_ids": ["NCBIGene:2200"]},
    {"id": "q2", "query": "Which disease causes prolonged bleeding after a minor injury?",
     "answer_ids": ["OMIM:306700"]},
    {"id": "q3", "query": "Which genes are implicated in Dravet syndrome?", "answer_ids": ["NCBIGene:6323"]},
    {"id": "q4", "query": "Which genes are associated with Homocystinuria?", "answer_ids": ["NCBIGene:875"]},
]
# Short trajectories with short observations: small samples for a tiny model.
ARK_OPTIONS = """max_steps = 4
system_prompt = "Find the nodes that answer the question with the tools."

[tools]
max_observation_chars = 200
snippet_chars = 20
default_global_size = 3
"""


def invoke(*args):
    result = CliRunner().invoke(app, [str(a) for a in args])
    result.text = " ".join(result.output.split())  # rich wraps long lines: compare words, not layout
    return result


@pytest.fixture(scope="module")
def setup(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("distill")
    queries = root / "train.jsonl"
    queries.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS))
    config = root / "ark.toml"
    config.write_text(ARK_OPTIONS)
    return {"root": root, "graph": save_clinical_graph(root / "clinical"), "queries": queries, "config": config}


@pytest.fixture(scope="module")
def exported(setup) -> Path:
    out = setup["root"] / "data"
    result = invoke("distill", "export", setup["graph"], "-q", setup["queries"], "--out", out, "--offline",
                    "--config", setup["config"], "--validation-questions", 1, "--no-progress")
    assert result.exit_code == 0, result.output
    return out


def test_export_writes_three_trajectories_per_question_and_a_validation_subset(exported):
    train = read_jsonl(exported / "train.jsonl")
    validation = read_jsonl(exported / "validation.jsonl")
    assert len(train) == 3 * 3 and len(validation) == 3  # the paper's default: 3 trajectories per question
    for sample in train + validation:
        roles = [m["role"] for m in sample["messages"]]
        assert roles[:2] == ["system", "user"] and "assistant" in roles and "tool" in roles
        calls = [c for m in sample["messages"] for c in m.get("tool_calls") or []]
        assert calls and all(isinstance(c["function"]["arguments"], str) for c in calls)  # TRL: JSON strings
        assert json.loads(sample["tools"])  # tool schemas as a JSON string
    sides = {row["id"]: row["side"] for row in read_jsonl(exported / "questions.jsonl")}
    assert sorted(sides.values()) == ["train", "train", "train", "validation"]
    settings = json.loads((exported / "export.json").read_text())
    assert settings["label_free"] and settings["teacher"]["method_options"]["n_agents"] == 3
    assert settings["temperature"] is None  # the offline teacher has no temperature
    statistics = json.loads((exported / "statistics.json").read_text())
    assert statistics["train"]["samples"] == 9 and statistics["validation"]["questions"] == 1


def test_export_resumes_the_teacher_run_and_reuses_recorded_runs(setup, exported, tmp_path):
    again = invoke("distill", "export", setup["graph"], "-q", setup["queries"], "--out", exported, "--offline",
                   "--config", setup["config"], "--validation-questions", 1, "--no-progress")
    assert again.exit_code == 0, again.output
    assert "0 new, 4 already done" in again.text
    reused = invoke("distill", "export", setup["graph"], "--from", exported, "--out", tmp_path / "again",
                    "--validation-questions", 0, "--keep-correct", "hit@1", "-q", setup["queries"],
                    "--no-progress")
    assert reused.exit_code == 0, reused.output
    statistics = json.loads((tmp_path / "again" / "statistics.json").read_text())
    assert statistics["filtered"] and "validation" not in statistics
    assert statistics["train"]["samples"] + statistics["train"]["dropped_by_filter"] == 12


def test_export_with_an_llm_teacher_samples_three_trajectories_at_temperature_0_7(setup, openai_server,
                                                                                  monkeypatch, tmp_path):
    from ark.graph import load_graph
    from tests.support.openai_server import tool_reply, turn_script

    fbn1 = load_graph(setup["graph"]).index_of("NCBIGene:2200")
    monkeypatch.setenv("OPENAI_API_KEY", "dummy-key")
    openai_server.responder = turn_script([
        tool_reply(("search_in_graph", {"query": "Marfan syndrome"})),
        tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": fbn1, "reasoning": "gene"}]})),
        tool_reply(("finish", {}))])
    out = tmp_path / "data"
    result = invoke("distill", "export", setup["graph"], "-q", setup["queries"], "--out", out, "--base-url",
                    openai_server.base_url, "--model", "test-model", "--max-questions", 2,
                    "--validation-questions", 1, "--config", setup["config"], "--no-progress")
    assert result.exit_code == 0, result.output
    assert openai_server.request_count == 2 * 3 * 3  # questions x trajectories x turns
    assert {body["temperature"] for body in openai_server.requests} == {0.7}
    assert json.loads((out / "export.json").read_text())["temperature"] == 0.7
    samples = read_jsonl(out / "train.jsonl") + read_jsonl(out / "validation.jsonl")
    assert len(samples) == 6 and all(s["messages"][-1]["role"] == "tool" for s in samples)


@pytest.mark.parametrize("args, message", [
    ((), "give the training questions (--queries)"),
    (("--from", "nowhere"), "no such run folder or trajectory file: nowhere"),
    (("--per-question", 2, "--method", "bm25", "-q", "Q"), "method 'bm25' has no n_agents option"),
])
def test_export_bad_input(setup, tmp_path, args, message):
    args = tuple(setup["queries"] if a == "Q" else a for a in args)
    result = invoke("distill", "export", setup["graph"], "--out", tmp_path / "out", *args)
    assert result.exit_code == 2 and message in result.text, result.output


def test_export_refuses_a_results_file(setup, exported, tmp_path):
    result = invoke("distill", "export", setup["graph"], "--from", exported / "teacher" / "results.jsonl",
                    "--out", tmp_path / "out")
    assert result.exit_code == 2 and "not a retrieval record with agent trajectories" in result.text


# ----------------------------------------------------------------------------- training and the student
@pytest.fixture(scope="module")
def tiny_base(exported):
    pytest.importorskip("trl")
    from ark.training.datasets import read_chat_dataset
    from ark.training.tiny_model import TinyModelSpec, build_tiny_model

    return build_tiny_model(exported.parent / "base", samples=read_chat_dataset(exported / "train.jsonl"),
                            spec=TinyModelSpec(vocab_size=1024, tokenizer_cross_words=True), seed=0)


FEW_STEPS = ["--set", "learning_rate=1e-3", "--set", "max_length=2048", "--set", "cpu_threads=1", "--set",
             "evaluations=1", "--set", "logging_steps=1", "--no-progress"]


@pytest.fixture(scope="module")
def student(exported, tiny_base) -> Path:
    out = exported.parent / "student"
    result = invoke("distill", "train", exported, "--base", tiny_base, "--out", out, *FEW_STEPS)
    assert result.exit_code == 0, result.output
    return out


def test_train_writes_a_lora_adapter_with_the_paper_recipe_and_a_merged_student(student, tiny_base):
    config = json.loads((student / "training_config.json").read_text())
    settings = config["settings"]
    assert (settings["lora_r"], settings["lora_alpha"], settings["lora_dropout"]) == (32, 64, 0.1)
    assert settings["epochs"] == 1 and settings["early_stopping_patience"] == 3
    assert (student / "adapter" / "adapter_config.json").is_file()
    assert (student / "merged" / "config.json").is_file()
    result = json.loads((student / "training_result.json").read_text())
    assert result["steps"] == 9 and result["best_validation_loss"] is not None


def test_train_refuses_to_overwrite_checkpoints_without_resume(student, exported, tiny_base):
    result = invoke("distill", "train", exported, "--base", tiny_base, "--out", student, *FEW_STEPS)
    assert result.exit_code == 2 and "--resume" in result.text


def test_student_answers_through_eval_and_the_report_compares_it(setup, exported, student):
    run = exported.parent / "student-run"
    result = invoke("eval", setup["graph"], "--method", "ark", "--model", f"hf:{student / 'merged'}",
                    "--temperature", 0, "--max-tokens", 24, "-q", setup["queries"], "--config", setup["config"],
                    "--set", "n_agents=1", "--run-dir", run, "--no-progress")
    assert result.exit_code == 0, result.output
    config = json.loads((run / "config.json").read_text())
    assert config["llm"].startswith("hf:")
    report = invoke("distill", "report", exported, run)
    assert report.exit_code == 0, report.output
    figures = json.loads((run / "distill_report.json").read_text())
    assert figures["teacher"]["questions"] == figures["student"]["questions"] == 4
    assert figures["teacher"]["trajectories"] == 12 and figures["student"]["trajectories"] == 4
    assert "Hit@1" in report.text and "n_agents" in " ".join(figures["notes"])
    assert (run / "distill_report.md").read_text().startswith("# Teacher vs student")


def test_student_with_its_adapter_answers_through_ask(setup, student, tiny_base):
    result = invoke("ask", setup["graph"], QUESTIONS[0]["query"], "--model", f"hf:{tiny_base}", "--adapter",
                    student / "adapter", "--temperature", 0, "--max-tokens", 16, "--config", setup["config"],
                    "--set", "n_agents=1", "--set", "max_steps=2")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("args, message", [
    (("--model", "hf:/no/such/model"), "/no/such/model"),
    (("--model", "gpt-x", "--base-url", "http://127.0.0.1:9/v1", "--adapter", "a"), "needs a local model"),
])
def test_bad_student_models(setup, args, message):
    result = invoke("ask", setup["graph"], "Which genes?", *args)
    assert result.exit_code == 2 and message in result.text, result.output


def test_train_bad_input(exported, tiny_base, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}) + "\n")
    result = invoke("distill", "train", empty, "--base", tiny_base, "--out", tmp_path / "s1", "--no-progress")
    assert result.exit_code == 2 and "assistant" in result.text, result.output
    result = invoke("distill", "train", exported, "--base", tiny_base, "--out", tmp_path / "s2", "--set", "bogus=1")
    assert result.exit_code == 2 and "unknown setting 'bogus'" in result.text and "lora_r" in result.text
    result = invoke("distill", "train", tmp_path / "missing", "--base", tiny_base, "--out", tmp_path / "s3")
    assert result.exit_code == 2 and "no such dataset" in result.text


def test_train_help_names_every_setting_of_the_trainer():
    """The settings are listed in the command's help text (kept static so `ark --help` needs no pydantic)."""
    import re

    from ark.cli.distill_cmd import train
    from ark.methods.options import describe_options
    from ark.training.sft import SFTSettings

    listed = re.search(r"Settings \(--set KEY=VALUE;.*?\):(.*?)\.\s*$", train.__doc__, re.S).group(1)
    assert [key.strip() for key in listed.split(",")] == [o.key for o in describe_options(SFTSettings)]
