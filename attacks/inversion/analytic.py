"""One training row read off a fully connected first layer's gradient, in closed form.

For a first layer ``z = W x + b`` and one row ``x``, the gradient of any loss is
``dL/dW = (dL/dz) x^T`` and ``dL/db = dL/dz``: every row ``i`` of ``dL/dW`` with a non-zero
``dL/db_i`` equals ``dL/db_i x``, so ``x = (dL/dW)_i / (dL/db)_i`` exactly (Phong, Aono,
Hayashi, Wang, Moriai, "Privacy-Preserving Deep Learning via Additively Homomorphic
Encryption", IEEE TIFS 2018; the observation Geiping et al., "Inverting Gradients", NeurIPS
2020, build on). A common scale of the whole update (a clipped update, a learning rate)
cancels. For a batch the ratio mixes the rows; it is a start for gradient matching, not an
answer.
"""

from __future__ import annotations

import numpy as np

from fedsec.errors import ValidationError


def first_layer_row(grad_weight: np.ndarray, grad_bias: np.ndarray) -> np.ndarray | None:
    """The input row a one-row gradient of a fully connected layer was computed on, from the
    unit with the largest bias gradient; None when every bias gradient is zero.

    Examples
    --------
    >>> x = np.array([0.2, -1.0, 3.0])
    >>> delta = np.array([0.5, 0.0, -2.0])           # dL/dz of three units
    >>> first_layer_row(np.outer(delta, x) * 0.01, delta * 0.01).tolist()  # a scaled update
    [0.2, -1.0, 3.0]
    >>> first_layer_row(np.zeros((2, 3)), np.zeros(2)) is None
    True
    """
    weight = np.asarray(grad_weight, dtype=np.float64)
    bias = np.asarray(grad_bias, dtype=np.float64)
    if weight.ndim != 2 or bias.shape != (weight.shape[0],):
        raise ValidationError(f"A first layer's gradient is a (units, inputs) matrix and a "
                              f"(units,) bias; got {weight.shape} and {bias.shape}.")
    unit = int(np.argmax(np.abs(bias)))
    if bias[unit] == 0.0:
        return None
    return weight[unit] / bias[unit]
