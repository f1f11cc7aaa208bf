"""How many samples of each class a client trained on, from its update of the last layer's bias.

Geng, Mou, Li, Wang, Ren, Lu, Wang, "Towards General Deep Leakage in Federated Learning",
2021 (the count estimate Dimitrov et al., "Data Leakage in Federated Averaging", TMLR 2022,
use for FedAvg). Under softmax cross-entropy the gradient of the output bias over a batch is
``mean_i (p_i - y_i)``: the label counts minus the batch's summed predictions. The
predictions ``p_i`` are those of the client's private inputs, which the attacker does not
see; Geng et al. estimate their mean by feeding dummy inputs through the known model
(:func:`mean_prediction`, averaged over the weights at the start and the end of the local
run, as the predictions drift while the client trains). With that mean the counts follow in
closed form (:func:`label_counts_from_bias_update`); a uniform guess is exact only for a
model whose predictions are uniform.

torch is imported inside :func:`mean_prediction` only; the rest is numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from fedsec.errors import ValidationError
from fedsec.nn import LocalTraining, deterministic, layout_of, require_torch, unflatten

WHAT = "label counts from a bias update"
N_DUMMY = 256
"""Dummy inputs the mean prediction is estimated on (standard normal draws)."""


def label_counts_from_bias_update(delta_bias: np.ndarray, *, n_samples: int,
                                  local: LocalTraining,
                                  mean_probs: np.ndarray | None = None) -> np.ndarray:
    """How many samples of each class a client trained on, from its last-layer bias update.

    With SGD, each epoch moves the bias by ``-lr sum_k mean_{i in B_k} (p_i - y_i)``; counting
    every sample with the average weight ``n_batches / n`` and taking the predictions ``p`` as
    constant (their mean ``mean_probs``, uniform by default; :func:`mean_prediction`
    estimates it) gives ``counts ~ n mean_probs + delta_bias n / (lr epochs n_batches)``. The
    estimate is rounded to non-negative integers that sum to ``n_samples`` (largest
    remainders). RMSProp normalises the step, so it is refused.

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
    if probs.shape != delta.shape:
        raise ValidationError(f"A mean prediction of shape {probs.shape} does not fit a bias "
                              f"update of shape {delta.shape}.")
    scale = n_samples / (local.lr * local.epochs * len(local.batches(n_samples)))
    estimate = np.maximum(n_samples * probs + delta * scale, 0.0)
    if estimate.sum() > 0:
        estimate *= n_samples / estimate.sum()
    counts = np.floor(estimate).astype(np.int64)
    remainder = estimate - counts
    for c in np.argsort(-remainder, kind="stable")[:n_samples - int(counts.sum())]:
        counts[c] += 1
    return counts


def mean_prediction(model: Any, weights: Sequence[np.ndarray], *, input_shape: Sequence[int],
                    n_dummy: int = N_DUMMY, lengths: np.ndarray | None = None,
                    seed: int = 0) -> np.ndarray:
    """The model's average softmax output on dummy inputs, averaged over several weights.

    Geng et al.'s estimate of a client's mean prediction: ``n_dummy`` standard normal inputs
    of ``input_shape`` (one sample's shape as the model reads it), read by ``model`` at each
    of ``weights`` (flattened in :func:`fedsec.nn.flatten`'s layout; e.g. the global weights
    the client started from and those it returned). ``lengths`` (one per dummy input, or
    None) is passed to the model as its second argument. The model is not changed.

    Examples
    --------
    >>> import torch
    >>> from fedsec.nn import flatten
    >>> model = torch.nn.Linear(2, 3)
    >>> with torch.no_grad():
    ...     _ = model.weight.zero_(), model.bias.copy_(torch.tensor([0.0, 0.0, 1.0]))
    >>> mean_prediction(model, [flatten(model)], input_shape=(2,)).round(3).tolist()
    [0.212, 0.212, 0.576]
    """
    torch = require_torch(WHAT)
    if n_dummy < 1 or not weights:
        raise ValidationError("A mean prediction needs n_dummy >= 1 and at least one set of "
                              "weights.")
    from torch.func import functional_call

    layout = layout_of(model)
    buffers = {name: b.detach().clone() for name, b in model.named_buffers()}
    dtype = next(model.parameters()).dtype
    means = []
    with deterministic(seed) as generator, torch.no_grad():
        x = torch.randn((int(n_dummy), *(int(s) for s in input_shape)), generator=generator,
                        dtype=dtype)
        args = (x,) if lengths is None else (x, torch.as_tensor(np.array(lengths)))
        for flat in weights:
            params = {name: torch.as_tensor(np.array(value), dtype=dtype)
                      for name, value in unflatten(np.asarray(flat, dtype=np.float64),
                                                   layout).items()}
            logits = functional_call(model, {**params, **buffers}, args)
            means.append(torch.softmax(logits, dim=-1).mean(dim=0).numpy())
    return np.mean(means, axis=0).astype(np.float64)
