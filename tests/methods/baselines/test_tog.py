"""``tog``: Think-on-Graph's search on the scripted server: seeds from the index, relation pruning then entity
pruning in a beam inside the seeds' 2-hop neighbourhood, the reasoning check that stops it, the optional rerank;
unreadable replies are recorded fallbacks."""

from __future__ import annotations

from tests.support.openai_server import text_reply

from .conftest import build, user_text

QUESTION = "Which genes are implicated in Marfan syndrome?"
RELATIONS = "{associated_gene (Score: 0.9)}: genes\n{has_phenotype (Score: 0.1)}: findings"
PHENOTYPE_SCORES = "Score: 0.5, 0.3, 0.1, 0.05, 0.05, 0.0"


def tog(chat, clinical, **options):
    return build("tog", clinical, chat, seed_index="bm25", seeds=1, **options)


def test_relation_then_entity_pruning_then_the_check_that_stops_the_search(openai_server, chat, clinical):
    openai_server.enqueue(text_reply(RELATIONS), text_reply(PHENOTYPE_SCORES), text_reply("{Yes}. FBN1."))
    output = tog(chat, clinical).retrieve(QUESTION, 10)
    requests = openai_server.requests
    assert len(requests) == 3  # relations of the seed, entities of has_phenotype (one gene: no call), the check
    relation_prompt = user_text(requests[0])
    assert "Topic entity: Marfan syndrome [disease, id OMIM:154700]" in relation_prompt
    assert "Relations: has_phenotype; associated_gene" in relation_prompt
    assert "choose the 3 relations" in requests[0]["messages"][0]["content"]
    entity_prompt = user_text(requests[1])
    assert "Relation: has_phenotype" in entity_prompt and "1. Ectopia lentis [phenotype, id HP:0001083]: Ectopia" \
        in entity_prompt and "6. " in entity_prompt
    assert "(Marfan syndrome, associated_gene, FBN1)" in user_text(requests[2])  # the beam's paths
    assert output.record.details["seeds"] == ["OMIM:154700"] and output.record.details["stop"] == "sufficient"
    second = entity_prompt.split("2. ")[1].split(" [")[0]  # the candidate scored 0.3
    second_id = next(clinical.node_id(i) for i in range(clinical.num_nodes) if clinical.name(i) == second)
    step = output.record.details["steps"][0]
    assert step["beam"] == ["NCBIGene:2200", "HP:0001083", second_id]
    assert step["scores"] == [0.9, 0.05, 0.03]  # relation score times entity score
    assert output.indices[:4] == [clinical.index_of(n) for n in step["beam"] + ["OMIM:154700"]]
    assert len(output.indices) == 8  # then the four phenotypes pruning dropped
    assert output.record.details["failures"] == []


def test_the_beam_goes_deeper_until_the_depth_cap_inside_the_two_hop_space(openai_server, chat, clinical):
    # Depth 1 from Dravet syndrome: keep its phenotypes; depth 2: Febrile seizure's other neighbours; then stop.
    def respond(body):
        relation_call = "Topic entity: Dravet syndrome [disease" in user_text(body)
        return text_reply("{has_phenotype (Score: 1.0)}" if relation_call else "nothing useful")

    openai_server.responder = respond
    output = build("tog", clinical, chat, seed_index="bm25", seeds=1, depth=2, width=2).retrieve(
        "Dravet syndrome epileptic encephalopathy", 50)
    record = output.record.details
    assert record["seeds"] == ["OMIM:607208"] and len(record["steps"]) == 2 and record["stop"] == "depth"
    assert all(s["sufficient"] is False for s in record["steps"]) and all(len(s["beam"]) == 2 for s in record["steps"])
    space = record["search_space"]
    assert 0 < space < clinical.num_nodes
    failures = record["failures"]
    assert any(f.startswith("entity pruning for OMIM:607208 via has_phenotype") for f in failures)
    assert any(f.startswith("reasoning: neither") for f in failures)
    assert any(f.startswith("relation pruning for HP:") for f in failures)  # depth 2's unreadable reply: fallback
    from ark.methods.tog.method import neighbourhood

    two_hops = neighbourhood(clinical, [clinical.index_of("OMIM:607208")], 2)
    assert set(output.indices) <= two_hops and len(two_hops) == space  # nothing outside the 2-hop space
    shown = [user_text(r) for r in openai_server.requests]
    assert not any("Hemophilia A" in text for text in shown)  # three hops away: never offered


def test_the_seeds_come_from_dense_retrieval_by_default(openai_server, chat, clinical):
    from tests.support.embeddings_server import EmbeddingsServer

    openai_server.enqueue(text_reply(RELATIONS), text_reply(PHENOTYPE_SCORES), text_reply("{Yes}"))
    with EmbeddingsServer() as embeddings:
        method = build("tog", clinical, chat, seeds=1, embedder="openai:test-embedder",
                       embedder_base_url=embeddings.base_url)
        output = method.retrieve("Marfan syndrome: a connective tissue disorder of eyes, skeleton and heart", 5)
        assert embeddings.input_count > clinical.num_nodes  # every node document embedded, then the question
    assert output.record.details["seeds"] == ["OMIM:154700"]
    assert output.indices[0] == clinical.index_of("NCBIGene:2200")


def test_the_optional_rerank_reorders_the_retrieved_documents(openai_server, chat, clinical):
    openai_server.enqueue(text_reply(RELATIONS), text_reply(PHENOTYPE_SCORES), text_reply("{Yes}"),
                          text_reply("4, 1"))
    output = tog(chat, clinical, rerank=True).retrieve(QUESTION, 4)
    assert "Documents:\n1. FBN1 [gene" in user_text(openai_server.requests[3])
    assert output.indices[:2] == [clinical.index_of("OMIM:154700"), clinical.index_of("NCBIGene:2200")]
    assert len(output.indices) == 4


def test_an_unreadable_rerank_keeps_the_search_order(openai_server, chat, clinical):
    openai_server.enqueue(text_reply(RELATIONS), text_reply(PHENOTYPE_SCORES), text_reply("{Yes}"),
                          text_reply("I cannot rank these."))
    output = tog(chat, clinical, rerank=True).retrieve(QUESTION, 4)
    assert output.indices[0] == clinical.index_of("NCBIGene:2200")
    assert output.record.details["failures"] == ["rerank: no document numbers in the reply; kept the search order"]


def test_a_fanning_relation_offers_a_seeded_sample_of_candidates(openai_server, chat, clinical):
    def offered(seed):
        from ark.methods import MethodContext, build_method

        openai_server.enqueue(text_reply(RELATIONS), text_reply("Score: 1, 0, 0"), text_reply("{Yes}"))
        build_method("tog", clinical, {"seed_index": "bm25", "seeds": 1, "candidates": 3},
                     MethodContext(llm=chat, seed=seed)).retrieve(QUESTION, 10)
        prompt = user_text(openai_server.requests[-2])
        return [line.split(" [")[0] for line in prompt.split("Candidate entities:\n")[1].splitlines()]

    first, again, other = offered(0), offered(0), offered(1)
    assert len(first) == 3 and first == again  # six phenotypes, three offered, the same for the same seed
    assert other != first or offered(2) != first


def test_readers_take_only_listed_relations_and_the_right_number_of_scores():
    from ark.methods.tog import prompts

    labels = ["has_phenotype", "associated_gene (inverse)"]
    assert prompts.read_relation_scores("{Associated_Gene (inverse) (Score: 0.7)}\n{treats (Score: 0.3)}",
                                        labels) == {"associated_gene (inverse)": 0.7}
    assert prompts.read_relation_scores("has_phenotype: 1.0", labels) is None
    assert prompts.read_entity_scores("thinking\n**Score:** 0.2, 0.8", 2) == [0.2, 0.8]
    assert prompts.read_entity_scores("Score: 0.2", 2) is None
    assert prompts.read_sufficient("Yes, enough") is True and prompts.read_sufficient("maybe") is None
    assert prompts.read_ranking("2, 9, 2, 1", 3) == [1, 0]


def test_ark_eval_retrieves_the_right_node(eval_run, openai_server):
    openai_server.enqueue(text_reply(RELATIONS), text_reply(PHENOTYPE_SCORES), text_reply("{Yes}"))
    _, summary, rows = eval_run("tog", [{"id": "a", "query": QUESTION, "answer_ids": ["NCBIGene:2200"]}],
                                "seed_index=bm25", "seeds=1")
    assert summary["overall"]["hit@1"] == 1.0 and rows["a"]["hit@1"] == 1.0
