"""Label inference from S-FedMV's FedAvg updates: which classes a client trained on.

The update of each view's output bias carries the client's labels. With one sample (iDLG,
Zhao et al. 2020): the true class's bias gradient ``p_c - 1`` is negative at every local step
and every other class's positive, whatever the optimizer, so only the true class's bias grows.
With several samples under SGD: the class counts (after Geng et al., "Towards General Deep
Leakage in Federated Learning", 2021;
:func:`fedsec.attacks.inversion.labels.label_counts_from_bias_update`), with the client's mean
prediction estimated as Geng et al. do: the view's extractor (its architecture is broadcast)
reads standard normal dummy sequences at the weights the client started from and those it
returned (:func:`fedsec.attacks.inversion.labels.mean_prediction`).
Under RMSProp with several samples every step is normalised per coordinate and the counts are
not readable from the bias alone: such clients are outside this attack (the inversion attack
fits their labels jointly with the inputs instead).

Every view's extractor trains on the same labels, so the counts read from each view are
averaged. The estimate is the client's label multiset (sorted; the order of its sessions is not
recovered), scored by ``label-counts``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np

from fedsec.attacks.fedmv.family import FedAvgUpdateAttack
from fedsec.attacks.fedmv.inversion_params import UpdateRead
from fedsec.attacks.fedmv.updates import (
    Target,
    broadcast_meta,
    no_update_reason,
    read_targets,
    view_slices,
    view_spans,
)
from fedsec.attacks.inversion.labels import (
    label_counts_from_bias_update,
    mean_prediction,
)
from fedsec.declare import Int
from fedsec.nn import LocalTraining
from fedsec.outcomes import Reconstruction
from fedsec.private_store import value_key
from fedsec.protocols.fedmv import extractor, tags
from fedsec.registry import register
from fedsec.view import View


def infer_labels(delta_bias: np.ndarray, n: int, local: LocalTraining,
                 mean_probs: np.ndarray | None = None) -> np.ndarray | None:
    """The client's labels (sorted) from its output bias update, when they can be read.

    One sample: the class whose bias grew most. Several samples under SGD: the class counts
    (with the client's mean prediction ``mean_probs``, uniform when None). Several under
    RMSProp: None.

    Examples
    --------
    >>> infer_labels(np.array([-0.2, 0.5, -0.3]), 1, LocalTraining(1, 1, 0.1)).tolist()
    [1]
    >>> infer_labels(np.array([-0.2, 0.5, -0.3]), 2, LocalTraining(1, 1, 0.1, "rmsprop"))
    """
    counts = class_counts(delta_bias, n, local, mean_probs)
    return None if counts is None else np.repeat(np.arange(counts.size), counts)


def class_counts(delta_bias: np.ndarray, n: int, local: LocalTraining,
                 mean_probs: np.ndarray | None = None) -> np.ndarray | None:
    """How many of the client's ``n`` samples are of each class, or None when unreadable."""
    delta = np.asarray(delta_bias, dtype=np.float64)
    if n == 1:
        return np.eye(delta.size, dtype=np.int64)[int(np.argmax(delta))]
    if local.optimizer == "sgd":
        return label_counts_from_bias_update(delta, n_samples=n, local=local,
                                             mean_probs=mean_probs)
    return None


def view_mean_prediction(meta: dict[str, Any], i: int, start: np.ndarray,
                         end: np.ndarray) -> np.ndarray:
    """View ``i``'s mean prediction on dummy sequences (full length), averaged over the
    client's start and end weights (each the whole concatenated vector)."""
    span = view_spans(meta)[i][1]
    spec = extractor.ExtractorSpec.from_meta(meta[tags.EXTRACTORS][i])
    T = int(meta[tags.SEQUENCES][i]["length"])
    return mean_prediction(extractor.build(spec, seed=0), [start[span], end[span]],
                           input_shape=(T, spec.inputs))


def read_counts(meta: dict[str, Any], target: Target, local: LocalTraining
                ) -> np.ndarray | None:
    """The target client's class counts, read from every view's output bias and combined;
    None when unreadable (several samples under RMSProp)."""
    starts = view_slices(meta, target.start)
    ends = view_slices(meta, target.end)
    per_view = []
    for i, (start, end) in enumerate(zip(starts, ends, strict=True)):
        probs = None
        if target.rows > 1 and local.optimizer == "sgd":
            probs = view_mean_prediction(meta, i, target.start, target.end)
        per_view.append(class_counts(end["head.bias"] - start["head.bias"], target.rows,
                                     local, probs))
    readable = [c for c in per_view if c is not None]
    return combine_counts(readable, target.rows) if readable else None


def combine_counts(per_view: list[np.ndarray], n: int) -> np.ndarray:
    """Counts read from several views, averaged and rounded to ``n`` (largest remainders).

    Examples
    --------
    >>> combine_counts([np.array([2, 1]), np.array([1, 2]), np.array([2, 1])], 3).tolist()
    [2, 1]
    """
    mean = np.mean(per_view, axis=0) * n / max(float(np.mean([c.sum() for c in per_view])), 1.0)
    counts = np.floor(mean).astype(np.int64)
    for c in np.argsort(-(mean - counts), kind="stable")[:n - int(counts.sum())]:
        counts[c] += 1
    return counts


@register("attack", "update-labels")
class UpdateLabels(FedAvgUpdateAttack):
    """S-FedMV: the classes a client trained on, from the output-bias update of its FedAvg weights
    (iDLG for one sample; counts under SGD).

    The label counts of a client's local set from its FedAvg update's output bias.
    """

    default_scorer = "label-counts"
    closed_form = True

    @dataclass(frozen=True, kw_only=True)
    class Params(UpdateRead):
        clients: Annotated[int, Int(min=1)] = 64
        """Clients' updates read at most."""

    def _readable(self, view: View) -> tuple[list[Target], LocalTraining | None]:
        targets = read_targets(view, self.params.round, clients=self.params.clients,
                               other_rows=self.params.other_rows)
        if not targets:
            return [], None
        local = LocalTraining.from_meta(broadcast_meta(view)[tags.LOCAL_TRAINING])
        return [t for t in targets if t.rows == 1 or local.optimizer == "sgd"], local

    def unmet(self, view: View) -> str | None:
        targets, local = self._readable(view)
        if local is None:
            return no_update_reason(view, self.params.round)
        if not targets:
            return (f"the clients train with {local.optimizer} on several samples: the output "
                    "bias update does not give their label counts")
        return None

    def run(self, view: View) -> Reconstruction:
        targets, local = self._readable(view)
        assert local is not None
        meta = broadcast_meta(view)
        estimates: dict[str, np.ndarray] = {}
        info: dict[str, Any] = {"targets": {}}
        for target in targets:
            counts = read_counts(meta, target, local)
            assert counts is not None  # _readable keeps one sample or SGD
            estimates[value_key(target.client, tags.TRAINED_LABELS)] = \
                np.repeat(np.arange(counts.size), counts)
            info["targets"][target.client] = {"round": target.round, "rows": target.rows,
                                              "update": target.how,
                                              "counts": counts.tolist()}
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates=estimates,
                              baseline={}, info=info)
