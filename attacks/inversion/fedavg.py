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
sees the whole batch and the order question disappears; otherwise the reconstruction is exact
only when the client's order matched, and the paper's epoch-order-invariant prior (one dummy
set per epoch, tied together) is not implemented here.

:func:`label_counts_from_bias_update` estimates how many samples of each class a client held
from the update of the last layer's bias (after Geng et al., "Towards General Deep Leakage in
Federated Learning", 2021, whose count estimate Dimitrov et al. use).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from fedsec.attacks.inversion.dummy import Dummy, Inversion, length_tensor, optimise
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
           "simulate"]


def simulate(model: Any, params: Mapping[str, Any], buffers: Mapping[str, Any], x: Any,
             probs: Any, local: LocalTraining, *, lengths: Any = None,
             create_graph: bool = True) -> dict[str, Any]:
    """The parameters after the local run on ``(x, probs)``, every step kept differentiable.

    ``params`` are the starting weights (tensors requiring grad); ``probs`` are label
    probabilities (one-hot for hard labels). Batches follow :meth:`LocalTraining.batches`.
    """
    torch = require_torch(WHAT)
    current = dict(params)
    squares = {name: torch.zeros_like(p) for name, p in current.items()}
    for _ in range(local.epochs):
        for batch in local.batches(int(x.shape[0])):
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


def label_counts_from_bias_update(delta_bias: np.ndarray, *, n_samples: int,
                                  local: LocalTraining,
                                  mean_probs: np.ndarray | None = None) -> np.ndarray:
    """How many samples of each class a client trained on, from its last-layer bias update.

    With SGD, each epoch moves the bias by ``-lr sum_k mean_{i in B_k} (p_i - y_i)``; counting
    every sample with the average weight ``n_batches / n`` and taking the predictions ``p`` as
    constant (their mean ``mean_probs``, uniform by default; e.g. the average prediction of
    the start and end models on dummy inputs) gives ``counts ~ n mean_probs + delta_bias
    n / (lr epochs n_batches)``. The estimate is rounded to non-negative integers that sum to
    ``n_samples`` (largest remainders). RMSProp normalises the step, so it is refused.

    Examples
    --------
    >>> local = LocalTraining(epochs=1, batch_size=4, lr=0.1)
    >>> delta = -0.1 * (np.full(3, 4 / 3) - np.array([2, 1, 1])) / 4
    >>> label_counts_from_bias_update(delta, n_samples=4, local=local,
    ...                               mean_probs=np.full(3, 1 / 3)).tolist()
    [2, 1, 1]
    """
    if local.optimizer != "sgd":
        raise ValidationError("Label counts from the bias update need plain SGD.")
    delta = np.asarray(delta_bias, dtype=np.float64)
    probs = (np.full(delta.size, 1.0 / delta.size) if mean_probs is None
             else np.asarray(mean_probs, dtype=np.float64))
    scale = n_samples / (local.lr * local.epochs * len(local.batches(n_samples)))
    estimate = np.maximum(n_samples * probs + delta * scale, 0.0)
    if estimate.sum() > 0:
        estimate *= n_samples / estimate.sum()
    counts = np.floor(estimate).astype(np.int64)
    remainder = estimate - counts
    for c in np.argsort(-remainder, kind="stable")[:n_samples - int(counts.sum())]:
        counts[c] += 1
    return counts


def invert_fedavg(model: Any, start: np.ndarray, end: np.ndarray, *, local: LocalTraining,
                  n_samples: int, input_shape: Sequence[int], n_classes: int,
                  method: str = "ig", labels: Sequence[int] | np.ndarray | None = None,
                  steps: int = 500, lr: float | None = None, tv_weight: float = 0.0,
                  tv_axes: Sequence[int] = (), onehot_groups: Sequence[Sequence[int]] = (),
                  signed: bool = False, bounds: tuple[float, float] | None = None,
                  lengths: np.ndarray | None = None, init: np.ndarray | None = None,
                  seed: int = 0, on_step: Callable[[int], None] | None = None) -> Inversion:
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
    labels, steps, lr, tv_weight, tv_axes, onehot_groups, signed, bounds, lengths, init, seed
        As in :func:`attacks.inversion.maths.invert_gradient`; ``labels`` may come from
        :func:`label_counts_from_bias_update` (``np.repeat(np.arange(C), counts)``).

    Notes
    -----
    The simulation uses a fixed batch order (see the module notes): exact when
    ``local.batch_size >= n_samples``.
    """
    torch = require_torch(WHAT)
    check_options(method, tv_axes, len(input_shape))
    with deterministic(seed) as generator:
        params, buffers = _start_parameters(model, start)
        names = list(params)
        observed = unflatten(np.asarray(end, dtype=np.float64)
                             - np.asarray(start, dtype=np.float64), layout_of(model))
        target = [torch.as_tensor(observed[name], dtype=params[name].dtype) for name in names]
        scale = float(sum((t * t).sum() for t in target)) or 1.0
        dummy = Dummy.create(n_samples, input_shape, n_classes, labels, onehot_groups,
                             lengths, init, generator, target[0].dtype)
        extra = length_tensor(lengths)

        def objective() -> Any:
            x = dummy.inputs()
            final = simulate(model, params, buffers, x, dummy.probs(), local, lengths=extra)
            update = [final[name] - params[name] for name in names]
            gap = distance(update, target, method)
            if method == "dlg":
                gap = gap / scale
            return gap + tv_weight * total_variation(x, tv_axes)

        best, done = optimise(dummy, objective, method=method, steps=steps, lr=lr,
                              signed=signed, bounds=bounds, on_step=on_step)
    return dummy.result(best, done, bounds)


def _start_parameters(model: Any, start: np.ndarray) -> tuple[dict[str, Any], dict[str, Any]]:
    """The model's parameters set to the flattened ``start`` (copies), and its buffers."""
    torch = require_torch(WHAT)
    params, buffers = fixed_parameters(model)
    named = unflatten(np.asarray(start, dtype=np.float64), layout_of(model))
    with torch.no_grad():
        for name, p in params.items():
            p.copy_(torch.as_tensor(np.array(named[name]), dtype=p.dtype))
    return params, buffers
