"""Reconstructed sequences scored view by view after Hungarian matching (gradient inversion).

An inversion attack on a client's update returns some sequences per view, in no order, as
flattened rows in the view's own columns (keyed like the client's truth: ``.../X``, labels
``.../y``) (``{view}.{channel}[t]``, time major); the attack's
``info["layouts"]`` gives each view's length and channels, in column order. Each view is
matched to the client's true sequences (:func:`match_reconstructions`), over the real steps
of each true sequence; the candidate pool for ``nearest_rate`` is every client's sequences,
the target's first (every party's truth under the same key). The baseline is the class-mean
guess (see :mod:`fedsec.scoring.reconstruction_match`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from fedsec.data.sequences import SequenceLayout, split_present, to_steps
from fedsec.errors import ValidationError
from fedsec.interfaces import Scorer
from fedsec.outcomes import Reconstruction
from fedsec.private_store import parse_truth_key, truth_key
from fedsec.registry import register
from fedsec.scoring.reconstruction import check_truth, other_parties, target_summary
from fedsec.scoring.reconstruction_match import match_reconstructions

METRICS = ("mse", "correlation", "label_accuracy", "nearest_rate")


def _labels_key(key: str) -> str:
    parsed = parse_truth_key(key)
    return truth_key(parsed.party, *parsed.path[:-1], "y")


def view_blocks(X: np.ndarray, layouts: Mapping[str, Mapping[str, Any]]
                ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each view's inputs ``(n, T, c')`` (without :data:`PRESENT`) and lengths.

    The views' columns are consecutive, in ``layouts`` order.
    """
    views = [SequenceLayout(view=view, channels=tuple(lay["channels"]),
                            length=int(lay["length"])) for view, lay in layouts.items()]
    width = sum(v.n_columns for v in views)
    if X.ndim != 2 or X.shape[1] != width:
        raise ValidationError(f"sequences of {X.shape[1] if X.ndim == 2 else X.shape} columns "
                              f"do not fit the views' layouts ({width} columns).")
    out, start = {}, 0
    for layout in views:
        block = X[:, start:start + layout.n_columns]
        start += layout.n_columns
        out[layout.view] = split_present(to_steps(block, layout), layout)
    return out


@register("scorer", "sequence-match")
class SequenceMatch(Scorer):
    """Reconstructed sequences matched to the client's true sequences per view: MSE, correlation,
    labels, whether each singles out its sequence; vs class means.

    Per view, reconstructed sequences matched to the client's (Hungarian), vs class means.
    """

    paper = ("Dimitrov, Balunovic, Konstantinov, Vechev, Data leakage in federated averaging, "
             "TMLR 2022")
    reads = frozenset({"sequences"})
    glossary: ClassVar[Mapping[str, str]] = {
        "mse": "the mean squared error of each reconstruction against its matched sequence "
               "(real steps only), averaged over pairs and views.",
        "correlation": "the Pearson correlation of each matched pair, averaged.",
        "label_accuracy": "the fraction of reconstructions whose label is their match's.",
        "nearest_rate": "the fraction of reconstructions whose nearest training sequence, "
                        "among every client's, is the one they were matched with.",
        "advantage": "1 - MSE / the class-mean guess's (1: exact, 0: the prior).",
    }

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        layouts = reconstruction.info.get("layouts", {})
        targets = [k for k in reconstruction.estimates if parse_truth_key(k).path[-1] == "X"]
        check_truth(targets, truth)
        per_target: dict[str, dict[str, float]] = {}
        for key in targets:
            others = other_parties(key, truth)
            pool_keys = [key, *others]
            y_key = _labels_key(key)
            estimate = view_blocks(np.asarray(reconstruction.estimates[key], dtype=float),
                                   layouts)
            pools = [view_blocks(np.asarray(truth[k], dtype=float), layouts) for k in pool_keys]
            pool_labels = np.concatenate([np.asarray(truth[_labels_key(k)]) for k in pool_keys])
            rows = []
            for view in layouts:
                true_x, lengths = pools[0][view]
                rows.append(match_reconstructions(
                    estimate[view][0], true_x,
                    recon_labels=np.asarray(reconstruction.estimates.get(y_key)) if
                    y_key in reconstruction.estimates else None,
                    true_labels=np.asarray(truth[y_key]), lengths=lengths,
                    pool=np.concatenate([p[view][0] for p in pools]),
                    pool_labels=pool_labels,
                    pool_lengths=np.concatenate([p[view][1] for p in pools])))
            entry = {m: float(np.mean([r[m] for r in rows])) for m in METRICS}
            entry.update({f"baseline_{m}": float(np.mean([r[f"baseline_{m}"] for r in rows]))
                          for m in METRICS})
            entry["n_matched"] = float(rows[0]["n_matched"]) if rows else 0.0
            per_target[key] = entry
        return target_summary(per_target, METRICS, advantage_of="mse")
