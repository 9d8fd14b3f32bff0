"""The same question in Cypher, to recompute every answer on the part-1 database (:func:`ark.graphdb.open_cypher`).

A program compiles to one read-only query that walks one hop per ``MATCH`` and keeps distinct nodes after each
(``WITH DISTINCT``), so the engine computes exactly the frontier sets the in-memory evaluator computes, and path
counts never multiply across hops. A meet first collects the right side's node ids into a list, then keeps the
left side's nodes found in it::

    MATCH (v0:disease {id: $a0}) MATCH (v0)-[:has_phenotype]->(v1:phenotype) WITH DISTINCT v1
    WITH collect(DISTINCT v1.id) AS m0
    MATCH (v2:disease {id: $a1}) MATCH (v2)-[:has_phenotype]->(v3:phenotype) WITH DISTINCT v3, m0
    WITH DISTINCT v3, m0 WHERE v3.id IN m0 AND NOT v3.id IN $anchors WITH v3
    RETURN count(DISTINCT v3) AS n, collect(DISTINCT v3.id) AS ids

:func:`verify_record` compares the database's answer with a quiz record's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .program import Anchor, Expr, Program, Walk

if TYPE_CHECKING:
    from ....graph import KnowledgeGraph


@dataclass
class _Compiler:
    schema: Any
    clauses: list[str] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)
    counter: int = 0
    anchors: int = 0
    lists: int = 0

    def var(self) -> str:
        name = f"v{self.counter}"
        self.counter += 1
        return name

    def compile(self, expr: Expr, carry: list[str]) -> str:
        """Clauses leaving one row per distinct node of ``expr`` (its variable returned) plus ``carry``."""
        if isinstance(expr, Anchor):
            name, key = self.var(), f"a{self.anchors}"
            self.anchors += 1
            self.params[key] = expr.node_id
            self.clauses.append(f"MATCH ({name}:{self.schema.node_label(expr.node_type)} {{id: ${key}}})")
            return name
        if isinstance(expr, Walk):
            source = self.compile(expr.source, carry)
            name = self.var()
            label = self.schema.node_label(expr.node_type)
            if expr.relation is None:
                edge = f"-[]-({name}:{label})"
            elif expr.direction == "out":
                edge = f"-[:{self.schema.rel_label(expr.relation)}]->({name}:{label})"
            else:
                edge = f"<-[:{self.schema.rel_label(expr.relation)}]-({name}:{label})"
            self.clauses.append(f"MATCH ({source}){edge} WITH DISTINCT {', '.join([name, *carry])}")
            return name
        right = self.compile(expr.right, carry)
        collected = f"m{self.lists}"
        self.lists += 1
        self.clauses.append(f"WITH collect(DISTINCT {right}.id) AS {collected}{''.join(', ' + c for c in carry)}")
        left = self.compile(expr.left, [*carry, collected])
        self.clauses.append(f"WITH DISTINCT {', '.join([left, *carry, collected])} "
                            f"WHERE {left}.id IN {collected} AND NOT {left}.id IN $anchors")
        self.clauses.append(f"WITH {', '.join([left, *carry])}")
        return left


def compile_program(program: Program, schema: Any) -> tuple[str, dict[str, Any]]:
    """``(cypher, params)`` computing ``program``'s answer; ``schema`` is the database's
    :class:`~ark.graphdb.CypherSchema` (labels made Cypher-safe).

    Columns: ``n`` and ``ids`` (the answer nodes' count and ids) for list, the_one, count and exists; ``answer``
    (a boolean) for contains.
    """
    compiler = _Compiler(schema)
    target = compiler.compile(program.target, [])
    compiler.params["anchors"] = program.anchor_ids
    if program.ask == "contains":
        compiler.params["candidate"] = program.candidate
        compiler.clauses.append(f"WITH DISTINCT {target} WHERE {target}.id = $candidate "
                                f"AND NOT {target}.id IN $anchors")
        compiler.clauses.append("RETURN count(*) > 0 AS answer")
    else:
        compiler.clauses.append(f"WITH DISTINCT {target} WHERE NOT {target}.id IN $anchors")
        compiler.clauses.append(f"RETURN count(DISTINCT {target}) AS n, collect(DISTINCT {target}.id) AS ids")
    return "\n".join(compiler.clauses), compiler.params


@dataclass(frozen=True)
class Verdict:
    """One record checked against the database: ``ok``, and what the database said when it disagrees."""

    record_id: str
    ok: bool
    detail: str = ""


def database_answer(program: Program, engine: Any, timeout_s: float | None = None) -> dict[str, Any]:
    """What the database computes for ``program``: ``{"answer": ..., "ids": [...]}`` by answer type."""
    cypher, params = compile_program(program, engine.schema)
    rows = engine.query(cypher, params, timeout_s=timeout_s).records()
    if program.ask == "contains":
        truth = bool(rows and rows[0]["answer"])
        return {"answer": "yes" if truth else "no", "ids": []}
    row: dict[str, Any] = rows[0] if rows else {"n": 0, "ids": []}
    ids = sorted(str(i) for i in (row["ids"] or []))
    count = int(row["n"] or 0)
    if program.ask == "count":
        return {"answer": str(count), "ids": ids}
    if program.ask == "exists":
        return {"answer": "yes" if count > 0 else "no", "ids": ids}
    return {"answer": None, "ids": ids, "n": count}


def verify_record(record: dict[str, Any], engine: Any, timeout_s: float | None = None,
                  graph: KnowledgeGraph | None = None) -> Verdict:
    """Recompute one quiz record's answer in Cypher and compare (answer ids for sets and entities, the number, the
    truth value and the witness for booleans). A scout question (no ``params``, a ``verification_cypher``) is
    checked by running its own verification query again; that needs ``graph``."""
    if "params" not in record and "verification_cypher" in record:
        return _verify_scout(record, engine, timeout_s, graph)
    program = Program.from_dict(record["params"])
    found = database_answer(program, engine, timeout_s)
    rid = str(record.get("id", ""))
    if program.ask in ("list", "the_one"):
        want = sorted(record["answer_ids"])
        if found["ids"] != want or (program.ask == "the_one" and found["n"] != 1):
            return Verdict(rid, False, f"database ids {found['ids'][:12]} (n={found['n']}) != quiz ids {want}")
        return Verdict(rid, True)
    if found["answer"] != record["answer"]:
        return Verdict(rid, False, f"database answer {found['answer']!r} != quiz answer {record['answer']!r}")
    witness = record.get("witness_id")
    if program.ask == "exists" and witness is not None and witness not in found["ids"]:
        return Verdict(rid, False, f"witness {witness!r} is not among the database's answers")
    return Verdict(rid, True)


def _verify_scout(record: dict[str, Any], engine: Any, timeout_s: float | None,
                  graph: KnowledgeGraph | None) -> Verdict:
    from ....metrics.answers import exact_match
    from .scout_tools import answer_from_rows

    if graph is None:
        raise ValueError("checking a scout question needs the graph (verify_record(..., graph=graph))")
    result = engine.query(record["verification_cypher"], record.get("verification_params") or {},
                          timeout_s=timeout_s)
    found = answer_from_rows(graph, record["answer_type"], result.records(), result.truncated)
    rid = str(record.get("id", ""))
    if isinstance(found, str):
        return Verdict(rid, False, found)
    if not exact_match(found[0], record["answer"], record["answer_type"]):
        return Verdict(rid, False, f"database answer {found[0]!r} != quiz answer {record['answer']!r}")
    return Verdict(rid, True)


def verify_records(records: list[dict[str, Any]], engine: Any, timeout_s: float | None = None,
                   graph: KnowledgeGraph | None = None) -> list[Verdict]:
    """:func:`verify_record` for each record (a failing query is a mismatch naming its error, not a crash). A
    scout record's verification query was written by a model: every query runs out of this process (an in-process
    ladybug engine is wrapped, :func:`ark.graphdb.isolated.isolate`), so one that crashes the engine is a mismatch."""
    from ....graphdb.isolated import isolate

    isolated = isolate(engine)
    verdicts = []
    try:
        for record in records:
            try:
                verdicts.append(verify_record(record, isolated, timeout_s, graph))
            except Exception as exc:  # noqa: BLE001 - reported as a mismatch with the error
                verdicts.append(Verdict(str(record.get("id", "")), False, f"{type(exc).__name__}: {exc}"))
    finally:
        if isolated is not engine:
            isolated.close()
    return verdicts
