"""``cypher``: text-to-Cypher question answering. Node retrieval finds the question's candidate nodes (the step
GraphScout added, Appendix A.4); the model sees the database schema and those nodes and writes one read-only Cypher
query; the query runs on the graph's Cypher database (read-only guard, row and time limits); its rows, or the error,
go back in a second call that answers. Two calls per question, whatever the model writes."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from ark.graph import KnowledgeGraph

from ..base import MethodContext, MethodOutput, Retriever
from ..graph_text import clip, node_line
from ..prompting import (
    ANSWER_INSTRUCTIONS,
    PromptSession,
    answer_output,
    fenced_block,
    final_answer,
    open_names,
    require_model,
)
from .spec import CypherQAOptions

QUERY_SYSTEM = """You translate a question into one read-only Cypher query over this graph database.

{schema}

Match nodes by their id property when a candidate node below is the one meant. Return what the question asks for
(names, counts, or the facts needed for a yes/no). Reply with the query alone in a ```cypher block."""
ANSWER_SYSTEM = ("You answer a question from the result of a Cypher query run on a knowledge graph. If the result is "
                 "empty or an error, answer as well as you can. " + ANSWER_INSTRUCTIONS)
_CYPHER_START = ("MATCH", "OPTIONAL", "WITH", "UNWIND", "RETURN", "CALL")


def query_text(reply: str) -> str | None:
    """The Cypher query of a reply: its ```cypher block, or the whole reply when it is a bare query."""
    block = fenced_block(reply, "cypher")
    if block is not None:
        return block
    bare = reply.strip()
    return bare if bare.upper().startswith(_CYPHER_START) else None


def rows_text(columns: list[str], rows: list[list[Any]], chars: int) -> str:
    """Rows as JSON lines (node values shortened to id, name and label), cut to ``chars``."""
    def short(value: Any) -> Any:
        if isinstance(value, dict) and "_label" in value:
            return {"id": value.get("id"), "name": value.get("name"), "label": value["_label"]}
        if isinstance(value, list):
            return [short(v) for v in value]
        return value

    lines = [json.dumps(dict(zip(columns, [short(v) for v in row], strict=True)), default=str) for row in rows]
    text = "\n".join(lines)
    return text if len(text) <= chars else text[:chars] + "\n… (rows cut)"


class CypherQA(Retriever):
    """Node retrieval, one query, one answer."""

    def __init__(self, graph: KnowledgeGraph, options: CypherQAOptions, context: MethodContext) -> None:
        self.llm = require_model(context, "cypher")
        self.graph, self.options, self.context = graph, options, context
        self.names = open_names(graph, options, context)
        self.engine: Any = None
        self.lock = asyncio.Lock()

    def _engine(self) -> Any:
        if self.engine is None:
            from ark.graphdb import open_cypher

            self.engine = open_cypher(self.graph, progress=self.context.progress)
        return self.engine

    async def run_query(self, cypher: str) -> tuple[str, list[int], str | None]:
        """The rows as text, the nodes they hold, and the error (None on success)."""
        from ark.graphdb import CypherError

        async with self.lock:  # one query at a time on the embedded database
            engine = self._engine()
            try:
                result = await asyncio.to_thread(engine.query, cypher, None, self.options.max_rows,
                                                 self.options.timeout_s)
            except CypherError as exc:
                return f"The query failed: {clip(exc, 500)}", [], str(exc)
        mentioned = [self.graph.index_of(v) for row in result.rows for v in row
                     if isinstance(v, str) and self.graph.has_node(v)]
        text = rows_text(result.columns, result.rows, self.options.rows_chars) or "(no rows)"
        if result.truncated:
            text += f"\n(only the first {self.options.max_rows} rows are shown)"
        return text, [*result.node_indices, *mentioned], None

    async def aretrieve(self, query: str, k: int) -> MethodOutput:
        candidates = [int(i) for i, _ in self.names.search(query, self.options.candidates)] \
            if self.options.candidates else []
        shown = "\n".join(f"- {node_line(self.graph, i, 0)}" for i in candidates) or "- none found"
        engine = self._engine()
        schema = engine.schema.describe()
        session = PromptSession(self.llm, "cypher")
        warming = asyncio.create_task(asyncio.to_thread(getattr(engine, "warm", lambda: None)))  # while it writes
        try:
            reply = await session.ask_once("query", QUERY_SYSTEM.format(schema=schema),
                                           f"Candidate nodes:\n{shown}\n\nQuestion: {query}")
        finally:
            await warming
        cypher = query_text(reply)
        used = list(candidates)
        if cypher is None:
            session.fail("the model wrote no Cypher query")
            rows = "No query was written."
        else:
            rows, nodes, error = await self.run_query(cypher)
            used = nodes + used
            if error is not None:
                session.fail(f"the query failed: {clip(error, 200)}")
        answer = await session.ask_once("answer", ANSWER_SYSTEM, f"Question: {query}\n\nCypher query:\n"
                                                                 f"{cypher or '(none)'}\n\nResult:\n{rows}")
        return answer_output(self.graph, session, query, final_answer(answer), used, self.context, k,
                             {"cypher": cypher, "candidates": [self.graph.node_id(i) for i in candidates]})

    async def aclose(self) -> None:
        await self.llm.aclose()
        engine, self.engine = self.engine, None
        if engine is not None:
            engine.close()
