"""FDSKL: federated doubly stochastic kernel learning on vertically partitioned data.

Gu, Dang, Li, Huang, "Federated Doubly Stochastic Kernel Learning for
Vertically Partitioned Data" (2020), Algorithms 1–3, as the project's SEEDS.md
reads them. ``q`` workers hold feature groups ``G_l`` of the same samples;
active workers also hold the labels. Iteration ``t``: an active worker picks a
sample ``i`` and sends ``i`` down its tree (T0); every worker regenerates
``w_t`` from the shared seed; ``w_j^T x_i + b_j`` is computed by Algorithm 3
(masked partial products summed along T1, offsets removed along T2) for the
new feature and for every earlier feature not yet evaluated at ``x_i``; each
active worker forms ``f^l(x_i) = sum_{j in Lambda^l} alpha_j phi_j(x_i)`` and
the ``f^l`` are summed along a tree of the active workers; the picker sets
``alpha_t = -gamma L'(f(x_i), y_i) phi_t(x_i)`` and keeps it (model privacy);
every active worker scales its earlier alphas by ``1 - gamma lambda``.

How this simulation runs it, and where it departs from the text:

* Iterations run in batches of ``block``: the pairs a batch needs depend only on
  the sample order and the features, so Algorithm 3 runs once per batch, one
  message per tree edge carrying every pair; the alphas are then updated one
  iteration at a time, exactly as DSG does. The decay of line 10 needs no
  message of its own: the next index a worker receives tells it an iteration
  passed.
* Active workers take iterations in turn (``t mod n_active``), the sequential
  form of "keep doing in parallel".
* The values ``phi_j(x_i)`` a worker keeps (line 4) are dropped after the sample's last visit
  in the schedule, which no later step reads (:mod:`.saved`).
* ``batch_size`` / ``features_per_iteration`` > 1: each iteration draws B samples and r
  features and takes the averaged step (:mod:`.batches`); the picker owns all r features,
  and one partial-prediction message per edge carries the B values of ``f^l``.
* ``width_rule="median"``: the width is the median distance of seeded sample pairs, summed
  from partial distances along masked trees (:mod:`.median_width`).
* Trees come from :func:`protocols.fdskl_trees.build_plan`, which refuses the
  paper's Figure 2a layout (see its docstring) and any layout where a single
  worker can compute another worker's partial products; ``star`` is refused
  whenever offsets are used.
* Test predictions are computed by the simulator as the evaluator (the test
  set belongs to no party), from the alphas, the shared seed and the phases;
  the federated prediction of Algorithm 2 on test rows would repeat the
  training-time messages for every test sample.
* Under the ``plain`` backend (the default) the masking is the paper's own (offsets and two
  trees). Under any other backend the backend's masks or encryption take their place: the
  partial products and the partial predictions are summed by the backend and opened by the
  requester alone (:mod:`.backend_sums`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import numpy as np

from fedsec.declare import Choice
from fedsec.errors import ValidationError
from fedsec.interfaces import Defense, MaskingBackend, Protocol, apply_transforms
from fedsec.outcomes import Outcome
from fedsec.protocols.fdskl import dsg, median_width, tags
from fedsec.protocols.fdskl import random_features as rf
from fedsec.protocols.fdskl.announce import announce
from fedsec.protocols.fdskl.backend_sums import (
    BackendAlgorithm3,
    check_complete_sums,
    decrypting_parties,
    sum_to,
    uses_masking,
)
from fedsec.protocols.fdskl.batches import batch_gradients, n_owned, new_alphas, owned, segments
from fedsec.protocols.fdskl.model import random_feature_model
from fedsec.protocols.fdskl.plans import TreePlan, build_plan, total_tree
from fedsec.protocols.fdskl.saved import SavedFeatures, keep_features, last_visits
from fedsec.protocols.fdskl.sums import (
    OFFSET_MODES,
    Algorithm3,
    Pairs,
    broadcast_down,
    pairs_of,
    partial_products,
    tree_sum,
)
from fedsec.protocols.fdskl.trees import KINDS, layout
from fedsec.registry import register

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.data import Dataset
    from fedsec.federation import Federation, Party
    from fedsec.network import Network


@dataclass(frozen=True, kw_only=True)
class FDSKLParams(dsg.DSGParams):
    """DSG's parameters plus the offsets mode and the communication structure."""

    offsets: Annotated[str, Choice(*OFFSET_MODES)] = "per-feature"
    """Offsets of Algorithm 3: per-feature (the paper: one per worker and feature, reused), fresh
    (new ones for every pair) or none (raw partial products travel along T1)."""
    structure: Annotated[str, Choice(*KINDS)] = "tree"
    """Layout of the summation trees: tree (balanced, log depth), cycle (a ring) or star (everyone
    sends to one node; refused whenever offsets are used)."""


class _Worker:
    """One worker's state: its features, its columns of the directions, alphas, saved values."""

    def __init__(self, party: Party, n_features: int, last_visit: np.ndarray) -> None:
        (cell,) = party.held_shard().cells
        order = np.argsort(cell.rows)  # samples are training-row indices
        self.party = party
        self.X = np.asarray(cell.X, dtype=np.float64)[order]
        self.columns = np.asarray(cell.columns)
        self.y = None if cell.y is None else np.asarray(cell.y)[order]
        self.W = np.empty((n_features, self.columns.size))
        self.offsets = np.full(n_features, np.nan)
        self.alpha = np.zeros(0)  # sized by the protocol for active workers
        self.saved = SavedFeatures(last_visit)  # phi_j(x_i) per sample, while it comes back


def _partials(net: Network, workers: dict[str, _Worker], pairs: Pairs, residue: int,
              stride: int, group: int, masked: bool) -> Callable[[str], np.ndarray]:
    """Each worker's partial products for ``pairs`` (with its per-feature offsets when
    ``masked``), computed when T1 first needs them: one worker's vector at a time."""
    def partial(n: str) -> np.ndarray:
        w = workers[n]
        with net.compute(n):
            return partial_products(w.W, w.X, pairs, residue, stride,
                                    w.offsets if masked else None, group)
    return partial


@register("protocol", "fdskl")
class FDSKL(Protocol):
    """Federated doubly stochastic kernel learning (vertical): random features from a shared seed,
    masked partial dot products summed along two trees.

    Vertically partitioned DSG: partial products masked by offsets, summed along trees.
    """

    paper = dsg.PAPER
    partition_kinds = ("vertical",)
    default_partition = "vertical:parties=4"
    default_dataset = "breast_cancer"
    requires = frozenset({"sum"})
    renamed_tags = tags.RENAMED
    exposes = frozenset({tags.SAMPLE_INDEX, tags.PARTIAL_DOT, tags.OFFSET_SUM,
                         tags.PARTIAL_PREDICTION, tags.TREE_PLAN, tags.FEATURE_COLUMNS,
                         tags.COLUMN_STATISTICS, tags.KERNEL_WIDTH, tags.WIDTH_PAIRS,
                         tags.PARTIAL_DISTANCE, tags.DISTANCE_MASK})
    Params = FDSKLParams

    def run(self, federation: Federation, backend: MaskingBackend,
            defenses: Sequence[Defense] = ()) -> Outcome:
        p: FDSKLParams = self.params
        self.check_backend(backend)
        masking = uses_masking(backend)
        if masking:
            check_complete_sums(backend)
        part = federation.partition
        if part is None or part.feature_overlap or part.n_cohorts != 1:
            raise ValidationError("FDSKL runs on a vertical partition without feature overlap.")
        names = tuple(part.data_parties)
        B, r, F = p.batch_size, p.features_per_iteration, p.n_features
        plan = dsg.schedule(federation.secret_seed, part.n_samples, p.n_iterations, B)
        final = last_visits(plan.samples, part.n_samples, B)
        workers = {n: _Worker(federation.party(n), F, final) for n in names}
        active = tuple(n for n in names if n in part.label_owners[0])
        labels = workers[active[0]].y
        if labels is None:
            raise ValidationError(f"FDSKL's label owner {active[0]!r} holds no labels.")
        y = dsg.signed_labels(labels, federation.test_set().task, p.loss)
        net = federation.network
        d = sum(w.columns.size for w in workers.values())
        plans = self._setup(federation, workers, active, plan, d)
        excluded = None
        if masking:
            with net.stage("setup"):
                excluded = decrypting_parties(federation, backend, names, active)
        width = self._width(federation, workers, plans[active[0]])
        banks = {n: rf.FeatureBank(plan.shared, d, kernel=p.kernel, width=width) for n in names}
        phases = rf.FeatureBank(plan.shared, d, kernel=p.kernel, width=width,
                                phase_material=plan.phases).phases(0, F)
        holders = np.full(F, -1)
        removed = np.zeros(F)

        def transform(who: str, v: np.ndarray) -> np.ndarray:
            return apply_transforms(defenses, federation.party(who), tags.PARTIAL_DOT, v)

        algorithms: dict[str, Algorithm3 | BackendAlgorithm3] = {
            a: (BackendAlgorithm3(federation, backend, names, a, holders, phases, transform)
                if masking else
                Algorithm3(net, names, a, plans[a].t1, plans[a].t2, p.offsets,
                           {n: w.offsets for n, w in workers.items()}, holders, phases,
                           {n: federation.party(n).rng for n in names}, transform, removed))
            for a in active}
        stride = len(active)
        for k, a in enumerate(active):
            workers[a].alpha = np.zeros(n_owned(F, k, stride, r))
        derivative = rf.loss_derivative(p.loss)
        decay = 1.0 - p.step * p.regularization
        last = np.full(part.n_samples, -1)
        n_pairs = 0
        for block, t0 in enumerate(range(0, p.n_iterations, p.block)):
            t1_ = min(t0 + p.block, p.n_iterations)
            with net.stage("train", round=block):
                for n, w in workers.items():
                    with net.compute(n):
                        w.W[t0 * r:t1_ * r] = banks[n].directions(t0 * r, t1_ * r)[:, w.columns]
                announce(federation, workers, active, plans, plan.samples, holders, phases,
                         t0, t1_, block, offsets=p.offsets, batch_size=B,
                         features_per_iteration=r, excluded=excluded)
                todo = segments(plan.samples[t0 * B:t1_ * B], t0, last, batch_size=B,
                                features_per_iteration=r)
                for k, a in enumerate(active):
                    pairs = pairs_of(todo, k, stride, r)
                    if not pairs.size:
                        continue
                    n_pairs += pairs.size
                    masked = p.offsets == "per-feature" and not masking
                    Z = algorithms[a].run(pairs, _partials(net, workers, pairs, k, stride, r,
                                                           masked),
                                          owned(t0 * r, t1_ * r, k, stride, r),
                                          {tags.BLOCK: block, tags.OWNER_STRIDE: [k, stride]},
                                          masked=masked)
                    # the requester keeps phi_j(x_i) for its pairs (Algorithm 2, line 4)
                    keep_features(workers[a].saved, pairs.segments, rf.feature_map(Z, out=Z),
                                  k, stride, r)
                    del Z
                self._iterate(federation, backend if masking else None, workers, active,
                              plan.samples, y, t0, t1_, derivative, decay, block)
            federation.advance(self.name, t1_, p.n_iterations, "iteration")
        return self._outcome(federation, workers, active, plan, width, phases, holders, n_pairs)

    # -- setup ---------------------------------------------------------------------------
    def _setup(self, federation: Federation, workers: dict[str, _Worker],
               active: tuple[str, ...], plan: dsg.Schedule, d: int) -> dict[str, TreePlan]:
        p: FDSKLParams = self.params
        net = federation.network
        names = tuple(workers)
        plans = {}
        for a in active:
            if p.offsets == "none":
                order = [a, *(n for n in names if n != a)]
                plans[a] = TreePlan(p.structure, names, a, layout(p.structure, order), {})
            else:
                plans[a] = build_plan(names, a, p.structure)
        with net.stage("setup"):
            federation.share_key(active[0], tags.SHARED_SEED_KEY, plan.shared,
                                 to=[n for n in names if n != active[0]],
                                 meta={"purpose": "random directions w_j, one stream per "
                                                  "feature block",
                                       "source": "derived from the run's secret seed (simulation)"})
            for n, w in workers.items():
                net.broadcast(n, [m for m in names if m != n], tags.FEATURE_COLUMNS, w.columns,
                              meta={tags.N_FEATURES: d})
            for a in active:
                text = json.dumps(plans[a].to_dict(), sort_keys=True)
                broadcast_down(net, plans[a].t1, text.encode(), tags.TREE_PLAN,
                               {tags.PLAN: plans[a].to_dict(), tags.REQUESTER: a})
        return plans

    def _width(self, federation: Federation, workers: dict[str, _Worker],
               plan: TreePlan) -> float:
        p: FDSKLParams = self.params
        if p.kernel_width > 0:
            return p.kernel_width
        net = federation.network
        with net.stage("setup"):
            if p.width_rule == "median":
                n_rows = next(iter(workers.values())).X.shape[0]
                pairs = median_width.pair_sample(federation.secret_seed, n_rows, p.width_pairs)
                width = median_width.federated_width(
                    net, plan.t1, None if p.offsets == "none" else total_tree(plan),
                    plan.requester, {n: w.X for n, w in workers.items()}, pairs,
                    {n: federation.party(n).rng for n in workers}, kernel=p.kernel)
            else:
                stats = {n: np.array([w.X.sum(), (w.X**2).sum(), w.X.size])
                         for n, w in workers.items()}
                total = tree_sum(net, plan.t1, stats, tags.COLUMN_STATISTICS,
                                 {tags.TREE: tags.TREE_SUMS})
                d = sum(w.columns.size for w in workers.values())
                width = rf.scale_width(float(total[0]), float(total[1]), int(total[2]), d,
                                       kernel=p.kernel)
            broadcast_down(net, plan.t1, np.asarray(width), tags.KERNEL_WIDTH, {})
        return width

    # -- per batch -----------------------------------------------------------------------
    def _iterate(self, federation: Federation, backend: MaskingBackend | None,
                 workers: dict[str, _Worker], active: tuple[str, ...], samples: np.ndarray,
                 y: np.ndarray, t0: int, t1: int, derivative: Callable[[float, float], float],
                 decay: float, block: int) -> None:
        """The sequential part: ``f`` at the batch, the new alphas, the decay, one iteration at a
        time. One partial prediction per tree edge carries the batch's ``B`` values (under a
        masking ``backend``, one protected share per other active worker)."""
        p: FDSKLParams = self.params
        B, r = p.batch_size, p.features_per_iteration
        net = federation.network
        stride = len(active)
        for t in range(t0, t1):
            batch = samples[t * B:(t + 1) * B].tolist()
            k = t % stride
            a = active[k]
            parts = {}
            for j, n in enumerate(active):
                w = workers[n]
                with net.compute(n):
                    m = n_owned(t * r, j, stride, r)
                    mine = np.array([float(w.saved.row(s)[:m] @ w.alpha[:m]) if m else 0.0
                                     for s in batch])
                    parts[n] = mine if B > 1 else mine[0]
            if stride > 1:
                order = [a, *(n for n in active if n != a)]
                where = {tags.SAMPLES: batch} if B > 1 else {tags.SAMPLE: batch[0]}
                meta = {tags.ITERATION: t, **where, tags.BLOCK: block}
                if backend is None:
                    f = tree_sum(net, layout(p.structure, order), parts,
                                 tags.PARTIAL_PREDICTION, meta)
                else:
                    others = {n: np.atleast_1d(parts[n]) for n in order[1:]}
                    got = sum_to(federation, backend, others, a, tags.PARTIAL_PREDICTION,
                                 {**meta, tags.TREE: tags.BACKEND_SUM})
                    with net.compute(a):
                        f = got + parts[a] if B > 1 else float(got[0]) + parts[a]
            else:
                f = parts[a]
            picker = workers[a]
            with net.compute(a):
                m = n_owned(t * r, k, stride, r)
                phis = np.array([picker.saved.row(s)[m:m + r] for s in batch])
                new = new_alphas(batch_gradients(np.atleast_1d(f), y[batch], derivative), phis,
                                 step=p.step)
            for j, n in enumerate(active):
                with net.compute(n):
                    workers[n].alpha[: n_owned(t * r, j, stride, r)] *= decay
                workers[n].saved.visited(t, batch)
            picker.alpha[m:m + r] = new

    # -- result --------------------------------------------------------------------------
    def _outcome(self, federation: Federation, workers: dict[str, _Worker],
                 active: tuple[str, ...], plan: dsg.Schedule, width: float,
                 phases: np.ndarray, holders: np.ndarray, n_pairs: int) -> Outcome:
        p: FDSKLParams = self.params
        stride = len(active)
        alpha = np.zeros(p.n_features)
        names = tuple(workers)
        for k, a in enumerate(active):
            feats = owned(0, p.n_features, k, stride, p.features_per_iteration)
            alpha[feats] = workers[a].alpha
            workers[a].party.private[tags.PRIVATE_ALPHAS] = workers[a].alpha.copy()
            workers[a].party.private[tags.PRIVATE_ALPHA_FEATURES] = feats
        for i, w in enumerate(workers.values()):
            w.party.private[tags.PRIVATE_OFFSETS] = w.offsets.copy()
            w.party.private[tags.PRIVATE_PHASE_FEATURES] = np.flatnonzero(holders == i)
        d = sum(w.columns.size for w in workers.values())
        bank = rf.FeatureBank(plan.shared, d, kernel=p.kernel, width=width,
                              phase_material=plan.phases)
        model = random_feature_model(bank, alpha, federation.test_set().task)
        scores = model.decision_function(federation.test_set().X)
        metrics = {**dsg.evaluate(scores, federation.test_set()), "n_iterations": p.n_iterations,
                   "kernel_width": width, "n_pairs": n_pairs, "n_workers": len(names),
                   "n_active": len(active)}
        return Outcome(metrics=metrics,
                       values={"alpha": alpha, "test_scores": scores,
                               "predictions": dsg.predictions(scores, federation.test_set())},
                       truth={"phases": phases, "phase_holders": holders}, model=model)

    def agreement_rtol(self, backend: MaskingBackend) -> float:
        """``1e-8``; under an approximate backend (CKKS) ``1e-3``: its errors in
        ``w_j^T x_i + b_j`` travel through the whole recursion."""
        return 1e-8 if backend.exact else 1e-3

    def agreement_tolerances(self, backend: MaskingBackend, reference: Outcome
                             ) -> dict[str, float]:
        """``alpha`` and the test scores within ten times the centralized DSG's own rounding
        sensitivity (at least ``1e-8``): the recursion amplifies rounding over long runs,
        which no federated ordering of sums can avoid. The predictions by task: a
        classifier's are class labels, compared exactly (a changed label is a changed
        decision); a regression's are the test scores themselves, so they take the test
        scores' tolerance (an exact check would fail on the last bit of a float)."""
        rtol = self.agreement_rtol(backend)
        out = {}
        for key in ("alpha", "test_scores"):
            sensitivity = reference.metrics.get(f"rounding_sensitivity_{key}", 0.0)
            out[key] = max(rtol, 10.0 * float(sensitivity))
        regression = getattr(reference.model, "task", None) == "regression"
        out["predictions"] = out["test_scores"] if regression else 0.0
        return out

    def reference(self, train: Dataset, test: Dataset, *, seed: int) -> Outcome:
        out = dsg.reference_outcome(self.params, train, test, seed)
        moved = dsg.rounding_sensitivity(self.params, train, test, seed, out)
        return Outcome(metrics={**out.metrics, **{f"rounding_sensitivity_{k}": v
                                                  for k, v in moved.items()}},
                       values=out.values, model=out.model)
