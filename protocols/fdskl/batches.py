"""Mini-batches of DSG: ``B`` samples and ``r`` random features per iteration, one averaged step.

Dai et al., "Scalable Kernel Methods via Doubly Stochastic Gradients" (2014), Algorithm 1 in its
mini-batch form, whose analysis Gu, Dang, Li, Huang (FDSKL, 2020) follow: iteration ``t`` draws
samples ``x_{t,1} .. x_{t,B}`` and features ``(w_{t,1}, b_{t,1}) .. (w_{t,r}, b_{t,r})``; with
``g_b = L'(f(x_{t,b}), y_{t,b})`` the new coefficients are

    alpha_{t,k} = sum_b (-gamma / (B r)) g_b phi_{t,k}(x_{t,b}),   k = 1 .. r,

the functional gradient averaged over the batch, on the kernel that the ``r`` features
approximate (``phi phi'/r``); every earlier coefficient is scaled by ``1 - gamma lambda``.
``B = r = 1`` is the one-sample, one-feature step, bit for bit.

Features are numbered ``j = t r + k``; the samples of iteration ``t`` are
``samples[t B : (t + 1) B]``. Active worker ``k`` of ``n_active`` owns (creates and keeps the
coefficients of) the features of iterations ``t`` with ``t % n_active == k``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def owned(start: int, stop: int, residue: int, stride: int, group: int = 1) -> np.ndarray:
    """Features ``j`` in ``[start, stop)`` with ``(j // group) % stride == residue``.

    ``group`` is the number of features per iteration; the owner of an iteration's features is
    the active worker whose turn it is.

    Examples
    --------
    >>> owned(3, 10, 1, 2).tolist()
    [3, 5, 7, 9]
    >>> owned(0, 12, 1, 2, group=3).tolist()
    [3, 4, 5, 9, 10, 11]
    """
    if group == 1:
        first = start + (residue - start) % stride
        return np.arange(first, stop, stride)
    js = np.arange(start, stop)
    return js[(js // group) % stride == residue]


def owned_slice(start: int, stop: int, residue: int, stride: int,
                group: int = 1) -> slice | np.ndarray:
    """:func:`owned` as a slice where one exists (no copy when indexing), else the indices."""
    if group == 1:
        return slice(start + (residue - start) % stride, stop, stride)
    if stride == 1:
        return slice(start, stop)
    return owned(start, stop, residue, stride, group)


def n_owned(stop: int, residue: int, stride: int, group: int = 1) -> int:
    """How many features ``j < stop`` with ``(j // group) % stride == residue`` exist.

    Examples
    --------
    >>> n_owned(5, 1, 2), n_owned(0, 0, 1), n_owned(12, 1, 2, group=3), n_owned(10, 1, 2, group=3)
    (2, 0, 6, 4)
    """
    full, rest = divmod(stop, group)
    count = group * max(0, (full - residue + stride - 1) // stride)
    return count + (rest if full % stride == residue else 0)


def segments(samples: np.ndarray, t0: int, last: np.ndarray, *, batch_size: int = 1,
             features_per_iteration: int = 1) -> list[tuple[int, int, int]]:
    """Per sample drawn in a block, ``(sample, first feature, stop)`` still to compute.

    ``samples`` are the block's draws (``batch_size`` per iteration, from iteration ``t0``).
    The features a sample needs are those of every iteration since its last visit up to and
    including the current one; earlier ones are reused (Algorithm 2, line 4). A sample drawn
    twice in one batch needs nothing the second time. Updates ``last`` (per sample, its last
    iteration).

    Examples
    --------
    >>> last = np.full(3, -1)
    >>> segments(np.array([2, 0, 2]), 0, last)
    [(2, 0, 1), (0, 0, 2), (2, 1, 3)]
    >>> last = np.full(3, -1)
    >>> segments(np.array([2, 0, 2, 2]), 0, last, batch_size=2, features_per_iteration=3)
    [(2, 0, 3), (0, 0, 3), (2, 3, 6), (2, 6, 6)]
    """
    r = features_per_iteration
    out = []
    for k, s in enumerate(samples.tolist()):
        t = t0 + k // batch_size
        out.append((s, (int(last[s]) + 1) * r, (t + 1) * r))
        last[s] = t
    return out


def new_alphas(gradients: np.ndarray, phis: np.ndarray, *, step: float) -> np.ndarray:
    """The coefficients of one iteration's ``r`` features from its batch.

    ``gradients`` (``B``) are ``L'(f(x_b), y_b)``, ``phis`` (``B × r``) the new features at the
    batch's samples. Summed in batch order, so every caller rounds alike.

    Examples
    --------
    >>> new_alphas(np.array([-1.0]), np.array([[0.5]]), step=0.1).tolist()
    [0.05]
    >>> new_alphas(np.array([-1.0, 1.0]), np.array([[1.0, 0.0], [0.0, 1.0]]), step=0.4).tolist()
    [0.1, -0.1]
    """
    B, r = phis.shape
    scale = -step / (B * r)
    out = scale * gradients[0] * phis[0]
    for b in range(1, B):
        out = out + scale * gradients[b] * phis[b]
    return out


def batch_gradients(f: np.ndarray, y: np.ndarray,
                    derivative: Callable[[float, float], float]) -> np.ndarray:
    """``L'(f(x_b), y_b)`` for every sample of a batch."""
    return np.array([derivative(float(u), float(v)) for u, v in zip(f, y, strict=True)])
