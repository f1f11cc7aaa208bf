"""Known-record alignment: a view's column space plus a few known rows give every row.

The server's stacked images span the column space of ``X_k`` (``subspace-accumulation``):
``X_k = Q T`` for the recovered basis ``Q`` and an unknown ``T``. An adversary who also knows
some rows of ``X_k`` (public records, or patients it shares with a colluding party) solves
``Q[known] T = X_k[known]`` and reads every row; exact once the known rows span the basis
(``m >= rank``).

The known rows are the adversary's own prior knowledge, not something the View holds: the
attack reads them from a ``.npz`` file (``records=PATH``) with, per attacked party, the
row positions ``NAME/rows`` (in the order of the exchanged matrices, which is the party's
shard order) and the values ``NAME/X``. Score with ``reconstruction-error``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fedsec.attacks.fedmv.family import ConsensusAttack
from fedsec.attacks.fedmv.subspace import SubspaceAccumulation
from fedsec.declare import Declared, owner_of
from fedsec.errors import ValidationError
from fedsec.outcomes import Reconstruction
from fedsec.private_store import parse_truth_key
from fedsec.registry import register
from fedsec.scoring.subspace import align_known_rows
from fedsec.validation import param_error
from fedsec.view import View


def load_records(path: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{party: (rows, X)}`` from a ``.npz`` file of ``NAME/rows`` and ``NAME/X`` arrays."""
    file = Path(path)
    if not file.is_file():
        raise ValidationError(f"No known-records file at {path!r}: give records=PATH of a .npz "
                              "with NAME/rows and NAME/X arrays per attacked party.")
    try:
        with np.load(file, allow_pickle=False) as data:
            arrays = {k: np.asarray(data[k]) for k in data.files}
    except (OSError, ValueError) as error:
        raise ValidationError(f"{path!r} is not a readable .npz file ({error}).") from None
    out = {}
    for key in arrays:
        party, _, field = key.rpartition("/")
        if field == "rows":
            if f"{party}/X" not in arrays:
                raise ValidationError(f"{path!r} has {key!r} but no {party + '/X'!r}.")
            rows, X = arrays[key].astype(np.int64), arrays[f"{party}/X"].astype(np.float64)
            if X.ndim != 2 or len(rows) != X.shape[0]:
                raise ValidationError(f"{path!r}: {party}/X must hold one row per entry of "
                                      f"{party}/rows; got shapes {X.shape} and {rows.shape}.")
            out[party] = (rows, X)
    return out


@dataclass(frozen=True, kw_only=True)
class RecordsParams(Declared):
    """The known records an attack needs: ``records=PATH``, a ``.npz`` (:func:`load_records`).

    Examples
    --------
    >>> RecordsParams()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fedsec.errors.ValidationError: The 'records' parameter of RecordsParams must be the path ...
    """

    records: str = ""
    """Path of a .npz of the training rows the adversary knows (NAME/rows, NAME/X per attacked
    party)."""

    def __post_init__(self) -> None:  # a non-empty string: no declared kind says so
        if not isinstance(self.records, str) or not self.records:
            raise param_error(owner_of(self), "records",
                              "the path of a .npz of the training rows the adversary knows "
                              "(records=PATH, with NAME/rows and NAME/X per attacked party)",
                              self.records)


@register("attack", "known-record-alignment")
class KnownRecordAlignment(ConsensusAttack):
    """V-FedMV: the column space of view k (stacked X_k W_k) aligned to m known rows gives every row
    of X_k; exact once m >= rank.

    Every row of a view from its recovered column space and a few records the adversary
    knows.
    """

    closed_form = True
    Params = RecordsParams

    def unmet(self, view: View) -> str | None:
        return SubspaceAccumulation().unmet(view)

    def run(self, view: View) -> Reconstruction:
        known = load_records(self.params.records)
        spans = SubspaceAccumulation().run(view)
        estimates: dict[str, np.ndarray] = {}
        baseline: dict[str, np.ndarray] = {}
        used: dict[str, int] = {}
        for key, Q in spans.estimates.items():
            party = str(parse_truth_key(key).party)
            if party not in known:
                continue
            rows, X = known[party]
            if rows.min(initial=0) < 0 or rows.max(initial=0) >= Q.shape[0]:
                raise ValidationError(f"Known rows of {party!r} must lie in 0..{Q.shape[0] - 1}.")
            estimate = align_known_rows(Q, rows, X)
            estimate[rows] = X
            estimates[key] = estimate
            baseline[key] = np.tile(X.mean(axis=0), (Q.shape[0], 1))
            used[party] = len(rows)
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates=estimates,
                              baseline=baseline,
                              info={"known_rows": used, "rank": {
                                  str(parse_truth_key(k).party): int(Q.shape[1])
                                  for k, Q in spans.estimates.items()}})
