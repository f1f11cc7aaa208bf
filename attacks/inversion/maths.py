"""Gradient inversion: the inputs behind a gradient a client computed on its private batch.

A client that sends the gradient of its loss on a batch (or, in FedAvg, weights that moved by
that gradient) sends a function of its inputs. Three results are implemented here:

* iDLG (Zhao, Mopuri, Bilen, "iDLG: Improved Deep Leakage from Gradients", 2020): for one
  sample under softmax cross-entropy, the gradient of the last linear layer's weight is
  ``(p - y) h^T``; its rows are multiples of one vector ``h`` and only the true class has a
  negative multiple, so the label is read off exactly (:func:`idlg_label`).
* DLG (Zhu, Liu, Han, "Deep Leakage from Gradients", NeurIPS 2019): optimise dummy inputs and
  soft labels so that their gradient matches the observed one in squared L2 distance, with
  L-BFGS (``method="dlg"`` of :func:`invert_gradient`).
* Inverting Gradients (Geiping, Bauermeister, Dröge, Moeller, NeurIPS 2020): cosine distance
  between gradients plus a total-variation prior, Adam with a step decay at 3/8, 5/8 and 7/8
  of the budget, optionally on the sign of the gradient (``method="ig"``).

The loss is the mean softmax cross-entropy over the batch (PyTorch's default reduction), the
model is read through :func:`torch.func.functional_call` with copies of its parameters and
buffers, so the module passed in is never changed. A model in training mode is run as it is;
dropout then draws from torch's global generator, so pass such a model in ``eval()`` mode.
torch is imported inside the functions only; inputs and outputs are numpy arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from fedsec.attacks.inversion.dummy import Dummy, Inversion, length_tensor, search
from fedsec.errors import ValidationError
from fedsec.nn import deterministic, layout_of, require_torch, unflatten

WHAT = "gradient inversion"
METHODS = ("dlg", "ig")


def idlg_label(weight_grad: np.ndarray, bias_grad: np.ndarray | None = None) -> int:
    """The label of one sample from its cross-entropy gradient of the last linear layer (iDLG).

    Row ``i`` of the weight gradient is ``(p_i - y_i) h`` (``h`` the layer's input): only the
    true class has a negative coefficient. With ``bias_grad`` (``p - y``) the label is its
    negative entry. Otherwise the rows' coefficients are read, up to one common sign, as inner
    products with the longest row; the true class is the row whose sign differs from every
    other row's. When that is ambiguous (two classes, or only two non-zero rows) the rule of
    the iDLG paper decides: the row whose entries sum to a negative number, exact when ``h``
    is non-negative (ReLU or sigmoid activations).

    Parameters
    ----------
    weight_grad : numpy.ndarray
        ``(n_classes, hidden)`` gradient of the last layer's weight for a batch of one.
    bias_grad : numpy.ndarray, optional
        ``(n_classes,)`` gradient of that layer's bias.

    Examples
    --------
    >>> h = np.array([0.5, -1.0, 2.0])
    >>> p, y = np.array([0.2, 0.7, 0.1]), np.array([0.0, 1.0, 0.0])
    >>> idlg_label(np.outer(p - y, h))
    1
    """
    if bias_grad is not None:
        return int(np.argmin(np.asarray(bias_grad, dtype=np.float64)))
    W = np.asarray(weight_grad, dtype=np.float64)
    if W.ndim != 2 or W.shape[0] < 2:
        raise ValidationError(f"iDLG needs a (classes, hidden) weight gradient, not {W.shape}.")
    reference = W[int(np.argmax(np.linalg.norm(W, axis=1)))]
    signs = np.sign(W @ reference)
    positive, negative = np.flatnonzero(signs > 0), np.flatnonzero(signs < 0)
    if positive.size == 1 and negative.size > 1:
        return int(positive[0])
    if negative.size == 1 and positive.size > 1:
        return int(negative[0])
    return int(np.argmin(W.sum(axis=1)))


def batch_gradient(model: Any, inputs: np.ndarray, labels: np.ndarray, *,
                   lengths: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The gradient a client sends: mean cross-entropy of ``model`` on a batch, per parameter.

    ``lengths`` (optional) is passed to the model as its second argument. The model is not
    changed (its parameters are copied).
    """
    torch = require_torch(WHAT)
    params, buffers = fixed_parameters(model)
    x = torch.as_tensor(np.array(inputs), dtype=next(iter(params.values())).dtype)
    y = torch.as_tensor(np.array(labels), dtype=torch.long)
    logits = call(model, params, buffers, x, length_tensor(lengths))
    grads = torch.autograd.grad(torch.nn.functional.cross_entropy(logits, y),
                                list(params.values()))
    return {name: g.detach().numpy().astype(np.float64)
            for name, g in zip(params, grads, strict=True)}


def invert_gradient(model: Any,
                    target_grads: Mapping[str, np.ndarray] | Sequence[np.ndarray] | np.ndarray,
                    *, input_shape: Sequence[int], n_samples: int, n_classes: int,
                    method: str = "dlg", labels: Sequence[int] | np.ndarray | None = None,
                    steps: int = 300, lr: float | None = None, tv_weight: float = 0.0,
                    tv_axes: Sequence[int] = (), onehot_groups: Sequence[Sequence[int]] = (),
                    signed: bool = False, bounds: tuple[float, float] | None = None,
                    lengths: np.ndarray | None = None, init: np.ndarray | None = None,
                    restarts: int = 1, seed: int = 0,
                    on_step: Callable[[int], None] | None = None) -> Inversion:
    """Reconstruct a batch from its gradient by gradient matching (DLG or Inverting Gradients).

    Parameters
    ----------
    model : torch.nn.Module
        The model the client differentiated (its current weights); left unchanged.
    target_grads : mapping or sequence of numpy.ndarray, or a flattened vector
        The observed gradient: by parameter name (a subset of the parameters matches only
        those), in parameter order, or as one vector in :func:`fedsec.nn.flatten`'s layout.
    input_shape : sequence of int
        One sample's shape as the model reads it, e.g. ``(28, 28)`` or ``(T, c)``.
    n_samples, n_classes : int
        The batch size to reconstruct and the number of classes.
    method : {"dlg", "ig"}
        ``dlg``: squared L2 distance, L-BFGS (strong Wolfe line search, up to 20 iterations
        a step; it stops early once it no longer moves), ``lr`` 1 by default.
        ``ig``: ``1 - cosine`` over all matched parameters, Adam (``lr`` 0.1 by default)
        divided by 10 at 3/8, 5/8 and 7/8 of ``steps``.
    labels : sequence of int, optional
        Fixed labels (e.g. from :func:`idlg_label`); otherwise soft labels are optimised
        jointly, as softmax of free logits.
    steps, lr : int, float
        Optimiser steps and learning rate.
    tv_weight, tv_axes : float, sequence of int
        Weight of the total-variation prior and the axes it runs along (mean absolute
        difference of neighbours, summed over the axes), numbered as in the batch
        ``(n_samples, *input_shape)``: ``(1, 2)`` for images ``(n, H, W)``, ``(1,)`` for
        the time axis of sequences ``(n, T, c)``; the batch axis 0 is refused.
    onehot_groups : sequence of sequences of int
        Channels (indices on the last axis) that hold a one-hot code: each group is
        parameterised by logits and read through a softmax (a continuous relaxation).
    signed : bool
        With ``ig``, step on the sign of the gradient (Geiping et al.'s choice for images).
    bounds : (low, high), optional
        With ``ig``, clip the free channels into this box after every step; the returned
        inputs are clipped with either method.
    lengths : numpy.ndarray, optional
        Sequence lengths passed to the model as its second argument; steps past a length are
        padding and held at zero.
    init : numpy.ndarray, optional
        The prior start (e.g. a prior mean), tried besides the random starts.
    restarts : int
        Random starts (seeded standard normal draws, and label logits when the labels are
        free); the start with the lowest objective is kept
        (:func:`~fedsec.attacks.inversion.dummy.search`). 0 needs ``init``.
    seed : int
        Seeds the starting points; the result is a function of the arguments.

    Returns
    -------
    Inversion
        The kept start's reconstruction, with its ``convergence`` record.
    """
    torch = require_torch(WHAT)
    check_options(method, tv_axes, len(input_shape))
    with deterministic(seed) as generator:
        params, buffers = fixed_parameters(model)
        targets = target_tensors(model, params, target_grads)
        matched = [params[name] for name in targets]
        dtype = next(iter(params.values())).dtype
        extra = length_tensor(lengths)
        target = list(targets.values())

        def create(start: np.ndarray | None) -> Dummy:
            return Dummy.create(n_samples, input_shape, n_classes, labels, onehot_groups,
                                lengths, start, generator, dtype)

        def objective(dummy: Dummy) -> Any:
            x = dummy.inputs()
            loss = soft_cross_entropy(call(model, params, buffers, x, extra), dummy.probs())
            grads = torch.autograd.grad(loss, matched, create_graph=True)
            return distance(list(grads), target, method) + tv_weight * total_variation(
                x, tv_axes)

        return search(create, objective, restarts=restarts, init=init, method=method,
                      steps=steps, lr=lr, signed=signed, bounds=bounds, on_step=on_step)


def check_options(method: str, tv_axes: Sequence[int], sample_dims: int) -> None:
    """Refuse a method other than ``dlg`` and ``ig``, and TV axes outside ``1..sample_dims``."""
    if method not in METHODS:
        raise ValidationError(f"Unknown inversion method {method!r}; use one of {METHODS}.")
    if any(not 1 <= int(a) <= sample_dims for a in tv_axes):
        raise ValidationError(f"TV axes {tuple(tv_axes)} must be axes 1 to {sample_dims} of "
                              "the batch (axis 0 counts samples).")


def fixed_parameters(model: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Detached copies of ``model``'s parameters (requiring grad) and buffers."""
    params = {name: p.detach().clone().requires_grad_(True)
              for name, p in model.named_parameters()}
    buffers = {name: b.detach().clone() for name, b in model.named_buffers()}
    if not params:
        raise ValidationError("The model has no parameters to differentiate.")
    return params, buffers


def call(model: Any, params: Mapping[str, Any], buffers: Mapping[str, Any], x: Any,
         lengths: Any = None) -> Any:
    """``model(x[, lengths])`` with the given parameters and buffers in place of its own."""
    torch = require_torch(WHAT)
    args = (x,) if lengths is None else (x, lengths)
    return torch.func.functional_call(model, {**params, **buffers}, args)


def soft_cross_entropy(logits: Any, probs: Any) -> Any:
    """Mean over the batch of ``-sum_c probs_c log softmax(logits)_c``."""
    torch = require_torch(WHAT)
    return -(probs * torch.log_softmax(logits, dim=-1)).sum(dim=-1).mean()


def distance(grads: Sequence[Any], targets: Sequence[Any], method: str) -> Any:
    """Squared L2 distance (``dlg``) or ``1 - cosine`` (``ig``) of two lists of tensors."""
    if method == "dlg":
        return sum(((g - t) ** 2).sum() for g, t in zip(grads, targets, strict=True))
    dot = sum((g * t).sum() for g, t in zip(grads, targets, strict=True))
    norm_g = sum((g * g).sum() for g in grads)
    norm_t = sum((t * t).sum() for t in targets)
    return 1 - dot / ((norm_g * norm_t).sqrt() + 1e-30)


def total_variation(x: Any, axes: Sequence[int]) -> Any:
    """Sum over ``axes`` (of the batch ``x``, not 0) of the mean absolute neighbour difference.

    Geiping et al.'s prior: ``mean |x[t+1] - x[t]|`` along each axis (anisotropic, L1).
    """
    check_options("dlg", axes, x.ndim - 1)
    total = x.new_zeros(())
    for axis in axes:
        dim = int(axis)
        if x.shape[dim] > 1:
            total = total + (x.narrow(dim, 1, x.shape[dim] - 1)
                             - x.narrow(dim, 0, x.shape[dim] - 1)).abs().mean()
    return total


def target_tensors(model: Any, params: Mapping[str, Any],
                   target: Mapping[str, np.ndarray] | Sequence[np.ndarray] | np.ndarray
                   ) -> dict[str, Any]:
    """The observed gradient as tensors by parameter name, shapes checked."""
    torch = require_torch(WHAT)
    if isinstance(target, np.ndarray) and target.ndim == 1:
        named: Mapping[str, Any] = unflatten(target, layout_of(model))
    elif isinstance(target, Mapping):
        named = target
    else:
        named = dict(zip(params, target, strict=True))
    out = {}
    for name, value in named.items():
        if name not in params:
            raise ValidationError(f"The model has no parameter {name!r}.")
        array = np.array(value)
        if tuple(array.shape) != tuple(params[name].shape):
            raise ValidationError(f"A gradient of shape {array.shape} does not fit parameter "
                                  f"{name!r} of shape {tuple(params[name].shape)}.")
        out[name] = torch.as_tensor(array, dtype=params[name].dtype)
    return out


