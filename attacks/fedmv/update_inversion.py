"""Inverting S-FedMV's FedAvg updates: a client's typing sessions from the weights it returned.

The server broadcasts every view's GRU extractor with the local training every client follows
(epochs, batch size, learning rate, RMSProp), and reads each client's ``[N_l, N_l w^l]``
(under the plain backend). Whoever reads one client's returned weights knows where it started
(the broadcast), how it trained and on how many sequences, and can simulate the local run on
dummy sequences and fit them until the simulated update matches the real one (Dimitrov et al.,
"Data leakage in federated averaging", TMLR 2022; :func:`fedsec.attacks.inversion.invert_fedavg`).
Each view's extractor trains on that view alone, so each view is inverted on its own.

Where the update comes from (:func:`.updates.read_targets`): the server reads each client's
update; all clients but one difference the other's out of the next average (two-client
differencing), assuming ``other_rows`` samples (by default the mean of their own counts).

Labels come from the update of each view's output bias (their counts, after Geng et al., with
the mean prediction estimated on dummy sequences; :func:`.update_labels.read_counts`;
``labels = "joint"`` optimises soft labels with the inputs instead). What the attacker does not
know: the client's batch order (private; a single dummy set is exact only with ``batch_size >=
N_l``; ``epoch_prior`` fits one set per epoch tied by Dimitrov et al.'s epoch-order-invariant
prior) and each sequence's length (it reconstructs full-length sequences). At most
``max_samples`` dummy sequences are fitted; a client holding more is modelled by that many (the
attack's budget, a boundary the audit charts). Each view's run reports how it converged, the
best of ``restarts`` random starts kept; ``info["convergence"]`` combines them.

:func:`reconstruct` is the loop over targets and views that the gradient attacks on the same
updates (:mod:`.gradient_inversion`) share.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np

from fedsec.attacks.fedmv.family import FedAvgUpdateAttack
from fedsec.attacks.fedmv.inversion_params import Labels, Rate, Seed, UpdateInversion, Weight
from fedsec.attacks.fedmv.update_labels import combine_counts, read_counts
from fedsec.attacks.fedmv.updates import (
    Target,
    broadcast_meta,
    no_update_reason,
    read_targets,
    view_spans,
)
from fedsec.attacks.inversion.dummy import Inversion
from fedsec.attacks.inversion.fedavg import LocalTraining, invert_fedavg
from fedsec.convergence import combine
from fedsec.data.sequences import PRESENT
from fedsec.declare import Choice
from fedsec.interfaces import Attack
from fedsec.outcomes import Reconstruction
from fedsec.private_store import value_key
from fedsec.protocols.fedmv import extractor, tags
from fedsec.registry import register
from fedsec.view import View


def with_present(inputs: np.ndarray, channels: list[str]) -> np.ndarray:
    """Reconstructed inputs ``(n, T, c')`` as flattened rows in the view's own columns:
    every channel in ``channels`` order, :data:`PRESENT` (if the view has it) all ones."""
    n, T, _ = inputs.shape
    out = np.ones((n, T, len(channels)))
    keep = [j for j, c in enumerate(channels) if c != PRESENT]
    out[:, :, keep] = inputs
    return out.reshape(n, -1)


InvertView = Callable[[Target, int, "np.ndarray | None", int], Inversion]
"""``invert(target, view_index, labels, n)``: one view's ``n`` dummy sequences fitted to the
target's update (``labels`` fixed, or None to fit them)."""


def counted_labels(meta: dict[str, Any], target: Target, n: int) -> np.ndarray | None:
    """The target's labels from its output-bias updates, scaled to ``n`` samples; None when
    unreadable (several samples under RMSProp)."""
    counts = read_counts(meta, target, LocalTraining.from_meta(meta[tags.LOCAL_TRAINING]))
    if counts is None:
        return None
    return np.repeat(np.arange(counts.size), combine_counts([counts], n))


def reconstruct(attack: Attack, view: View, targets: list[Target], invert: InvertView, *,
                labels: Callable[[Target, int], np.ndarray | None],
                max_samples: int) -> Reconstruction:
    """Every target's sequences and labels, view by view, with the runs' convergence.

    ``labels(target, n)`` gives the labels fixed for the target's ``n`` dummy sequences (or
    None). The estimates are keyed like the client's truth (its trained rows and labels, the
    labels the most probable class averaged over views); ``info`` holds each view's layout,
    each target's reading and ``convergence`` (:func:`fedsec.convergence.combine` of every
    view's run).
    """
    meta = broadcast_meta(view)
    estimates: dict[str, np.ndarray] = {}
    info: dict[str, Any] = {"targets": {}, "layouts": {}}
    records = []
    for target in targets:
        n = min(target.rows, max_samples)
        fixed = labels(target, n)
        blocks, probs = [], []
        for i, view_name in enumerate(meta[tags.VIEWS]):
            sequences = meta[tags.SEQUENCES][i]
            result = invert(target, i, fixed, n)
            blocks.append(with_present(result.inputs, list(sequences["channels"])))
            probs.append(result.label_probs)
            records.append(result.convergence)
            info["layouts"][view_name] = dict(sequences)
        estimates[value_key(target.client, tags.TRAINED_ROWS)] = \
            np.concatenate(blocks, axis=1)
        estimates[value_key(target.client, tags.TRAINED_LABELS)] = \
            np.mean(probs, axis=0).argmax(1)
        info["targets"][target.client] = {"round": target.round, "rows": target.rows,
                                          "fitted": n, "update": target.how,
                                          "labels": "fitted" if fixed is None else "read"}
    info["convergence"] = combine(records).to_info()
    return Reconstruction(attack=attack.name, threat=str(view.threat), estimates=estimates,
                          baseline={}, info=info)


@register("attack", "fedavg-inversion")
class FedAvgInversion(FedAvgUpdateAttack):
    """S-FedMV: simulate a client's local RMSProp epochs on dummy sequences and fit them to the
    weights it returned (Dimitrov et al.'s FedAvg inversion).

    Gradient inversion of a client's FedAvg update (the server, or all clients but one).
    """

    default_scorer = "sequence-match"
    budget_params = ("steps",)
    starts_params = ("restarts",)

    @dataclass(frozen=True, kw_only=True)
    class Params(UpdateInversion):
        method: Annotated[str, Choice("ig", "dlg")] = "dlg"
        """dlg (relative squared L2 distance, L-BFGS; the stronger on S-FedMV's updates) or ig
        (1 - cosine between simulated and observed updates, Adam)."""
        lr: Rate = 0.0
        """Learning rate of the inversion; 0: the method's own (ig 0.1, dlg 1.0)."""
        epoch_prior: Weight = 0.0
        """Weight of Dimitrov et al.'s epoch-order-invariant prior (one dummy set per local epoch,
        tied by their means); 0: one dummy set in a fixed batch order."""
        tv_weight: Weight = 0.0
        """Weight of a total-variation prior along each sequence's time axis; 0: none."""
        labels: Labels = "counts"
        """counts: labels read from each view's output-bias update (when readable); joint: soft
        labels optimised with the inputs."""
        seed: Seed = None
        """Seed of the dummy sequences' starting point (each view adds its index); None: the
        run's public seed (0 when unknown)."""

    def unmet(self, view: View) -> str | None:
        if not self._targets(view):
            return no_update_reason(view, self.params.round)
        return None

    def _targets(self, view: View) -> list[Target]:
        return read_targets(view, self.params.round, clients=self.params.clients,
                            other_rows=self.params.other_rows)

    def run(self, view: View) -> Reconstruction:
        p = self.params
        meta = broadcast_meta(view)
        seed = self.seed_for(view)
        return reconstruct(
            self, view, self._targets(view),
            lambda target, i, labels, n: self._invert_view(meta, i, target, labels, n, seed),
            labels=lambda target, n: (counted_labels(meta, target, n)
                                      if p.labels == "counts" else None),
            max_samples=p.max_samples)

    def _invert_view(self, meta: dict[str, Any], i: int, target: Target,
                     labels: np.ndarray | None, n: int, seed: int) -> Inversion:
        """View ``i``'s ``n`` dummy sequences fitted to the target's update, from the starts
        ``seed`` draws (plus ``i``)."""
        p = self.params
        span = view_spans(meta)[i][1]
        spec = extractor.ExtractorSpec.from_meta(meta[tags.EXTRACTORS][i])
        T = int(meta[tags.SEQUENCES][i]["length"])
        total = p.steps * p.restarts
        return invert_fedavg(
            extractor.build(spec, seed=0), target.start[span], target.end[span],
            local=LocalTraining.from_meta(meta[tags.LOCAL_TRAINING]), n_samples=n,
            input_shape=(T, spec.inputs), n_classes=spec.classes, method=p.method,
            labels=labels, steps=p.steps, lr=p.lr or None, tv_weight=p.tv_weight,
            tv_axes=(1,) if p.tv_weight else (), restarts=p.restarts,
            epoch_prior=p.epoch_prior, seed=seed + i,
            on_step=lambda s: self.report_progress(s, total, "step",
                                                   label=f"{self.name} of view {i + 1}"))
