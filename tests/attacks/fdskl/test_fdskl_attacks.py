"""Linear inference and tree collusion on FDSKL: what a worker or a coalition recovers, from
single-sample and mini-batch transcripts."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.attacks.fdskl.equations import fdskl_systems
from fedsec.attacks.linear_systems import LinearSystem, solve_rows, solve_shared
from fedsec.errors import CapabilityError
from fedsec.registry import create
from fedsec.runner import RunConfig, run
from fedsec.views import build_view


@pytest.fixture(scope="module")
def runs():
    out = {}
    for offsets in ("none", "per-feature", "fresh"):
        out[offsets] = run(RunConfig(protocol="fdskl", dataset="breast_cancer",
                                     partition="vertical:parties=4",
                                     params={"n_iterations": 1000, "offsets": offsets}))
    return out


def errors(result, reconstruction, missing_of, *,
           translated: bool = False) -> dict[str, float]:
    """Relative error per worker over the rows the attack could determine.

    With ``translated``, up to the best common translation (what cross-sample
    differences determine without an anchor).
    """
    out = {}
    for key, estimate in reconstruction.estimates.items():
        truth = np.asarray(result.private[key])
        keep = np.setdiff1d(np.arange(truth.shape[0]), missing_of(key))
        assert keep.size > 0.75 * truth.shape[0]
        gap = estimate[keep] - truth[keep]
        if translated:
            gap = gap - gap.mean(axis=0)
        out[key.split("/")[1]] = float(np.linalg.norm(gap) / np.linalg.norm(truth[keep]))
    return out


def linear(result, threat: str, translated: bool = False, **params):
    rec = create("attack", "linear-inference", params).run(
        build_view(result.transcript, threat, result.private))
    missing = {k for s in rec.info["systems"] for k in s["rows_missing"]}
    return rec, errors(result, rec, lambda _key: sorted(missing), translated=translated)


def test_unmasked_partial_products_give_every_worker_away(runs) -> None:
    _, err = linear(runs["none"], "party1", curve_points=0)
    assert set(err) == {"party2", "party3", "party4"}
    assert max(err.values()) < 1e-6


def test_per_feature_offsets_cancel_between_samples(runs) -> None:
    result = runs["per-feature"]
    _, noisy = linear(result, "party2", estimator="per-sample", curve_points=0)
    _, prior = linear(result, "party2", anchor="prior", curve_points=0)
    _, anchored = linear(result, "party2", anchor="minmax", curve_points=0)
    _, shape = linear(result, "party2", translated=True, anchor="minmax", curve_points=0)
    assert set(noisy) == set(anchored) == {"party3", "party4"}
    assert max(shape.values()) < 1e-6  # exact up to one translation for all samples...
    assert max(anchored.values()) < 0.03  # ...which min-max scaling nearly fixes
    assert max(prior.values()) < max(noisy.values()) < 0.5


def test_the_requester_learns_everyone_up_to_the_phase_even_with_fresh_offsets(runs) -> None:
    rec, err = linear(runs["fresh"], "party1", translated=True, curve_points=5)
    assert set(err) == {"party2", "party3", "party4"} and max(err.values()) < 1e-6
    curve = rec.info["curve"]["points"]
    predicted = [p["predicted_rmse"] for p in curve if p["rows_determined"] > 100]
    assert len(predicted) >= 2 and predicted == sorted(predicted, reverse=True)


def test_leaf_senders_observe_nothing_to_solve(runs) -> None:
    rec, err = linear(runs["fresh"], "party4", curve_points=0)
    assert err == {} and rec.info["systems"] == []


def test_tree_collusion_recovers_what_the_trees_predict(runs) -> None:
    result = runs["fresh"]
    attack = create("attack", "tree-collusion", {"max_size": 2})
    for threat, expected in [("party1,party2", {"party3", "party4"}),
                             ("party1,party4", {"party2", "party3"}),
                             ("party3,party4", set()), ("party2", set())]:
        rec = attack.run(build_view(result.transcript, threat, result.private))
        assert set(rec.info["predicted_from_trees"]) == expected
        err = errors(result, rec, lambda key, r=rec: r.info["rows_missing"][key.split("/")[1]])
        assert set(err) == expected
        assert all(e < 1e-9 for e in err.values())
    table = rec.info["table"]
    assert {tuple(r["coalition"]) for r in table if r["recovers"]} == {
        ("party1", "party2"), ("party1", "party3"), ("party1", "party4")}


def test_an_eavesdropper_without_the_seed_cannot_interpret_the_sums(runs) -> None:
    view = build_view(runs["none"].transcript, "eavesdropper:*", runs["none"].private)
    for name in ("linear-inference", "tree-collusion"):
        reason = create("attack", name).not_applicable(view)
        assert reason is not None and "shared seed" in reason
        with pytest.raises(CapabilityError):
            create("attack", name).run(view)


def test_the_same_attack_reads_fedcg_secure_gram_products() -> None:
    result = run(RunConfig(protocol="fedcg-secure", dataset="iris",
                           partition="hybrid:cohorts=2,groups=2,centres=per-cohort"))
    view = build_view(result.transcript, "server", result.private)
    generic = create("attack", "linear-inference").run(view)
    specific = create("attack", "gram-inference").run(view)
    assert set(generic.estimates) == set(specific.estimates)
    for key, value in generic.estimates.items():  # the Gram is numerically rank-deficient:
        other = specific.estimates[key]             # both agree to its conditioning
        assert np.abs(value - other).max() < 1e-4 * np.abs(other).max()
    scores = create("scorer", "reconstruction-error").score(generic, result.private)
    assert scores["relative_error"] < 1e-4


def test_solvers_on_a_synthetic_system_with_shared_offsets() -> None:
    rng = np.random.default_rng(3)
    n, p, T = 40, 3, 300
    X = rng.uniform(size=(n, p))
    W = rng.normal(size=(T, p))
    b = rng.uniform(0, 2 * np.pi, size=T)
    rows = np.repeat(np.arange(n), T)
    feats = np.tile(np.arange(T), n)
    values = np.einsum("ij,ij->i", W[feats], X[rows]) + b[feats] - np.pi
    system = LinearSystem(
        label="demo", parts=(("x", 0, p),), n_rows=n, n_unknowns=p, rows=rows, values=values,
        variance=np.full(rows.size, np.pi**2 / 3), order=feats,
        coefficients=lambda idx: W[feats[idx]])
    noisy, predicted = solve_rows(system)
    assert np.abs(noisy - X).mean() < 0.5 and np.isfinite(predicted).all()
    system.nuisance, system.variance = feats.copy(), np.zeros(rows.size)
    system.nuisance_variance = np.full(T, np.pi**2 / 3)
    system.nuisance_coefficients = lambda ids: W[ids]
    exact, _ = solve_shared(system, anchor="minmax")
    assert np.abs(exact - (X - X.min(axis=0))).max() < 1e-8
    shifted, _ = solve_shared(system, anchor="prior")
    gap = shifted - X
    assert np.ptp(gap, axis=0).max() < 1e-8 and np.abs(gap).max() < 0.3


def test_feature_recovery_scores_features_and_samples_against_the_baseline(runs) -> None:
    result = runs["none"]
    rec = create("attack", "tree-collusion").run(
        build_view(result.transcript, "party1,party2", result.private))
    assert create("attack", "tree-collusion").default_scorer == "feature-recovery"
    scores = create("scorer", "feature-recovery", {"epsilon": 0.01}).score(rec, result.private)
    target = scores["per_target"]["party/party3/shard/cell0/X"]
    assert set(target) >= {"feature_error_mean", "feature_error_max", "sample_error_median",
                           "baseline_fraction_recovered"}
    assert scores["fraction_recovered"] > 0.75 > scores["baseline_fraction_recovered"]
    assert scores["advantage"] > 0.5  # rows never visited keep the baseline


def test_bad_attack_parameters_raise() -> None:
    from fedsec.errors import ValidationError

    with pytest.raises(ValidationError, match="'estimator' parameter"):
        create("attack", "linear-inference", {"estimator": "magic"})
    with pytest.raises(ValidationError, match="'max_size' parameter"):
        create("attack", "tree-collusion", {"max_size": 0})


def test_attack_needs_an_fdskl_or_known_transcript() -> None:
    result = run(RunConfig(protocol="secure-sum"))
    view = build_view(result.transcript, "aggregator", result.private)
    assert "no equation extractor" in create("attack", "linear-inference").not_applicable(view)
    assert fdskl_systems  # the extractor is importable for other protocols' audits


# Mini-batch transcripts: a message carries many samples' sums, and an iteration's several
# features belong to its requester.
BATCH = {"n_iterations": 150, "batch_size": 8, "features_per_iteration": 2}


@pytest.fixture(scope="module")
def batch_runs():
    return {offsets: run(RunConfig(protocol="fdskl", dataset="breast_cancer",
                                   partition="vertical:parties=4",
                                   params={**BATCH, "offsets": offsets}))
            for offsets in ("none", "per-feature")}


def test_unmasked_batches_give_every_worker_away(batch_runs) -> None:
    _, err = linear(batch_runs["none"], "party1", curve_points=0)
    assert set(err) == {"party2", "party3", "party4"} and max(err.values()) < 1e-6


def test_per_feature_offsets_still_cancel_between_samples_of_a_batch(batch_runs) -> None:
    _, err = linear(batch_runs["per-feature"], "party2", translated=True, anchor="minmax",
                    curve_points=0)
    assert set(err) == {"party3", "party4"} and max(err.values()) < 1e-6


def test_tree_collusion_recovers_what_the_trees_predict_from_batches(batch_runs) -> None:
    result = batch_runs["per-feature"]
    rec = create("attack", "tree-collusion").run(
        build_view(result.transcript, "party1,party2", result.private))
    assert set(rec.info["predicted_from_trees"]) == {"party3", "party4"}
    err = errors(result, rec, lambda key: rec.info["rows_missing"][key.split("/")[1]])
    assert set(err) == {"party3", "party4"} and max(err.values()) < 1e-9

