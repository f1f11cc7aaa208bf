"""DLG, iDLG and Inverting Gradients on a Flower client's FedSGD update, as the server.

A client of the shipped app (``flower-fedavg``) that trains one local epoch in one batch
(``batch_size=0``, or a batch no smaller than its shard) takes a single SGD step from the
global model the server sent it: ``w_end = w_start - lr g``, so whoever reads its train reply
reads its gradient ``g = (w_start - w_end) / lr`` on all its rows (McMahan et al.'s FedSGD).
Everything the attack needs crossed the wire and is read from the View alone: the global
model (the train instruction's arrays, whose names and shapes give the perceptron:
:func:`fedsec.protocols.flower.model.architecture_of`), the local settings (the instruction's
ConfigRecord: ``lr``, ``local-epochs``, ``batch-size``) and the client's row count (its
reply's ``num-examples``). The rows are then fitted by the project's gradient inversion
(:func:`fedsec.attacks.inversion.invert_gradient`):

* ``method="dlg"`` (Zhu, Liu, Han, "Deep Leakage from Gradients", NeurIPS 2019): squared L2
  gradient distance, L-BFGS; with ``labels="read"`` the labels are read first, iDLG's rule
  for one row (Zhao, Mopuri, Bilen, 2020), Geng et al.'s counts for a batch;
* ``method="ig"`` (Geiping, Bauermeister, Dröge, Moeller, "Inverting Gradients", NeurIPS
  2020): ``1 - cosine`` plus total variation over the image (rows of a square length are
  read as square images), Adam on the gradient's sign with its step decay, an optional box.

Under Flower's client-side DP (``fixedclipping_mod``) the update that crosses is the gradient
scaled down to the clipping norm (the norm travels in the instruction's ConfigRecord): only
its direction is the gradient's, which the cosine of ``ig`` does not need, while DLG's L2
distance fits the wrong scale. iDLG's label of one row is unchanged by the scale; a batch's
counts are not. Flower's noise goes on the aggregate, never on what one client sends.

With one row, the gradient matching starts from the row the first layer gives away in
closed form (:func:`fedsec.attacks.inversion.analytic.first_layer_row`: the weight
gradient's row over its bias gradient, Phong et al. 2018; a clipped update's scale cancels)
and refines it; with more rows it starts from the flat prior.

A client that takes several steps does not send a gradient: the attack is not applicable and
says why. Reconstructed rows are in the client's feature space, in the order fitted (with
one row per client, the order question disappears); score with ``pixel-recovery``. The
baseline is a flat image (the box's midpoint, or 0 without a box). Every run reports how it
converged (``info["convergence"]``, the best of ``restarts`` starts kept).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np

from fedsec.attacks.fedmv.gradient_inversion import one_step
from fedsec.attacks.fedmv.inversion_params import Rate, Restarts, Seed, Steps, Weight, check_box
from fedsec.attacks.flower.traffic import FlowerMessage, messages
from fedsec.attacks.inversion.analytic import first_layer_row
from fedsec.attacks.inversion.dummy import Inversion
from fedsec.attacks.inversion.labels import label_counts_from_bias_update, mean_prediction
from fedsec.attacks.inversion.maths import idlg_label, invert_gradient
from fedsec.convergence import combine
from fedsec.declare import Choice, Declared, Int
from fedsec.errors import ValidationError
from fedsec.interfaces import Attack
from fedsec.nn import LocalTraining, require_torch
from fedsec.outcomes import Reconstruction
from fedsec.private_store import value_key
from fedsec.protocols.flower import model, tags
from fedsec.registry import register
from fedsec.view import View

#: The shipped app's ConfigRecord entries and MetricRecord entry the attack reads.
LR, LOCAL_EPOCHS, BATCH_SIZE, EXAMPLES = "lr", "local-epochs", "batch-size", "num-examples"


@dataclass(frozen=True)
class Target:
    """One client's train reply of a round, read as a gradient."""

    client: str
    round: int
    rows: int
    local: LocalTraining
    start: dict[str, np.ndarray]
    gradient: dict[str, np.ndarray]
    clipping_norm: float | None

    @property
    def clipped(self) -> bool:
        """Whether the update reached the announced clipping norm (then it was scaled down)."""
        if self.clipping_norm is None:
            return False
        norm = self.local.lr * math.sqrt(sum(float(np.sum(g * g))
                                             for g in self.gradient.values()))
        return norm >= self.clipping_norm * (1 - 1e-5)


def entries(message: FlowerMessage, kind: str) -> dict[str, Any]:
    """Every entry of a message's Config (``kind=tags.CONFIGS``) or Metric records, merged."""
    merged: dict[str, Any] = {}
    for record in (message.meta.get(kind) or {}).values():
        merged.update(record)
    return merged


def gradient_of(start: dict[str, np.ndarray], end: dict[str, np.ndarray],
                lr: float) -> dict[str, np.ndarray]:
    """The gradient one SGD step of rate ``lr`` took from ``start`` to ``end``, by name.

    >>> gradient_of({"w": np.array([1.0, 2.0])}, {"w": np.array([0.9, 2.2])}, 0.1)["w"].round(6)
    array([ 1., -2.])
    """
    if list(start) != list(end):
        raise ValidationError(f"A reply's arrays {list(end)} are not the model it was sent "
                              f"({list(start)}).")
    return {name: (np.asarray(start[name], dtype=np.float64)
                   - np.asarray(end[name], dtype=np.float64)) / lr for name in start}


def image_shape(n_inputs: int) -> tuple[int, ...]:
    """One row's shape as the inversion fits it: a square image when the length is a square
    (total variation then runs along both image axes), else the flat row.

    >>> image_shape(784), image_shape(10)
    ((28, 28), (10,))
    """
    side = math.isqrt(n_inputs)
    return (side, side) if side * side == n_inputs and side > 1 else (n_inputs,)


def flat_guess(low: float, high: float) -> float:
    """The adversary's flat guess of every input: the box's midpoint, its finite end, or 0.

    >>> flat_guess(0.0, 1.0), flat_guess(-math.inf, math.inf), flat_guess(0.0, math.inf)
    (0.5, 0.0, 0.0)
    """
    if math.isinf(low) and math.isinf(high):
        return 0.0
    return low if math.isinf(high) else high if math.isinf(low) else (low + high) / 2


def read_targets(view: View, server_round: int) -> tuple[list[Target], list[str]]:
    """The round's train replies the adversary reads as gradients, and why others are not."""
    instructions = {m.message_id: m for m in messages(view, tags.TRAIN, tags.INSTRUCTION)}
    targets, refused = [], []
    for reply in messages(view, tags.TRAIN, tags.REPLY):
        client = reply.head.sender
        instruction = instructions.get(str(reply.meta.get(tags.REPLY_TO, "")))
        if (client in view.knowledge or instruction is None or int(reply.head.round)
                != server_round or tags.ERROR in reply.meta):
            continue
        if reply.opaque or instruction.opaque or not reply.arrays:
            refused.append(f"{client}'s update is not readable")
            continue
        config, metrics = entries(instruction, tags.CONFIGS), entries(reply, tags.METRICS)
        if not {LR, LOCAL_EPOCHS, BATCH_SIZE} <= set(config) or EXAMPLES not in metrics:
            refused.append(f"{client}'s instruction does not say how it trains")
            continue
        rows = int(metrics[EXAMPLES])
        local = LocalTraining(epochs=int(config[LOCAL_EPOCHS]),
                              batch_size=int(config[BATCH_SIZE]) or max(rows, 1),
                              lr=float(config[LR]))
        why = one_step(local, rows)
        if why is not None:
            refused.append(f"{client}'s update is not one gradient: {why}")
            continue
        start = {name: value for _, name, value in instruction.arrays}
        end = {name: value for _, name, value in reply.arrays}
        norm = config.get(tags.CLIPPING_NORM_ENTRY)
        targets.append(Target(client, server_round, rows, local, start,
                              gradient_of(start, end, local.lr),
                              None if norm is None else float(norm)))
    return targets, refused


def read_labels(target: Target, network: Any, n: int) -> np.ndarray:
    """The target's labels from its output-layer gradient: iDLG's rule for one row, Geng et
    al.'s counts (mean prediction on dummy inputs at the start and end weights) for more."""
    g = target.gradient
    if n == 1:
        return np.array([idlg_label(g["2.weight"], g["2.bias"])])
    end = {k: target.start[k] - target.local.lr * g[k] for k in g}
    weights = [np.concatenate([np.ravel(w[k]) for k in model.LAYERS]) for w in (target.start, end)]
    probs = mean_prediction(network, weights, input_shape=(network[0].in_features,))
    counts = label_counts_from_bias_update(-target.local.lr * g["2.bias"], n_samples=n,
                                           local=target.local, mean_probs=probs)
    return np.repeat(np.arange(counts.size), counts)


@register("attack", "flower-gradient-inversion")
class FlowerGradientInversion(Attack):
    """DLG / iDLG / Inverting Gradients on a Flower client's FedSGD update: its training rows from
    the train reply and the global model it was sent.

    DLG, iDLG or Inverting Gradients on each Flower client's FedSGD update (the server).
    """

    paper = "Zhu, Liu, Han, Deep Leakage from Gradients, NeurIPS 2019"
    default_scorer = "pixel-recovery"
    needs_tags = frozenset({tags.TRAIN_INSTRUCTION, tags.TRAIN_REPLY,
                            tags.TRAIN_INSTRUCTION_ARRAYS, tags.TRAIN_REPLY_ARRAYS})
    budget_params = ("steps",)
    starts_params = ("restarts",)
    produces = "rows"

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        method: Annotated[str, Choice("dlg", "ig")] = "dlg"
        """dlg (squared L2 distance, L-BFGS) or ig (1 - cosine plus TV, signed Adam)."""
        labels: Annotated[str, Choice("read", "joint")] = "read"
        """read: iDLG's label of one row, Geng et al.'s counts for more; joint: soft labels
        fitted with the inputs (DLG as published)."""
        steps: Steps = 100
        """Optimiser steps of each start (L-BFGS up to 20 line-search iterations each)."""
        restarts: Restarts = 1
        """Random starts per client; the lowest objective is kept."""
        lr: Rate = 0.0
        """Learning rate of the inversion; 0: the method's own (dlg 1, ig 0.1)."""
        tv_weight: Weight = 0.0
        """Weight of the total-variation prior (ig; Geiping et al. use 1e-4 and more)."""
        low: float = -math.inf
        """Lower end of the box the rows are clipped into (-inf: none)."""
        high: float = math.inf
        """Upper end of that box (inf: none)."""
        round: Annotated[int, Int(min=1)] = 1
        """The FedSGD round whose updates are inverted (1 is the first)."""
        max_samples: Annotated[int, Int(min=1)] = 64
        """Rows fitted at most per client; a client holding more is modelled by that many."""
        seed: Seed = None
        """Seed of the random starts (each client adds its position); None: the run's public
        seed (0 when unknown)."""

        def __post_init__(self) -> None:
            check_box(self)

    def unmet(self, view: View) -> str | None:
        targets, refused = read_targets(view, self.params.round)
        if not targets:
            why = "; ".join(refused) or "it observed no train reply of another party"
            return f"{view.threat} reads no FedSGD update in round {self.params.round}: {why}"
        return None

    def run(self, view: View) -> Reconstruction:
        p = self.params
        targets, refused = read_targets(view, p.round)
        box = None if math.isinf(p.low) and math.isinf(p.high) else (p.low, p.high)
        seed = self.seed_for(view)
        estimates, baseline, described, records = {}, {}, {}, []
        for position, target in enumerate(targets):
            n = min(target.rows, p.max_samples)
            labels = None if p.labels == "joint" else read_labels(target, self._network(target), n)
            key = value_key(target.client, tags.TRAINING_ROWS)
            flat = target.start["0.weight"].shape[1]
            baseline[key] = np.full((n, flat), flat_guess(p.low, p.high))
            start = baseline[key]
            read = (first_layer_row(target.gradient["0.weight"], target.gradient["0.bias"])
                    if n == 1 and "0.bias" in target.gradient else None)
            if read is not None:  # one row: the first layer gives it away; matching refines
                start = read.reshape(1, flat)
                if box is not None:
                    start = np.clip(start, *box)
            result = self._invert(target, labels, n, box, start, seed + position)
            estimates[key] = result.inputs.reshape(n, -1)
            records.append(result.convergence)
            described[target.client] = {
                "round": target.round, "rows": target.rows, "fitted": n,
                "labels": "fitted" if labels is None else "read",
                "label_values": result.labels.tolist(), "clipped": target.clipped,
                "start": "first layer (closed form)" if read is not None else "flat",
                "clipping_norm": target.clipping_norm, "objective": result.loss}
        return Reconstruction(
            attack=self.name, threat=str(view.threat), estimates=estimates, baseline=baseline,
            info={"method": p.method, "targets": described, "not_read": refused,
                  "convergence": combine(records).to_info()})

    def _network(self, target: Target) -> Any:
        """The perceptron at the target's starting weights, in float64."""
        shapes = {name: tuple(v.shape) for name, v in target.start.items()}
        network = model.build(model.architecture_of(shapes)).double()
        model.load(network, target.start)
        return network

    def _invert(self, target: Target, labels: np.ndarray | None, n: int,
                box: tuple[float, float] | None, prior: np.ndarray, seed: int) -> Inversion:
        torch = require_torch("flower-gradient-inversion")
        p = self.params
        network = self._network(target)
        shape = image_shape(network[0].in_features)
        reads = torch.nn.Sequential(torch.nn.Flatten(), network) if len(shape) > 1 else network
        total = p.steps * (p.restarts + 1)  # the flat prior start and the random ones
        return invert_gradient(
            reads, [target.gradient[name] for name in model.LAYERS], input_shape=shape,
            n_samples=n, n_classes=network[2].out_features, method=p.method, labels=labels,
            steps=p.steps, lr=p.lr or None, tv_weight=p.tv_weight,
            tv_axes=tuple(range(1, len(shape) + 1)) if p.tv_weight else (),
            signed=p.method == "ig", bounds=box, init=prior.reshape(n, *shape),
            restarts=p.restarts, seed=seed,
            on_step=lambda s: self.report_progress(s, total, "step",
                                                   label=f"{self.name} of {target.client}"))
