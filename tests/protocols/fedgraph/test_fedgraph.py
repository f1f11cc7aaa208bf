"""Hybrid FedGraph: clusters from ids and labels only, one seed one transcript, the server never
sees a cluster seed, the GCN's edge term, the privacy score's depth rule, clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.errors import ValidationError
from fedsec.plan import RunConfig
from fedsec.protocols.fedgraph import clustering, graph, models, tags
from fedsec.protocols.fedgraph.privacy_score import ScoreSettings, diameter_score
from fedsec.runner import run

torch = pytest.importorskip("torch")

SMALL = {"hidden": 32, "layers": 3, "epochs": 10, "gcn_epochs": 100, "gcn_hidden": 32,
         "score_steps": 5, "score_samples": 8}


def run_small(**params: object) -> object:
    return run(RunConfig(protocol="fedgraph", partition="random:parties=4,features=0.2",
                         params={**SMALL, **params}, test_size=200, secret_seed=0))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=80), st.integers(1, 12),
       st.sampled_from([0.0, 0.5, 0.7, 1.0]), st.integers(0, 2**32 - 1))
def test_crc_puts_every_row_in_one_cluster_with_its_share_of_one_class(
        y: list[int], size: int, in_class: float, seed: int) -> None:
    labels = np.array(y)
    parts = clustering.class_conditioned_clusters(labels, size, in_class,
                                                  np.random.default_rng(seed))
    assert sorted(np.concatenate(parts).tolist()) == list(range(len(labels)))
    assert all(len(p) >= min(size, len(labels)) for p in parts)
    assert len(parts) == clustering.n_clusters(len(labels), size)
    # The same seed, ids and labels give every client of the group the same clusters.
    again = clustering.class_conditioned_clusters(labels, size, in_class,
                                                  np.random.default_rng(seed))
    assert all(np.array_equal(a, b) for a, b in zip(parts, again, strict=True))


def test_crc_clusters_are_purer_than_random_ones() -> None:
    y = np.repeat(np.arange(10), 30)
    rng = np.random.default_rng(0)
    crc = clustering.class_conditioned_clusters(y, 10, 0.7, rng)
    rand = clustering.random_clusters(len(y), 10, rng)

    def purity(parts: list[np.ndarray]) -> float:
        return float(np.mean([np.bincount(y[p]).max() / len(p) for p in parts]))

    assert purity(crc) >= 0.65 and purity(rand) < 0.4  # a class running out ends lower


def test_edge_term_is_a_per_client_constant_when_every_client_holds_every_item() -> None:
    edges = graph.edge_features([np.array([0, 1]), np.array([1, 2]), np.array([3])], 4)
    rng = np.random.default_rng(0)
    E = rng.normal(size=(5, 3, 6)).astype(np.float32)
    data = models.GraphData(E, np.ones((5, 3), np.float32), graph.adjacency(edges), edges)
    gcn = models.build_gcn(data, hidden=4, layers=1, classes=2, seed=0)
    with torch.no_grad():
        weights = torch.as_tensor(data.adjacency, dtype=torch.float32)[None] * torch.ones(5, 1, 3)
        edge = torch.einsum("bck,ckh->bch", weights,
                            gcn.first_f(torch.as_tensor(edges, dtype=torch.float32)))
    # The same bias for every item, a different one per client.
    assert torch.allclose(edge, edge[:1].expand_as(edge))
    assert not torch.allclose(edge[0, 0], edge[0, 1])


def test_one_seed_gives_one_transcript_and_the_server_never_holds_a_cluster_seed() -> None:
    from fedsec.testing import assert_same_transcript

    # (the offline comparisons, compare=True, send nothing: one run of them suffices, 7 s)
    a, b = run_small(compare=False), run_small(compare=False)
    assert_same_transcript(a.transcript, b.transcript)
    seeds = [m for m in a.transcript.messages if m.tag == tags.CLUSTER_SEED]
    assert seeds and all(m.receiver != "server" for m in seeds)
    sent = {m.tag for m in a.transcript.messages if m.receiver == "server"}
    assert tags.TRAIN_EMBEDDINGS not in sent and tags.CLUSTER_EMBEDDINGS in sent
    metrics = run_small().outcome.metrics
    # Better than chance (10 classes), and the comparison columns are all there.
    assert metrics["accuracy"] > 0.3 and metrics["local_accuracy"] > 0.3
    assert {f"accuracy_{m}" for m in ("none", "random", "kmeans", "crc")} <= set(metrics)
    assert 1 <= metrics["depth_min"] <= metrics["depth_max"] <= SMALL["layers"]


def test_raw_embeddings_travel_with_their_row_ids_and_labels() -> None:
    result = run_small(clustering="none", compare=False, depth=2)
    raw = [m for m in result.transcript.messages if m.tag == tags.TRAIN_EMBEDDINGS]
    assert len(raw) == 4 and all(m.meta[tags.DEPTH] == 2 for m in raw)
    assert len(raw[0].meta[tags.ROWS]) == raw[0].payload.shape[0] == 800
    assert "privacy_score_1" not in result.outcome.metrics


def test_privacy_score_is_zero_without_a_search_and_grows_where_the_extractor_is_blind() -> None:
    model = models.build_mlp(6, 32, 3, 2, seed=0)
    x = np.random.default_rng(0).uniform(-1, 1, size=(10, 6))
    still = ScoreSettings(steps=0, noise=0.0)
    assert diameter_score(model, x, 1, still, np.random.default_rng(0)) == pytest.approx(0.0)
    search = ScoreSettings(steps=200)
    seen = diameter_score(model, x, 1, search, np.random.default_rng(0))
    with torch.no_grad():  # the first layer ignores input 0: x' moves along it for free
        model.hidden[0].weight[:, 0] = 0.0
    blind = diameter_score(model, x, 1, search, np.random.default_rng(0))
    assert blind > seen


def test_pixels_outside_0_255_are_refused_with_the_fix() -> None:
    with pytest.raises(ValidationError, match="inputs=as-is"):
        run(RunConfig(protocol="fedgraph", dataset="classification", scaling="none",
                      partition="random:parties=2,features=0.5", params=SMALL))
    with pytest.raises(ValidationError, match="depth=4 exceeds"):
        run_small(depth=4)


def test_a_client_never_sends_the_mean_of_fewer_than_s_rows() -> None:
    # Half the rows per client: 16 sample groups, many smaller than s = 60.
    result = run(RunConfig(protocol="fedgraph", partition="random:parties=4,features=0.2,"
                           "samples=0.5", params={**SMALL, "cluster_size": 60, "compare": False,
                                                  "depth": 1, "gcn_epochs": 2},
                           test_size=200))
    withheld = result.outcome.metrics["rows_withheld"]
    sizes = [len(m.meta[tags.ROWS]) for m in result.transcript.messages
             if m.tag == tags.CLUSTER_SEED]
    assert withheld > 0 and min(sizes) >= 60
    for party in ("party1", "party2", "party3", "party4"):  # every mean is over >= s rows
        means = sum(m.payload.shape[0] for m in result.transcript.messages
                    if m.tag == tags.CLUSTER_EMBEDDINGS and m.sender == party)
        clusters = result.private.get(f"party/{party}/value/clusters")
        in_clusters = 0 if clusters is None else int((clusters[0] >= 0).sum())
        assert means <= in_clusters // 60
    with pytest.raises(ValidationError, match="fewer rows than its cluster size s"):
        run_small(cluster_size=2000, compare=False, depth=1)


def test_every_draw_has_its_own_seed_and_the_server_trains_on_every_draw() -> None:
    result = run_small(redraws=3, compare=False, depth=1, gcn_epochs=2)
    seeds = [m for m in result.transcript.messages if m.tag == tags.CLUSTER_SEED]
    assert sorted({m.meta[tags.DRAW] for m in seeds}) == [0, 1, 2]
    assert len({bytes(m.payload) for m in seeds}) == 3  # one seed per draw, all members
    assert result.outcome.metrics["n_items"] == 3 * 80  # 800 rows, s = 10, three draws
    held = result.private["party/party1/value/clusters"]
    assert held.shape == (3, 800) and (held >= 0).all()


def test_a_client_chooses_s_where_its_held_out_accuracy_drops() -> None:
    from fedsec import nn
    from fedsec.protocols.fedgraph.cluster_size import choose_size
    from fedsec.protocols.fedgraph.models import Training

    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, size=400)
    E = np.eye(4)[y] * 3 + rng.normal(scale=0.3, size=(400, 4))  # separable embeddings
    with nn.deterministic(0):
        size, accuracy = choose_size(E, y, 4, depth=1, layers=1,
                                     training=Training(30, 16, 0.01, 0.0), keep=0.75,
                                     rng=rng, seed=0)
    assert list(accuracy) == [2, 5, 10, 20, 40, 65]  # 360 rows: every candidate fits twice
    # Small random clusters keep the classes apart; 65 rows of four classes blur them.
    assert accuracy[2] > 0.9 and accuracy[65] < accuracy[2]
    assert size in accuracy and accuracy[size] >= accuracy[65]


def test_with_cluster_size_0_each_group_clusters_with_its_first_clients_choice() -> None:
    result = run_small(cluster_size=0, compare=False, depth=1, gcn_epochs=2)
    metrics = result.outcome.metrics
    assert 2 <= metrics["cluster_size_min"] <= metrics["cluster_size_max"] <= 65
    seeds = [m for m in result.transcript.messages if m.tag == tags.CLUSTER_SEED]
    sizes = {m.meta[tags.CLUSTER_SIZE] for m in seeds}
    assert len(sizes) == 1 and metrics["cluster_size_min"] <= sizes.pop()
    with pytest.raises(ValidationError, match="cluster_size=0 lets each client choose"):
        run_small(cluster_size=0, clustering="kmeans")
