"""T1 and T2: layouts, Definition 2, what single workers and coalitions learn, refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fedsec.errors import ValidationError
from fedsec.protocols.fdskl import exposure, plans, trees

WORKERS = [f"party{i}" for i in range(1, 9)]


@pytest.mark.parametrize("q", [2, 3, 4, 5, 8])
def test_layouts_cost_q_minus_one_messages_and_their_depth(q: int) -> None:
    order = WORKERS[:q]
    for kind in trees.KINDS:
        tree = trees.layout(kind, order)
        assert len(trees.edges(tree)) == q - 1
        assert sorted(trees.leaves(tree)) == sorted(order) and trees.holder(tree) == order[0]
    assert trees.rounds(trees.balanced(order)) <= math.ceil(math.log2(q))
    assert trees.rounds(trees.chain(order)) == q - 1
    assert trees.rounds(trees.star(order)) == 1


def test_tree_sums_are_fastest_under_the_link_model() -> None:
    order = WORKERS[:8]
    times = {k: trees.modeled_seconds(trees.layout(k, order), 8e6) for k in trees.KINDS}
    assert times["tree"] < times["cycle"] and times["tree"] < times["star"]


def test_definition_2() -> None:
    t1 = (("a", "b"), ("c", "d"))
    assert trees.totally_different(t1, (("a", "c"), "d"))
    assert trees.shared_subtrees(t1, (("c", "d"), "a")) == [frozenset({"c", "d"})]


@pytest.mark.parametrize("kind", ["tree", "cycle"])
@pytest.mark.parametrize("q", [3, 4, 5, 6])
def test_built_trees_are_totally_different_and_blind_every_single_worker(kind: str,
                                                                        q: int) -> None:
    plan = plans.build_plan(WORKERS[:q], "party1", kind)
    assert sorted(plan.t2) == WORKERS[1:q]
    for excluded, t2 in plan.t2.items():
        assert trees.totally_different(plan.t1, t2)
        assert sorted(trees.leaves(t2)) == sorted(w for w in WORKERS[:q] if w != excluded)
        assert exposure.single_worker_leaks(plan.call(excluded)) == []
        messages = plan.call(excluded).messages()
        assert len(messages) <= 2 * (q - 1)  # q - 1 for T1, q - 2 for T2, maybe one delivery
    if kind == "tree":
        assert trees.rounds(plan.t1) <= 1 + math.ceil(math.log2(q - 1))


def test_the_papers_layout_satisfies_definition_2_yet_leaks_to_the_requester() -> None:
    # Figure 2a: the active worker pairs with worker 2; with l' = worker 2 the requester
    # learns the offsets of workers 3 and 4 from the total it must subtract.
    ws = ("party1", "party2", "party3", "party4")
    t1 = (("party1", "party2"), ("party3", "party4"))
    t2 = (("party3", "party1"), "party4")
    assert trees.totally_different(t1, t2)
    learned = exposure.exposure(exposure.Call(ws, "party1", t1, t2, "party2"), ["party1"])
    assert learned.recovered == ("party3", "party4") and learned.isolated == ()
    plan = plans.build_plan(ws, "party1")
    assert "Figure 2a" in plan.refused[0] and "any T2" in plan.refused[0]
    assert plan.t1 == ("party1", (("party2", "party3"), "party4"))


def test_configurations_where_it_cannot_hold_are_refused() -> None:
    with pytest.raises(ValidationError, match="at least 3 workers"):
        plans.build_plan(WORKERS[:2], "party1")
    with pytest.raises(ValidationError, match="No star layout"):
        plans.build_plan(WORKERS[:4], "party1", "star")
    with pytest.raises(ValidationError, match="not one of the workers"):
        plans.build_plan(WORKERS[:4], "party9")
    with pytest.raises(ValidationError, match="Unknown communication structure"):
        plans.build_plan(WORKERS[:4], "party1", "mesh")


def test_coalitions_that_cover_a_subtree_recover_what_the_analysis_says() -> None:
    plan = plans.build_plan(WORKERS[:4], "party1")
    table = {r.coalition: r for r in exposure.enumerate_coalitions(plan, 2)}
    assert all(not r.recovered for c, r in table.items() if len(c) == 1)
    # the requester and the worker left in know the full dot product: the rest is exposed
    pair = table[("party1", "party2")]
    assert pair.recovered["party2"] == ("party3", "party4")
    assert pair.workers() == ("party3", "party4")
    # two passive workers that never see a T1 sum together with its offsets learn nothing
    assert not table[("party3", "party4")].recovered
    assert table[("party2", "party3")].recovered == {}


def test_without_offsets_every_received_sum_is_exact() -> None:
    plan = plans.TreePlan("tree", tuple(WORKERS[:4]), "party1",
                       trees.balanced(WORKERS[:4]), {})
    table = {r.coalition: r for r in exposure.enumerate_coalitions(plan, 1, offsets=False)}
    assert table[("party1",)].workers() == ("party2", "party3", "party4")
    assert table[("party3",)].workers() == ("party4",)


def test_plans_round_trip_through_json() -> None:
    plan = plans.build_plan(WORKERS[:5], "party2", "cycle")
    back = plans.plan_from_dict(plan.to_dict())
    assert back.t1 == plan.t1 and dict(back.t2) == dict(plan.t2)
    assert np.array_equal(np.array(back.workers), np.array(plan.workers))
