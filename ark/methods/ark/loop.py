"""One ARK agent: the shared tool loop over ARK's toolbox, until ``finish`` or ``max_steps``."""

from __future__ import annotations

from collections.abc import Callable

from ark.llm.messages import AssistantMessage, Message, SystemMessage, UserMessage
from ark.llm.policy import ChatPolicy
from ark.llm.tool_calls import EXPECTED_SHAPE_KEY
from ark.runtime.loop import StepCallback, run_tool_loop
from ark.runtime.records import Trajectory

from .options import ArkOptions
from .prompt import first_user_message, render_system_prompt
from .tools import TOOL_NAMES, Toolbox

NO_TOOL_CALL_MESSAGE = (
    f"You must call one of the tools ({', '.join(TOOL_NAMES)}) in every turn. Continue the search, or call finish "
    "if the answer is complete."
)


def no_tool_call_message(message: AssistantMessage) -> str:
    """The correction after a reply without a tool call; it says which shape a call takes when the back-end could
    read none from the reply's text (the local models, :data:`ark.llm.tool_calls.EXPECTED_SHAPE_KEY`)."""
    expected = (message.data or {}).get(EXPECTED_SHAPE_KEY)
    return f"{expected} {NO_TOOL_CALL_MESSAGE}" if expected else NO_TOOL_CALL_MESSAGE


async def run_agent(question: str, toolbox_factory: Callable[[], Toolbox], policy: ChatPolicy,
                    agent_index: int = 0, config: ArkOptions | None = None,
                    on_step: StepCallback | None = None) -> Trajectory:
    """Run one trajectory. Never raises for model misbehaviour; a policy failure ends the trajectory with
    ``error`` set (stop reason ``error``). ``on_step`` sees each step as it is recorded."""
    config = config or ArkOptions()
    toolbox = toolbox_factory()
    system = config.system_prompt or render_system_prompt(toolbox.graph, toolbox.config, config.max_steps)
    messages: list[Message] = [SystemMessage(system),
                               UserMessage(first_user_message(question), context={"question": question})]
    trajectory = Trajectory(question=question, agent_index=agent_index, policy=getattr(policy, "name", ""),
                            messages=messages, tools=toolbox.openai_tools())
    await run_tool_loop(trajectory, policy, toolbox, max_steps=config.max_steps, tool_choice=config.tool_choice,
                        on_no_tool_call=no_tool_call_message, on_step=on_step)
    trajectory.answer = list(toolbox.answer)
    trajectory.answer_ids = [toolbox.graph.node_id(i) for i in toolbox.answer]
    trajectory.reasoning = dict(toolbox.reasoning)
    trajectory.telemetry = toolbox.telemetry.to_dict()
    trajectory.confidence, trajectory.confidence_reason = toolbox.confidence, toolbox.confidence_reason
    return trajectory
