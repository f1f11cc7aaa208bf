"""Dimitrov et al.'s epoch-order-invariant prior: one dummy set per local epoch, tied as sets.

Dimitrov, Balunović, Konstantinov, Vechev, "Data Leakage in Federated Averaging", TMLR 2022,
section 4. A client reshuffles its data every epoch with a private generator, so a simulation
that reuses one dummy set in one fixed batch order across epochs pairs samples that never
shared a batch. The paper instead gives every epoch its own dummy set (epoch ``e``'s batches
are consecutive slices of set ``e``) and ties the sets with a prior that does not depend on
their order: the squared distance between the sets' means, averaged over pairs of epochs
(:func:`order_invariant_prior`; their ``l2_mean`` prior). After the optimisation the sets
are matched to the first epoch's (Hungarian, squared distance) and averaged
(:func:`merge_epochs`).

:func:`order_invariant_prior` is torch (differentiable, imported lazily by the caller's
tensors); :func:`merge_epochs` is numpy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from fedsec.errors import ValidationError


def order_invariant_prior(x: Any, epochs: int) -> Any:
    """Mean over pairs of epochs of the mean squared difference of their sets' means.

    ``x`` stacks the epochs' dummy sets, ``(epochs * n, *shape)``, epoch ``e`` in rows
    ``e n .. (e + 1) n``. Invariant to the order of the samples within each epoch.

    Examples
    --------
    >>> import torch
    >>> x = torch.tensor([[0.0], [2.0], [2.0], [0.0], [1.0], [5.0]])
    >>> round(float(order_invariant_prior(x, 3)), 4)  # means 1, 1, 3: (0 + 4 + 4) / 3
    2.6667
    """
    if epochs < 2:
        return x.new_zeros(())
    means = x.reshape(epochs, -1, *x.shape[1:]).mean(dim=1)
    total = x.new_zeros(())
    for a in range(epochs):
        for b in range(a + 1, epochs):
            total = total + ((means[a] - means[b]) ** 2).mean()
    return total / (epochs * (epochs - 1) / 2)


def merge_epochs(inputs: np.ndarray, label_probs: np.ndarray, epochs: int
                 ) -> tuple[np.ndarray, np.ndarray]:
    """One set from the epochs' sets: each matched to the first epoch's, then averaged.

    ``inputs`` ``(epochs * n, *shape)`` and ``label_probs`` ``(epochs * n, classes)`` stack
    the epochs as in :func:`order_invariant_prior`. Each later epoch's samples are assigned to
    the first epoch's by the Hungarian method on squared distance; inputs and label
    probabilities of matched samples are averaged.

    Examples
    --------
    >>> x = np.array([[0.0], [10.0], [10.2], [0.2]])
    >>> p = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0]])
    >>> merged, probs = merge_epochs(x, p, 2)
    >>> merged.ravel().tolist(), probs.argmax(1).tolist()
    ([0.1, 10.1], [0, 1])
    """
    if epochs < 1 or len(inputs) % epochs or len(label_probs) != len(inputs):
        raise ValidationError(f"{len(inputs)} samples and {len(label_probs)} label rows do "
                              f"not split into {epochs} equal epochs.")
    n = len(inputs) // epochs
    sets = np.asarray(inputs, dtype=np.float64).reshape(epochs, n, -1)
    probs = np.asarray(label_probs, dtype=np.float64).reshape(epochs, n, -1)
    merged_x, merged_p = [sets[0]], [probs[0]]
    for e in range(1, epochs):
        cost = ((sets[0][:, None, :] - sets[e][None, :, :]) ** 2).sum(axis=2)
        rows, cols = linear_sum_assignment(cost)
        order = cols[np.argsort(rows)]
        merged_x.append(sets[e][order])
        merged_p.append(probs[e][order])
    shape = np.shape(inputs)[1:]
    return (np.mean(merged_x, axis=0).reshape(n, *shape),
            np.mean(merged_p, axis=0))
