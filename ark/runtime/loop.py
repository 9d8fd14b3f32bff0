"""The tool-calling loop shared by agent methods: ask the policy, execute its tool calls, feed back observations.

:func:`run_tool_loop` extends a :class:`~ark.runtime.records.Trajectory` in place until a tool ends it (``finish``),
a turn without tool calls ends it (a method that accepts a final text answer), the step budget runs out, or the
policy fails. The conversation is typed records (:mod:`ark.llm.messages`): tool messages carry the observation
text for the model and the tool's typed result for scripted policies; the call's record keeps its dump (the
dict that is written, see ``runtime.tools.dumped``).

A reply runs at most the policy's ``max_tool_calls_per_turn`` tool calls (default
:data:`~ark.llm.policy.DEFAULT_MAX_TOOL_CALLS_PER_TURN`): the rest are dropped from the history and the last
observation says so, so one runaway reply costs neither thousands of tool runs nor thousands of messages next turn.
The reply is accepted (:meth:`~ark.llm.policy.PolicyReply.accept`, the cue to cache it) once its calls have run.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Protocol

from ark.llm.messages import AssistantMessage, ToolMessage, UserMessage
from ark.llm.policy import DEFAULT_MAX_TOOL_CALLS_PER_TURN, ChatPolicy, Usage

from .records import StepRecord, ToolCallRecord, Trajectory
from .tools import ToolResult, kept_arguments, parse_arguments

# A turn without tool calls: return the corrective user message to send, or None to end the trajectory there.
NoCallHandler = Callable[[AssistantMessage], str | None]
# Called after every step with the trajectory and the step just recorded (e.g. to stream steps to a page as they
# happen); may be a coroutine function. Its exceptions propagate: a listener that must not stop the run catches its own.
StepCallback = Callable[[Trajectory, StepRecord], Awaitable[None] | None]


class ToolExecutor(Protocol):
    """What the loop drives: tool execution and whether a tool has ended the trajectory. An executor may also
    define ``async aexecute(name, arguments)``, which the loop then awaits instead (tools that block, such as a
    code sandbox, run in a thread without stalling other trajectories)."""

    finished: bool

    def execute(self, name: str, arguments: str | dict | None) -> ToolResult: ...


async def run_tool_loop(trajectory: Trajectory, policy: ChatPolicy, executor: ToolExecutor, *, max_steps: int,
                        tool_choice: str = "required", on_no_tool_call: NoCallHandler | None = None,
                        on_step: StepCallback | None = None) -> None:
    """Run up to ``max_steps`` turns on ``trajectory.messages``; sets ``stop_reason`` (``finish``, ``answer``,
    ``max_steps`` or ``error``), ``finished``, ``error``, usage and wall time. Never raises for model misbehaviour;
    a policy failure ends the trajectory with ``error`` set (one agent's failure must not sink the others).
    ``on_step`` (optional) is called after each step is recorded, before the loop decides whether to go on."""
    messages = trajectory.messages
    execute_async = getattr(executor, "aexecute", None)
    max_calls = max(1, int(getattr(policy, "max_tool_calls_per_turn", DEFAULT_MAX_TOOL_CALLS_PER_TURN)))
    started = time.perf_counter()
    trajectory.stop_reason = "max_steps"
    for step_index in range(max_steps):
        step_started = time.perf_counter()
        try:
            reply = await policy.next_message(messages, trajectory.tools, agent_index=trajectory.agent_index,
                                              tool_choice=tool_choice)
        except Exception as exc:  # noqa: BLE001 - reported in the trajectory, see the docstring
            trajectory.error = f"{type(exc).__name__}: {exc}"
            trajectory.stop_reason = "error"
            break
        llm_s = time.perf_counter() - step_started
        message = reply.message
        for k, call in enumerate(message.tool_calls):
            call.id = call.id or f"call_{step_index}_{k}"  # the back-end sent none; the protocol needs one
        calls = message.tool_calls
        dropped = len(calls) - max_calls
        if dropped > 0:
            calls = message.tool_calls = calls[:max_calls]
        messages.append(message)
        records: list[ToolCallRecord] = []
        answers: list[ToolMessage] = []
        corrective: UserMessage | None = None
        for call in calls:
            name, raw = call.name, call.arguments
            result = await execute_async(name, raw) if execute_async is not None else executor.execute(name, raw)
            answer = ToolMessage(call.id, result.text, result.data)
            messages.append(answer)
            answers.append(answer)
            parses = parse_arguments(raw)[1] is None
            kept = kept_arguments(raw, result)
            if kept is not raw:  # refused as too long: the history (sent again next turn) and the record keep a cut
                call.arguments = kept
            records.append(ToolCallRecord(call, parses, result.ok, result.error, list(result.node_indices), answer))
        if dropped > 0:
            answers[-1].content += (f"\n\n[{dropped:,} more tool call(s) in this reply were not run: at most "
                                    f"{max_calls} run per turn. Call fewer tools at a time.]")
        reply.accept()
        ends_here = False
        if not calls:
            text = on_no_tool_call(message) if on_no_tool_call is not None else None
            if text is None:
                ends_here = True
            else:
                corrective = UserMessage(text)
                messages.append(corrective)
        usage = reply.usage if isinstance(reply.usage, Usage) else Usage()
        trajectory.usage = trajectory.usage + usage
        step = StepRecord(step_index, records, time.perf_counter() - step_started, llm_s, usage, bool(reply.cached),
                          message, answers, corrective)
        trajectory.steps.append(step)
        if on_step is not None:
            notified = on_step(trajectory, step)
            if inspect.isawaitable(notified):
                await notified
        if executor.finished:
            trajectory.finished, trajectory.stop_reason = True, "finish"
            break
        if ends_here:
            trajectory.finished, trajectory.stop_reason = True, "answer"
            break
    trajectory.wall_s = time.perf_counter() - started

