"""The variables a gradient inversion optimises, and the optimiser loop that moves them.

Dummy inputs are free tensors; channels that hold a one-hot code are parameterised by logits
read through a softmax, and steps past a sequence's length are held at zero. Labels are
fixed one-hot vectors or the softmax of free logits. :func:`optimise` runs L-BFGS (DLG, Zhu
et al. 2019) or Adam with Inverting Gradients' step decay (Geiping et al. 2020), keeps the
best point it evaluated and records how it ended (:mod:`fedsec.convergence`): its objective
history and why it stopped. :func:`search` runs it from several starting points (the
adversary's prior ``init``, ``restarts`` random draws) and keeps the lowest objective, never
judged by the truth. torch is imported inside the functions only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from fedsec.convergence import Convergence, best_start, judge
from fedsec.errors import ValidationError
from fedsec.nn import require_torch

WHAT = "gradient inversion"
DECAY_POINTS = (3 / 8, 5 / 8, 7 / 8)
"""Fractions of the step budget where Inverting Gradients divides the learning rate by 10."""
IG_TAIL = 1 - DECAY_POINTS[1]
"""The tail over which an Adam run is judged: its last two phases (from 5/8 of the budget)."""
FLOOR = 1e-10
"""An objective below this share of its starting value has converged (the distances are 0 at
an exact match; float precision ends the descent there)."""


@dataclass(frozen=True, eq=False)
class Inversion:
    """What an inversion recovered.

    Attributes
    ----------
    inputs : numpy.ndarray
        The reconstructed inputs, ``(n_samples, *input_shape)``, float64.
    label_probs : numpy.ndarray
        ``(n_samples, n_classes)`` label probabilities (one-hot when the labels were fixed).
    loss : float
        The lowest objective reached (distance plus prior); the inputs are those that gave it.
    steps : int
        Optimiser steps run by the kept start (fewer than asked when the objective became
        non-finite or L-BFGS stopped moving).
    convergence : fedsec.convergence.Convergence
        How the kept run ended (objective history, stop reason) and every start's objective.
    """

    inputs: np.ndarray
    label_probs: np.ndarray
    loss: float
    steps: int
    convergence: Convergence

    @property
    def labels(self) -> np.ndarray:
        """The most probable label of each reconstructed sample."""
        return np.asarray(self.label_probs.argmax(axis=1), dtype=np.int64)


def length_tensor(lengths: np.ndarray | None) -> Any:
    """Sequence lengths as a long tensor (None stays None)."""
    if lengths is None:
        return None
    torch = require_torch(WHAT)
    return torch.as_tensor(np.array(lengths), dtype=torch.long)


@dataclass
class Dummy:
    """The variables optimised: free inputs (logits on one-hot groups) and label logits."""

    z: Any
    label_logits: Any
    fixed_probs: Any
    groups: tuple[tuple[int, ...], ...]
    mask: Any

    @classmethod
    def create(cls, n: int, shape: Sequence[int], n_classes: int,
               labels: Sequence[int] | np.ndarray | None, groups: Sequence[Sequence[int]],
               lengths: np.ndarray | None, init: np.ndarray | None, generator: Any,
               dtype: Any) -> Dummy:
        torch = require_torch(WHAT)
        shape = (int(n), *(int(s) for s in shape))
        codes = tuple(tuple(int(c) for c in g) for g in groups)
        flat = [c for g in codes for c in g]
        if n < 1 or len(set(flat)) < len(flat) or any(not 0 <= c < shape[-1] for c in flat):
            raise ValidationError(f"{n} samples of shape {shape[1:]} with one-hot channel "
                                  f"groups {codes}: need a sample and disjoint channels.")
        if init is None:
            z = torch.randn(shape, generator=generator, dtype=dtype)
        else:
            z = torch.tensor(np.asarray(init, dtype=np.float64).reshape(shape), dtype=dtype)
            for g in codes:
                z[..., list(g)] = z[..., list(g)].clamp_min(1e-6).log()
        fixed = None
        logits = None
        if labels is None:
            logits = torch.randn((int(n), n_classes), generator=generator, dtype=dtype)
            logits.requires_grad_(True)
        else:
            y = torch.as_tensor(np.array(labels), dtype=torch.long).reshape(-1)
            if y.numel() != n or int(y.min()) < 0 or int(y.max()) >= n_classes:
                raise ValidationError(f"{y.numel()} labels do not fit {n} samples of "
                                      f"{n_classes} classes.")
            fixed = torch.nn.functional.one_hot(y, n_classes).to(dtype)
        mask = None
        if lengths is not None:
            steps = torch.arange(shape[1]).view(1, -1)
            mask = (steps < length_tensor(lengths).view(-1, 1)).to(dtype)
            mask = mask.view(int(n), shape[1], *([1] * (len(shape) - 2)))
        return cls(z.requires_grad_(True), logits, fixed, codes, mask)

    def variables(self) -> list[Any]:
        return [self.z] if self.label_logits is None else [self.z, self.label_logits]

    def inputs(self) -> Any:
        """The inputs the model reads: softmax on one-hot groups, padding zeroed."""
        torch = require_torch(WHAT)
        x = self.z
        if self.groups:
            x = x.clone()
            for g in self.groups:
                x[..., list(g)] = torch.softmax(self.z[..., list(g)], dim=-1)
        return x if self.mask is None else x * self.mask

    def probs(self) -> Any:
        """Label probabilities: fixed one-hot, or softmax of the label logits."""
        torch = require_torch(WHAT)
        if self.fixed_probs is not None:
            return self.fixed_probs
        return torch.softmax(self.label_logits, dim=-1)

    def clip(self, bounds: tuple[float, float] | None) -> None:
        """Clip the free channels (not the one-hot logits) into ``bounds``, in place."""
        if bounds is None:
            return
        torch = require_torch(WHAT)
        with torch.no_grad():
            free = [c for c in range(self.z.shape[-1])
                    if not any(c in g for g in self.groups)]
            self.z[..., free] = self.z[..., free].clamp(*bounds)

    def result(self, best: tuple[float, list[Any]], record: Convergence,
               bounds: tuple[float, float] | None) -> Inversion:
        """The best state seen, as an :class:`Inversion`."""
        torch = require_torch(WHAT)
        loss, state = best
        with torch.no_grad():
            for var, value in zip(self.variables(), state, strict=True):
                var.copy_(value)
            self.clip(bounds)
            x = self.inputs().numpy().astype(np.float64)
            probs = self.probs().numpy().astype(np.float64)
        return Inversion(inputs=x, label_probs=probs, loss=loss, steps=record.steps,
                         convergence=record)


def optimise(dummy: Dummy, objective: Callable[[], Any], *, method: str, steps: int,
             lr: float | None, signed: bool = False,
             bounds: tuple[float, float] | None = None,
             on_step: Callable[[int], None] | None = None
             ) -> tuple[tuple[float, list[Any]], Convergence]:
    """Minimise ``objective`` over the dummy's variables: the best (loss, state) and how it ended.

    ``dlg``: L-BFGS with a strong Wolfe line search, up to 20 iterations a step (PyTorch's
    default, as in the DLG code; the original's fixed step of 1 can diverge). ``ig``: Adam
    with the learning rate divided by 10 at 3/8, 5/8 and 7/8 of ``steps``, on signed
    gradients if ``signed``.
    L-BFGS restarts without its curvature history when its line search fails, and stops
    when it fails again right after a restart: no decrease along the gradient itself, a
    stationary point at the objective's precision ("converged": more steps cannot move it,
    other starts might). The best point is tracked over
    every evaluation of the objective; the history records the best objective after each
    step (non-finite when the objective diverged, which ends the run). Adam is judged over
    its last two phases (:data:`IG_TAIL`), L-BFGS over the default tail; a run whose
    objective fell below :data:`FLOOR` of its start has converged. ``on_step(steps_done)``
    follows the steps.
    """
    torch = require_torch(WHAT)
    variables = dummy.variables()
    best: list[Any] = [float("inf"), [v.detach().clone() for v in variables]]

    def closure() -> Any:
        optimizer.zero_grad()
        loss = objective()
        loss.backward()
        value = float(loss.detach())
        if np.isfinite(value) and value < best[0]:
            best[0], best[1] = value, [v.detach().clone() for v in variables]
        if signed and method == "ig":
            for v in variables:
                if v.grad is not None:
                    v.grad.sign_()
        return loss

    if method == "dlg":
        optimizer = torch.optim.LBFGS(variables, lr=1.0 if lr is None else lr, max_iter=20,
                                      history_size=100, line_search_fn="strong_wolfe")
    else:
        optimizer = torch.optim.Adam(variables, lr=0.1 if lr is None else lr)
        milestones = sorted({max(1, int(f * steps)) for f in DECAY_POINTS})
        scheduler = torch.optim.lr_scheduler.MultiStepLR(optimizer, milestones, gamma=0.1)
    history: list[float] = []
    restarted, stopped_early = False, False
    for _ in range(int(steps)):
        before = [v.detach().clone() for v in variables]
        loss = optimizer.step(closure)
        finite = bool(np.isfinite(float(loss.detach())))
        history.append(best[0] if finite else float("nan"))
        if on_step is not None:
            on_step(len(history))
        if method == "ig":
            scheduler.step()
            dummy.clip(bounds)
        if not finite:
            break
        if method == "dlg":
            stalled = all(torch.equal(a, v) for a, v in zip(before, variables, strict=True))
            if stalled and restarted:
                stopped_early = True
                break
            if stalled:  # the line search failed: forget the curvature history once
                optimizer.state.clear()
            restarted = stalled
    first = history[0] if history and np.isfinite(history[0]) else 0.0
    record = judge(history, budget=int(steps), tail=IG_TAIL if method == "ig" else 0.2,
                   floor=FLOOR * first, stopped_early=stopped_early,
                   stationary=method == "dlg")
    return (best[0], best[1]), record


def search(create: Callable[[np.ndarray | None], Dummy],
           objective: Callable[[Dummy], Any], *, restarts: int, init: np.ndarray | None,
           method: str, steps: int, lr: float | None, signed: bool = False,
           bounds: tuple[float, float] | None = None,
           on_step: Callable[[int], None] | None = None) -> Inversion:
    """Run :func:`optimise` from every start and keep the lowest objective.

    The starts are the prior ``init`` (``"prior"``, when given) and ``restarts`` random draws
    (``"random:1"``, ...) that ``create(None)`` makes in turn from its generator. The kept
    :class:`Inversion`'s convergence lists every start's final objective
    (:func:`fedsec.convergence.best_start`). ``on_step`` counts steps over all starts.
    """
    if restarts < 0 or (restarts == 0 and init is None):
        raise ValidationError(f"An inversion needs a starting point: restarts={restarts} "
                              "random starts and no prior start (init).")
    done = [0]

    def run(start: np.ndarray | None) -> tuple[Inversion, float, Convergence]:
        dummy = create(start)
        offset = done[0]
        best, record = optimise(
            dummy, lambda: objective(dummy), method=method, steps=steps, lr=lr,
            signed=signed, bounds=bounds,
            on_step=None if on_step is None else lambda s: on_step(offset + s))
        done[0] += record.steps
        return dummy.result(best, record, bounds), best[0], record

    starts: list[tuple[str, Callable[[], tuple[Inversion, float, Convergence]]]] = []
    if init is not None:
        starts.append(("prior", lambda: run(init)))
    starts += [(f"random:{k + 1}", lambda: run(None)) for k in range(int(restarts))]
    result, record = best_start(starts)
    return replace(result, convergence=record)
