"""The parameters S-FedMV's update attacks share: which update, how many dummies, how many starts.

:class:`UpdateRead` says which clients' updates of which round are read (``update-labels``
uses it as it is); :class:`UpdateInversion` adds the dummies fitted and the starts tried, and
``dlg``, ``idlg``, ``inverting-gradients`` (:mod:`.gradient_inversion`) and
``fedavg-inversion`` (:mod:`.update_inversion`) extend it. A subclass that redeclares a field
(its own default or meaning) annotates it with the alias below, so the constraint stays the
base's: :data:`Steps`, :data:`Restarts`, :data:`Rate`, :data:`Weight`, :data:`Seed`. Refusals
name the registered attack when :func:`fedsec.params.build_params` builds the parameters
(:func:`fedsec.declare.owner_of`), the class otherwise.

Examples
--------
>>> UpdateInversion().clients, UpdateInversion().max_samples
(1, 64)
>>> UpdateInversion(round=0)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
fedsec.errors.ValidationError: The 'round' parameter of UpdateInversion must be an int >= 1...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fedsec.declare import Choice, Declared, Float, Int, owner_of
from fedsec.errors import ValidationError
from fedsec.interfaces import AttackSeed

Steps = Annotated[int, Int(min=1)]
"""Optimisation steps of each start."""
Restarts = Annotated[int, Int(min=1)]
"""Random starts; the lowest objective is kept."""
Rate = Annotated[float, Float(min=0.0)]
"""A learning rate; 0: the method's own."""
Weight = Annotated[float, Float(min=0.0)]
"""The weight of a prior in the objective; 0: none."""
Seed = AttackSeed
"""Seed of the random starts; None: the run's public seed (0 when unknown)."""
Labels = Annotated[str, Choice("counts", "joint")]
"""counts: read from the output-bias update; joint: soft labels fitted with the inputs."""


def check_box(params: Any) -> None:
    """Refuse a box (``params.low``, ``params.high``) that holds nothing.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> check_box(SimpleNamespace(low=0.0, high=0.0))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fedsec.errors.ValidationError: The 'low' and 'high' parameters of SimpleNamespace must ...
    """
    if not params.low < params.high:
        raise ValidationError(f"The 'low' and 'high' parameters of {owner_of(params)} must bound "
                              f"a box (low < high). Got low={params.low}, high={params.high} "
                              "instead.")


@dataclass(frozen=True, kw_only=True)
class UpdateRead(Declared):
    """The clients' updates read: which round, how many clients, the rows of a missing one."""

    round: Annotated[int, Int(min=1)] = 1
    """The FedAvg round whose updates are read (1 is the first)."""
    clients: Annotated[int, Int(min=1)] = 1
    """Clients' updates read at most."""
    other_rows: Annotated[int, Int(min=0)] = 0
    """Under differencing (all clients but one), the row count assumed for the missing client;
    0: the mean of the coalition's own counts."""


@dataclass(frozen=True, kw_only=True)
class UpdateInversion(UpdateRead):
    """The update inverted, the dummies fitted and the starts tried."""

    steps: Steps = 100
    """Optimisation steps of each start."""
    restarts: Restarts = 1
    """Random starts of each view's inversion; the lowest objective is kept."""
    lr: Rate = 0.0
    """Learning rate of the inversion; 0: the method's own."""
    max_samples: Annotated[int, Int(min=1)] = 64
    """Dummy sequences fitted at most; a client holding more is modelled by that many."""
    seed: Seed = None
    """Seed of the random starts (each view adds its index); None: the run's public seed (0
    when unknown)."""
