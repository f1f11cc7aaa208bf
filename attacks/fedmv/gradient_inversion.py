"""DLG, iDLG and Inverting Gradients on S-FedMV's client updates that are one gradient step.

A client that trains one epoch of plain SGD on a local set no larger than its batch size takes
a single step: ``w_end = w_start - lr g``, so whoever reads its update (the server, or all
clients but one by differencing; :func:`.updates.read_targets`) reads its gradient ``g =
(w_start - w_end) / lr`` on its whole local set: a FedSGD step. The gradient attacks then
apply as published, view by view (each view's extractor trains on that view alone):

* ``dlg`` (Zhu, Liu, Han, "Deep Leakage from Gradients", NeurIPS 2019): dummy sequences and
  soft labels fitted jointly in squared L2 gradient distance, L-BFGS;
* ``idlg`` (Zhao, Mopuri, Bilen, "iDLG: Improved Deep Leakage from Gradients", 2020): the
  label of a single sample read from the output layer's gradient
  (:func:`fedsec.attacks.inversion.idlg_label`, one vote per view), then DLG with that label
  fixed. iDLG's rule is defined for one sample; for a batch the labels come from Geng et
  al.'s count estimate, its extension to batches (:func:`.update_inversion.counted_labels`);
* ``inverting-gradients`` (Geiping, Bauermeister, Dröge, Moeller, "Inverting Gradients: How
  easy is it to break privacy in federated learning?", NeurIPS 2020): ``1 - cosine`` plus a
  total-variation prior along time, Adam on signed gradients with the step decay at 3/8,
  5/8, 7/8 of the budget, an optional box, several random starts (lowest objective kept);
  labels read from the bias update (Geng et al.'s counts; iDLG's rule for one sample) or
  fitted.

A client that takes several local steps (more epochs, batches, or RMSProp, whose first step
is a normalised sign of the gradient) does not send a gradient: these attacks say so and are
not applicable; ``fedavg-inversion`` simulates such runs (Dimitrov et al.). Every run reports
its convergence (:mod:`fedsec.convergence`) in ``info["convergence"]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np

from fedsec.attacks.fedmv.family import FedAvgUpdateAttack
from fedsec.attacks.fedmv.inversion_params import (
    Labels,
    Rate,
    Restarts,
    Steps,
    UpdateInversion,
    Weight,
    check_box,
)
from fedsec.attacks.fedmv.update_inversion import counted_labels, reconstruct
from fedsec.attacks.fedmv.updates import (
    Target,
    broadcast_meta,
    no_update_reason,
    read_targets,
    view_spans,
)
from fedsec.attacks.inversion.dummy import Inversion
from fedsec.attacks.inversion.maths import idlg_label, invert_gradient
from fedsec.declare import Bool
from fedsec.nn import LocalTraining, load_flat, unflatten
from fedsec.outcomes import Reconstruction
from fedsec.protocols.fedmv import extractor, tags
from fedsec.registry import register
from fedsec.view import View

SUMMARY_TAIL = "on an S-FedMV client update that is one SGD step (a FedSGD gradient)"


def one_step(local: LocalTraining, rows: int) -> str | None:
    """Why a client's local run on ``rows`` samples is not a single SGD step, or None.

    Examples
    --------
    >>> one_step(LocalTraining(1, 64, 0.05), 32) is None
    True
    >>> one_step(LocalTraining(5, 64, 0.05), 32)
    'it trains 5 local epochs'
    """
    if local.optimizer != "sgd":
        return f"it trains with {local.optimizer}, whose step is not a multiple of the gradient"
    if local.epochs > 1:
        return f"it trains {local.epochs} local epochs"
    if rows > local.batch_size:
        return f"its {rows} samples make several batches of {local.batch_size}"
    return None


def view_gradient(meta: dict[str, Any], i: int, target: Target, lr: float
                  ) -> tuple[Any, dict[str, np.ndarray]]:
    """View ``i``'s extractor at the target's starting weights, and the gradient its update
    carries, ``(start - end) / lr``, by parameter name."""
    layout, span = view_spans(meta)[i]
    model = extractor.build(extractor.ExtractorSpec.from_meta(meta[tags.EXTRACTORS][i]), seed=0)
    load_flat(model, target.start[span])
    grads = unflatten((target.start[span] - target.end[span]) / lr, layout)
    return model, grads


def idlg_labels(meta: dict[str, Any], target: Target, lr: float) -> np.ndarray:
    """iDLG's label of a one-sample client: each view's output layer votes (ties: first)."""
    classes = int(meta[tags.EXTRACTORS][0]["classes"])
    votes = np.zeros(classes)
    for i in range(len(meta[tags.VIEWS])):
        grads = view_gradient(meta, i, target, lr)[1]
        votes[idlg_label(grads["head.weight"], grads["head.bias"])] += 1
    return np.array([int(np.argmax(votes))])


class _GradientAttack(FedAvgUpdateAttack):
    """What the three attacks share: the targets, the one-step check, the per-view loop; each
    names its own paper."""

    default_scorer = "sequence-match"
    budget_params = ("steps",)
    starts_params = ("restarts",)

    def _meta(self, view: View) -> dict[str, Any]:
        return broadcast_meta(view)

    def _targets(self, view: View) -> list[Target]:
        p: Any = self.params
        return read_targets(view, p.round, clients=p.clients, other_rows=p.other_rows)

    def unmet(self, view: View) -> str | None:
        targets = self._targets(view)
        if not targets:
            return no_update_reason(view, self.params.round)
        local = LocalTraining.from_meta(self._meta(view)[tags.LOCAL_TRAINING])
        for target in targets:
            why = one_step(local, target.rows)
            if why is not None:
                return (f"client {target.client}'s update is not one gradient: {why} "
                        "(fedavg-inversion simulates several local steps)")
        return None

    def _labels(self, meta: dict[str, Any], target: Target, n: int) -> np.ndarray | None:
        return None

    def run(self, view: View) -> Reconstruction:
        p: Any = self.params
        meta = self._meta(view)
        lr = LocalTraining.from_meta(meta[tags.LOCAL_TRAINING]).lr
        seed = self.seed_for(view)

        def invert(target: Target, i: int, labels: np.ndarray | None, n: int) -> Inversion:
            model, grads = view_gradient(meta, i, target, lr)
            spec = extractor.ExtractorSpec.from_meta(meta[tags.EXTRACTORS][i])
            T = int(meta[tags.SEQUENCES][i]["length"])
            return invert_gradient(
                model, grads, input_shape=(T, spec.inputs), n_samples=n,
                n_classes=spec.classes, labels=labels, seed=seed + i,
                on_step=lambda s: self.report_progress(
                    s, p.steps * p.restarts, "step", label=f"{self.name} of view {i + 1}"),
                **self._options())

        return reconstruct(self, view, self._targets(view), invert,
                           labels=lambda target, n: self._labels(meta, target, n),
                           max_samples=p.max_samples)

    def _options(self) -> dict[str, Any]:
        p: Any = self.params
        return {"method": "dlg", "steps": p.steps, "restarts": p.restarts,
                "lr": p.lr or None}


@register("attack", "dlg")
class DLG(_GradientAttack):
    """Deep Leakage from Gradients: dummy sequences and soft labels fitted by L-BFGS."""

    paper = "Zhu, Liu, Han, Deep Leakage from Gradients, NeurIPS 2019"
    summary = ("DLG (Zhu et al. 2019): inputs and soft labels by L2 gradient matching "
               f"{SUMMARY_TAIL}.")

    @dataclass(frozen=True, kw_only=True)
    class Params(UpdateInversion):
        steps: Steps = 100
        """L-BFGS steps (up to 20 line-search iterations each) of each start."""
        lr: Rate = 0.0
        """L-BFGS learning rate; 0: 1."""


@register("attack", "idlg")
class IDLG(_GradientAttack):
    """iDLG: the labels from the output layer's gradient, then DLG with them fixed."""

    paper = "Zhao, Mopuri, Bilen, iDLG: Improved Deep Leakage from Gradients, arXiv 2020"
    summary = ("iDLG (Zhao et al. 2020): the label of one sample (a batch's counts after Geng et "
               f"al.), then DLG with the labels fixed, {SUMMARY_TAIL}.")

    @dataclass(frozen=True, kw_only=True)
    class Params(DLG.Params):
        restarts: Restarts = 4
        """Random starts of each view's inversion; the lowest objective is kept (with the
        labels fixed, the start decides more than with DLG: one start understated a session's
        MSE by 11% on audits/sfedmv_inversion.toml)."""

    def _labels(self, meta: dict[str, Any], target: Target, n: int) -> np.ndarray | None:
        if target.rows > 1:
            return counted_labels(meta, target, n)
        lr = LocalTraining.from_meta(meta[tags.LOCAL_TRAINING]).lr
        return idlg_labels(meta, target, lr)


@register("attack", "inverting-gradients")
class InvertingGradients(_GradientAttack):
    """Inverting Gradients: cosine distance and total variation, signed Adam, restarts."""

    paper = ("Geiping, Bauermeister, Dröge, Moeller, Inverting Gradients: How easy is it to break "
             "privacy in federated learning?, NeurIPS 2020")
    summary = ("Inverting Gradients (Geiping et al. 2020): cosine gradient distance plus TV, "
               f"signed Adam with step decay, box and restarts, {SUMMARY_TAIL}.")

    @dataclass(frozen=True, kw_only=True)
    class Params(UpdateInversion):
        steps: Steps = 1000
        """Adam steps of each start (the learning rate falls tenfold at 3/8, 5/8 and 7/8)."""
        restarts: Restarts = 2
        """Random starts of each view's inversion; the lowest objective is kept."""
        lr: Rate = 0.0
        """Adam learning rate; 0: 0.1."""
        tv_weight: Weight = 1e-4
        """Weight of the total-variation prior along each sequence's time axis."""
        signed: Annotated[bool, Bool()] = True
        """Step on the sign of the gradient (Geiping et al.'s choice)."""
        low: float = -math.inf
        """Lower end of the box the inputs are clipped into after every step (-inf: none)."""
        high: float = math.inf
        """Upper end of that box (inf: none)."""
        labels: Labels = "counts"
        """counts: read from the output-bias update (iDLG's rule for one sample, Geng et al.'s
        counts for more); joint: soft labels fitted with the inputs."""

        def __post_init__(self) -> None:
            check_box(self)

    def _labels(self, meta: dict[str, Any], target: Target, n: int) -> np.ndarray | None:
        return counted_labels(meta, target, n) if self.params.labels == "counts" else None

    def _options(self) -> dict[str, Any]:
        p = self.params
        box = None if math.isinf(p.low) and math.isinf(p.high) else (p.low, p.high)
        return {"method": "ig", "steps": p.steps, "restarts": p.restarts, "lr": p.lr or None,
                "tv_weight": p.tv_weight, "tv_axes": (1,) if p.tv_weight else (),
                "signed": p.signed, "bounds": box}
