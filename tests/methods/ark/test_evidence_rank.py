"""Evidence-ranked answers: ordering by the graph's evidence key, tie groups, the confidence a tie or an unread
condition allows, and the vote fusion that evidence may only refine within a vote group."""

from __future__ import annotations

from ark.methods.ark.fusion import fuse
from ark.methods.ark.offline.evidence_rank import (
    doubted,
    evidence_key,
    explain,
    order_by_evidence,
    tie_groups,
    top_tie,
)
from ark.methods.ark.offline.wording import named_by_stems, unread_mentions


def test_more_supporting_anchor_nodes_rank_first_whatever_the_weaker_signals():
    # 7 and 8 are linked to both nodes named like the disease; 5 and 6 (better text scores) to one.
    keys = {5: evidence_key(named=False, conditions_met=0, says_quoted=False, support={1: {"associated_gene"}}),
            6: evidence_key(named=False, conditions_met=0, says_quoted=False, support={2: {"associated_gene"}}),
            7: evidence_key(named=False, conditions_met=0, says_quoted=False, support={1: {"a"}, 2: {"a"}}),
            8: evidence_key(named=False, conditions_met=0, says_quoted=False, support={1: {"a"}, 2: {"a"}})}
    ranked = order_by_evidence([5, 6, 8, 7], keys.__getitem__)
    assert ranked == [8, 7, 5, 6]  # the given order decides only within equal keys
    answers = tie_groups(ranked, keys)
    assert [(a.index, a.tie_group, a.group_size) for a in answers] == [(8, 1, 2), (7, 1, 2), (5, 2, 2), (6, 2, 2)]
    assert top_tie(answers) == 2
    assert explain("Linked to X.", answers[0]) == ("Linked to X. Evidence: 2 of the question's nodes, 2 edges. "
                                                   "Tied with 1: the graph does not distinguish them.")


def test_support_through_the_principal_relation_outweighs_support_through_a_minor_one():
    # A finding of every subtype (has_phenotype) before a mode of inheritance shared by more of them (has_inheritance).
    principal = {1: "has_phenotype", 2: "has_phenotype", 3: "has_phenotype"}
    finding = evidence_key(named=False, conditions_met=0, says_quoted=False, principal=principal,
                           support={1: {"has_phenotype"}, 2: {"has_phenotype"}})
    mode = evidence_key(named=False, conditions_met=0, says_quoted=False, principal=principal,
                        support={1: {"has_inheritance"}, 2: {"has_inheritance"}, 3: {"has_inheritance"}})
    assert order_by_evidence([20, 10], {10: finding, 20: mode}.__getitem__) == [10, 20]


def test_conditions_met_outweigh_supporting_nodes_and_a_lone_answer_is_its_own_group():
    both = evidence_key(named=False, conditions_met=2, says_quoted=False, support={1: {"r"}})
    one = evidence_key(named=False, conditions_met=1, says_quoted=False, support={1: {"r"}, 2: {"r"}, 3: {"r"}})
    answers = tie_groups(order_by_evidence([2, 1], {1: both, 2: one}.__getitem__), {1: both, 2: one})
    assert [a.index for a in answers] == [1, 2] and top_tie(answers) == 1
    assert explain("Satisfies all.", answers[0]) == "Satisfies all."  # one node: the reason names it already
    assert explain("Linked to A, B, C.", answers[1]) == ("Linked to A, B, C. Evidence: 3 of the question's nodes, "
                                                         "3 edges.")


def test_a_tie_at_the_top_or_an_unread_condition_is_never_high():
    assert doubted("high", "Answers are linked to X.", tied=1, unread=[], profile=False) == (
        "high", "Answers are linked to X.")
    level, reason = doubted("high", "Answers are linked to X.", tied=3, unread=[], profile=False)
    assert level == "medium" and reason.endswith("the first 3 answers are tied: the graph does not distinguish them.")
    level, reason = doubted("high", "Answers are linked to X.", tied=1, unread=["are common among violinists"],
                            profile=False)
    assert level == "medium" and "not understood, so not used: 'are common among violinists'" in reason
    assert doubted("medium", "Partial.", tied=1, unread=["y"], profile=False)[0] == "low"
    assert doubted("medium", "Profile.", tied=1, unread=["y"], profile=True)[0] == "medium"


def test_words_of_a_name_said_in_another_form():
    assert named_by_stems(("x", "linked", "recessive", "inheritance"),
                          {"inherited", "x", "linked", "recessive", "manner"})
    assert named_by_stems(("seizure",), {"kinds", "seizures"})
    assert not named_by_stems(("x", "linked", "inheritance"), {"x", "linked", "dominant"})
    assert not named_by_stems(("inheritance",), {"inherited"})  # one short name: a stem alone is too weak


def test_a_part_of_the_question_that_anchored_nothing_is_unread_unless_it_only_frames():
    ignorable = frozenset({"which", "diseases", "patient", "presents", "year", "old", "female", "are", "common"})
    mentions = [("Which diseases are linked to FBN1", ["which", "diseases", "linked", "fbn1"]),
                ("are common among violinists", ["common", "among", "violinists"]),
                ("A 7-year-old female patient presents", ["7", "year", "old", "female", "patient", "presents"])]
    assert unread_mentions(mentions, used={"fbn1", "linked"}, ignorable=ignorable) == [
        "are common among violinists"]


def test_evidence_breaks_ties_only_within_a_vote_group():
    answers = [[1, 2, 3], [2, 1, 3], [4, 3]]
    plain = fuse(answers)
    assert [f.index for f in plain] == [3, 1, 2, 4]  # votes, then first position (the paper)
    # Node 2 has more evidence than node 1 (same votes): it moves up; node 3's extra vote keeps it first.
    evidence = {1: (0, 1, 1), 2: (0, 2, 2), 3: (0, 0, 0), 4: (0, 9, 9)}  # any tuples, larger stronger
    fused = fuse(answers, evidence=evidence)
    assert [f.index for f in fused] == [3, 2, 1, 4]
    assert [f.votes for f in fused] == [3, 2, 2, 1]
    assert all(a.score > b.score for a, b in zip(fused, fused[1:], strict=False))
    assert all(f.votes - 1 < f.score <= f.votes for f in fused)
    tied = fuse([[1, 2], [2, 1]], evidence={1: (1, 1), 2: (1, 1)})
    assert [f.tie_group for f in tied] == [1, 1]


def test_an_answer_two_hops_away_is_weighed_by_the_nodes_in_between_that_link_it():
    # A gene of two of the diseases showing the finding asked about before a gene of one (no direct support).
    two = evidence_key(named=False, conditions_met=0, says_quoted=False, support={}, paths=2)
    one = evidence_key(named=False, conditions_met=0, says_quoted=False, support={}, paths=1)
    direct = evidence_key(named=False, conditions_met=0, says_quoted=False, support={1: {"r"}})
    assert order_by_evidence([30, 20, 10], {10: direct, 20: two, 30: one}.__getitem__) == [10, 20, 30]
    answers = tie_groups([20, 30], {20: two, 30: one})
    assert top_tie(answers) == 1
    assert explain("Linked to X.", answers[0]) == "Linked to X. Evidence: linked through 2 of the nodes in between."


def test_a_quoted_phrase_the_first_answer_does_not_say_is_never_high():
    level, reason = doubted("high", "Answers are linked to X.", tied=1, unread=[], profile=False,
                            unsaid=["chloride"])
    assert level == "medium" and reason == "Answers are linked to X; the first answer's text does not say 'chloride'."


def test_a_node_whose_evidence_is_unknown_follows_those_with_evidence_in_its_vote_group():
    fused = fuse([[1, 2, 3], [1, 2, 3]], evidence={2: (0, 0), 3: (0, 1)})
    assert [f.index for f in fused] == [3, 2, 1]
