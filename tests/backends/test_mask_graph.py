"""SecAgg+'s sparse mask graph: its shape, its privacy threshold, and sums under it."""

from __future__ import annotations

from itertools import combinations, product

import numpy as np
import pytest

from fedsec.attacks.contribution_readout import ContributionReadout
from fedsec.backends import mask_graph
from fedsec.backends.noise import GRAPH_TAG
from fedsec.backends.primitives import secure_sum
from fedsec.errors import ValidationError
from fedsec.registry import create
from fedsec.runner import RunConfig, run
from fedsec.views import build_view


def test_harary_graph_is_regular_symmetric_and_k_connected() -> None:
    order = mask_graph.graph_order([f"s{i}" for i in range(11)], b"\x01" * 32)
    near = mask_graph.harary_neighbours(order, 4)
    assert all(len(n) == 4 for n in near.values())
    assert all(a in near[b] for a in near for b in near[a])
    assert len(mask_graph.edges(near)) == 11 * 4 // 2
    # any 3 removed senders leave the rest connected; the 4 neighbours of one isolate it
    for corrupted in combinations(order, 3):
        assert len(mask_graph.honest_components(near, corrupted)) == 1
    target = order[5]
    components = mask_graph.honest_components(near, near[target])
    assert frozenset({target}) in components


def test_graph_order_depends_only_on_the_seed_and_the_set_of_senders() -> None:
    senders = [f"s{i}" for i in range(20)]
    a = mask_graph.graph_order(senders, b"a" * 32)
    assert a == mask_graph.graph_order(list(reversed(senders)), b"a" * 32)
    assert a != mask_graph.graph_order(senders, b"b" * 32)
    assert sorted(a) == sorted(senders)


@pytest.mark.parametrize(("n", "degree", "fraction"), [(10, 2, 0.3), (12, 4, 0.25), (9, 4, 0.5)])
def test_split_bound_holds_against_the_exact_probability(n, degree, fraction) -> None:
    near = mask_graph.harary_neighbours([f"s{i}" for i in range(n)], degree)
    exact = 0.0
    for pattern in product((False, True), repeat=n):
        corrupted = {f"s{i}" for i in range(n) if pattern[i]}
        if len(mask_graph.honest_components(near, corrupted)) > 1:
            exact += fraction ** len(corrupted) * (1 - fraction) ** (n - len(corrupted))
    assert 0 < exact <= mask_graph.split_probability_bound(n, degree, fraction)


def test_min_degree_is_the_smallest_even_degree_within_the_bound() -> None:
    k = mask_graph.min_degree(1024, 1 / 3)
    assert k % 2 == 0
    assert mask_graph.split_probability_bound(1024, k, 1 / 3) <= 2.0**-40
    assert mask_graph.split_probability_bound(1024, k - 2, 1 / 3) > 2.0**-40
    assert mask_graph.min_degree(8, 0.5) == 7  # nothing sparse is enough: the complete graph


def test_sparse_masks_cancel_exactly_and_follow_the_announced_graph(federation_factory) -> None:
    federation = federation_factory(9, seed=4)
    rng = np.random.default_rng(2)
    vectors = {f"p{i:02d}": rng.normal(scale=100.0, size=31) for i in range(9)}
    backend = create("backend", "noise", {"n_neighbours": 4})
    total = secure_sum(federation, backend, vectors, "agg")
    expected = np.sum(list(vectors.values()), axis=0)
    assert np.max(np.abs(total - expected)) <= 9 * 2.0**-36
    transcript = federation.network.close()
    announced = transcript.select(tag=GRAPH_TAG)
    assert len(announced) == 9 and len({bytes(m.payload) for m in announced}) == 1
    near = mask_graph.harary_neighbours(
        mask_graph.graph_order(list(vectors), bytes(announced[0].payload)), 4)
    assert len(transcript.select(tag="key.share")) == 9 * 4 // 2
    for m in transcript.select(tag="secure_sum.contribution"):
        partners = {next(p for p in k.partition("@")[0].split(":")[2:] if p != m.sender)
                    for k in m.meta["masks"]}
        assert partners == set(near[m.sender])


def test_the_same_seed_gives_the_same_sparse_graph_and_transcript(federation_factory) -> None:
    heads = []
    for _ in range(2):
        federation = federation_factory(12, seed=9)
        vectors = {f"p{i:02d}": np.linspace(0, 1, 5) * i for i in range(12)}
        secure_sum(federation, create("backend", "noise", {"n_neighbours": 2}), vectors, "agg")
        heads.append(federation.network.close().footer["head"])
    assert heads[0] == heads[1]


def test_a_degree_reaching_every_other_sender_is_the_complete_graph(federation_factory) -> None:
    federation = federation_factory(5)
    vectors = {f"p{i:02d}": np.ones(3) for i in range(5)}
    secure_sum(federation, create("backend", "noise", {"n_neighbours": 4}), vectors, "agg")
    transcript = federation.network.close()
    assert not transcript.select(tag=GRAPH_TAG)
    assert len(transcript.select(tag="key.share")) == 10


def test_odd_degrees_are_refused() -> None:
    with pytest.raises(ValidationError, match=r"n_neighbours.*even"):
        create("backend", "noise", {"n_neighbours": 3})


def test_server_with_all_neighbours_of_one_party_reads_its_input() -> None:
    result = run(RunConfig(protocol="secure-sum", dataset="iris",
                           partition="horizontal:parties=8", backend="noise",
                           backend_params={"n_neighbours": 2}))
    assert result.record.comparison.agrees
    transcript = result.transcript
    seed = bytes(transcript.select(tag=GRAPH_TAG)[0].payload)
    contributions = transcript.select(tag="secure_sum.contribution")
    near = mask_graph.harary_neighbours(
        mask_graph.graph_order([m.sender for m in contributions], seed), 2)
    target = "party1"
    readout = ContributionReadout()
    for coalition, readable in ((near[target], {target}), (near[target][:1], set())):
        view = build_view(transcript, ",".join(["aggregator", *coalition]), result.private)
        reconstruction = readout.run(view)
        opened = {m.sender for m in view.select(tag="secure_sum.contribution")
                  if view.can_open(m)} - set(coalition)
        assert opened == readable
        truth = result.private[f"party/{target}/value/vector"]
        estimate = reconstruction.estimates[f"party/{target}/value/vector"]
        assert np.allclose(estimate, truth, atol=1e-9) is bool(readable)
