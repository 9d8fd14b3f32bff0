"""GraphScout's tools on the shared tool layer: node_id_retriever (id, type, name, score; topk default and cap) and
code_interpreter (the trajectory's stateful sandbox, Cypher inside, touched nodes from the structured result), and
bad calls answered with observations."""

from __future__ import annotations

import json

from ark.methods.graphscout.options import GraphScoutOptions
from ark.methods.graphscout.tools import CODE_INTERPRETER, NODE_ID_RETRIEVER, TOOL_SPECS, Toolbox
from ark.methods.graphscout.tools.code_interpreter import CodeInterpreterResult, code_result_of
from ark.runtime.tools import dumped


def toolbox(scout, **options) -> Toolbox:
    config = GraphScoutOptions(**options) if options else scout.options
    sandbox = scout.pool.acquire() if config.code_interpreter else None
    box = Toolbox(scout.graph, scout.schema, scout.index, config,
                  sandbox_factory=(lambda: sandbox) if sandbox is not None else None, resolver=scout.resolver)
    box.release = (lambda: scout.pool.release(sandbox)) if sandbox is not None else (lambda: None)
    return box


def test_schemas_match_the_paper_interface():
    retriever = TOOL_SPECS[NODE_ID_RETRIEVER].openai_schema()["function"]
    assert retriever["parameters"]["required"] == ["queries"]
    assert retriever["parameters"]["properties"]["queries"]["type"] == "array"
    assert "topk" in retriever["parameters"]["properties"]
    code = TOOL_SPECS[CODE_INTERPRETER].openai_schema()["function"]
    assert code["parameters"]["required"] == ["code"] and "cypher(query, params=None, limit=None)" in code[
        "description"]


def test_retriever_returns_id_type_name_and_score_per_query(scout, clinical):
    box = toolbox(scout)
    result = box.execute(NODE_ID_RETRIEVER, json.dumps({"queries": ["Marfan syndrome", "FBN1"]}))
    assert result.ok
    assert result.data.topk == 2  # the paper's default
    first = [r for r in result.data.results if r.query == "Marfan syndrome"]
    assert len(first) == 2 and first[0].node_id == "OMIM:154700" and first[0].type == "disease"
    assert first[0].name == "Marfan syndrome" and first[0].score >= first[1].score
    assert list(dumped(result.data)["results"][0]) == ["query", "index", "node_id", "type", "label", "name", "score"]
    assert "OMIM:154700  Marfan syndrome  (disease)" in result.text and "'FBN1':" in result.text
    assert box.touched and clinical.index_of("OMIM:154700") in box.touched
    box.release()


def test_retriever_topk_is_capped_and_bad_calls_are_observations(scout):
    box = toolbox(scout)
    capped = box.execute(NODE_ID_RETRIEVER, {"queries": "syndrome", "topk": 500})  # one string is one query
    assert capped.ok and capped.data.topk == 20 and "topk capped at 20" in capped.text
    empty = box.execute(NODE_ID_RETRIEVER, {"queries": []})
    assert not empty.ok and "non-empty list" in empty.text
    missing = box.execute(NODE_ID_RETRIEVER, "{}")
    assert not missing.ok and missing.error == "invalid_arguments" and "queries" in missing.text
    broken = box.execute(NODE_ID_RETRIEVER, '{"queries": [')
    assert not broken.ok and broken.error == "invalid_json"
    unknown = box.execute("finish", "{}")
    assert not unknown.ok and NODE_ID_RETRIEVER in unknown.text and CODE_INTERPRETER in unknown.text
    assert box.telemetry.invalid_calls == 4
    box.release()


def test_code_interpreter_keeps_variables_and_reports_touched_nodes(scout, clinical):
    box = toolbox(scout)
    code = ("rows = cypher('MATCH (d:disease {id: $id})-[:associated_gene]->(g:gene) RETURN g.id AS id, "
            "g.name AS name ORDER BY name', {'id': 'OMIM:609192'})\nprint(len(rows))")
    first = box.execute(CODE_INTERPRETER, json.dumps({"code": code}))
    assert first.ok and first.text == "2"
    assert isinstance(first.data, CodeInterpreterResult) and first.data.cypher_calls[0].rows == 2
    written = dumped(first.data)  # the record's keys, in the order trajectory files have always had them
    assert list(written) == ["stdout", "error", "error_kind", "cypher_kind", "elapsed_s", "cypher_calls", "note",
                             "output_truncated", "restarted", "node_indices", "touched"]
    assert list(written["cypher_calls"][0]) == ["query", "rows", "truncated", "ms", "node_indices"]  # no "strings"
    touched = {clinical.node_id(i) for i in first.node_indices}
    assert touched == {"OMIM:609192", "NCBIGene:7046", "NCBIGene:7048"}  # the parameter and the returned ids
    second = box.execute(CODE_INTERPRETER, {"code": "print([r['name'] for r in rows])"})  # variables persist
    assert second.text == "['TGFBR1', 'TGFBR2']"
    by_name = box.execute(CODE_INTERPRETER, {"code": "cypher(\"MATCH (g:gene) WHERE g.name = 'F8' RETURN g.name\")"})
    assert by_name.ok and [clinical.node_id(i) for i in by_name.node_indices] == ["NCBIGene:2157"]
    assert box.telemetry.code_calls == 3 and box.telemetry.cypher_queries == 2
    box.release()


def test_code_errors_are_observations_the_model_can_fix(scout):
    box = toolbox(scout)
    bad = box.execute(CODE_INTERPRETER, {"code": "cypher('MATCH (g:gene) RETRUN g')"})
    assert not bad.ok and bad.error == "cypher" and "[error: cypher]" in bad.text
    assert isinstance(bad.data, CodeInterpreterResult) and bad.data.error_kind == "cypher" and bad.data.error_message
    assert list(dumped(bad.data)) == ["stdout", "error_kind", "cypher_kind", "elapsed_s", "cypher_calls", "note",
                                      "output_truncated", "restarted", "node_indices", "touched", "error_message",
                                      "error"]
    assert list(dumped(bad.data)["cypher_calls"][0]) == ["query", "error", "message", "ms"]
    assert code_result_of(dumped(bad.data)) == bad.data  # a record read back from a file is the same result
    crash = box.execute(CODE_INTERPRETER, {"code": "1/0"})
    assert not crash.ok and "ZeroDivisionError" in crash.text
    write = box.execute(CODE_INTERPRETER, {"code": "cypher('MATCH (g:gene) DELETE g')"})
    assert not write.ok and isinstance(write.data, CodeInterpreterResult) and write.data.cypher_kind == "write_refused"
    fine = box.execute(CODE_INTERPRETER, {"code": "print(cypher('MATCH (g:gene) RETURN count(g) AS n')[0]['n'])"})
    assert fine.ok and fine.text == "7"  # the agent carries on, the database is unchanged
    assert box.telemetry.failed_code_calls == 3
    box.release()


def test_sandbox_is_reset_between_trajectories(scout):
    first = toolbox(scout)
    assert first.execute(CODE_INTERPRETER, {"code": "secret = 41\nprint(secret + 1)"}).text == "42"
    first.release()
    second = toolbox(scout)
    leftover = second.execute(CODE_INTERPRETER, {"code": "print(secret)"})
    assert not leftover.ok and "NameError" in leftover.text
    second.release()


def test_retriever_only_ablation_offers_no_code_tool(scout):
    box = toolbox(scout, code_interpreter=False)
    assert box.names == [NODE_ID_RETRIEVER]
    refused = box.execute(CODE_INTERPRETER, {"code": "print(1)"})
    assert not refused.ok and refused.error == "unknown_tool"


def test_oversized_and_too_deep_arguments_are_invalid_calls_as_in_every_toolbox(scout):
    box = toolbox(scout, code_interpreter=False)
    long_text = box.execute(NODE_ID_RETRIEVER, json.dumps({"queries": ["syndrome " * 300]}))
    deep = box.execute(NODE_ID_RETRIEVER, "[" * 100 + "]" * 100)
    assert (long_text.error, deep.error) == ("arguments_too_long", "arguments_too_deep")
    box.execute(NODE_ID_RETRIEVER, {"queries": ["Marfan"]})
    box.execute(NODE_ID_RETRIEVER, {"queries": ["Marfan"]})
    assert box.telemetry.invalid_calls == 2 and box.telemetry.repeated_calls == 1
    box.release()


def test_the_quiz_scout_and_the_solver_list_the_same_nodes_for_a_mention(scout):
    from ark.methods.graphscout.quiz.scout_tools import ScoutToolbox

    queries = {"queries": ["Marfan syndrome", "FBN1", "no such node zzz"], "topk": 3}
    solver = toolbox(scout, code_interpreter=False).execute(NODE_ID_RETRIEVER, json.dumps(queries))
    quiz = ScoutToolbox(scout.graph, None, scout.index, "OMIM:154700", "set", labels=scout.schema)
    listed = quiz.execute(NODE_ID_RETRIEVER, json.dumps(queries))
    assert listed.text.startswith(solver.text + "\n") and "(no nodes found)" in solver.text
    assert listed.node_indices == solver.node_indices and len(solver.node_indices) >= 3
