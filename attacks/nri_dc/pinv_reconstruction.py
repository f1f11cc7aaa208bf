"""Pseudoinverse reconstruction of NRI-DC workers' data, and scoring it on permuted rows.

Nosaka and Yoshise (arXiv:2403.02780), section 2.3, "Privacy against the
collusion between user and master" and "Privacy against external attacks":
whoever holds the anchor ``X_anc`` (every worker) and a worker's
``A_i = X_anc F_i`` and ``X_tilde_i = P_i X_i F_i`` (the master; anyone on
the links without TLS) recovers the secret map, ``F_hat = pinv(X_anc) A_i``
(exact once the anchor has full column rank), and the shared rows,
``X_hat_i = X_tilde_i pinv(F_hat) = P_i X_i F_i F_i^+``: exact when nothing
was reduced away, otherwise each row loses only its component outside the
worker's principal subspace (its epsilon-DR error, see :mod:`fedsec.scoring.epsilon_dr`).
The perturbation ``sigma E_i`` only tilts that subspace: it does not hide
``F_i``. Under a masking backend other than ``plain`` each of these messages is
encrypted (or masked) for its receiver, so the links give an eavesdropper nothing
to read; the master and the workers still read what they receive.

What the master learns alone (no collusion): without the anchor ``F_i`` is
not identifiable from ``A_i`` (any ``X_anc M`` with ``M^T M = I`` gives the
same Gram matrix ``A_i^T A_i``), so positions stay at the naive baseline and
this attack returns the baseline. It is not nothing, though: ``F_i`` has
orthonormal columns, so ``X_tilde_i X_tilde_i^T = P_i X_i F_i F_i^T X_i^T
P_i^T``: the master learns each record's norm and the pairwise distances of
the records projected on the worker's principal subspace, in a frame it
cannot orient (and ``A_i^T A_j`` tells it how the workers' frames relate:
that is the collaboration step itself).

The rows stay permuted: the attack cannot put them back in the shard's order,
so the ``matched-rows`` scorer pairs them with the true records by optimal
assignment (as an adversary holding the identified records would) and
reports whether the pairing re-identifies each record, and the label then
linked to it (the permuted labels are shared in the clear).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from fedsec.attacks.nri_dc.family import NRIDCAttack
from fedsec.outcomes import Reconstruction
from fedsec.private_store import held_value, is_held_shard_field, parse_truth_key, shard_key
from fedsec.protocols.nri_dc import tags
from fedsec.registry import register
from fedsec.views import View

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.transcript.message import Message


def estimate_map(anchor: np.ndarray, anchor_repr: np.ndarray) -> np.ndarray:
    """``F_hat = pinv(X_anc) A`` (least squares; exact when ``X_anc`` has full column rank).

    Examples
    --------
    >>> X_anc = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> F = np.array([[0.6], [0.8]])
    >>> np.allclose(estimate_map(X_anc, X_anc @ F), F)
    True
    """
    return np.linalg.lstsq(np.asarray(anchor, dtype=np.float64),
                           np.asarray(anchor_repr, dtype=np.float64), rcond=None)[0]


def invert(intermediate: np.ndarray, F_hat: np.ndarray) -> np.ndarray:
    """``X_hat = X_tilde pinv(F_hat)``: the shared rows back in feature space.

    Examples
    --------
    >>> invert(np.array([[5.0]]), np.array([[0.6], [0.8]])).round(12).tolist()
    [[3.0, 4.0]]
    """
    return np.asarray(intermediate, dtype=np.float64) @ np.linalg.pinv(F_hat)


def opened(view: View, message: Message) -> np.ndarray:
    """A readable payload in its shape (a masking backend's values travel flat, their shape in
    the metadata)."""
    values = np.asarray(view.open(message))
    if tags.SHAPE in message.meta:
        values = values.reshape([int(n) for n in message.meta[tags.SHAPE]])
    return values


def observed_anchor(view: View) -> np.ndarray | None:
    """The anchor, if the adversary saw it travel between workers, or drew it (a coalition
    member that owns it: under a masking backend it cannot open what it sent)."""
    for message in view.select(tag=tags.ANCHOR):
        if view.can_open(message):
            return np.asarray(opened(view, message), dtype=np.float64)
    for member in view.knowledge:
        held = view.own(member).get(held_value(tags.PRIVATE_ANCHOR))
        if held is not None:
            return np.asarray(held, dtype=np.float64)
    return None


def shared_by(view: View, tag: str) -> dict[str, np.ndarray]:
    """Readable payloads under ``tag``, by sender (first message of each)."""
    out: dict[str, np.ndarray] = {}
    for message in view.select(tag=tag):
        if message.sender not in out and view.can_open(message):
            out[message.sender] = opened(view, message)
    return out


def own_data_mean(view: View, n_features: int) -> np.ndarray:
    """The naive guess of a record: the mean of the coalition's own records (else zeros)."""
    blocks = [np.asarray(held[name], dtype=np.float64) for held in view.knowledge.values()
              for name in held if is_held_shard_field(name, "X")]
    blocks = [b for b in blocks if b.ndim == 2 and b.shape[1] == n_features and b.shape[0]]
    return np.vstack(blocks).mean(axis=0) if blocks else np.zeros(n_features)


@register("attack", "pinv-reconstruction")
class PinvReconstruction(NRIDCAttack):
    """F_hat = pinv(X_anc) A_i, X_hat_i = X_tilde_i pinv(F_hat): NRI-DC data under worker-master
    collusion or eavesdropping without TLS (rows stay permuted).

    Rebuild each worker's shared rows from its anchor image, once the anchor is known.
    """

    needs_tags = frozenset({tags.INTERMEDIATE, tags.ANCHOR_REPRESENTATION})
    closed_form = True
    default_scorer = "matched-rows"

    def unmet(self, view: View) -> str | None:
        if not (shared_by(view, tags.INTERMEDIATE)
                and shared_by(view, tags.ANCHOR_REPRESENTATION)):
            return f"{view.threat} cannot read any intermediate or anchor representation"
        return None

    def run(self, view: View) -> Reconstruction:
        anchor = observed_anchor(view)
        intermediates = shared_by(view, tags.INTERMEDIATE)
        images = shared_by(view, tags.ANCHOR_REPRESENTATION)
        labels = shared_by(view, tags.LABELS)
        estimates: dict[str, np.ndarray] = {}
        baseline: dict[str, np.ndarray] = {}
        residuals: dict[str, float] = {}
        for worker in sorted(set(intermediates) & set(images)):
            if worker in view.knowledge:
                continue  # the coalition's own member
            message = view.select(tag=tags.INTERMEDIATE, sender=worker)[0]
            n_features = int(message.meta[tags.N_FEATURES])
            X_tilde = intermediates[worker]
            guess = np.tile(own_data_mean(view, n_features), (X_tilde.shape[0], 1))
            key_X, key_y = shard_key(worker, 0, "X"), shard_key(worker, 0, "y")
            baseline[key_X] = guess
            if anchor is not None and anchor.shape[1] == n_features:
                F_hat = estimate_map(anchor, images[worker])
                estimates[key_X] = invert(X_tilde, F_hat)
                fitted = anchor @ F_hat
                residuals[worker] = float(np.linalg.norm(fitted - images[worker])
                                          / max(np.linalg.norm(images[worker]), 1e-300))
            else:
                estimates[key_X] = guess
            if worker in labels:
                # class codes: rounded as the master rounds them (CKKS decrypts approximately)
                estimates[key_y] = np.rint(np.asarray(labels[worker], dtype=np.float64))
                baseline[key_y] = estimates[key_y]
        return Reconstruction(
            attack=self.name, threat=str(view.threat), estimates=estimates, baseline=baseline,
            info={"anchor_observed": anchor is not None,
                  "workers_attacked": sorted(str(parse_truth_key(k).party) for k in estimates
                                             if k.endswith("/X")),
                  "anchor_fit_residual": residuals,
                  "method": ("pseudoinverse of the anchor" if anchor is not None else
                             "no anchor observed: F_i unidentifiable, naive baseline")},
        )
