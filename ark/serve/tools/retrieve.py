"""``retrieve(question, method, options, preset, model, limit)``: evidence for a question from any registered
method (:mod:`ark.serve.questions`): the ranked nodes with what supports each, never a generated answer. Its
handler is asynchronous (the method runs agents); :meth:`GraphTools.aexecute` awaits it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from ark.runtime.tools import ToolResult, ToolSpec
from ark.text import clean_inline

if TYPE_CHECKING:
    from ..graph_tools import GraphTools

NAME = "retrieve"


class ModelChoice(BaseModel):
    """A request's chat model settings (``model`` and ``base_url`` only on a server started with
    ``--allow-request-models``; :mod:`ark.serve.questions`)."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = Field(default=None, description="Chat model name (default: the server's; only on a server "
                                                        "started with --allow-request-models).")
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint (default: the server's; only "
                                                           "on a server started with --allow-request-models; the "
                                                           "server's API key is never sent to another endpoint).")
    temperature: float | None = Field(default=None, ge=0, le=2, description="Sampling temperature.")
    offline: bool = Field(default=False, description="Use the offline policy (no model).")


class RetrieveArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str = Field(description="The question, in plain language.")
    method: str = Field(default="ark", description="A registered retrieval method (see the tool description).")
    options: dict[str, JsonValue] = Field(default_factory=dict,
                                          description="The method's per-request options, e.g. {\"n_agents\": 5} for "
                                                      "ark (sandbox, timeouts, embedders and model folders are the "
                                                      "server's).")
    preset: str | None = Field(default=None, description="An options preset under `options`: \"paper\" = the "
                                                         "method's paper's settings (ark, seeder, graphscout).")
    model: ModelChoice | None = Field(default=None, description="LLM methods: the chat model (default: the "
                                                                "server's).")
    limit: int | None = Field(default=None, ge=1, description="Ranked nodes to return (default 10, at most 50).")


class RankedEvidence(BaseModel):
    """One ranked node and what supports it: the agents' votes (or the method's score), tie group, stated
    reasons and a text snippet."""

    rank: int
    index: int
    id: str
    name: str
    type: str
    score: float
    votes: int | None
    tie_group: int | None
    evidence: list[str]
    snippet: str


class RetrieveResult(BaseModel):
    """The question, the method, its options and model, how many nodes it ranked and those shown (``omitted``: cut
    by the character cap), its stated confidence, whether some agents failed, the time and the graph version."""

    question: str
    method: str
    options: dict[str, JsonValue]
    preset: str | None
    llm: str | None
    total: int
    ranked: list[RankedEvidence]
    confidence: str | None
    confidence_reason: str | None
    partial: str | None
    wall_s: float
    graph_version: int
    omitted: int


def spec(methods: dict[str, str]) -> ToolSpec:
    """The tool offering the registered ``methods`` (name: one-line summary)."""
    listed = "; ".join(f"{name}: {summary}" for name, summary in methods.items())
    return ToolSpec(
        NAME,
        "Retrieve evidence for a question with a retrieval method: the ranked nodes, each with what supports it "
        f"(agents' reasoning, votes, a text snippet), not a written answer. Methods: {listed}.",
        RetrieveArgs, example='{"question": "Which genes are linked to Dravet syndrome?", "method": "ark"}',
        result_model=RetrieveResult)


async def run(box: GraphTools, args: RetrieveArgs) -> ToolResult:
    """Ask the server's question service; a refused request (unknown method, options out of bounds) is an
    observation naming the problem."""
    from ..questions import ModelSettings, RequestError

    questions = box.questions
    if questions is None:  # not offered without a service: the tool set has no such tool then
        raise RuntimeError("retrieve needs the server's question service")
    rows, capped = box.rows(args.limit)
    chosen = args.model
    model = None if chosen is None else ModelSettings(model=chosen.model, base_url=chosen.base_url,
                                                      temperature=chosen.temperature, offline=chosen.offline)
    try:
        answered = await questions.ask(args.question, args.method, args.options, model=model, top=rows,
                                       preset=args.preset)
    except RequestError as exc:
        return ToolResult.failure(str(exc), exc.kind)
    g = box.graph  # the call's version: the answer's, unless an update landed while it ran
    if g.info.version != answered.get("graph_version", 0):
        return ToolResult.failure("the graph changed while the question ran: ask again", "graph_changed")
    found = RetrieveResult.model_validate({**answered, "omitted": 0})
    who = found.llm or args.method
    if not found.ranked:
        return ToolResult(f"{args.method} found no node for: {args.question!r}", data=found)
    header = [f"{args.method} ({who}) ranked {found.total} node(s) for: {args.question!r} "
              f"({found.wall_s:.2f} s):", ""]
    entries = []
    for row in found.ranked:
        weight = f"votes {row.votes}" if row.votes is not None else f"score {row.score:.3f}"
        lines = [f"{row.rank}. {box.label(row.index)} · id {row.id} - {weight}"]
        lines += [f"    Evidence: {clean_inline(reason, 300)}" for reason in row.evidence[:3]]
        lines.append(f"    Text: {clean_inline(g.text(row.index), 200)}")
        entries.append(lines)
    text, shown = box.fit(header, entries, [capped] if capped else [])
    found.omitted = len(found.ranked) - shown
    found.ranked = found.ranked[:shown]
    return ToolResult(text, data=found, node_indices=[row.index for row in found.ranked])
