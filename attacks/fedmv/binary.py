"""Binary-column search: the 0/1 columns of a view (one-hot or yes/no features), without known rows.

A view's column space (``subspace-accumulation``) holds each of its columns. A 0/1 column is a
very particular vector of that space, and alternating projections find it: from a start in
the space, split its values into two clusters (0 and 1), project the 0/1 vector back onto the
space, and repeat; a 0/1 vector that the space holds (relative residual below ``tol``) is a
column of the view, or the complement of one. Starts: each row's projection ``Q Q^T e_i``
and ``restarts`` random combinations. Score with ``binary-columns``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import numpy as np

from fedsec.attacks.fedmv.family import ConsensusAttack
from fedsec.attacks.fedmv.subspace import SubspaceAccumulation
from fedsec.convergence import Convergence, combine, thin
from fedsec.declare import Declared, Float, Int
from fedsec.outcomes import Reconstruction
from fedsec.registry import register
from fedsec.view import View


def two_means(values: np.ndarray, *, steps: int = 30) -> np.ndarray | None:
    """``values`` split into two clusters (1 above the threshold), or None when they are flat.

    Examples
    --------
    >>> two_means(np.array([0.1, -0.05, 0.97, 1.02])).tolist()
    [0.0, 0.0, 1.0, 1.0]
    """
    low, high = float(values.min()), float(values.max())
    if high - low <= 1e-12 * max(1.0, abs(high)):
        return None
    threshold = (low + high) / 2
    for _ in range(steps):
        below, above = values[values <= threshold], values[values > threshold]
        if not below.size or not above.size:
            return None
        new = (below.mean() + above.mean()) / 2
        if new == threshold:
            break
        threshold = new
    return (values > threshold).astype(np.float64)


def binary_vectors(Q: np.ndarray, *, tol: float = 1e-4, restarts: int = 100, steps: int = 30,
                   rng: np.random.Generator) -> np.ndarray:
    """Distinct non-constant 0/1 vectors in the span of orthonormal ``Q`` (one per column,
    up to complement), by alternating projections.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([rng.normal(size=50), rng.integers(0, 2, 50)]).astype(float)
    >>> Q, _ = np.linalg.qr(X)
    >>> found = binary_vectors(Q, rng=rng)
    >>> found.shape[1], bool(np.array_equal(found[:, 0], X[:, 1])
    ...                      or np.array_equal(found[:, 0], 1 - X[:, 1]))
    (1, True)
    """
    return search_binary(Q, tol=tol, restarts=restarts, steps=steps, rng=rng)[0]


def search_binary(Q: np.ndarray, *, tol: float, restarts: int, steps: int,
                  rng: np.random.Generator) -> tuple[np.ndarray, Convergence]:
    """:func:`binary_vectors`, and how the search ended: converged when every start settled
    (on a 0/1 vector in the span, or on no split at all) within ``steps`` projections, out of
    budget when some start was still moving; its history counts the vectors found after each
    start."""
    n, r = Q.shape
    found: list[np.ndarray] = []
    starts = [Q @ Q[i] for i in range(n)] + [Q @ rng.normal(size=r) for _ in range(restarts)]
    moving, history = 0, []
    for x in starts:
        for _ in range(steps):
            b = two_means(x)
            if b is None:
                break
            projected = Q @ (Q.T @ b)
            if np.linalg.norm(b - projected) <= tol * np.linalg.norm(b):
                if 0 < b.sum() < n and not any(np.array_equal(b, f) or np.array_equal(1 - b, f)
                                               for f in found):
                    found.append(b)
                break
            if np.array_equal(projected, x):
                break  # a fixed point that is no 0/1 vector of the span
            x = projected
        else:
            moving += 1
        history.append(float(len(found)))
    record = Convergence("budget" if moving else "converged", len(starts), len(starts),
                         thin(history))
    return (np.column_stack(found) if found else np.zeros((n, 0))), record


@register("attack", "binary-columns")
class BinaryColumns(ConsensusAttack):
    """V-FedMV: the 0/1 (one-hot, yes/no) columns of each view found in its recovered column space
    by alternating projections, without known rows.

    The 0/1 columns of each view from the server's recovered column spaces, no row known.
    """

    default_scorer = "binary-columns"
    starts_params = ("restarts",)

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        tol: Annotated[float, Float(min=0.0, min_inclusive=False, max=0.5)] = 1e-4
        """A 0/1 vector counts as held by the view's column space when its relative residual is
        below tol."""
        restarts: Annotated[int, Int(min=0)] = 100
        """Random combinations tried as starts of the alternating projections, besides each row's
        projection."""

    def unmet(self, view: View) -> str | None:
        return SubspaceAccumulation().unmet(view)

    def run(self, view: View) -> Reconstruction:
        spans = SubspaceAccumulation().run(view)
        estimates, baseline, counts, records = {}, {}, {}, []
        for key, Q in spans.estimates.items():
            rng = np.random.default_rng(0)  # the attack's own search, the same on every run
            found, record = search_binary(Q, tol=self.params.tol,
                                          restarts=self.params.restarts, steps=30, rng=rng)
            records.append(record)
            estimates[key] = found
            baseline[key] = np.zeros((Q.shape[0], 0))  # the naive guess: no column known
            counts[key] = int(found.shape[1])
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates=estimates,
                              baseline=baseline,
                              info={"columns_found": counts,
                                    "convergence": combine(records).to_info()})
