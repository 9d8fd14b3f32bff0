"""The ARK loop for one agent: ask the policy, execute its tool calls, feed back observations, until ``finish``
or ``max_steps``."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

from ark.llm.policy import ChatPolicy, Usage
from ark.tools import Toolbox

from .config import AgentConfig
from .prompt import first_user_message, render_system_prompt
from .trajectory import StepRecord, ToolCallRecord, Trajectory

NO_TOOL_CALL_MESSAGE = (
    "You must call one of the tools (search_in_graph, search_in_neighborhood, add_to_answer, finish) in every "
    "turn. Continue the search, or call finish if the answer is complete."
)


async def run_agent(question: str, toolbox_factory: Callable[[], Toolbox], policy: ChatPolicy,
                    agent_index: int = 0, config: AgentConfig | None = None) -> Trajectory:
    """Run one trajectory. Never raises for model misbehaviour; a policy failure ends the trajectory with
    ``error`` set (stop reason ``error``)."""
    config = config or AgentConfig()
    toolbox = toolbox_factory()
    tools = toolbox.openai_tools()
    system = config.system_prompt or render_system_prompt(toolbox.graph, toolbox.config)
    messages: list[dict] = [{"role": "system", "content": system},
                            {"role": "user", "content": first_user_message(question)}]
    trajectory = Trajectory(question=question, agent_index=agent_index, policy=getattr(policy, "name", ""),
                            messages=messages, tools=tools)
    started = time.perf_counter()
    for step_index in range(config.max_steps):
        step_started = time.perf_counter()
        try:
            reply = await policy.next_message(messages, tools, agent_index=agent_index,
                                              tool_choice=config.tool_choice)
        except Exception as exc:  # noqa: BLE001 - one agent's failure must not sink the other agents
            trajectory.error = f"{type(exc).__name__}: {exc}"
            trajectory.stop_reason = "error"
            break
        llm_s = time.perf_counter() - step_started
        message = _assistant_message(reply.message, step_index)
        messages.append(message)
        records, observations, corrective = [], [], None
        calls = message.get("tool_calls") or []
        for call in calls:
            function = call.get("function") or {}
            name, arguments = str(function.get("name") or ""), function.get("arguments")
            raw = arguments if isinstance(arguments, str) else json.dumps(arguments or {})
            outcome = toolbox.execute(name, raw)
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": outcome.text})
            records.append(ToolCallRecord(call["id"], name, raw, _parses(raw), outcome.ok, outcome.error,
                                          list(outcome.node_indices)))
            observations.append(outcome.text)
        if not calls:
            corrective = NO_TOOL_CALL_MESSAGE
            messages.append({"role": "user", "content": corrective})
        usage = reply.usage if isinstance(reply.usage, Usage) else Usage()
        trajectory.usage = trajectory.usage + usage
        trajectory.steps.append(StepRecord(step_index, records, observations, time.perf_counter() - step_started,
                                           llm_s, usage, bool(reply.cached), message.get("content"), corrective))
        if toolbox.finished:
            trajectory.finished = True
            trajectory.stop_reason = "finish"
            break
    else:
        trajectory.stop_reason = "max_steps"
    trajectory.wall_s = time.perf_counter() - started
    trajectory.answer = list(toolbox.answer)
    trajectory.answer_ids = [toolbox.graph.node_id(i) for i in toolbox.answer]
    trajectory.reasoning = dict(toolbox.reasoning)
    trajectory.telemetry = toolbox.telemetry.to_dict()
    return trajectory


def _assistant_message(message: dict, step_index: int) -> dict:
    """A clean OpenAI-format assistant message; tool calls get ids if the back-end sent none."""
    out: dict = {"role": "assistant", "content": message.get("content")}
    calls = []
    for k, call in enumerate(message.get("tool_calls") or []):
        function = dict(call.get("function") or {})
        arguments = function.get("arguments")
        if not isinstance(arguments, str):  # keep arguments a JSON string, as the protocol has them
            function["arguments"] = json.dumps(arguments if arguments is not None else {})
        calls.append({"id": call.get("id") or f"call_{step_index}_{k}", "type": call.get("type", "function"),
                      "function": function})
    if calls:
        out["tool_calls"] = calls
    return out


def _parses(raw: str) -> bool:
    if not raw.strip():
        return True
    try:
        return isinstance(json.loads(raw), dict)
    except json.JSONDecodeError:
        return False
