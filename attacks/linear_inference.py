"""The ``linear-inference`` attack: regression over every equation a view holds about a secret.

Runs the extractor registered for the view's protocol
(:func:`fedsec.attacks.linear_systems.register_extractor`) and solves its
systems with the engine of :mod:`fedsec.attacks.linear_systems`: per-sample
least squares, or alternating least squares with shared offsets. Built-in
extractors: FDSKL (a worker's features from the masked partial dot products)
and FedCG secure (the Gram matrices ``K_h^T K_h`` from the CG epochs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np

from fedsec.attacks.linear_systems import (
    LinearSystem,
    error_curve,
    extractors,
    solve_rows,
    solve_shared,
)
from fedsec.convergence import CLOSED_FORM, combine
from fedsec.declare import Choice, Declared, Int
from fedsec.interfaces import Attack, Protocol
from fedsec.outcomes import Reconstruction
from fedsec.registry import register
from fedsec.views import View

PAPER = ("Gu, Dang, Li, Huang, Federated Doubly Stochastic Kernel Learning for Vertically "
         "Partitioned Data (Definition 6, Lemma 8); FedCG secure (Damiani et al. 2024)")
ESTIMATORS = ("auto", "per-sample", "shared-offsets")
ANCHORS = ("prior", "minmax")


@register("attack", "linear-inference")
class LinearInference(Attack):
    """Least squares over observed messages linear in a secret (FDSKL's masked partial products,
    FedCG's Gram products), with noise of known mean and shared offsets.

    Regression over every equation a view holds about each secret row, exact or noisy.
    """

    paper = PAPER
    default_scorer = "feature-recovery"
    needs_tags = frozenset()  # each extractor declares its own (Extractor.tags)

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        estimator: Annotated[str, Choice(*ESTIMATORS)] = "auto"
        """per-sample least squares, shared-offsets (alternating least squares with the shared
        offsets), or auto (shared offsets where a system has them)."""
        anchor: Annotated[str, Choice(*ANCHORS)] = "prior"
        """What fixes the shared-offsets solution's free translation: prior (offsets best match
        their known mean) or minmax (each column's smallest estimate is 0; min-max scaled data)."""
        curve_points: Annotated[int, Int(min=0)] = 8
        """Checkpoints of the error curve (predicted error against messages observed) reported in
        the result; 0: no curve."""

    @classmethod
    def applies_to(cls, protocol: type[Protocol]) -> bool:
        """Only protocols with a registered equation extractor whose tags they expose."""
        extractor = extractors().get(protocol.name)
        return extractor is not None and extractor.tags <= protocol.exposes

    def not_applicable(self, view: View) -> str | None:
        protocol = view.header.get("protocol", {}).get("name")
        known = extractors()
        if protocol not in known:
            return (f"no equation extractor for protocol {protocol!r} (known: "
                    f"{', '.join(sorted(known))})")
        extractor = known[protocol]
        missing = sorted(extractor.tags - view.tags())
        if missing:
            return f"{view.threat} observed no message tagged {', '.join(missing)}"
        return None if extractor.applicable is None else extractor.applicable(view)

    def run(self, view: View) -> Reconstruction:
        systems = extractors()[view.header["protocol"]["name"]].systems(view)
        chosen = self._choose(systems)
        source = next((s for s in systems if s.nuisance is None), None)
        estimates: dict[str, np.ndarray] = {}
        baseline: dict[str, np.ndarray] = {}
        info: dict[str, Any] = {"systems": []}
        if self.params.curve_points and source is not None:
            info["curve"] = {"system": source.label,
                             "points": error_curve(source, self.params.curve_points)}
        records = []
        for system in chosen:
            entry: dict[str, Any] = {"label": system.label, "equations": int(system.rows.size),
                                     **system.info}
            if system.nuisance is not None:
                x, extra = solve_shared(system, anchor=self.params.anchor)
                records.append(extra.pop("convergence"))
                entry.update(extra)
            else:
                x, _ = solve_rows(system)
                records.append(CLOSED_FORM)
            found = np.isfinite(x).all(axis=1)
            entry["rows_estimated"] = int(found.sum())
            entry["rows"] = int(system.n_rows)
            entry["rows_missing"] = np.flatnonzero(~found)[:1000].tolist()
            x[~found] = system.baseline
            for key, start, stop in system.parts:
                value = x[:, start:stop]
                if system.symmetric:
                    value = 0.5 * (value + value.T)
                estimates[key] = value
                baseline[key] = np.full_like(value, system.baseline)
            info["systems"].append(entry)
        info["convergence"] = combine(records).to_info()
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates=estimates,
                              baseline=baseline, info=info)

    def _choose(self, systems: list[LinearSystem]) -> list[LinearSystem]:
        """Systems of the chosen estimator; systems offered for one estimator only stay."""
        wanted = self.params.estimator
        only = [s for s in systems if s.estimator is None]
        offered = [s for s in systems if s.estimator is not None]
        if wanted == "auto":  # shared offsets where they exist, per-sample for the rest
            shared = [s for s in offered if s.estimator == "shared-offsets"]
            covered = {key for s in shared for key, _, _ in s.parts}
            rest = [s for s in offered if s not in shared
                    and not {key for key, _, _ in s.parts} <= covered]
            return only + rest + shared
        return only + [s for s in offered if s.estimator == wanted]
