"""Test-phase inference: each test row of a view from ``X_k^test W_k``, once ``W_k`` is known.

The test phase starts from ``Z_k^test = X_k^test W_k``, which the server reads from each
client's first test-phase contribution. An adversary that knows ``W_k`` solves ``x W_k = p``
for every test row: exactly when the view has no more features than classes (``d_k <= C``),
otherwise the solution nearest to a prior (the mean of the view's training rows) along the
directions ``W_k`` leaves free.

Here the server learns ``W_k`` itself: known-record alignment gives every training row
``X_k`` (``records=PATH``, see :mod:`.alignment`), and the last training round's image
``U_k = X_k W_k`` then gives ``W_k = X_k^+ U_k``. Score with ``reconstruction-error``.
"""

from __future__ import annotations

import numpy as np

from fedsec.attacks.fedmv.alignment import KnownRecordAlignment, RecordsParams
from fedsec.attacks.fedmv.family import FedMVAttack
from fedsec.attacks.fedmv.subspace import consensus_by_round, estimates_by_round
from fedsec.outcomes import Reconstruction
from fedsec.private_store import parse_truth_key, truth_key
from fedsec.protocols.fedmv import tags
from fedsec.registry import register
from fedsec.view import View


def solve_rows(images: np.ndarray, W: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """Rows ``x`` with ``x W = p`` for each row ``p`` of ``images``: the one nearest ``prior``.

    Exact when ``W`` has full row rank (no more features than classes).

    Examples
    --------
    >>> W = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> solve_rows(np.array([[3.0, 4.0]]), W, np.zeros(2)).tolist()
    [[3.0, 2.0]]
    """
    shift = images - prior @ W
    return prior + np.linalg.lstsq(W.T, shift.T, rcond=None)[0].T


@register("attack", "test-inference")
class TestInference(FedMVAttack):
    """V-FedMV test phase: X_k^test W_k read by the server; with W_k (from aligned training rows)
    each test row solves x W_k = p (exact when d_k <= C).

    Every test row of a view from the test phase's first images, once ``W_k`` is known.
    """

    needs_tags = frozenset({tags.VIEW_ESTIMATE, tags.CONSENSUS, tags.TEST_ESTIMATE})
    closed_form = True
    __test__ = False  # a class named Test* is not a pytest test
    Params = RecordsParams

    def unmet(self, view: View) -> str | None:
        if not estimates_by_round(view, tags.TEST_ESTIMATE):
            return f"{view.threat} cannot read any client's test-phase estimate"
        return KnownRecordAlignment(records=self.params.records).not_applicable(view)

    def run(self, view: View) -> Reconstruction:
        aligned = KnownRecordAlignment(records=self.params.records).run(view)
        training = estimates_by_round(view, tags.VIEW_ESTIMATE)
        testing = estimates_by_round(view, tags.TEST_ESTIMATE)
        estimates: dict[str, np.ndarray] = {}
        baseline: dict[str, np.ndarray] = {}
        exact: dict[str, bool] = {}
        for key, X in aligned.estimates.items():
            party = str(parse_truth_key(key).party)
            if party not in testing or 0 not in testing[party]:
                continue
            last = max(training[party])
            zeta, Zk = training[party][last]
            U = (1 + zeta) * Zk - zeta * consensus_by_round(view, party)[last]
            W = np.linalg.lstsq(X, U, rcond=None)[0]
            images = testing[party][0][1]  # step 0: Z_k^test = X_k^test W_k
            prior = X.mean(axis=0)
            target = truth_key(party, "value", tags.TEST_ROWS)
            estimates[target] = solve_rows(images, W, prior)
            baseline[target] = np.tile(prior, (images.shape[0], 1))
            exact[party] = bool(W.shape[0] <= W.shape[1])
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates=estimates,
                              baseline=baseline,
                              info={"exact_by_equations": exact,
                                    "method": "W_k from aligned training rows, then x W_k = p"})
