"""H-FedMV's optimality conditions: the client's Gram matrix and class sums solve them, and a
few configurations identify both."""

from __future__ import annotations

import numpy as np

from fedsec.attacks.fedmv import conditions as cd
from fedsec.protocols.fedmv import maths

TIGHT = maths.Settings(tol=1e-14, max_rounds=20000, inner_tol=1e-14, max_inner=2000, eps=1e-8)
CONFIGS = [(1.0, 1.0, 4.0), (2.0, 1.0, 4.0), (1.0, 4.0, 4.0), (4.0, 2.0, 1.0), (0.5, 8.0, 2.0)]


def local_optimum(Xs, Y, zeta: float, eta: float, beta: float, rng) -> list[np.ndarray]:
    C = Y.shape[1]
    Ws = [rng.normal(size=(X.shape[1], C)) for X in Xs]
    fit = maths.fit_mvl(Xs, Y, betas=[beta] * len(Xs), zetas=[zeta] * len(Xs), eta=eta, Ws=Ws,
                        Zs=[X @ W for X, W in zip(Xs, Ws, strict=True)], Z=Y.copy(),
                        settings=TIGHT)
    assert fit.converged
    return list(fit.Ws)


def test_a_sweep_of_configurations_identifies_the_gram_matrix_and_class_sums() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 5))
    Y = maths.one_hot(rng.integers(0, 2, 80), 2)
    Xs = [X[:, :3], X[:, 3:]]
    G, B = X.T @ X, X.T @ Y
    systems, ranks = [], []
    for zeta, eta, beta in CONFIGS:
        system = cd.conditions(local_optimum(Xs, Y, zeta, eta, beta, rng), beta=beta,
                               zeta=zeta, eta=eta, eps=TIGHT.eps)
        # the truth solves every configuration's equations
        assert np.linalg.norm(system.A @ cd.pack(G, B) - system.b) < 1e-9 * np.linalg.norm(
            system.b)
        systems.append(system)
        ranks.append(cd.stacked_rank(systems))
    assert ranks[0] == 10 and ranks[-1] == cd.n_unknowns(5, 2) == 25  # D C a run, until full
    G_hat, B_hat = cd.solve(systems)
    np.testing.assert_allclose(G_hat, G, rtol=1e-8, atol=1e-8 * np.abs(G).max())
    np.testing.assert_allclose(B_hat, B, rtol=1e-8, atol=1e-8 * np.abs(B).max())
    # one run with the Gram matrix as a prior: the class sums (class-conditional means)
    np.testing.assert_allclose(cd.class_sums_given_gram(systems[0], G), B, atol=1e-8)
    # one run alone: not identified
    G_one, _ = cd.solve(systems[:1])
    assert np.linalg.norm(G_one - G) > 0.1 * np.linalg.norm(G)


def test_two_sweeps_whose_data_differ_by_one_record_give_the_record() -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 4))
    y = rng.integers(0, 2, 60)
    recovered = []
    for rows in (slice(0, 59), slice(0, 60)):  # the second holds one record more: row 59
        Xs, Y = [X[rows, :2], X[rows, 2:]], maths.one_hot(y[rows], 2)
        systems = [cd.conditions(local_optimum(Xs, Y, zeta, eta, beta, rng), beta=beta,
                                 zeta=zeta, eta=eta, eps=TIGHT.eps)
                   for zeta, eta, beta in CONFIGS]
        recovered.append(cd.solve(systems))
    (G, B), (G_more, B_more) = recovered
    x, label = cd.record_from_difference(G, B, G_more, B_more)
    np.testing.assert_allclose(x, X[59], atol=1e-6)
    assert label == y[59]
