"""The parameters every S-FedMV update inversion shares: which update, how many dummies,
how many starts.

``dlg``, ``idlg``, ``inverting-gradients`` (:mod:`.gradient_inversion`) and
``fedavg-inversion`` (:mod:`.update_inversion`) extend :class:`UpdateInversion`; each names
itself in ``OWNER`` for its errors and redeclares ``steps`` (and ``restarts``, ``lr``) with
its own default and meaning.

Examples
--------
>>> UpdateInversion().clients, UpdateInversion().max_samples
(1, 64)
>>> UpdateInversion(round=0)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
fedsec.errors.ValidationError: The 'round' parameter of an update inversion must be an int >= 1...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from fedsec.validation import check_float, check_int


@dataclass(frozen=True, kw_only=True)
class UpdateInversion:
    """The update inverted, the dummies fitted and the starts tried."""

    OWNER: ClassVar[str] = "an update inversion"

    steps: int = 100
    """Optimisation steps of each start."""
    restarts: int = 1
    """Random starts of each view's inversion; the lowest objective is kept."""
    lr: float = 0.0
    """Learning rate of the inversion; 0: the method's own."""
    round: int = 1
    """The FedAvg round whose updates are inverted (1 is the first)."""
    max_samples: int = 64
    """Dummy sequences fitted at most; a client holding more is modelled by that many."""
    other_rows: int = 0
    """Under differencing (all clients but one), the row count assumed for the missing client;
    0: the mean of the coalition's own counts."""
    clients: int = 1
    """Clients' updates inverted at most (those the adversary reads)."""
    seed: int = 0
    """Seed of the random starts (each view adds its index)."""

    def __post_init__(self) -> None:
        for name in ("steps", "restarts", "round", "max_samples", "clients"):
            check_int(getattr(self, name), owner=self.OWNER, name=name, min_value=1)
        check_int(self.other_rows, owner=self.OWNER, name="other_rows", min_value=0)
        check_int(self.seed, owner=self.OWNER, name="seed", min_value=0)
        check_float(self.lr, owner=self.OWNER, name="lr", min_value=0.0)
