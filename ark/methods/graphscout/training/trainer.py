"""``train_graphscout``: GRPO on GraphScout quiz questions with tool-calling rollouts (what ``ark train graphscout``
runs).

TRL's ``GRPOTrainer`` samples ``group_size`` trajectories per question from the current policy; each turn's tool
calls are parsed from the generated text and run in the rollout's environment
(:class:`~.environment.GraphScoutEnvironment`: the node retriever and a sandboxed code interpreter), the results
are appended as tool messages and generation continues, up to the turn budget. The loss covers the model's own
tokens only: TRL's ``tool_mask`` gives the tool-output tokens zero weight. Rewards: the answer-and-clue reward;
advantages (r − group mean) / group std. Checkpoints go to ``<out>/checkpoints`` (``resume=True`` continues from
the newest); ``progress.jsonl`` holds one line per step (mean reward, answer F1, clue fraction, failed-call rate,
KL, time); ``training_config.json`` records the settings, the base and its fingerprint, library versions and the
quiz file's digest; the trained solver is ``<out>/model`` (or ``<out>/adapter`` with LoRA), loadable with
``--model hf:<out>/model --method graphscout``. CUDA and bf16 are used when present. Needs the ``train`` and
``graphdb`` extras.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ark.errors import ArkError
from ark.llm.hf_models import (
    ADAPTER_META,
    ChatTemplateError,
    check_tool_chat_template,
    load_trainable_base,
    model_fingerprint,
    pick_device,
)
from ark.storage.atomic import atomic_directory, atomic_file
from ark.storage.jsonl import append_jsonl
from ark.training.sft import file_digest, library_versions

from ..options import GraphScoutOptions
from ..reward import GraphScoutReward
from .data import grpo_rows, training_questions, warm_start_samples
from .environment import ScoutWorld
from .reward_function import GRPORewardFunction
from .settings import GRPOSettings

if TYPE_CHECKING:
    from transformers import TrainerCallback

    from ....graph import KnowledgeGraph

log = logging.getLogger(__name__)

CONFIG_FILE = "training_config.json"
RESULT_FILE = "training_result.json"
PROGRESS_FILE = "progress.jsonl"


class GRPOTrainingError(ValueError, ArkError):
    """A base model, quiz or setting GRPO cannot train with."""


@dataclass
class GRPOResult:
    """What a run produced: where the trained solver is and how its reward moved."""

    out_dir: str
    weights_dir: str
    questions: int
    dropped_long_prompts: int
    steps: int
    wall_s: float
    resumed_from: str | None = None
    warm_start_dir: str | None = None
    base_fingerprint: str | None = None
    reward_curve: list[float] = field(default_factory=list)
    failed_call_rate_curve: list[float] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def prepare_tool_tokenizer(tokenizer: Any, where: str) -> Any:
    """Check that ``tokenizer`` can drive tool calling and give it a response parser TRL can read tool calls with.

    TRL knows the parsers of common templates (Qwen, Llama, ...); a template outside that list that writes
    Hermes/Qwen-style ``<tool_call>{json}</tool_call>`` blocks inside ``<|im_start|>assistant`` turns (ours for tiny
    models) gets the Qwen3 parser; anything else is refused with the reason.
    """
    from trl.chat_template_utils import add_response_schema

    try:
        check_tool_chat_template(tokenizer, where)
    except ChatTemplateError as exc:
        raise GRPOTrainingError(str(exc)) from exc
    tokenizer.padding_side = "left"
    if getattr(tokenizer, "response_template", None) is not None or getattr(tokenizer, "response_schema", None):
        return tokenizer
    with contextlib.suppress(ValueError):  # a template TRL does not know
        add_response_schema(tokenizer)
    if getattr(tokenizer, "response_template", None) is not None or getattr(tokenizer, "response_schema", None):
        return tokenizer
    probe = tokenizer.apply_chat_template(
        [{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [
            {"type": "function", "function": {"name": "probe_tool", "arguments": {"x": 1}}}]}], tokenize=False)
    if "<|im_start|>assistant\n" in probe and "<tool_call>" in probe and '"name": "probe_tool"' in probe:
        from trl.chat_template_utils import qwen3_template

        tokenizer.response_template = qwen3_template
        return tokenizer
    raise GRPOTrainingError(f"{where}: TRL has no tool-call parser for this chat template and it does not write "
                            f"Qwen/Hermes-style <tool_call> blocks, so the model's tool calls could not be read "
                            f"during rollouts; use a tool-calling chat model (e.g. Qwen3) or set "
                            f"tokenizer.response_template")


def train_graphscout(graph: KnowledgeGraph, quiz_path: str | Path, base: str | Path, out_dir: str | Path,
                     settings: GRPOSettings | None = None, options: GraphScoutOptions | None = None, *,
                     resume: bool = False, engine: Any = None, index: Any = None,
                     on_step: Any = None) -> GRPOResult:
    """Train the GraphScout solver ``base`` (a Hugging Face causal LM folder or cached id) with GRPO on the quiz at
    ``quiz_path`` over ``graph``; write everything under ``out_dir`` and return a :class:`GRPOResult`.

    ``options``: the solver's options (tools, retriever, sandbox limits, turn budget). ``resume``: continue from the
    newest checkpoint in ``out_dir/checkpoints``. ``on_step(record)``: called with each step's progress record.
    """
    settings = settings or GRPOSettings()
    update: dict[str, Any] = {}
    if settings.system_prompt is not None:
        update["system_prompt"] = settings.system_prompt
    if settings.max_turns is not None:
        update["max_turns"] = settings.max_turns
    options = (options or GraphScoutOptions()).model_copy(update=update)
    started = time.perf_counter()
    out = Path(out_dir)
    questions = training_questions(quiz_path, graph, split=settings.split, limit=settings.max_questions,
                                   seed=settings.seed)
    base = original_base = str(base)
    tokenizer = _load_tokenizer(base)
    world = ScoutWorld(graph, options, engine=engine, index=index, progress=settings.progress)
    try:
        rows = grpo_rows(questions, world.system_prompt)
        rows, dropped = _drop_long_prompts(rows, tokenizer, world.tool_schemas(), settings.max_prompt_tokens)
        if not rows:
            raise GRPOTrainingError(f"every question's prompt is longer than max_prompt_tokens="
                                    f"{settings.max_prompt_tokens}; raise it or shorten the system prompt")
        warm_dir = None
        if settings.warm_start:
            warm_dir = _warm_start(world, questions, base, out / "warm_start", settings, resume)
            base = warm_dir
            tokenizer = _load_tokenizer(base)
        result = _run_grpo(world, rows, base, tokenizer, out, settings, options, resume, on_step)
    finally:
        world.close()
    result.questions = len(rows)
    result.dropped_long_prompts = dropped
    result.warm_start_dir = warm_dir
    result.wall_s = time.perf_counter() - started
    _write_json(out / CONFIG_FILE, {
        "settings": settings.model_dump(mode="json"), "solver_options": options.model_dump(mode="json"),
        "base": original_base, "grpo_from": base, "grpo_from_fingerprint": result.base_fingerprint,
        "libraries": library_versions(), "graph": (graph.info.name or ""),
        "quiz": {"path": str(quiz_path), "sha256": file_digest(quiz_path), "questions": len(rows),
                 "dropped_long_prompts": dropped, "split": settings.split},
        "device": pick_device(settings.device), "warm_start_dir": warm_dir, **_warm_start_digest(warm_dir),
        **_fingerprint_of(result),
    })
    _write_json(out / RESULT_FILE, result.to_dict())
    return result


# ---------------------------------------------------------------------------------------------------- internals
def _load_tokenizer(base: str) -> Any:
    from transformers import AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(base)
    except (OSError, ValueError) as exc:
        raise GRPOTrainingError(f"cannot load a tokenizer from base {base!r}: {exc}") from exc
    return prepare_tool_tokenizer(tokenizer, f"base {base!r}")


def _drop_long_prompts(rows: list[dict], tokenizer: Any, tools: list[dict], limit: int) -> tuple[list[dict], int]:
    kept = []
    for row in rows:
        ids = tokenizer.apply_chat_template(row["prompt"], tools=tools, add_generation_prompt=True, tokenize=True,
                                            return_dict=False)
        if len(ids) <= limit:
            kept.append(row)
    if len(kept) < len(rows):
        log.warning("%d of %d questions dropped: prompt longer than max_prompt_tokens=%d", len(rows) - len(kept),
                    len(rows), limit)
    return kept, len(rows) - len(kept)


def _warm_start(world: ScoutWorld, questions: list, base: str, folder: Path, settings: GRPOSettings,
                resume: bool) -> str:
    """SFT of ``base`` on the scripted solver's trajectories; returns the fine-tuned model folder."""
    from ark.training.datasets import write_chat_dataset
    from ark.training.sft import SFTSettings, train_sft

    done = folder / "model"
    if resume and (done / "config.json").is_file():
        return str(done)
    chosen = questions[: settings.warm_start_questions] if settings.warm_start_questions else questions
    samples = warm_start_samples(world, chosen)
    if not samples:
        raise GRPOTrainingError("the scripted solver answered none of the training questions: no warm-start data")
    dataset = folder / "train.jsonl"
    write_chat_dataset(dataset, samples)
    sft = SFTSettings(lora=False, learning_rate=settings.warm_start_learning_rate, epochs=settings.warm_start_epochs,
                      batch_size=settings.warm_start_batch_size, lr_scheduler="constant",
                      max_length=settings.max_prompt_tokens + settings.max_completion_tokens,
                      early_stopping_patience=None, save_steps=10_000, cpu_threads=settings.cpu_threads,
                      seed=settings.seed, progress=settings.progress, device=settings.device, bf16=settings.bf16)
    result = train_sft(dataset, base, folder, sft)
    return result.weights_dir


def _progress_callback(path: Path, total: int, reward_fn: GRPORewardFunction, on_step: Any, show: bool
                       ) -> TrainerCallback:
    """A callback that writes one line per logged step to ``progress.jsonl`` and hands it to ``on_step``."""
    from transformers import TrainerCallback  # imported here: transformers is an extra

    class ProgressCallback(TrainerCallback):
        def __init__(self, path: Path, total: int, reward_fn: GRPORewardFunction, on_step: Any,
                     show: bool) -> None:
            self.path, self.total, self.reward_fn, self.on_step, self.show = path, total, reward_fn, on_step, show
            self.started = time.perf_counter()

        def on_log(self, args, state, control, logs=None, **kwargs):
            if not logs or "reward" not in logs:
                return
            record = {"step": int(state.global_step), "of": self.total,
                      "reward": logs.get("reward"), "reward_std": logs.get("reward_std"),
                      "answer_f1": logs.get("graphscout/answer_f1"),
                      "clue_fraction": logs.get("graphscout/clue_fraction"),
                      "answered": logs.get("graphscout/answered"),
                      "failed_call_rate": logs.get("graphscout/failed_call_rate"),
                      "tool_calls": logs.get("tools/call_frequency"), "kl": logs.get("kl"),
                      "loss": logs.get("loss"), "elapsed_s": round(time.perf_counter() - self.started, 1)}
            append_jsonl(self.path, [record])
            if self.show:
                print(f"step {record['step']}/{self.total}  mean reward {record['reward']:.3f}  "
                      f"answered {record['answered'] or 0:.2f}  failed calls {record['failed_call_rate'] or 0:.2f}"
                      f"  ({record['elapsed_s']:.0f}s)", flush=True)
            if self.on_step is not None:
                self.on_step(record)

    return ProgressCallback(path, total, reward_fn, on_step, show)


def build_trainer(world: ScoutWorld, rows: list[dict], base: str, tokenizer: Any, out: Path,
                  settings: GRPOSettings, options: GraphScoutOptions, on_step: Any = None) -> tuple[Any, str]:
    """TRL's ``GRPOTrainer`` for ``rows`` with the rollout environments of ``world`` and the answer-and-clue reward;
    returns it with the base's fingerprint."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    device = pick_device(settings.device)
    model, use_bf16, fingerprint = load_trainable_base(base, tokenizer, device, settings.bf16, GRPOTrainingError)
    peft_config = None
    if settings.lora:
        from peft import LoraConfig

        from ark.training.sft import LORA_TARGETS

        present = {name.rsplit(".", 1)[-1] for name, _ in model.named_modules()}
        targets = [m for m in LORA_TARGETS if m in present]
        if not targets:
            raise GRPOTrainingError(f"base {base!r} has none of the projections {LORA_TARGETS} for LoRA")
        peft_config = LoraConfig(r=settings.lora_r, lora_alpha=settings.lora_alpha,
                                 lora_dropout=settings.lora_dropout, target_modules=targets, task_type="CAUSAL_LM")
    completions = settings.completions_per_step
    micro = min(settings.micro_batch, completions)
    if completions % micro:
        raise GRPOTrainingError(f"questions_per_step × group_size = {completions} must be a multiple of "
                                f"micro_batch={micro}")
    checkpoints = out / "checkpoints"
    config = GRPOConfig(
        output_dir=str(checkpoints), num_generations=settings.group_size, per_device_train_batch_size=micro,
        gradient_accumulation_steps=completions // micro, max_steps=settings.steps, num_iterations=1,
        learning_rate=settings.learning_rate, beta=settings.kl_coef, epsilon=settings.clip_low,
        epsilon_high=settings.clip_high, temperature=settings.temperature, top_p=1.0, top_k=0,
        scale_rewards=settings.scale_rewards, loss_type=settings.loss_type,
        max_completion_length=settings.max_completion_tokens, max_tool_calling_iterations=options.max_turns - 1,
        logging_steps=settings.logging_steps, save_strategy="steps", save_steps=settings.save_steps,
        save_total_limit=settings.save_total_limit, bf16=use_bf16, use_cpu=device == "cpu", seed=settings.seed,
        data_seed=settings.seed, report_to="none",
        disable_tqdm=True, remove_unused_columns=False, shuffle_dataset=True,
        lr_scheduler_type="constant", warmup_steps=0, log_completions=False,
        gradient_checkpointing=settings.gradient_checkpointing,  # TRL's default is on; the setting's is off
    )
    reward_fn = GRPORewardFunction(GraphScoutReward(world.graph, delta=settings.delta, use_clue=settings.use_clue))
    callback = _progress_callback(out / PROGRESS_FILE, settings.steps, reward_fn, on_step, settings.progress)
    trainer = GRPOTrainer(model=model, reward_funcs=[reward_fn], args=config, train_dataset=Dataset.from_list(rows),
                          processing_class=tokenizer, peft_config=peft_config, callbacks=[callback],
                          environment_factory=world.environment)
    from transformers.trainer_callback import PrinterCallback

    trainer.remove_callback(PrinterCallback)  # our per-step line (``progress``) replaces the raw log dicts
    return trainer, fingerprint


def _run_grpo(world: ScoutWorld, rows: list[dict], base: str, tokenizer: Any, out: Path, settings: GRPOSettings,
              options: GraphScoutOptions, resume: bool, on_step: Any) -> GRPOResult:
    import torch
    from transformers.trainer_utils import get_last_checkpoint

    checkpoints = out / "checkpoints"
    progress_path = out / PROGRESS_FILE
    resumed_from = get_last_checkpoint(str(checkpoints)) if resume and checkpoints.is_dir() else None
    if not resumed_from and progress_path.exists():
        progress_path.unlink()
    trainer, fingerprint = build_trainer(world, rows, base, tokenizer, out, settings, options, on_step)
    threads = torch.get_num_threads()
    if settings.cpu_threads is not None:
        torch.set_num_threads(settings.cpu_threads)
    try:
        trainer.train(resume_from_checkpoint=resumed_from)
    finally:
        torch.set_num_threads(threads)
        for env in trainer._environment_pool.get(None, []) if hasattr(trainer, "_environment_pool") else []:
            env.reset()  # hand every sandbox back to the pool before it closes
    weights = out / ("adapter" if settings.lora else "model")
    with atomic_directory(weights) as staging:
        trainer.model.save_pretrained(str(staging))
        tokenizer.save_pretrained(str(staging))
        if settings.lora:
            _write_json(staging / ADAPTER_META, {"base": base, "base_fingerprint": fingerprint})
    curve = [json.loads(line) for line in progress_path.read_text().splitlines()] if progress_path.exists() else []
    return GRPOResult(out_dir=str(out), weights_dir=str(weights), questions=len(rows), dropped_long_prompts=0,
                      steps=int(trainer.state.global_step), wall_s=0.0, resumed_from=resumed_from,
                      base_fingerprint=fingerprint,
                      reward_curve=[r["reward"] for r in curve],
                      failed_call_rate_curve=[r["failed_call_rate"] for r in curve])


def _warm_start_digest(warm_dir: str | None) -> dict[str, Any]:
    data = Path(warm_dir).parent / "train.jsonl" if warm_dir else None
    return {"warm_start_data_sha256": file_digest(data)} if data is not None and data.is_file() else {}


def _fingerprint_of(result: GRPOResult) -> dict[str, Any]:
    config = Path(result.weights_dir) / "config.json"
    if not config.is_file():
        return {}
    from transformers import AutoConfig

    return {"trained_fingerprint": model_fingerprint(AutoConfig.from_pretrained(result.weights_dir))}


def _write_json(path: Path, payload: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(path, "w") as handle:
        handle.write(json.dumps(payload, indent=2, default=str) + "\n")

