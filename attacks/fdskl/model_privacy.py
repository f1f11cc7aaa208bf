"""FDSKL's model privacy: another active worker's share of ``f`` read from the partial predictions.

Gu, Dang, Li, Huang, "Federated Doubly Stochastic Kernel Learning for
Vertically Partitioned Data", Algorithm 2 and section 4 ("model privacy"): the
coefficients ``alpha_j`` stay on the active worker that created them; only the
partial predictions ``f^l(x_i) = sum_{j in Lambda^l} alpha_j phi_j(x_i)`` cross
the network, summed along a tree of the active workers to the worker whose
iteration it is. Every tree message carries the sum over a known set of workers
(its ``covers``), so a coalition that observed an iteration's messages holds
linear forms in the workers' shares; a worker's share is read exactly whenever
its unit vector lies in their span (:func:`read_out`). With two active workers
the picker receives the other's share alone at every iteration it picks; with
more, each leaf's share reaches its parent alone. Under a masking backend the
shares go to the picker by the backend's sum (:mod:`fedsec.protocols.fdskl.backend_sums`):
with two active workers one share is a direct send the picker opens, which is
that worker's share again; anyone else on the link opens nothing.

What the read-outs give: ``f^l`` at the iteration's samples, with the
coefficients of that iteration. The coefficients only shrink by ``1 -
step * regularization`` per iteration afterwards, so the last reading of a
training row, scaled to the end of training, estimates the final share there
(:func:`final_estimate`; the features created after the reading are missing
from it). When the coalition also knows the training rows in full (its own
columns and those the tree sums give exactly: ``offsets="none"``, or a
coalition that cancels the offsets), every reading is a linear equation in the
share's coefficients ``(alpha_j cos b_j, alpha_j sin b_j)``, and the attack
solves them (:mod:`.model_solve`): the share everywhere, at fresh points too,
replaces the extrapolation. The alphas themselves are identified only up to
sign (``(alpha_j, b_j)`` and ``(-alpha_j, b_j + pi)`` give the same sums), and
without the rows not at all: each multiplies ``phi_j(x_i)``, whose phase ``b_j``
no message carries; the attack gives no estimate of them (baseline: zero). The
readings, the estimate and the solved coefficients are in
``info["decision_values"]``, which the ``decision-function`` scorer compares
with the function the run's alphas make.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np

from fedsec.attacks.fdskl import model_solve as ms
from fedsec.declare import Bool, Declared, Float, Int
from fedsec.interfaces import Attack
from fedsec.outcomes import Reconstruction
from fedsec.private_store import held_shard
from fedsec.protocols.fdskl import tags
from fedsec.protocols.fdskl.dsg import PAPER
from fedsec.protocols.fdskl.plans import plan_from_dict
from fedsec.registry import register
from fedsec.scoring.decision_function import DECISION_VALUES
from fedsec.views import View


def read_out(forms: np.ndarray, values: np.ndarray, *, tol: float = 1e-9
             ) -> tuple[np.ndarray, np.ndarray]:
    """Which unknowns the observed sums determine, and their values.

    ``forms`` (k × q) are the 0/1 sets of workers each observed sum covers,
    ``values`` (k × B) the sums at the batch's B samples. Unknown ``l`` is
    determined iff ``e_l`` lies in the row space of ``forms`` (the projection on
    it keeps ``e_l``); its value is then the least-squares solution's.

    Examples
    --------
    >>> forms = np.array([[0.0, 1.0, 0.0], [0.0, 1.0, 1.0]])
    >>> known, x = read_out(forms, np.array([[2.0], [5.0]]))
    >>> known.tolist(), x[known].ravel().round(12).tolist()
    ([False, True, True], [2.0, 3.0])
    """
    forms = np.asarray(forms, dtype=np.float64)
    pinv = np.linalg.pinv(forms, rcond=tol)
    projection = np.diag(pinv @ forms)
    known = np.abs(projection - 1.0) <= 1e-6
    return known, pinv @ np.asarray(values, dtype=np.float64)


def final_estimate(iterations: np.ndarray, samples: np.ndarray, values: np.ndarray,
                   n_iterations: int, decay: float, n_rows: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Each row's last reading scaled to the end of training: ``decay^(T - t) f_t(x_i)``.

    Returns the rows read (sorted) and their estimates; the coefficients a reading used
    have shrunk by ``decay`` at each of the ``T - t`` later iterations.

    Examples
    --------
    >>> rows, f = final_estimate(np.array([1, 3]), np.array([0, 0]), np.array([1.0, 2.0]),
    ...                          4, 0.5, 2)
    >>> rows.tolist(), f.tolist()
    ([0], [1.0])
    """
    last = np.full(n_rows, -1)
    value = np.zeros(n_rows)
    order = np.argsort(iterations, kind="stable")
    for t, i, v in zip(iterations[order], samples[order], values[order], strict=True):
        last[i], value[i] = t, v
    rows = np.flatnonzero(last >= 0)
    return rows, value[rows] * decay ** (n_iterations - last[rows]).astype(float)


@dataclass
class _Iteration:
    """One iteration's observed sums: the samples, and per message its cover and values."""

    samples: list[int]
    covers: list[frozenset[str]]
    values: list[np.ndarray]


def observed_sums(view: View) -> tuple[dict[int, _Iteration], int]:
    """The readable, attributable partial-prediction messages, by iteration; and how many were
    skipped (protected for someone else, or with no known cover)."""
    out: dict[int, _Iteration] = {}
    skipped = 0
    for m in view.select(tag=tags.PARTIAL_PREDICTION):
        cover = _cover(m.sender, m.meta)
        if cover is None or not view.can_open(m) or tags.ITERATION not in m.meta:
            skipped += 1
            continue
        samples = (list(m.meta[tags.SAMPLES]) if tags.SAMPLES in m.meta
                   else [m.meta[tags.SAMPLE]])
        entry = out.setdefault(int(m.meta[tags.ITERATION]),
                               _Iteration([int(s) for s in samples], [], []))
        entry.covers.append(cover)
        entry.values.append(np.atleast_1d(np.asarray(view.open(m), dtype=np.float64)).ravel())
    return out, skipped


def _cover(sender: str, meta: Any) -> frozenset[str] | None:
    """The workers whose shares a message sums: its tree cover, or its sender's alone when the
    backend carried one share."""
    if tags.COVERS in meta and not meta.get(tags.DELIVERY, False):
        return frozenset(str(w) for w in meta[tags.COVERS])
    if meta.get(tags.TREE) == tags.BACKEND_SUM:
        return frozenset({sender})
    return None


def readings(sums: dict[int, _Iteration], workers: list[str], tol: float
             ) -> dict[str, dict[str, list[Any]]]:
    """Every exact reading of a worker's share: ``{worker: {iterations, samples, values}}``."""
    found: dict[str, dict[str, list[Any]]] = defaultdict(
        lambda: {"iterations": [], "samples": [], "values": []})
    index = {w: k for k, w in enumerate(workers)}
    for t, entry in sorted(sums.items()):
        forms = np.zeros((len(entry.covers), len(workers)))
        for r, cover in enumerate(entry.covers):
            forms[r, [index[w] for w in cover if w in index]] = 1.0
        values = np.vstack(entry.values)
        if values.shape[1] != len(entry.samples):
            continue  # a batch whose values and samples disagree: not interpretable
        known, x = read_out(forms, values, tol=tol)
        for k in np.flatnonzero(known):
            got = found[workers[k]]
            got["iterations"].extend([t] * len(entry.samples))
            got["samples"].extend(entry.samples)
            got["values"].extend(x[k].tolist())
    return dict(found)


def active_workers(view: View) -> list[str]:
    """The active workers in the run's order (the workers' order of a tree plan): the
    requesters of the tree plans and the ends of the partial predictions."""
    named = {str(m.meta.get(tags.REQUESTER)) for m in view.select(tag=tags.TREE_PLAN)
             if tags.REQUESTER in m.meta}
    named |= {m.sender for m in view.select(tag=tags.PARTIAL_PREDICTION)}
    named |= {m.receiver for m in view.select(tag=tags.PARTIAL_PREDICTION)}
    order = list(view.parties)
    for m in view.select(tag=tags.TREE_PLAN):
        order = list(plan_from_dict(m.meta[tags.PLAN]).workers)
        break
    return sorted(named, key=lambda w: order.index(w) if w in order else len(order))


def training_rows(view: View) -> int | None:
    """How many training rows there are: the rows of a member's own shard."""
    key = held_shard(0, "X")
    sizes = [np.shape(held[key])[0] for held in view.knowledge.values() if key in held]
    return max(sizes) if sizes else None


def kernel_of(view: View) -> dict[str, Any]:
    """The public facts of the random features the scorer needs: the width as broadcast (0 when
    the adversary saw no width and the parameters leave it to a rule)."""
    params = view.header["protocol"]["params"]
    width = float(params.get("kernel_width", 0.0))
    for m in view.select(tag=tags.KERNEL_WIDTH):
        if view.can_open(m):
            width = float(np.asarray(view.open(m)))
    return {"kernel": str(params.get("kernel", "rbf")), "width": width,
            "width_rule": str(params.get("width_rule", "scale")),
            "n_iterations": int(params["n_iterations"]),
            "features_per_iteration": int(params.get("features_per_iteration", 1)),
            "decay": 1.0 - float(params["step"]) * float(params["regularization"])}


@register("attack", "model-readout")
class ModelReadout(Attack):
    """FDSKL model privacy: read other active workers' partial predictions f^l(x_i) exactly from the
    tree sums (or a backend's direct share); the alphas stay at the baseline.

    Another active worker's share of ``f`` at training rows, from the partial predictions.
    """

    paper = PAPER
    default_scorer = "decision-function"
    needs_tags = frozenset({tags.PARTIAL_PREDICTION})
    closed_form = True

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        tol: Annotated[float, Float(min=0.0, min_inclusive=False)] = 1e-9
        """Relative singular-value cutoff of the solve that separates the shares."""
        solve: Annotated[bool, Bool()] = True
        """Solve for the coefficients (c_j, s_j) of each share read, when the coalition knows the
        training rows in full: the share at fresh points too (model_solve)."""
        max_entries: Annotated[int, Int(min=1)] = 50_000_000
        """Largest system (readings x unknowns) the solve builds; a larger one is skipped and
        the reason stated."""

    def unmet(self, view: View) -> str | None:
        if view.header.get("protocol", {}).get("name") != "fdskl":
            return "the transcript is not an fdskl run"
        sums, skipped = observed_sums(view)
        if not sums:
            return (f"{view.threat} can open none of the {skipped} "
                    f"{tags.PARTIAL_PREDICTION} message(s) it observed")
        return None

    def run(self, view: View) -> Reconstruction:
        sums, skipped = observed_sums(view)
        workers = active_workers(view)
        found = readings(sums, workers, self.params.tol)
        facts = kernel_of(view)
        n_rows = training_rows(view)
        targets = [w for w in workers if w not in view.knowledge]
        decision: dict[str, dict[str, Any]] = {}
        X, W, why = (ms.known_rows(view) if self.params.solve and found
                     else (None, None, "not asked for" if found else "no share read"))
        for worker in targets:
            got = found.get(worker)
            if got is None:
                continue
            entry: dict[str, Any] = {k: list(v) for k, v in got.items()}
            size = n_rows if n_rows is not None else max(got["samples"]) + 1
            rows, estimate = final_estimate(
                np.asarray(got["iterations"]), np.asarray(got["samples"]),
                np.asarray(got["values"]), facts["n_iterations"], facts["decay"], size)
            entry.update({"rows": rows.tolist(), "final": estimate.tolist(), "n_rows": size})
            if X is not None and W is not None:
                entry.update(self._solve(X, W, got, workers, worker, facts, rows, estimate))
            decision[worker] = entry
        info = {DECISION_VALUES: decision, **facts,
                "solved": {w: {k: decision[w]["function"][k] for k in ("rank", "n_unknowns")}
                           for w in decision if "function" in decision[w]},
                "not_solved": why or {w: decision[w]["skipped"] for w in decision
                                      if "skipped" in decision[w]},
                "active_workers": workers, "targets": targets,
                "iterations_observed": len(sums), "messages_skipped": skipped,
                "read_exactly": {w: len(decision[w]["values"]) for w in decision},
                "not_read": sorted(set(targets) - set(decision)),
                "alphas": "not estimated: up to sign at best, from a solved share "
                          "(baseline: zero)"}
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates={},
                              baseline={}, info=info)

    def _solve(self, X: np.ndarray, W: np.ndarray, got: dict[str, list[Any]],
               workers: list[str], worker: str, facts: dict[str, Any], rows: np.ndarray,
               estimate: np.ndarray) -> dict[str, Any]:
        """The coefficients of ``worker``'s share from its readings at rows known in full, and
        the share they give at those rows, in place of the extrapolated readings (kept at the
        other rows read)."""
        r = facts["features_per_iteration"]
        features = ms.owned_features(workers, worker, W.shape[0], r)
        known = np.isfinite(X).all(axis=1)
        samples = np.asarray(got["samples"])
        use = known[samples]
        if not use.any():
            return {"skipped": "no reading at a row known in full"}
        if int(use.sum()) * 2 * features.size > self.params.max_entries:
            return {"skipped": f"{int(use.sum())} readings x {2 * features.size} unknowns "
                               f"exceed max_entries={self.params.max_entries}"}
        A = ms.design(X, W[features], features, np.asarray(got["iterations"])[use],
                      samples[use], group=r, n_iterations=facts["n_iterations"],
                      decay=facts["decay"])
        coefficients, rank = ms.solve_share(A, np.asarray(got["values"])[use])
        final = np.zeros(X.shape[0])
        final[np.asarray(rows, dtype=np.int64)] = estimate
        final[known] = ms.share_at(X[known], W[features], coefficients)
        read = np.zeros(X.shape[0], dtype=bool)
        read[np.asarray(rows, dtype=np.int64)] = True
        shown = np.flatnonzero(known | read)
        return {"function": {"features": features.tolist(), "coefficients": coefficients.tolist(),
                             "rank": rank, "n_unknowns": 2 * features.size,
                             "readings_used": int(use.sum())},
                "rows": shown.tolist(), "final": final[shown].tolist()}
