"""The attacks on FDSKL read mini-batch transcripts: a message carries many samples' sums, and an
iteration's several features belong to its requester."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.registry import create
from fedsec.runner import RunConfig, run
from fedsec.views import build_view

BATCH = {"n_iterations": 150, "batch_size": 8, "features_per_iteration": 2}


@pytest.fixture(scope="module")
def runs():
    return {offsets: run(RunConfig(protocol="fdskl", dataset="breast_cancer",
                                   partition="vertical:parties=4",
                                   params={**BATCH, "offsets": offsets}))
            for offsets in ("none", "per-feature")}


def relative_errors(result, rec, rows_missing, *, translated: bool = False) -> dict[str, float]:
    out = {}
    for key, estimate in rec.estimates.items():
        truth = np.asarray(result.private[key])
        keep = np.setdiff1d(np.arange(truth.shape[0]), rows_missing(key))
        assert keep.size > 0.75 * truth.shape[0]
        gap = estimate[keep] - truth[keep]
        if translated:
            gap = gap - gap.mean(axis=0)
        out[key.split("/")[1]] = float(np.linalg.norm(gap) / np.linalg.norm(truth[keep]))
    return out


def linear(result, threat: str, *, translated: bool = False, **params) -> dict[str, float]:
    rec = create("attack", "linear-inference", {"curve_points": 0, **params}).run(
        build_view(result.transcript, threat, result.private))
    missing = sorted({k for s in rec.info["systems"] for k in s["rows_missing"]})
    return relative_errors(result, rec, lambda _key: missing, translated=translated)


def test_unmasked_batches_give_every_worker_away(runs) -> None:
    err = linear(runs["none"], "party1")
    assert set(err) == {"party2", "party3", "party4"} and max(err.values()) < 1e-6


def test_per_feature_offsets_still_cancel_between_samples_of_a_batch(runs) -> None:
    err = linear(runs["per-feature"], "party2", translated=True, anchor="minmax")
    assert set(err) == {"party3", "party4"} and max(err.values()) < 1e-6


def test_tree_collusion_recovers_what_the_trees_predict_from_batches(runs) -> None:
    result = runs["per-feature"]
    rec = create("attack", "tree-collusion").run(
        build_view(result.transcript, "party1,party2", result.private))
    assert set(rec.info["predicted_from_trees"]) == {"party3", "party4"}
    err = relative_errors(result, rec, lambda key: rec.info["rows_missing"][key.split("/")[1]])
    assert set(err) == {"party3", "party4"} and max(err.values()) < 1e-9
