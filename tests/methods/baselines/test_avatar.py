"""``avatar`` on the scripted server: ``ark train avatar`` (comparator rounds over positive and negative training
questions, the instruction update, selection on the evaluation questions, the patience stop, resume) and ``ark eval
--method avatar`` with the instructions it saved.

The server plays a model whose actor follows its instructions: it searches the question's entity and adds it,
unless the instructions tell it to explore the entity's neighbours, when it adds the linked node the question asks
for. So the initial instructions answer questions that name their answer and fail those asking for a linked node;
the comparator sees exactly that split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.openai_server import text_reply, tool_reply

from .conftest import user_text

EXPLORE = "explore the neighbours of the entity found"
FEEDBACK = "Negative questions ask for nodes linked to a named entity; the agent added the entity itself."
# question -> (entity searched, node asked for)
QUESTIONS = {
    "What is the finding Arachnodactyly?": ("HP:0001166", "HP:0001166"),
    "What is the finding Ectopia lentis?": ("HP:0001083", "HP:0001083"),
    "Which genes are implicated in Marfan syndrome?": ("OMIM:154700", "NCBIGene:2200"),
    "Which genes are implicated in Dravet syndrome?": ("OMIM:607208", "NCBIGene:6323"),
    "Which genes are implicated in Hemophilia A?": ("OMIM:306700", "NCBIGene:2157"),
    "What is the finding Tall stature?": ("HP:0000098", "HP:0000098"),
    "Which genes are implicated in Loeys-Dietz syndrome?": ("OMIM:609192", "NCBIGene:7046"),
    "Which genes are implicated in Homocystinuria?": ("OMIM:236200", "NCBIGene:875"),
}
TRAIN = list(QUESTIONS)[:5]
VALIDATION = list(QUESTIONS)[5:7]


class SimulatedModel:
    """A responder: the actor's tool calls by its instructions, the comparator's feedback, and instruction updates
    (the first tells the actor to explore; later ones do not, so they score worse)."""

    def __init__(self, graph) -> None:
        self.graph, self.updates = graph, 0

    def __call__(self, body: dict):
        from ark.methods.avatar import prompts

        system = body["messages"][0]["content"]
        if not body.get("tools"):
            if system == prompts.COMPARATOR_SYSTEM:
                return text_reply(FEEDBACK)
            self.updates += 1
            better = f"Search the entity the question names, then {EXPLORE} and add the node asked for."
            return text_reply("New instructions: " + (better if self.updates == 1 else "Add the first result."))
        question = next(q for q in QUESTIONS if q in user_text(body))
        entity, asked = (self.graph.index_of(i) for i in QUESTIONS[question])
        explore = EXPLORE in system
        plan = [tool_reply(("search_in_graph", {"query": self.graph.name(entity)}))]
        if explore:
            plan.append(tool_reply(("search_in_neighborhood", {"node_index": entity})))
        plan.append(tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": asked if explore else entity}]})))
        plan.append(tool_reply(("finish", {})))
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        return plan[min(turn, len(plan) - 1)]


def write_questions(path: Path, questions: list[str]) -> Path:
    path.write_text("".join(json.dumps({"id": f"q{i}", "query": q, "answer_ids": [QUESTIONS[q][1]]}) + "\n"
                            for i, q in enumerate(questions)))
    return path


@pytest.fixture
def train_cli():
    from ark.cli.train_cmd import register
    from tests.support.cli import cli_invoker

    return cli_invoker(register)


@pytest.fixture
def trained(train_cli, clinical, clinical_dir, openai_server, no_llm, tmp_path):
    """``ark train avatar`` on the clinical graph through the simulated model; returns (result, out, model)."""
    model = SimulatedModel(clinical)
    openai_server.responder = model

    def train(*sets: str):
        out = tmp_path / "avatar-model"
        options = [part for value in ("patience=1", "batch_size=5", "max_steps=6", *sets)
                   for part in ("--set", value)]
        result = train_cli("train", "avatar", clinical_dir, "-q", write_questions(tmp_path / "train.jsonl", TRAIN),
                           "--val", write_questions(tmp_path / "val.jsonl", VALIDATION), "--out", out,
                           "--model", "test-model", "--base-url", openai_server.base_url, "--seed", "3", *options)
        return result, out, model

    return train


def comparator_requests(server) -> list[dict]:
    from ark.methods.avatar import prompts

    return [r for r in server.requests if r["messages"][0]["content"] == prompts.COMPARATOR_SYSTEM]


def test_comparator_rounds_contrast_positives_with_negatives_and_keep_better_instructions(trained, openai_server):
    result, out, model = trained()
    assert result.exit_code == 0, result.output
    comparator = comparator_requests(openai_server)
    assert len(comparator) == 2  # round 1 improved, round 2 did not: patience 1 stops
    seen = user_text(comparator[0])
    positives, negatives = seen.split("Negative questions:")
    assert all(q in positives for q in TRAIN if "finding" in q)  # named their answer: Hit@5 1
    assert all(q in negatives for q in TRAIN if "genes" in q) and "Tool calls: search_in_graph(" in negatives
    assert "MRR 0.000" in negatives and "MRR 1.000" in positives
    state = json.loads((out / "training" / "state.json").read_text())
    assert [h["accepted"] for h in state["history"]] == [True, True, False]
    assert [h["eval"]["mrr"] for h in state["history"]] == [0.5, 1.0, 0.5]
    saved = json.loads((out / "avatar.json").read_text())
    assert EXPLORE in saved["instructions"] and saved["chosen_round"] == 1
    assert saved["stop"] == "no better MRR in 1 rounds" and saved["rounds"] == 2
    assert saved["graph"]["name"] == "clinical" and saved["chat_model"] == "test-model"
    assert EXPLORE in user_text(comparator[1])  # round 2 contrasted the runs under the kept instructions


def test_rounds_bound_the_search_and_a_rerun_resumes_from_the_state(trained, openai_server):
    result, out, _ = trained("rounds=1")
    assert result.exit_code == 0, result.output
    assert len(comparator_requests(openai_server)) == 1
    (out / "avatar.json").unlink()
    before = openai_server.request_count
    result, out, _ = trained("rounds=1")
    assert result.exit_code == 0 and "resuming after round 1" in result.text
    assert openai_server.request_count == before  # nothing asked again
    assert EXPLORE in json.loads((out / "avatar.json").read_text())["instructions"]
    result, _, _ = trained("rounds=2", "batch_size=4")
    assert result.exit_code == 1 and "other settings" in result.text


def test_ark_eval_with_the_saved_instructions_retrieves_the_right_node(trained, eval_run, openai_server, tmp_path):
    _, out, _ = trained()
    question = "Which genes are implicated in Homocystinuria?"
    _, summary, rows = eval_run("avatar", [{"id": "h", "query": question, "answer_ids": ["NCBIGene:875"]}],
                                f"model={out}")
    assert summary["overall"]["hit@1"] == 1.0 and rows["h"]["hit@1"] == 1.0
    assert EXPLORE in openai_server.requests[-1]["messages"][0]["content"]


def test_without_a_model_folder_or_a_chat_model_one_line_says_what_to_do(cli, clinical_dir, no_llm, tmp_path,
                                                                        openai_server):
    queries = write_questions(tmp_path / "q.jsonl", TRAIN[:1])
    result = cli("eval", clinical_dir, "-m", "avatar", "-q", queries, "--run-dir", tmp_path / "r1", "--no-progress",
                 "--model", "test-model", "--base-url", openai_server.base_url, "--set", f"model={tmp_path / 'none'}")
    assert result.exit_code != 0 and "ark train avatar clinical" in result.text
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    result = cli("eval", clinical_dir, "-m", "avatar", "-q", queries, "--run-dir", tmp_path / "r2", "--no-progress")
    assert result.exit_code != 0 and "prompts a chat model" in result.text


def test_training_without_a_chat_model_is_one_line(train_cli, clinical_dir, no_llm, tmp_path):
    queries = write_questions(tmp_path / "q.jsonl", TRAIN)
    result = train_cli("train", "avatar", clinical_dir, "-q", queries, "--out", tmp_path / "out")
    assert result.exit_code == 2 and "ark train avatar prompts a chat model" in result.text
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "out").exists()
