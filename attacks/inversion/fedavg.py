"""Inverting a FedAvg update: the client's data behind its locally trained weights.

Dimitrov, Balunović, Konstantinov, Vechev, "Data Leakage in Federated Averaging", TMLR 2022.
In FedAvg a client returns weights after several local steps rather than one gradient. The
attacker knows the global weights the client started from, the weights it returned and the
local hyperparameters (:class:`LocalTraining`); it simulates the local run on dummy data,
differentiably (every SGD or RMSProp step unrolled, :func:`simulate`), and optimises the dummy
inputs, and soft labels unless they are given, so that the simulated update matches the
observed one (:func:`invert_fedavg`).

The batch order. A client shuffles its data every epoch with a private generator, so the
attacker cannot know which samples shared a batch. The simulation uses one fixed order:
consecutive slices of the dummy data, the same in every epoch (the last batch may be smaller,
as PyTorch's ``DataLoader`` without ``drop_last``). With ``batch_size >= n_samples`` every step
sees the whole batch and the order question disappears; otherwise a single dummy set is exact
only when the client's order matched. The paper's epoch-order-invariant prior
(``epoch_prior`` of :func:`invert_fedavg`, :mod:`.epoch_prior`) gives every epoch its own
dummy set, ties the sets by their means and merges them at the end.

:func:`~.labels.label_counts_from_bias_update` estimates how many samples of each class a
client held from the update of the last layer's bias, with the mean prediction estimated on
dummy inputs (:func:`~.labels.mean_prediction`; Geng et al., "Towards General Deep Leakage in
Federated Learning", 2021, whose count estimate Dimitrov et al. use).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from fedsec.attacks.inversion.dummy import Dummy, Inversion, length_tensor, search
from fedsec.attacks.inversion.epoch_prior import merge_epochs, order_invariant_prior
from fedsec.attacks.inversion.labels import label_counts_from_bias_update, mean_prediction
from fedsec.attacks.inversion.maths import (
    call,
    check_options,
    distance,
    fixed_parameters,
    soft_cross_entropy,
    total_variation,
)
from fedsec.errors import ValidationError
from fedsec.nn import LocalTraining, deterministic, layout_of, require_torch, unflatten

WHAT = "FedAvg update inversion"
__all__ = ["LocalTraining", "invert_fedavg", "label_counts_from_bias_update", "local_training",
           "mean_prediction", "simulate"]


def simulate(model: Any, params: Mapping[str, Any], buffers: Mapping[str, Any], x: Any,
             probs: Any, local: LocalTraining, *, lengths: Any = None,
             create_graph: bool = True, per_epoch: bool = False) -> dict[str, Any]:
    """The parameters after the local run on ``(x, probs)``, every step kept differentiable.

    ``params`` are the starting weights (tensors requiring grad); ``probs`` are label
    probabilities (one-hot for hard labels). Batches follow :meth:`LocalTraining.batches`.
    With ``per_epoch``, ``x``, ``probs`` and ``lengths`` stack one set per epoch (``epochs *
    n`` rows, epoch ``e`` in rows ``e n .. (e + 1) n``); otherwise every epoch reads all rows.
    """
    torch = require_torch(WHAT)
    current = dict(params)
    squares = {name: torch.zeros_like(p) for name, p in current.items()}
    n = int(x.shape[0]) // local.epochs if per_epoch else int(x.shape[0])
    for epoch in range(local.epochs):
        offset = epoch * n if per_epoch else 0
        for part_of in local.batches(n):
            batch = slice(part_of.start + offset, part_of.stop + offset)
            part = None if lengths is None else lengths[batch]
            logits = call(model, current, buffers, x[batch], part)
            loss = soft_cross_entropy(logits, probs[batch])
            grads = torch.autograd.grad(loss, list(current.values()), create_graph=create_graph)
            current, squares = _step(current, squares, grads, local)
    return current


def _step(params: dict[str, Any], squares: dict[str, Any], grads: Sequence[Any],
          local: LocalTraining) -> tuple[dict[str, Any], dict[str, Any]]:
    """One functional SGD or RMSProp step (``torch.optim`` semantics)."""
    torch = require_torch(WHAT)
    if local.optimizer == "sgd":
        return {n: p - local.lr * g for (n, p), g in zip(params.items(), grads, strict=True)}, \
            squares
    new_params, new_squares = {}, {}
    for (name, p), g in zip(params.items(), grads, strict=True):
        square = local.alpha * squares[name] + (1 - local.alpha) * g * g
        positive = square > 0
        # sqrt has an infinite derivative at 0: take it only where the average is positive
        root = torch.where(positive, torch.sqrt(torch.where(positive, square, 1.0)), 0.0)
        new_params[name] = p - local.lr * g / (root + local.eps)
        new_squares[name] = square
    return new_params, new_squares


def local_training(model: Any, start: np.ndarray, inputs: np.ndarray, labels: np.ndarray,
                   local: LocalTraining, *, lengths: np.ndarray | None = None) -> np.ndarray:
    """The weights a client returns after training from ``start`` on its data (fixed order).

    ``start`` and the result are flattened in :func:`fedsec.nn.flatten`'s layout; the model
    is not changed.
    """
    torch = require_torch(WHAT)
    params, buffers = _start_parameters(model, start)
    dtype = next(iter(params.values())).dtype
    x = torch.as_tensor(np.array(inputs), dtype=dtype)
    n_classes = int(call(model, params, buffers, x[:1], length_tensor(
        None if lengths is None else np.asarray(lengths)[:1])).shape[-1])
    y = torch.as_tensor(np.array(labels), dtype=torch.long)
    probs = torch.nn.functional.one_hot(y, n_classes).to(dtype)
    end = simulate(model, params, buffers, x, probs, local, lengths=length_tensor(lengths),
                   create_graph=False)
    return np.concatenate([p.detach().numpy().astype(np.float64).ravel() for p in end.values()])


def invert_fedavg(model: Any, start: np.ndarray, end: np.ndarray, *, local: LocalTraining,
                  n_samples: int, input_shape: Sequence[int], n_classes: int,
                  method: str = "ig", labels: Sequence[int] | np.ndarray | None = None,
                  steps: int = 500, lr: float | None = None, tv_weight: float = 0.0,
                  tv_axes: Sequence[int] = (), onehot_groups: Sequence[Sequence[int]] = (),
                  signed: bool = False, bounds: tuple[float, float] | None = None,
                  lengths: np.ndarray | None = None, init: np.ndarray | None = None,
                  restarts: int = 1, epoch_prior: float = 0.0, seed: int = 0,
                  on_step: Callable[[int], None] | None = None) -> Inversion:
    """Reconstruct a client's data from the weights it returned after local training.

    Parameters
    ----------
    model : torch.nn.Module
        The architecture (its own weights are not used, nor changed).
    start, end : numpy.ndarray
        The global weights sent to the client and the weights it returned, both flattened
        in :func:`fedsec.nn.flatten`'s layout.
    local : LocalTraining
        The client's epochs, batch size, learning rate and optimizer.
    n_samples, input_shape, n_classes
        How many samples the client trained on, one sample's shape, the number of classes.
    method : {"ig", "dlg"}
        ``ig``: ``1 - cosine`` between simulated and observed updates, Adam with step decay;
        ``dlg``: squared L2 distance divided by the observed update's squared norm, L-BFGS.
    labels, steps, lr, tv_weight, tv_axes, onehot_groups, signed, bounds, lengths, init
        As in :func:`attacks.inversion.maths.invert_gradient`; ``labels`` may come from
        :func:`label_counts_from_bias_update` (``np.repeat(np.arange(C), counts)``).
    restarts, seed
        Random starts (the lowest objective is kept, ``init`` among the starts when given)
        and the seed of their draws.
    epoch_prior : float
        0: one dummy set read by every epoch in a fixed batch order. Above 0 (with more than
        one epoch): one dummy set per epoch, the same labels in the same order in each,
        tied by Dimitrov et al.'s epoch-order-invariant prior with this weight and merged
        at the end (:mod:`.epoch_prior`).

    Returns
    -------
    Inversion
        The kept start's reconstruction (``n_samples`` rows), with its convergence record.

    Notes
    -----
    Without the epoch prior the simulation uses a fixed batch order (see the module notes):
    exact when ``local.batch_size >= n_samples``.
    """
    torch = require_torch(WHAT)
    check_options(method, tv_axes, len(input_shape))
    if epoch_prior < 0:
        raise ValidationError(f"The epoch prior's weight must be >= 0; got {epoch_prior}.")
    with deterministic(seed) as generator:
        params, buffers = _start_parameters(model, start)
        names = list(params)
        observed = unflatten(np.asarray(end, dtype=np.float64)
                             - np.asarray(start, dtype=np.float64), layout_of(model))
        target = [torch.as_tensor(observed[name], dtype=params[name].dtype) for name in names]
        scale = float(sum((t * t).sum() for t in target)) or 1.0
        copies = local.epochs if epoch_prior > 0 and local.epochs > 1 else 1
        tiled = None if labels is None else np.tile(np.asarray(labels), copies)
        rows = None if lengths is None else np.tile(np.asarray(lengths), copies)
        extra = length_tensor(rows)

        def create(begin: np.ndarray | None) -> Dummy:
            first = None if begin is None else np.concatenate([np.asarray(begin)] * copies)
            return Dummy.create(n_samples * copies, input_shape, n_classes, tiled,
                                onehot_groups, rows, first, generator, target[0].dtype)

        def objective(dummy: Dummy) -> Any:
            x = dummy.inputs()
            final = simulate(model, params, buffers, x, dummy.probs(), local, lengths=extra,
                             per_epoch=copies > 1)
            update = [final[name] - params[name] for name in names]
            gap = distance(update, target, method)
            if method == "dlg":
                gap = gap / scale
            if copies > 1:
                gap = gap + epoch_prior * order_invariant_prior(x, copies)
            return gap + tv_weight * total_variation(x, tv_axes)

        result = search(create, objective, restarts=restarts, init=init, method=method,
                        steps=steps, lr=lr, signed=signed, bounds=bounds, on_step=on_step)
    if copies == 1:
        return result
    inputs, probs = merge_epochs(result.inputs, result.label_probs, copies)
    return replace(result, inputs=inputs, label_probs=probs)


def _start_parameters(model: Any, start: np.ndarray) -> tuple[dict[str, Any], dict[str, Any]]:
    """The model's parameters set to the flattened ``start`` (copies), and its buffers."""
    torch = require_torch(WHAT)
    params, buffers = fixed_parameters(model)
    named = unflatten(np.asarray(start, dtype=np.float64), layout_of(model))
    with torch.no_grad():
        for name, p in params.items():
            p.copy_(torch.as_tensor(np.array(named[name]), dtype=p.dtype))
    return params, buffers
