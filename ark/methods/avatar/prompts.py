"""AvaTaR's prompts, in our words: the actor's system prompt (the graph's schema, ARK's tools, the instructions being
optimised), the comparator's (contrast positive and negative queries, attribute the difference to how the tools
were used, propose changes; Wu et al. 2024, the comparator prompt of zou-group/avatar) and the instruction update
(fold the feedback into the previous instructions; DSPy's ``FeedbackBasedInstruction``). Readers of the replies
return None when a reply cannot be used; the optimiser records that and keeps what it had."""

from __future__ import annotations

import re

INITIAL_INSTRUCTIONS = """Search the graph for the entities the question names, read what the searches return, and
add to the answer the nodes that satisfy everything the question asks, most relevant first. Finish when the answer
is complete."""

ACTOR_SYSTEM = """You retrieve the nodes of a knowledge graph that answer a question, by calling tools. The graph's
node types are {types}; its relations (source type, relation, target type) are:
{schema}

Tools: search_in_graph finds nodes by names and text over the whole graph; search_in_neighborhood lists the
neighbours of a node [index], ranked by a query and filtered by node and edge types; add_to_answer adds nodes to
the answer, most relevant first; finish ends the search. Refer to nodes by their index in square brackets. You have
at most {max_steps} steps.

Instructions:
{instructions}"""

COMPARATOR_SYSTEM = """You improve the instructions of an agent that answers questions over a knowledge graph with
tools. The agent followed the instructions below on training questions; on some it did well (positive), on others
badly (negative). For each question you see its metrics (Hit@1, Hit@5, Recall@20, MRR) and the tool calls the agent
made.

Task: first identify and contrast the patterns of the positive and the negative questions. Then attribute the
difference in performance to how the agent used the tools on each kind of question. Finally propose concrete
changes to the instructions that would improve the negative questions without hurting the positive ones.
Describe question patterns in terms of the graph's schema; never repeat a specific name, identifier or answer
from these examples."""

UPDATE_SYSTEM = """An agent answers questions over a knowledge graph with tools, following instructions. You are
given its previous instructions and feedback on how it should use the tools better on the questions it answered
badly. Write the new instructions: keep the general guidelines of the previous ones, fold in the feedback, say how
to use the tools effectively, in at most three paragraphs. Reply with the new instructions only."""

FENCE = re.compile(r"```[A-Za-z]*\n(.*?)```", re.DOTALL)
MAX_INSTRUCTION_CHARS = 4000


def actor_system(types: str, schema: str, instructions: str, max_steps: int) -> str:
    """The actor's system prompt for a graph with these types and schema lines."""
    return ACTOR_SYSTEM.format(types=types, schema=schema, instructions=instructions.strip(), max_steps=max_steps)


def comparator_user(instructions: str, positives: list[str], negatives: list[str]) -> str:
    """The comparator's input: the instructions followed and the positive and negative questions, each a block."""
    return (f"Instructions the agent followed:\n{instructions.strip()}\n\nPositive questions:\n"
            + ("\n".join(positives) or "none") + "\n\nNegative questions:\n" + ("\n".join(negatives) or "none")
            + "\n\nYour observations and proposed changes:")


def update_user(instructions: str, feedback: str) -> str:
    """The instruction update's input."""
    return f"Previous instructions:\n{instructions.strip()}\n\nFeedback:\n{feedback.strip()}\n\nNew instructions:"


def read_instructions(reply: str) -> str | None:
    """The new instructions of an update reply (a fenced block's body if there is one; a leading "New
    instructions:" dropped), or None when the reply is empty or longer than :data:`MAX_INSTRUCTION_CHARS`."""
    found = FENCE.search(reply or "")
    text = (found.group(1) if found else reply or "").strip()
    text = re.sub(r"^\s*(?:\*\*)?new instructions(?:\*\*)?\s*:\s*", "", text, flags=re.IGNORECASE).strip()
    if not text or len(text) > MAX_INSTRUCTION_CHARS:
        return None
    return text
