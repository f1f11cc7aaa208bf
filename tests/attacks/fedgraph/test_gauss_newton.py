"""Box-constrained Gauss–Newton inversion of a ReLU extractor: exact where the extractor is
injective, every row keeps its best start, and a starved run says more budget would help."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from fedsec import nn
from fedsec.attacks.fedgraph.embedding_inversion import parse_starts, start_points
from fedsec.attacks.fedgraph.gauss_newton import (
    forward,
    invert_box,
    invert_from_starts,
    relu_layers,
    row_floor,
)
from fedsec.errors import ValidationError
from fedsec.scoring.pixels import reidentified

torch = pytest.importorskip("torch")


def pixels(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """Image-like rows: half of the pixels on the box's face (-1), the rest inside."""
    x = rng.uniform(-1, 1, size=(n, d))
    x[rng.random((n, d)) < 0.5] = -1.0
    return x


def extractor(seed: int, widths: tuple[int, ...]) -> list:
    torch.manual_seed(seed)
    modules = []
    for a, b in itertools.pairwise(widths):
        modules += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    return relu_layers(torch.nn.Sequential(*modules))


def embed(layers: list, x: np.ndarray) -> np.ndarray:
    return forward(layers, torch.from_numpy(x))[0].numpy()


def test_from_the_prior_the_rows_of_a_wide_extractor_come_back_to_the_float_floor() -> None:
    rng = np.random.default_rng(0)
    layers = extractor(0, (10, 64, 64))
    X, own = pixels(rng, 30, 10), pixels(rng, 100, 10)
    V = embed(layers, X)
    with nn.deterministic(0):
        x, record, kept = invert_from_starts(
            layers, V, [("prior", np.repeat(own.mean(0, keepdims=True), 30, 0))], steps=200)
    assert record.stopped == "converged" and record.steps < 200  # every row stopped early
    exact = ((embed(layers, x) - V) ** 2).sum(1) <= row_floor(V)
    assert exact.mean() >= 0.9 and np.abs(x - X)[exact].max() < 1e-4  # at the floor: exact
    assert kept == {"prior": 30} and reidentified(x, X) >= 0.9


def test_every_row_keeps_the_start_with_the_lowest_objective_and_the_prior_beats_zero(
) -> None:
    rng = np.random.default_rng(0)
    layers = extractor(0, (12, 40, 40, 40))  # narrow and deep: rows end in local minima
    X, own = pixels(rng, 40, 12), pixels(rng, 200, 12)
    V = embed(layers, X)
    starts = [("prior", np.repeat(own.mean(0, keepdims=True), 40, 0)),
              ("zero", np.zeros_like(X))]
    with nn.deterministic(0):
        single = {label: invert_box(layers, V, x0, steps=200) for label, x0 in starts}
        x, record, kept = invert_from_starts(layers, V, starts, steps=200)
    prior, zero = single["prior"].objective, single["zero"].objective
    # zero runs only on the rows the prior left above their floor, where the lower one stays
    best = np.where(prior <= row_floor(V), prior, np.minimum(prior, zero))
    assert np.allclose(((embed(layers, x) - V) ** 2).sum(1), best, rtol=1e-9, atol=1e-15)
    assert single["prior"].objective.mean() <= single["zero"].objective.mean()
    assert record.converged and sum(kept.values()) == 40 and min(kept.values()) > 0
    assert set(record.starts) == {"prior", "zero"} and record.best_start == "prior"


def test_a_starved_run_reports_that_more_budget_would_help() -> None:
    rng = np.random.default_rng(1)
    layers = extractor(1, (10, 64, 64, 64))
    X = pixels(rng, 20, 10)
    with nn.deterministic(0):
        _, record, _ = invert_from_starts(layers, embed(layers, X),
                                          [("zero", np.zeros_like(X))], steps=3)
    assert record.stopped == "budget" and record.to_info()["more_budget_helps"] is True


def test_starting_points_follow_what_the_adversary_holds() -> None:
    own = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0]])
    v = np.array([[1.0, 0.9]])
    points = start_points(parse_starts("nearest:2,prior,zero"), v, 2, own, own)
    assert [label for label, _ in points] == ["nearest:1", "nearest:2", "prior", "zero"]
    assert points[0][1].tolist() == [[1.0, 1.0]]
    alone = start_points(parse_starts("nearest:2,prior,zero"), v, 2, None, None)
    assert [label for label, _ in alone] == ["zero"]
    for bad in ("nearest:0", "prior:2", "random", "zero,zero", ""):
        with pytest.raises(ValidationError):
            parse_starts(bad)
