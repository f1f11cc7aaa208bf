"""The training parameters the inverse network and the MLP decoder share.

Both train an MLP from embeddings to inputs on a colluder's own pairs and stop on held-out
error (:func:`~fedsec.attacks.fedgraph.inversion.train_early_stopped`); each attack's
``Params`` extends :class:`DecoderTraining`. Refusals name the registered attack when
:func:`fedsec.params.build_params` builds the parameters, the class otherwise.

Examples
--------
>>> DecoderTraining(epochs=10).patience
100
>>> DecoderTraining(validation=0.95)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
fedsec.errors.ValidationError: The 'validation' parameter of DecoderTraining must be ... <= 0.9...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fedsec.declare import Declared, Float, Int
from fedsec.interfaces import AttackSeed


@dataclass(frozen=True, kw_only=True)
class DecoderTraining(Declared):
    """Capacity and early-stopped Adam training of a decoder network."""

    hidden: Annotated[int, Int(min=1)] = 512
    """Units in each of the network's two hidden ReLU layers."""
    epochs: Annotated[int, Int(min=1)] = 3000
    """Epochs of Adam training at most: a cap, training stops earlier once the held-out error
    stops improving (``patience``)."""
    patience: Annotated[int, Int(min=1)] = 100
    """Epochs without a new lowest held-out error after which training stops."""
    validation: Annotated[float, Float(min=0.0, min_inclusive=False, max=0.9)] = 0.2
    """Share of the pairs held out to decide when training stops (the network of the epoch
    with the lowest held-out error is kept)."""
    lr: Annotated[float, Float(min=0.0, min_inclusive=False)] = 0.001
    """Adam learning rate."""
    batch_size: Annotated[int, Int(min=1)] = 64
    """Mini-batch size of the training."""
    max_rows: Annotated[int, Int(min=1)] = 200
    """Test embeddings inverted at most per client (the first ones sent)."""
    seed: AttackSeed = None
    """Seed of the held-out pairs (or folds), the network's initial weights and batch order (each
    client adds its index); None: the run's public seed (0 when unknown)."""
