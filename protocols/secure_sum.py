"""Secure sum: each party holds a vector; a coordinator learns only their sum.

The textbook building block of secure aggregation (Bonawitz et al., "Practical
Secure Aggregation for Privacy-Preserving Machine Learning", CCS 2017): here
each data party's vector is a local statistic of its shard (column sums and
row count, optionally sums of squares), so the sum yields the pooled mean and
variance of every feature. Whether the aggregator also learns individual
vectors depends only on the masking backend, which is what an audit checks.
Nothing is trained: the result's ``model`` is None.

**Canary mode** (``canaries = m``), for the white-box one-run audit of Steinke, Nasr and
Jagielski ("Privacy Auditing with One (1) Training Run", NeurIPS 2023): one data party (the
first, or ``canary_party``) appends a block of ``canary_dimension`` coordinates (the smallest
power of two at least ``m`` by default) to its vector, holding the sum of the canaries it
includes: ``m`` orthogonal random sign directions of norm ``canary_norm``
(:func:`fedsec.privacy.canary.draw_canary_signs`), drawn
from a public seed recorded in every contribution's metadata
(:data:`CANARY_META`, so that any adversary regenerates them from its View), each included with
probability 1/2 from the party's own secret stream. Which canaries went in is kept in the
party's private store (:data:`CANARY_INCLUDED`, ground truth for scoring only); the other
parties append zeros, so every vector has one length. Defences then act on the whole extended
vector. The sensitivity that makes the audit honest: adding or removing one canary moves the
party's vector by exactly ``canary_norm`` before any defence, and clipping (``gaussian-noise``'s
``clip``, an L2 projection) never moves two vectors further apart, so a defence whose declared
sensitivity is at least ``canary_norm`` covers each canary; a run whose defence declares less is
refused. With ``sensitivity = canary_norm`` declared (no clipping) each canary is exactly one
unit of the declared bound and the audit tests the Gaussian mechanism at its declared noise; with
``clip`` the included canaries (about ``m / 2``) share one clipping ball with the statistic,
each shrunk by about ``clip / ||vector||``, so the empirical bound stays below the accountant's
epsilon but is loose by about ``sqrt(m / 2)`` in noise multiplier.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Annotated, Any

import numpy as np

from fedsec.backends.primitives import CONTRIBUTION_TAG, secure_sum
from fedsec.declare import Choice, Declared, Float, Int, owner_of
from fedsec.errors import ValidationError
from fedsec.interfaces import Defense, MaskingBackend, Protocol, apply_transforms
from fedsec.outcomes import Outcome
from fedsec.privacy.canary import (
    canary_dimension,
    draw_canary_signs,
    draw_inclusion,
    sign_block,
)
from fedsec.registry import register
from fedsec.seeding import generator

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.data import Dataset
    from fedsec.federation import Federation

AGGREGATOR = "aggregator"
RESULT_TAG = "secure_sum.result"
#: The contribution metadata of canary mode, public to every adversary: the seed the canary
#: directions are drawn from, their count, norm and dimension, where their block starts in the
#: vector, and the party that includes them.
CANARY_SEED = "canary_seed"
CANARY_COUNT = "canaries"
CANARY_NORM = "canary_norm"
CANARY_DIMENSION = "canary_dimension"
CANARY_OFFSET = "canary_offset"
CANARY_PARTY = "canary_party"
CANARY_META = (CANARY_SEED, CANARY_COUNT, CANARY_NORM, CANARY_DIMENSION, CANARY_OFFSET,
               CANARY_PARTY)
#: The canary party's private entry saying which canaries it included (scoring only).
CANARY_INCLUDED = "canary_included"
#: The purpose the canary directions' generator is derived for, under the public seed.
CANARY_PURPOSE = "secure-sum/canaries"


def local_statistic(X: np.ndarray, statistic: str) -> np.ndarray:
    """One party's vector: column sums then the row count (then sums of squares for moments).

    Examples
    --------
    >>> local_statistic(np.array([[1.0, 2.0], [3.0, 4.0]]), "sum").tolist()
    [4.0, 6.0, 2.0]
    """
    X = np.asarray(X, dtype=float)
    parts = [X.sum(axis=0), np.array([X.shape[0]], dtype=float)]
    if statistic == "moments":
        parts.append((X**2).sum(axis=0))
    return np.concatenate(parts)


def sum_error(total: np.ndarray, exact: np.ndarray) -> float:
    """``||total - exact|| / ||exact||``: what masking and defences added to the sum.

    Examples
    --------
    >>> sum_error(np.array([3.0, 4.0]), np.array([3.0, 4.0]))
    0.0
    >>> round(sum_error(np.array([3.0, 4.5]), np.array([3.0, 4.0])), 3)
    0.1
    """
    scale = float(np.linalg.norm(exact))
    gap = float(np.linalg.norm(np.asarray(total, dtype=float) - exact))
    return gap / scale if scale > 0 else gap


def canary_signs(meta: Mapping[str, Any]) -> np.ndarray:
    """The canaries a contribution's metadata (:data:`CANARY_META`) describes, as signs (one
    row each; a canary is its row times ``canary_norm / sqrt(canary_dimension)``,
    :func:`fedsec.privacy.canary.draw_canary_signs`): what the protocol drew, regenerated from
    public values alone.

    Examples
    --------
    >>> meta = {CANARY_SEED: 3, CANARY_COUNT: 2, CANARY_DIMENSION: 16}
    >>> canary_signs(meta).shape, bool(np.all(canary_signs(meta) == canary_signs(dict(meta))))
    ((2, 16), True)
    """
    missing = [key for key in (CANARY_SEED, CANARY_COUNT, CANARY_DIMENSION) if key not in meta]
    if missing:
        raise ValidationError(f"The contribution's metadata lacks {', '.join(missing)}: it "
                              "describes no canaries (secure-sum runs with canaries = 0).")
    return draw_canary_signs(int(meta[CANARY_COUNT]), int(meta[CANARY_DIMENSION]),
                             generator(int(meta[CANARY_SEED]), CANARY_PURPOSE))


def pooled_moments(total: np.ndarray, n_features: int) -> dict[str, np.ndarray]:
    """Mean (and variance, when sums of squares are present) from a summed statistic."""
    count = total[n_features]
    mean = total[:n_features] / count
    out = {"mean": mean}
    if total.size == 2 * n_features + 1:
        out["variance"] = total[n_features + 1 :] / count - mean**2
    return out


@register("protocol", "secure-sum")
class SecureSum(Protocol):
    """Each party holds a vector; an aggregator learns only their sum (if the backend protects it).

    Data parties send protected local statistics; the aggregator opens only the sum.
    """

    paper = "Bonawitz et al., Practical Secure Aggregation for Privacy-Preserving ML, CCS 2017"
    partition_kinds = ("horizontal",)
    default_partition = "horizontal:parties=5"
    default_dataset = "pima"
    coordinators = ((AGGREGATOR, "aggregator"),)
    requires = frozenset({"sum"})
    exposes = frozenset({CONTRIBUTION_TAG, RESULT_TAG})

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        statistic: Annotated[str, Choice("sum", "moments")] = "sum"
        """What each party's vector holds: sum (column sums and row count: the pooled mean) or
        moments (also sums of squares: the pooled variance)."""
        canaries: Annotated[int, Int(min=0)] = 0
        """Canary mode for a one-run privacy audit: this many canaries (orthogonal random sign
        directions), each included with probability 1/2 in one party's vector; 0: none."""
        canary_norm: Annotated[float, Float(min=0.0, min_inclusive=False)] = 1.0
        """The L2 norm of each canary: how far including one moves its party's vector (keep it
        at most the defence's clip or declared sensitivity)."""
        canary_dimension: Annotated[int, Int(min=0)] = 0
        """The coordinates of the canary block appended to every vector: a power of two at
        least 'canaries'; 0: the smallest such."""
        canary_party: str = ""
        """The data party that includes the canaries; empty: the first."""

        def __post_init__(self) -> None:
            dimension = self.canary_dimension
            if self.canaries and dimension and (dimension < self.canaries
                                                or dimension & (dimension - 1)):
                raise ValidationError(
                    f"The 'canary_dimension' parameter of {owner_of(self)} must be 0 (the "
                    f"smallest power of two at least 'canaries', here "
                    f"{canary_dimension(self.canaries)}) or a power of two at least "
                    f"'canaries' ({self.canaries}). Got {dimension} instead.")

        @property
        def canary_coordinates(self) -> int:
            """The length of the canary block (0 without canaries)."""
            if not self.canaries:
                return 0
            return self.canary_dimension or canary_dimension(self.canaries)

    def run(self, federation: Federation, backend: MaskingBackend,
            defenses: Sequence[Defense] = ()) -> Outcome:
        p = self.params
        net = federation.network
        senders = federation.data_parties()
        meta: dict[str, Any] = {"statistic": p.statistic}
        holder = self._canary_holder(senders, defenses) if p.canaries else None
        vectors = {}
        with net.stage("contribute", round=0):
            for party in senders:
                with net.compute(party.name):
                    vector = local_statistic(party.held_shard().X, p.statistic)
                    if p.canaries:
                        extra, canary_meta = self._canary_extension(
                            party, holder, vector.size, federation.seed)
                        vector = np.concatenate([vector, extra])
                        meta.update(canary_meta)
                    party.private["vector"] = vector
                    vectors[party.name] = apply_transforms(defenses, party, CONTRIBUTION_TAG,
                                                           vector)
            total = secure_sum(federation, backend, vectors, AGGREGATOR, meta=meta)
        with net.stage("result", round=0):
            net.broadcast(AGGREGATOR, [p.name for p in senders], RESULT_TAG, total)
        exact = np.sum([p.private["vector"] for p in senders], axis=0)
        length = total.size - p.canary_coordinates  # the statistic, without the canary block
        return Outcome(metrics={"n_senders": len(senders), "vector_length": int(total.size),
                                "sum_relative_error": sum_error(total, exact)},
                       values={"sum": total[:length]})

    def _canary_holder(self, senders: Sequence[Any], defenses: Sequence[Defense]) -> str:
        """The party that includes the canaries, after checking that every defence's declared
        sensitivity covers one canary."""
        p = self.params
        names = [party.name for party in senders]
        holder = p.canary_party or names[0]
        if holder not in names:
            raise ValidationError(f"The 'canary_party' parameter of protocol 'secure-sum' must "
                                  f"be a data party, one of {names}. Got {holder!r} instead.")
        for defense in defenses:
            mechanism = defense.mechanism(asdict(p))
            if mechanism is not None and mechanism.sensitivity is not None \
                    and mechanism.sensitivity < p.canary_norm:
                raise ValidationError(
                    f"Canaries of norm {p.canary_norm:g} exceed the sensitivity "
                    f"{mechanism.sensitivity:g} that defence {defense.name!r} declares: its "
                    "epsilon would not cover one canary. Set canary_norm <= "
                    f"{mechanism.sensitivity:g}.")
        return holder

    def _canary_extension(self, party: Any, holder: str | None, offset: int,
                          public_seed: int) -> tuple[np.ndarray, dict[str, Any]]:
        """The block ``party`` appends (the included canaries' sum for the holder, zeros for
        the others) and the public metadata describing the canaries."""
        p = self.params
        meta = {CANARY_SEED: int(public_seed), CANARY_COUNT: p.canaries,
                CANARY_NORM: float(p.canary_norm), CANARY_DIMENSION: p.canary_coordinates,
                CANARY_OFFSET: int(offset), CANARY_PARTY: holder}
        if party.name != holder:
            return np.zeros(p.canary_coordinates), meta
        included = draw_inclusion(p.canaries, party.rng)  # the party's secret
        party.private[CANARY_INCLUDED] = included
        return sign_block(canary_signs(meta), included, p.canary_norm), meta

    def reference(self, train: Dataset, test: Dataset, *, seed: int) -> Outcome:
        total = local_statistic(train.X, self.params.statistic)
        return Outcome(values={"sum": total})
