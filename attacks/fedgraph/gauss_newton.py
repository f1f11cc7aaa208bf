"""Inverting a ReLU extractor by box-constrained Gauss–Newton (projected Levenberg–Marquardt).

The white-box objective of He, Zhang and Lee (ACSAC 2019) for embeddings ``v`` of an extractor
``g`` (Linear and ReLU layers) is ``||g(x) - v||²`` over inputs ``x`` in the pixel box
``[-1, 1]^d``. It is a sum over rows of small least-squares problems, and ``g`` is piecewise
linear: on the region where the ReLU pattern of ``x`` holds, ``g(x) = J x + c`` with ``J`` the
product of the layers' weights masked by their active units. A Gauss–Newton step solves that
local linear least-squares problem, so once the pattern is right one step lands on the answer;
first-order optimisers (Adam, as in the paper) creep towards it instead.

Each row runs its own Levenberg–Marquardt iteration (Moré, "The Levenberg–Marquardt algorithm:
implementation and theory", 1978), all rows batched:

* the step solves ``(JᵀJ + μ s I) δ = -Jᵀ r`` on the free coordinates (``s`` the mean of
  ``diag JᵀJ``); a coordinate on the box's face whose gradient points outward is held there,
  and a coordinate the step would carry past the face is put on it and the step re-solved
  for the others (an active-set projected Newton step, Bertsekas 1982);
* a row keeps a step that lowers its objective (``μ`` shrinks) and refuses one that does not
  (``μ`` grows);
* a row is done when its objective is at the float32 floor of its embedding
  (:func:`row_floor`: the embeddings were computed in float32) or when no step lowers it any
  more (``μ`` past :data:`MU_MAX`); done rows leave the batch.

Everything is float64 (the objective must go below the float32 floor). Examples use tiny
random extractors; the attack is :mod:`.embedding_inversion`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from fedsec.convergence import TAIL, TOL, Convergence, judge
from fedsec.nn import require_torch

WHAT = "attack 'embedding-inversion'"
#: Unit roundoff of float32: embeddings computed in float32 are this exact, relatively.
EPS32 = 2.0 ** -24
#: μ (relative to the mean of diag JᵀJ) at the start, and past which a row stops.
MU_START, MU_MAX = 1e-3, 1e10
#: How μ changes after a refused step and after a kept one.
MU_UP, MU_DOWN = 4.0, 3.0
#: Re-solves of one step after coordinates are put on the box's faces.
FACE_PASSES = 4
#: The fractions of a step tried, the whole step first.
SCALES = (1.0, 0.5, 0.25, 0.125, 0.0625)


@dataclass(frozen=True)
class Inversion:
    """One start's run over every row.

    Attributes
    ----------
    inputs : numpy.ndarray
        ``(n, d)`` the inputs found, in ``[-1, 1]``.
    objective : numpy.ndarray
        ``(n,)`` each row's final ``||g(x) - v||²``.
    trace : numpy.ndarray
        ``(steps + 1, n)`` each row's objective before the first step and after each step
        (a row that stopped keeps its last value).
    stopped_early : bool
        Whether every row was done before the budget ran out.
    """

    inputs: np.ndarray
    objective: np.ndarray
    trace: np.ndarray
    stopped_early: bool


def relu_layers(g: Any) -> list[tuple[Any, Any]]:
    """The ``(weight, bias)`` of each Linear layer of ``g`` (a ``Sequential`` of Linear and
    ReLU layers, every Linear followed by a ReLU), as float64 tensors."""
    torch = require_torch(WHAT)
    return [(m.weight.detach().to(torch.float64), m.bias.detach().to(torch.float64))
            for m in g if isinstance(m, torch.nn.Linear)]


def forward(layers: Sequence[tuple[Any, Any]], x: Any) -> tuple[Any, list[Any]]:
    """``g(x)`` and each layer's mask of active units."""
    masks = []
    h = x
    for W, b in layers:
        a = h @ W.T + b
        masks.append(a > 0)
        h = a.clamp_min(0)
    return h, masks


def jacobian(layers: Sequence[tuple[Any, Any]], masks: Sequence[Any]) -> Any:
    """``(n, m, d)``: each row's Jacobian of ``g`` at the point whose masks are given."""
    J = None
    for (W, _), mask in zip(layers, masks, strict=True):
        J = W.expand(len(mask), *W.shape) if J is None else W @ J
        J = J * mask[:, :, None]
    return J


def row_floor(embeddings: np.ndarray) -> np.ndarray:
    """The objective below which a row is as exact as its float32 embedding allows:
    ``(4 eps32)² (||v||² + 1)``.

    Examples
    --------
    >>> float(row_floor(np.zeros((1, 3)))[0]) == (4 * EPS32) ** 2
    True
    """
    v = np.asarray(embeddings, dtype=np.float64)
    return (4 * EPS32) ** 2 * ((v ** 2).sum(axis=1) + 1.0)


def invert_box(layers: Sequence[tuple[Any, Any]], embeddings: np.ndarray, start: np.ndarray,
               *, steps: int, on_step: Callable[[int], None] | None = None) -> Inversion:
    """Rows ``x`` in ``[-1, 1]`` minimising ``||g(x) - v||²`` from ``start`` (clipped into the
    box), by at most ``steps`` projected Levenberg–Marquardt steps per row.

    Examples
    --------
    >>> import torch
    >>> _ = torch.manual_seed(0)
    >>> g = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.ReLU())
    >>> x = np.array([[0.5, -1.0, 0.2], [-0.3, 0.9, 1.0]])
    >>> layers = relu_layers(g)
    >>> v = forward(layers, torch.from_numpy(x))[0].numpy()
    >>> run = invert_box(layers, v, np.zeros_like(x), steps=50)
    >>> bool(np.all(run.objective <= row_floor(v))), run.stopped_early
    (True, True)
    """
    torch = require_torch(WHAT)
    V = torch.from_numpy(np.array(embeddings, dtype=np.float64))
    x = torch.from_numpy(np.clip(np.array(start, dtype=np.float64), -1.0, 1.0))
    n, d = x.shape
    floor = torch.from_numpy(row_floor(embeddings))
    f = ((forward(layers, x)[0] - V) ** 2).sum(dim=1)
    mu = torch.full((n,), MU_START, dtype=torch.float64)
    trace = [f.clone()]
    active = torch.nonzero(f > floor).flatten()
    eye = torch.eye(d, dtype=torch.float64)
    done_at = steps
    for step in range(1, steps + 1):
        if len(active) == 0:
            done_at = step - 1
            break
        xa, fa, mua = x[active], f[active], mu[active]
        out, masks = forward(layers, xa)
        J = jacobian(layers, masks)
        Jt = J.transpose(1, 2)
        A = Jt @ J
        grad = (Jt @ (out - V[active])[:, :, None])[:, :, 0]
        damping = (mua * A.diagonal(dim1=1, dim2=2).mean(dim=1) + 1e-12)[:, None, None] * eye
        direction = _box_step(A, grad, xa, damping)
        fc, candidate = fa, xa
        full = torch.zeros_like(fa, dtype=torch.bool)  # rows that kept the whole step
        for scale in SCALES:  # a short line search along the step: forward passes only
            trial = (xa + scale * direction).clamp(-1, 1)
            ft = ((forward(layers, trial)[0] - V[active]) ** 2).sum(dim=1)
            take = ft < fc
            fc, candidate = torch.where(take, ft, fc), torch.where(take[:, None], trial, candidate)
            full = full | (take & (scale == 1.0))
        better = fc < fa
        x[active] = candidate
        f[active] = fc
        mu[active] = torch.where(full, mua / MU_DOWN, torch.where(better, mua, mua * MU_UP))
        trace.append(f.clone())
        keep = (f[active] > floor[active]) & (mu[active] < MU_MAX)
        active = active[keep]
        if on_step is not None:
            on_step(step)
    stopped_early = done_at < steps or len(active) == 0
    return Inversion(inputs=x.numpy(), objective=f.numpy(),
                     trace=torch.stack(trace).numpy(), stopped_early=stopped_early)


def _box_step(A: Any, grad: Any, x: Any, damping: Any) -> Any:
    """The damped Gauss–Newton step from ``x`` that stays in the box: coordinates on a face
    with an outward gradient stay, coordinates the step carries past a face land on it, and
    the others are re-solved given those moves."""
    torch = require_torch(WHAT)
    free = ~(((x <= -1) & (grad > 0)) | ((x >= 1) & (grad < 0)))
    moved = torch.zeros_like(x)  # the moves of the coordinates held (onto a face or none)
    step = moved
    for _ in range(FACE_PASSES):
        held = (~free).to(torch.float64)
        keep = free.to(torch.float64)
        rhs = -(grad + (A @ moved[:, :, None])[:, :, 0]) * keep
        system = A * keep[:, :, None] * keep[:, None, :] + damping + torch.diag_embed(held)
        step = torch.linalg.solve(system, rhs) * keep + moved
        past = free & ((x + step < -1) | (x + step > 1))
        if not bool(past.any()):
            break
        moved = torch.where(past, (x + step).clamp(-1, 1) - x, moved)
        free = free & ~past
    return (x + step).clamp(-1, 1) - x


def still_improving(trace: np.ndarray, floor: np.ndarray, *, tail: float, tol: float
                    ) -> np.ndarray:
    """Per row: above its floor and its objective fell by more than ``tol`` of its final
    value over the last ``tail`` share of the steps (more steps would likely lower it).

    Examples
    --------
    >>> trace = np.array([[9.0, 9.0], [4.0, 1.0], [2.0, 1.0], [1.0, 1.0]])
    >>> still_improving(trace, np.zeros(2), tail=0.5, tol=1e-3).tolist()
    [True, False]
    """
    steps = len(trace) - 1
    before = trace[max(0, steps - max(1, int(np.ceil(tail * steps))))]
    final = trace[-1]
    return (final > floor) & (before - final > tol * np.maximum(final, 1e-300))


def invert_from_starts(layers: Sequence[tuple[Any, Any]], embeddings: np.ndarray,
                       starts: Sequence[tuple[str, np.ndarray]], *, steps: int,
                       on_start: Callable[[str], Callable[[int], None] | None] | None = None,
                       ) -> tuple[np.ndarray, Convergence, dict[str, int]]:
    """Every row inverted from several starts, each row keeping the start that ends at its
    lowest objective (never judged by the truth).

    Starts are tried in order, each on the rows the earlier ones left above their float32
    floor (:func:`row_floor`: no start can end lower than that). Returns the inputs, the
    convergence record (the mean objective along each row's kept run; ``budget`` when a row
    used every step and was still improving, see :func:`still_improving`; ``starts``: each
    start's mean final objective over the rows it ran on) and how many rows each start won.

    Examples
    --------
    >>> import torch
    >>> _ = torch.manual_seed(0)
    >>> layers = relu_layers(torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.ReLU()))
    >>> v = forward(layers, torch.tensor([[0.5, -1.0, 0.2]], dtype=torch.float64))[0].numpy()
    >>> x, record, kept = invert_from_starts(layers, v, [("zero", np.zeros((1, 3)))],
    ...                                      steps=50)
    >>> record.stopped, kept
    ('converged', {'zero': 1})
    """
    V = np.asarray(embeddings, dtype=np.float64)
    n = len(V)
    floor = row_floor(V)
    inputs = np.zeros((n, np.asarray(starts[0][1]).shape[1]))
    best = np.full(n, np.inf)
    winner = np.full(n, -1)
    traces: list[np.ndarray] = [np.zeros(1)] * n
    objectives: dict[str, float] = {}
    early = True
    for index, (label, start) in enumerate(starts):
        rows = np.flatnonzero(~(best <= floor))
        if len(rows) == 0:
            break
        run = invert_box(layers, V[rows], np.asarray(start, dtype=np.float64)[rows],
                         steps=steps, on_step=on_start(label) if on_start else None)
        objectives[label] = float(np.mean(run.objective))
        early = early and run.stopped_early
        for j in np.flatnonzero(run.objective < best[rows]):
            row = rows[j]
            best[row], inputs[row], winner[row] = run.objective[j], run.inputs[j], index
            traces[row] = run.trace[:, j]
    length = max(len(t) for t in traces)
    trace = np.stack([np.pad(t, (0, length - len(t)), mode="edge") for t in traces], axis=1)
    history = trace.mean(axis=1)[1:] if length > 1 else trace.mean(axis=1)
    record = judge(history, budget=steps, floor=float(floor.mean()),
                   stopped_early=early)
    improving = still_improving(trace, floor, tail=TAIL, tol=TOL)
    if length - 1 >= steps and improving.any():
        record = replace(record, stopped="budget", runs_converged=0)
    counts = np.bincount(winner[winner >= 0], minlength=len(starts))
    won = {label: int(c) for (label, _), c in zip(starts, counts, strict=True)}
    return inputs, replace(record, starts=objectives, best_start=max(won, key=won.__getitem__)
                           ), won
