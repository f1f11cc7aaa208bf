"""The training parameters the inverse network and the MLP decoder share.

Both train an MLP from embeddings to inputs on a colluder's own pairs and stop on held-out
error (:func:`~fedsec.attacks.fedgraph.inversion.train_early_stopped`); each attack's
``Params`` extends :class:`DecoderTraining` and names itself in ``OWNER`` for its errors.

Examples
--------
>>> DecoderTraining(epochs=10).patience
100
>>> DecoderTraining(validation=0.95)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
fedsec.errors.ValidationError: The 'validation' parameter of a decoder must be ... <= 0.9...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from fedsec.validation import check_float, check_int


@dataclass(frozen=True, kw_only=True)
class DecoderTraining:
    """Capacity and early-stopped Adam training of a decoder network."""

    OWNER: ClassVar[str] = "a decoder"

    hidden: int = 512
    """Units in each of the network's two hidden ReLU layers."""
    epochs: int = 3000
    """Epochs of Adam training at most: a cap, training stops earlier once the held-out error
    stops improving (``patience``)."""
    patience: int = 100
    """Epochs without a new lowest held-out error after which training stops."""
    validation: float = 0.2
    """Share of the pairs held out to decide when training stops (the network of the epoch
    with the lowest held-out error is kept)."""
    lr: float = 0.001
    """Adam learning rate."""
    batch_size: int = 64
    """Mini-batch size of the training."""
    max_rows: int = 200
    """Test embeddings inverted at most per client (the first ones sent)."""
    seed: int = 0
    """Seed of the held-out pairs (or folds), the network's initial weights and batch order (each
    client adds its index)."""

    def __post_init__(self) -> None:
        for name in ("hidden", "epochs", "patience", "batch_size", "max_rows"):
            check_int(getattr(self, name), owner=self.OWNER, name=name, min_value=1)
        check_int(self.seed, owner=self.OWNER, name="seed", min_value=0)
        check_float(self.lr, owner=self.OWNER, name="lr", min_value=0.0, min_inclusive=False)
        check_float(self.validation, owner=self.OWNER, name="validation", min_value=0.0,
                    max_value=0.9, min_inclusive=False)
