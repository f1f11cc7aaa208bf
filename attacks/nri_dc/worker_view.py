"""What one NRI-DC worker learns about the others' records from what it receives (Theorem 2.4).

Nosaka and Yoshise (arXiv:2403.02780), Theorem 2.4 (after Imakura et al.): a
worker alone learns nothing about the other workers' data. What reaches a
worker that is not the master: the anchor ``X_anc`` (from its owner) and the
master's labels of its anchor image, ``h(X_anc F_i G_i)``, where ``h`` was
trained on every worker's ``P_j X_j F_j G_j``. No other message is computed
from another worker's rows, and that one depends on them only through ``h``:
it carries no row of theirs, so any estimate of a record is the same for every
record of the worker.

The attack takes the one route the View leaves. It fits the collaborative
model as a rule on the feature space from the anchor and its labels (the
worker's own step 4), applies it to its own records to estimate the
federation's class balance, and estimates each other worker's records as its
own class means mixed in that balance (:func:`mixture_estimate`). The baseline
is what the worker knows without the reply: the mean of its own records. If
the theorem holds, the estimate is no closer to the other workers' records than
the baseline; the scorer says how close either is. A coalition holding the
master is the collusion the paper names (``pinv-reconstruction``), not this
adversary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np

from fedsec.attacks.nri_dc.family import NRIDCAttack
from fedsec.attacks.nri_dc.pinv_reconstruction import observed_anchor, opened
from fedsec.convergence import CLOSED_FORM, Convergence
from fedsec.declare import Declared, Float
from fedsec.outcomes import Reconstruction
from fedsec.private_store import held_shard, shard_key
from fedsec.protocols.nri_dc import tags
from fedsec.protocols.nri_dc.protocol import MASTER
from fedsec.registry import register
from fedsec.views import View

#: Iterations scikit-learn's L-BFGS may take to fit the labelling rule.
MAX_ITER = 1000


def fitted_rule(anchor: np.ndarray, labels: np.ndarray, *,
                regularization: float = 1.0) -> tuple[Any, Convergence]:
    """The logistic regression fitted to the anchor and its labels, and how its L-BFGS
    ended (a convex fit: converged when it stopped before :data:`MAX_ITER`); with one
    class only, None and a closed form (every record gets that class)."""
    from sklearn.linear_model import LogisticRegression

    if np.unique(labels).size == 1:
        return None, CLOSED_FORM
    rule = LogisticRegression(C=1.0 / regularization, max_iter=MAX_ITER).fit(anchor, labels)
    steps = int(np.max(rule.n_iter_))
    return rule, Convergence("converged" if steps < MAX_ITER else "budget", steps=steps,
                             budget=MAX_ITER)


def rule_balance(rule: Any, labels: np.ndarray, records: np.ndarray,
                 classes: np.ndarray) -> np.ndarray:
    """The share of ``records`` a :func:`fitted_rule` gives each of ``classes`` (None, for
    labels of one class only: every record gets that class)."""
    predicted = (np.full(records.shape[0], np.unique(labels)[0]) if rule is None
                 else rule.predict(records))
    return np.array([(predicted == c).mean() for c in classes])


def class_balance(anchor: np.ndarray, labels: np.ndarray, records: np.ndarray,
                  classes: np.ndarray, *, regularization: float = 1.0) -> np.ndarray:
    """The share of ``records`` the anchor's labelling rule gives each of ``classes``
    (:func:`fitted_rule`, then :func:`rule_balance`).

    Examples
    --------
    >>> anchor = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    >>> class_balance(anchor, np.array([0, 0, 1, 1]), np.array([[3.0], [-3.0], [4.0]]),
    ...               np.array([0, 1])).round(3).tolist()
    [0.333, 0.667]
    """
    rule, _ = fitted_rule(anchor, labels, regularization=regularization)
    return rule_balance(rule, labels, records, classes)


def mixture_estimate(records: np.ndarray, labels: np.ndarray, classes: np.ndarray,
                     balance: np.ndarray) -> np.ndarray:
    """``sum_c balance_c mean(records of class c)`` (a class the worker lacks: its overall mean).

    Examples
    --------
    >>> records = np.array([[0.0], [2.0], [10.0]])
    >>> mixture_estimate(records, np.array([0, 0, 1]), np.array([0, 1]),
    ...                  np.array([0.5, 0.5])).tolist()
    [5.5]
    """
    overall = records.mean(axis=0)
    means = [records[labels == c].mean(axis=0) if (labels == c).any() else overall
             for c in classes]
    return np.asarray(balance, dtype=np.float64) @ np.vstack(means)


def own_records(view: View) -> tuple[np.ndarray, np.ndarray] | None:
    """The coalition's own records and labels, stacked (None: it holds none)."""
    X_key, y_key = (held_shard(0, f) for f in ("X", "y"))
    blocks = [(np.asarray(held[X_key], dtype=np.float64), np.asarray(held[y_key]))
              for held in view.knowledge.values() if X_key in held and y_key in held]
    if not blocks:
        return None
    return np.vstack([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks])


def replies(view: View) -> dict[str, np.ndarray]:
    """The master's labels of each member's anchor image that the coalition can read."""
    out = {}
    for message in view.select(tag=tags.ANCHOR_PREDICTIONS):
        if message.receiver in view.knowledge and view.can_open(message):
            out[message.receiver] = np.rint(opened(view, message)).astype(np.int64)
    return out


@register("attack", "worker-view")
class WorkerView(NRIDCAttack):
    """NRI-DC Theorem 2.4: a worker's estimate of other workers' records from the anchor and the
    master's labels of it (its own class means mixed in the collaborative model's class balance),
    against its own records' mean.

    Another worker's records from what a worker receives: the anchor and the master's reply.
    """

    default_scorer = "reconstruction-error"
    produces = "rows"
    needs_tags = frozenset({tags.ANCHOR_PREDICTIONS})

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        regularization: Annotated[float, Float(min=0.0, min_inclusive=False)] = 1.0
        """Inverse of scikit-learn's C for the rule fitted to the anchor's labels."""

    def unmet(self, view: View) -> str | None:
        if MASTER in view.knowledge:
            return ("the coalition holds the master, which reads the workers' representations "
                    "(attack pinv-reconstruction)")
        if not replies(view):
            return f"{view.threat} can read no reply of the master to one of its members"
        if own_records(view) is None or observed_anchor(view) is None:
            return f"{view.threat} holds no records of its own, or no anchor"
        return None

    def run(self, view: View) -> Reconstruction:
        anchor = observed_anchor(view)
        assert anchor is not None  # not_applicable checked it
        X, y = own_records(view) or (np.zeros((0, anchor.shape[1])), np.zeros(0))
        got = replies(view)
        labels = np.concatenate(list(got.values()))
        images = np.vstack([anchor] * len(got))
        classes = np.unique(np.concatenate([y, labels]))
        rule, fit = fitted_rule(images, labels, regularization=self.params.regularization)
        balance = rule_balance(rule, labels, X, classes)
        guess = mixture_estimate(X, y, classes, balance)
        mean = X.mean(axis=0)
        n_rows = X.shape[0] // len(view.knowledge)
        estimates: dict[str, np.ndarray] = {}
        baseline: dict[str, np.ndarray] = {}
        others = [p for p in view.parties if p != MASTER and p not in view.knowledge]
        for worker in others:
            key = shard_key(worker, 0, "X")
            estimates[key] = np.tile(guess, (n_rows, 1))
            baseline[key] = np.tile(mean, (n_rows, 1))
        info: dict[str, Any] = {
            "replies_read": sorted(got), "classes": classes.tolist(),
            "federation_balance": balance.tolist(),
            "own_balance": [float((y == c).mean()) for c in classes],
            "rows_per_worker": n_rows,
            "rows_assumed": "as many as each member holds (the reply carries no count)",
            "method": "own class means mixed in the collaborative model's class balance",
            "convergence": fit.to_info(),  # the labelling rule's fit, the one iterative step
        }
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates=estimates,
                              baseline=baseline, info=info)
