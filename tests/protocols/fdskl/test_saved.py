"""The features a requester keeps per sample, and tree sums whose vectors are made on demand."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.network import Network
from fedsec.protocols.fdskl import batches, trees
from fedsec.protocols.fdskl.saved import SavedFeatures, last_visits
from fedsec.protocols.fdskl.sums import tree_sum
from fedsec.transcript import TranscriptWriter


@settings(max_examples=50, deadline=None)
@given(draws=st.lists(st.integers(0, 5), min_size=1, max_size=40),
       batch_size=st.integers(1, 3), group=st.integers(1, 2))
def test_rows_are_the_visits_joined_until_the_last_visit_and_then_dropped(
        draws: list[int], batch_size: int, group: int) -> None:
    n_iterations = max(1, len(draws) // batch_size)
    samples = np.resize(np.array(draws), n_iterations * batch_size)
    saved = SavedFeatures(last_visits(samples, 6, batch_size))
    joined: dict[int, list[float]] = {}
    last = np.full(6, -1)
    rng = np.random.default_rng(0)
    for t in range(n_iterations):
        batch = samples[t * batch_size:(t + 1) * batch_size]
        for s, start, stop in batches.segments(batch, t, last, batch_size=batch_size,
                                               features_per_iteration=group):
            values = rng.random(stop - start)
            saved.add(s, values)
            joined.setdefault(s, []).extend(values.tolist())
        for s in batch.tolist():  # what the iteration reads: the whole row so far
            assert saved.row(s).tolist() == joined[s]
            assert saved.row(s).flags.c_contiguous and saved.row(s).flags.owndata
        saved.visited(t, batch.tolist())
        kept = {s for s in joined if (samples[(t + 1) * batch_size:] == s).any()}
        assert saved.size == sum(len(joined[s]) for s in kept)
    assert saved.size == 0


def _record(values, tree):
    net = Network(TranscriptWriter({}), {w: "worker" for w in trees.leaves(tree)})
    total = tree_sum(net, tree, values, "kernel_sum", {})
    return total, [(m.sender, m.receiver, m.payload.tobytes()) for m in net.close().messages]


def test_a_tree_sum_over_vectors_made_on_demand_sends_the_same_messages() -> None:
    rng = np.random.default_rng(4)
    names = [f"w{i}" for i in range(5)]
    values = {w: rng.normal(size=7) for w in names}
    for kind in trees.KINDS:
        tree = trees.layout(kind, names)
        made: list[str] = []

        def make(worker: str, made: list[str] = made) -> np.ndarray:
            made.append(worker)
            return values[worker].copy()

        expected, sent = _record(values, tree)
        total, sent_on_demand = _record(make, tree)
        assert np.array_equal(total, expected) and sent_on_demand == sent
        assert sorted(made) == names  # each worker's vector made once
