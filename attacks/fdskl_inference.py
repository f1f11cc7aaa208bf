"""Linear inference on exact and noisy equations: any secret that enters messages linearly.

Gu, Dang, Li, Huang, "Federated Doubly Stochastic Kernel Learning for
Vertically Partitioned Data", Definition 6: a worker holding enough equations
``o_j = (w_j)_G^T x_G`` with known ``w_j`` solves for ``x_G``. The paper adds a
uniform offset to every ``o_j`` to stop this; as the project's SEEDS.md reads
it, an offset drawn from a known distribution is noise of known mean, and
every evaluation of ``f(x_i)`` yields one more equation about the same
``x_i``, so regression over all of them still converges (error about
``1 / sqrt(messages)``); and offsets kept per feature (the paper's seed
``sigma^l(j)``; always the case for the feature's phase) are the same unknown in
every equation of that feature, so they cancel between samples.

The attack is generic: an *extractor* turns a View into :class:`LinearSystem`
s, each "``values[k] = coefficients(k) . secret[rows[k]] + noise_k``" with the
noise's variance known (0 for exact equations) and, optionally, an unknown
offset shared by a group of equations. Built-in extractors: ``fdskl`` (the
secret is the features of the workers whose partial products the coalition
can combine, one row per sample) and ``fedcg-secure`` (the Gram matrix
``K_h^T K_h``, one row per landmark, from the server's direction/product
pairs). :func:`register_extractor` adds others.

Estimators: ``per-sample`` (weighted least squares per row, the offsets
treated as independent noise) and ``shared-offsets`` (alternating least
squares over the rows and the shared offsets, the global translation left
free by them fixed from the offsets' known mean).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.linalg import null_space, orth

from attacks.linear_inference import epoch_pairs, solve_linear_map
from fedsec.errors import CapabilityError
from fedsec.interfaces import Attack, Scorer
from fedsec.outcomes import Reconstruction
from fedsec.registry import register
from fedsec.scoring import advantage, check_truth
from fedsec.validation import check_choice, check_float, check_int
from fedsec.views import View
from protocols import fdskl_observations as fo

PAPER = ("Gu, Dang, Li, Huang, Federated Doubly Stochastic Kernel Learning for Vertically "
         "Partitioned Data (Definition 6, Lemma 8); FedCG secure (Damiani et al. 2024)")
ESTIMATORS = ("auto", "per-sample", "shared-offsets")
ANCHORS = ("prior", "minmax")
EXACT_WEIGHT = 1e6
"""Relative weight of an exact equation next to a noisy one of unit variance (used only
when the exact equations alone do not determine a row)."""


@dataclass
class LinearSystem:
    """Equations ``values[k] = coefficients([k]) . secret[rows[k]] + noise_k``.

    ``parts`` maps ground-truth keys to column ranges of the unknown vector
    (``(key, start, stop)``). ``values`` already have the noise mean removed;
    ``variance`` is the remaining noise variance (0: exact). ``nuisance`` (-1:
    none) names an unknown offset shared by every equation with that id, of
    prior mean 0 and variance ``nuisance_variance[id]`` (its mean is already
    removed from ``values``). ``order`` is the position in the view of the
    message an equation came from. With ``min_norm``, a row the equations do
    not determine gets the minimum-norm solution (the secret on the span the
    equations reach) instead of none.
    """

    label: str
    parts: tuple[tuple[str, int, int], ...]
    n_rows: int
    n_unknowns: int
    rows: np.ndarray
    values: np.ndarray
    variance: np.ndarray
    order: np.ndarray
    coefficients: Callable[[np.ndarray], np.ndarray]
    nuisance: np.ndarray | None = None
    nuisance_variance: np.ndarray | None = None
    nuisance_coefficients: Callable[[np.ndarray], np.ndarray] | None = None
    baseline: float = 0.0
    min_norm: bool = False
    info: dict[str, Any] = field(default_factory=dict)


def _weights(variance: np.ndarray, unit: float) -> np.ndarray:
    """Inverse-variance weights in units of the typical noise; exact equations weigh more."""
    if unit <= 0:
        return np.ones_like(variance)
    return np.where(variance > 0, unit / np.maximum(variance, 1e-300), EXACT_WEIGHT)


def _by_row(rows: np.ndarray) -> list[tuple[int, np.ndarray]]:
    order = np.argsort(rows, kind="stable")
    cuts = np.flatnonzero(np.diff(rows[order])) + 1
    return [(int(rows[chunk[0]]), chunk) for chunk in np.split(order, cuts) if chunk.size]


@dataclass
class _Normals:
    """Per-row normal equations ``G_r x_r = A_r^T W (y - offsets)`` of a system."""

    index: np.ndarray  # equations used, sorted by row
    weights: np.ndarray  # per equation (0 for noisy equations of rows exact ones settle)
    grams: dict[int, np.ndarray]
    unit: float


def _normals(system: LinearSystem, mask: np.ndarray | None) -> _Normals:
    p = system.n_unknowns
    keep = np.ones(system.rows.size, dtype=bool) if mask is None else mask
    index = np.flatnonzero(keep)
    noisy = system.variance[system.variance > 0]
    unit = float(np.median(noisy)) if noisy.size else 0.0
    weights = _weights(system.variance, unit)
    exact = keep & (system.variance == 0)
    settled = np.bincount(system.rows[exact], minlength=system.n_rows) >= p
    weights = np.where(settled[system.rows], np.where(system.variance == 0, 1.0, 0.0), weights)
    grams: dict[int, np.ndarray] = {}
    order = index[np.argsort(system.rows[index], kind="stable")]
    for row, chunk in _by_row(system.rows[order]):
        idx = order[chunk]
        if idx.size < p and not system.min_norm:
            continue
        A = system.coefficients(idx)
        grams[row] = (A * weights[idx][:, None]).T @ A
    return _Normals(order, weights, grams, unit)


def _row_sums(system: LinearSystem, normals: _Normals, vector: np.ndarray,
              chunk: int = 65536) -> np.ndarray:
    """``sum_k w_k a_k vector_k`` per row, over the equations the normals use."""
    out = np.zeros((system.n_rows, system.n_unknowns))
    order = normals.index
    for start in range(0, order.size, chunk):
        idx = order[start:start + chunk]
        r = system.rows[idx]
        A = system.coefficients(idx) * (normals.weights[idx] * vector[idx])[:, None]
        starts = np.concatenate([[0], np.flatnonzero(np.diff(r)) + 1])
        out[r[starts]] += np.add.reduceat(A, starts, axis=0)
    return out


def solve_rows(system: LinearSystem, *, mask: np.ndarray | None = None,
               offsets: np.ndarray | None = None,
               normals: _Normals | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Weighted least squares per row: estimates (NaN where underdetermined) and predicted RMSE.

    ``offsets`` (one per equation) are subtracted from the values first. A row
    with enough exact equations is solved from them alone. The predicted error
    is ``sqrt(trace((A^T W A)^-1) / p)`` in units of the noise (standard
    deviation ``sqrt(variance)``): the attacker's own uncertainty.
    """
    p = system.n_unknowns
    normals = normals or _normals(system, mask)
    y = system.values if offsets is None else system.values - offsets
    rhs = _row_sums(system, normals, y)
    estimate = np.full((system.n_rows, p), np.nan)
    predicted = np.full(system.n_rows, np.nan)
    for row, gram in normals.grams.items():
        scale = np.sqrt(np.maximum(np.diag(gram), 1e-300))
        M, rank = solve_linear_map(gram / scale[:, None] / scale[None, :],
                                   (rhs[row] / scale)[None, :], rcond=1e-12)
        if rank < p:
            if not system.min_norm:
                continue
            M, _ = solve_linear_map(gram, rhs[row][None, :], rcond=1e-10)
            scale = np.ones(p)
        estimate[row] = M[0] / scale
        if normals.unit > 0 and rank == p:
            inv = np.linalg.pinv(gram)
            predicted[row] = float(np.sqrt(max(np.trace(inv), 0.0) * normals.unit / p))
        else:
            predicted[row] = 0.0
    return estimate, predicted


def solve_shared(system: LinearSystem, *, anchor: str = "prior", n_sweeps: int = 60,
                 tol: float = 1e-9) -> tuple[np.ndarray, dict[str, Any]]:
    """Rows and shared offsets by alternating least squares, then the free translation.

    A solution ``(x, eta)`` stays one under ``x -> x + c``, ``eta_id -> eta_id -
    a_id . c`` (``a_id`` the coefficients of the offset's equations). ``anchor``
    fixes ``c``: ``prior`` makes the offsets best match their known mean (0, it
    is already removed), weighted by their prior variance; ``minmax`` uses
    min-max scaled data (every column's minimum over the training rows is 0)
    and sets each column's smallest estimate to 0.
    """
    if system.nuisance is None or system.nuisance_coefficients is None:
        raise CapabilityError(f"{system.label}: no shared offsets to estimate.")
    ids = system.nuisance
    n_ids = int(ids.max()) + 1
    normals = _normals(system, None)
    x, _ = solve_rows(system, normals=normals)
    eta = np.zeros(n_ids)
    sweeps = 0
    for sweep in range(1, n_sweeps + 1):
        sweeps = sweep
        usable = (ids >= 0) & np.isfinite(x[system.rows]).all(axis=1)
        resid = system.values - _fitted(system, x)
        counts = np.bincount(ids[usable], minlength=n_ids)
        sums = np.bincount(ids[usable], weights=resid[usable], minlength=n_ids)
        eta = np.where(counts > 0, sums / np.maximum(counts, 1), 0.0)
        per_eq = np.where(ids >= 0, eta[np.maximum(ids, 0)], 0.0)
        new_x, _ = solve_rows(system, offsets=per_eq, normals=normals)
        change = float(np.nanmax(np.abs(new_x - x))) if np.isfinite(new_x).any() else 0.0
        x = new_x
        if change < tol * (1.0 + float(np.nanmax(np.abs(x)))):
            break
    found = np.isfinite(x).all(axis=1)
    if anchor == "minmax":
        c = -x[found].min(axis=0) if found.any() else np.zeros(system.n_unknowns)
    else:
        present = np.flatnonzero(np.bincount(ids[ids >= 0], minlength=n_ids) > 0)
        A = system.nuisance_coefficients(present)
        w = 1.0 / np.sqrt(system.nuisance_variance[present])
        c, *_ = np.linalg.lstsq(A * w[:, None], eta[present] * w, rcond=None)
    return x + c[None, :], {"sweeps": sweeps, "offsets_estimated": int(n_ids),
                            "anchor": anchor, "translation_norm": float(np.linalg.norm(c))}


def _fitted(system: LinearSystem, x: np.ndarray, chunk: int = 200_000) -> np.ndarray:
    out = np.zeros(system.rows.size)
    for start in range(0, out.size, chunk):
        idx = np.arange(start, min(start + chunk, out.size))
        X = np.nan_to_num(x[system.rows[idx]])
        out[idx] = np.einsum("ij,ij->i", system.coefficients(idx), X)
    return out


def error_curve(system: LinearSystem, n_points: int) -> list[dict[str, float]]:
    """Per-sample regression on the first k observed messages, for k on a geometric grid.

    Reports, per checkpoint, the rows determined, the median equations per
    row and the attacker's predicted RMSE (in the secret's units, from the
    noise's known variance; no ground truth involved). One pass: the normal
    equations of each stretch of messages are added to the previous ones.
    """
    p = system.n_unknowns
    last = int(system.order.max()) + 1 if system.order.size else 0
    grid = np.unique(np.geomspace(1, max(last, 1), num=max(n_points, 1)).round().astype(int))
    noisy = system.variance[system.variance > 0]
    unit = float(np.median(noisy)) if noisy.size else 0.0
    weights = _weights(system.variance, unit)
    grams = np.zeros((system.n_rows, p, p))
    counts = np.zeros(system.n_rows, dtype=int)
    out, previous = [], 0
    for k in grid.tolist():
        stretch = np.flatnonzero((system.order >= previous) & (system.order < k))
        previous = k
        for row, chunk in _by_row(system.rows[stretch]):
            idx = stretch[chunk]
            A = system.coefficients(idx)
            grams[row] += (A * weights[idx][:, None]).T @ A
            counts[row] += idx.size
        errors = []
        for row in np.flatnonzero(counts >= p).tolist():
            if np.linalg.matrix_rank(grams[row], tol=1e-10 * np.abs(grams[row]).max()) == p:
                errors.append(np.sqrt(max(np.trace(np.linalg.inv(grams[row])), 0.0) * unit / p))
        out.append({"messages_observed": int(k), "rows_determined": len(errors),
                    "median_equations_per_row": float(np.median(counts[counts > 0]))
                    if (counts > 0).any() else 0.0,
                    "predicted_rmse": float(np.mean(errors)) if errors else float("nan")})
    return out


Extractor = Callable[[View], list[LinearSystem]]
EXTRACTORS: dict[str, Extractor] = {}
EXTRACTOR_TAGS: dict[str, frozenset[str]] = {}


def register_extractor(protocol: str, tags: frozenset[str]) -> Callable[[Extractor], Extractor]:
    """Declare how to read equations from ``protocol``'s transcripts (the tags it needs)."""
    def decorate(function: Extractor) -> Extractor:
        EXTRACTORS[protocol] = function
        EXTRACTOR_TAGS[protocol] = tags
        return function
    return decorate


# -- FDSKL ----------------------------------------------------------------------------------
@dataclass
class _Rows:
    """Equation types of one call type: combinations of observed forms and what they give."""

    combos: np.ndarray  # (r, k) over the observed forms
    signal: np.ndarray  # (r, q) coefficients of the workers' partial products
    mean: np.ndarray  # (r,) noise mean
    variance: np.ndarray  # (r,) noise variance
    fixed: np.ndarray  # (r, q) coefficients of offsets shared across samples (shared rows)


def reduce_forms(forms: np.ndarray, members: list[int], fixed: np.ndarray, *,
                 tol: float = 1e-9) -> tuple[_Rows, _Rows]:
    """Per-sample (whitened) rows and shared-offset rows from one call type's forms.

    Forms are over ``[p_1..p_q, b_1..b_q]``. Members' ``p`` are known (their
    forms are among the rows) and must cancel; offsets are uniform on
    ``[0, 2 pi]``. Per-sample rows: exact combinations (no offset left) plus the
    offsets' part whitened (generalised least squares). Shared rows: the
    combinations free of fresh offsets, keeping those shared across samples.
    """
    q = forms.shape[1] // 2
    outside = [i for i in range(q) if i not in members]
    N = null_space(forms[:, members].T, rcond=tol) if members else np.eye(forms.shape[0])
    F = N.T @ forms
    P, B = F[:, outside], F[:, q:]
    combos, signal, mean, var = [], [], [], []
    exact = null_space(B.T, rcond=tol) if B.size else np.eye(F.shape[0])
    if exact.size:
        combos.append(exact.T @ N.T)
        signal.append(exact.T @ P)
        mean.append(np.zeros(exact.shape[1]))
        var.append(np.zeros(exact.shape[1]))
    span = orth(B, rcond=tol) if B.size else np.zeros((F.shape[0], 0))
    if span.size:
        cov = span.T @ B @ B.T @ span
        vals, vecs = np.linalg.eigh(cov)
        white = (vecs / np.sqrt(vals)).T @ span.T
        combos.append(white @ N.T)
        signal.append(white @ P)
        mean.append(white @ B.sum(axis=1) * fo.NOISE_MEAN)
        var.append(np.full(white.shape[0], fo.NOISE_VAR))
    per_sample = _keep(np.vstack(combos), np.vstack(signal), np.concatenate(mean),
                       np.concatenate(var), np.zeros((0, q)), outside, q, tol)
    fresh = [q + i for i in range(q) if not fixed[i]]
    free = null_space(F[:, fresh].T, rcond=tol) if fresh else np.eye(F.shape[0])
    combos_f, signal_f, e = _least_shared(free.T @ N.T, free.T @ P, (free.T @ B) * fixed, tol)
    shared = _keep(combos_f, signal_f, e.sum(axis=1) * fo.NOISE_MEAN,
                   (e**2).sum(axis=1) * fo.NOISE_VAR, e, outside, q, tol)
    return per_sample, shared


def _least_shared(combos: np.ndarray, signal: np.ndarray, e: np.ndarray,
                  tol: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Remove from each signal row the part of its offsets that noise-only rows observe."""
    if not combos.size:
        return combos, signal, e
    zero = null_space(signal.T, rcond=tol) if signal.size else np.eye(combos.shape[0])
    rest = null_space(zero.T, rcond=tol) if zero.size else np.eye(combos.shape[0])
    if not rest.size:
        return combos[:0], signal[:0], e[:0]
    c_s, s_s, e_s = rest.T @ combos, rest.T @ signal, rest.T @ e
    if zero.size:
        e_z, c_z = zero.T @ e, zero.T @ combos
        real = np.abs(e_z).max(axis=1) > tol  # noise-only rows that do observe offsets
        e_z, c_z = e_z[real], c_z[real]
    if zero.size and e_z.size:
        alpha, *_ = np.linalg.lstsq(e_z.T, e_s.T, rcond=None)
        e_s = e_s - alpha.T @ e_z
        c_s = c_s - alpha.T @ c_z
    e_s[np.abs(e_s) < tol] = 0.0
    return c_s, s_s, e_s


def _keep(combos: np.ndarray, signal: np.ndarray, mean: np.ndarray, var: np.ndarray,
          fixed: np.ndarray, outside: list[int], q: int, tol: float) -> _Rows:
    full = np.zeros((signal.shape[0], q))
    full[:, outside] = signal
    ok = np.abs(full).max(axis=1) > tol if full.size else np.zeros(0, dtype=bool)
    return _Rows(combos[ok], full[ok], mean[ok], var[ok],
                 fixed[ok] if fixed.size else np.zeros((int(ok.sum()), q)))


def fdskl_systems(view: View, kinds: tuple[str, ...] = ("per-sample", "shared-offsets"),
                  ) -> list[LinearSystem]:
    """Systems over the features the coalition can combine, one per estimator kind.

    ``exact`` keeps only the equations no offset enters (what a coalition
    computes exactly on the trees, see :mod:`attacks.tree_collusion`).
    """
    obs = fo.observe(view)
    members = [obs.workers.index(m) for m in obs.coalition if m in obs.workers]
    reduced = [(g, *reduce_forms(g.forms, members, g.fixed)) for g in obs.groups]
    own = list(obs.own_X.values())
    baseline = float(np.mean([X.mean() for X in own])) if own else 0.0
    out = []
    for kind in kinds:
        chosen = [(g, _rows_for(kind, a, b)) for g, a, b in reduced]
        involved = sorted({int(i) for _, rows in chosen if rows.signal.size
                           for i in np.flatnonzero(np.abs(rows.signal).max(axis=0) > 1e-9)})
        if not involved:
            continue
        names = [obs.workers[i] for i in involved]
        cols = np.concatenate([obs.columns[n] for n in names])
        parts, at = [], 0
        for n in names:
            parts.append((obs.truth_key(n), at, at + obs.columns[n].size))
            at += obs.columns[n].size
        system = _fdskl_system(obs, chosen, kind, involved, cols, parts, baseline)
        if system is not None:
            out.append(system)
    return out


def _rows_for(kind: str, per_sample: _Rows, shared: _Rows) -> _Rows:
    if kind == "shared-offsets":
        return shared
    if kind == "exact":
        keep = per_sample.variance == 0
        return _Rows(per_sample.combos[keep], per_sample.signal[keep], per_sample.mean[keep],
                     per_sample.variance[keep], per_sample.fixed[keep])
    return per_sample


def _fdskl_system(obs: fo.Observations, chosen: list, kind: str, involved: list[int],
                  cols: np.ndarray, parts: list, baseline: float) -> LinearSystem | None:
    rows_l, feats_l, vals_l, var_l, order_l, type_l, nuis_l, nvar_l = ([] for _ in range(8))
    types, n_ids = [], 0
    for group, rows in chosen:
        for r in range(rows.signal.shape[0]):
            types.append(np.concatenate([np.full(obs.columns[obs.workers[i]].size,
                                                 rows.signal[r, i]) for i in involved]))
            n = group.samples.size
            rows_l.append(group.samples)
            feats_l.append(group.features)
            vals_l.append(group.values @ rows.combos[r] - rows.mean[r])
            order_l.append(group.order)
            type_l.append(np.full(n, len(types) - 1))
            if kind == "shared-offsets" and rows.variance[r] > 0:
                uniq, inverse = np.unique(group.features, return_inverse=True)
                nuis_l.append(n_ids + inverse)
                nvar_l.append(np.full(uniq.size, rows.variance[r]))
                n_ids += uniq.size
                var_l.append(np.zeros(n))
            else:
                nuis_l.append(np.full(n, -1))
                var_l.append(np.full(n, rows.variance[r]))
    if not types:
        return None
    features = np.concatenate(feats_l)
    type_of = np.concatenate(type_l)
    scale = np.array(types)
    W = obs.directions[:, cols]

    def coefficients(idx: np.ndarray) -> np.ndarray:
        return W[features[idx]] * scale[type_of[idx]]

    nuisance = np.concatenate(nuis_l)
    system = LinearSystem(
        label=f"fdskl {kind}", parts=tuple(parts), n_rows=obs.n_samples,
        n_unknowns=int(cols.size), rows=np.concatenate(rows_l), values=np.concatenate(vals_l),
        variance=np.concatenate(var_l), order=np.concatenate(order_l),
        coefficients=coefficients, baseline=baseline,
        info={"workers": [p[0].split("/")[1] for p in parts], "equation_types": len(types)})
    if kind == "shared-offsets":
        if not (nuisance >= 0).any():
            return system  # every equation is exact: nothing shared to estimate
        first = np.full(n_ids, -1)
        ids = np.flatnonzero(nuisance >= 0)
        first[nuisance[ids]] = ids
        system.nuisance = nuisance
        system.nuisance_variance = np.concatenate(nvar_l)
        system.nuisance_coefficients = lambda present: coefficients(first[present])
    return system


register_extractor("fdskl", frozenset({"partial_dot"}))(fdskl_systems)


@register_extractor("fedcg-secure", frozenset({"cg_direction", "gram_product"}))
def fedcg_systems(view: View) -> list[LinearSystem]:
    """Gram rows ``G[r] . p_t = (K^T K p_t)[r]`` from the server's direction/product pairs."""
    directions, products, covered, n_cohorts = epoch_pairs(view)
    lam = float(view.header.get("protocol", {}).get("params", {}).get("regularization", 0.0))
    out = []
    for contributors, by_epoch in products.items():
        cohorts = covered[contributors]
        if len(cohorts) == n_cohorts:
            key = "outcome/gram/total"
        elif len(cohorts) == 1:
            key = f"outcome/gram/cohort{cohorts[0]}"
        else:
            continue
        epochs = sorted(by_epoch)
        P = np.hstack([directions[e] for e in epochs])  # m × (epochs · columns)
        Q = np.hstack([by_epoch[e] for e in epochs])
        m = P.shape[0]
        Q = Q - lam * len(cohorts) / max(n_cohorts, 1) * P
        rows = np.repeat(np.arange(m), P.shape[1])
        cols = np.tile(np.arange(P.shape[1]), m)
        out.append(LinearSystem(
            label=f"fedcg gram {key}", parts=((key, 0, m),), n_rows=m, n_unknowns=m,
            rows=rows, values=Q[rows, cols], variance=np.zeros(rows.size),
            order=cols.copy(),
            coefficients=lambda idx, P=P, cols=cols: P[:, cols[idx]].T, min_norm=True,
            info={"contributors": list(contributors)}))
    return out


@register("attack", "linear-inference")
class LinearInference(Attack):
    """Regression over every equation a view holds about each secret row, exact or noisy."""

    summary = ("Least squares over observed messages linear in a secret (FDSKL's masked partial "
               "products, FedCG's Gram products), with noise of known mean and shared offsets.")
    paper = PAPER
    default_scorer = "feature-recovery"
    needs_tags = frozenset()  # each extractor declares its own (EXTRACTOR_TAGS)

    @dataclass(frozen=True, kw_only=True)
    class Params:
        estimator: str = "auto"
        anchor: str = "prior"
        curve_points: int = 8

        def __post_init__(self) -> None:
            owner = "attack 'linear-inference'"
            check_choice(self.estimator, owner=owner, name="estimator", choices=ESTIMATORS)
            check_choice(self.anchor, owner=owner, name="anchor", choices=ANCHORS)
            check_int(self.curve_points, owner=owner, name="curve_points", min_value=0)

    def not_applicable(self, view: View) -> str | None:
        protocol = view.header.get("protocol", {}).get("name")
        if protocol not in EXTRACTORS:
            return (f"no equation extractor for protocol {protocol!r} (known: "
                    f"{', '.join(sorted(EXTRACTORS))})")
        missing = sorted(EXTRACTOR_TAGS[protocol] - view.tags())
        if missing:
            return f"{view.threat} observed no message tagged {', '.join(missing)}"
        if protocol == "fdskl":
            return fo.applicable(view)
        return None

    def run(self, view: View) -> Reconstruction:
        self.check(view)
        systems = EXTRACTORS[view.header["protocol"]["name"]](view)
        chosen = self._choose(systems)
        source = next((s for s in systems if s.nuisance is None), None)
        estimates: dict[str, np.ndarray] = {}
        baseline: dict[str, np.ndarray] = {}
        info: dict[str, Any] = {"systems": []}
        if self.params.curve_points and source is not None:
            info["curve"] = {"system": source.label,
                             "points": error_curve(source, self.params.curve_points)}
        for system in chosen:
            entry: dict[str, Any] = {"label": system.label, "equations": int(system.rows.size),
                                     **system.info}
            if system.nuisance is not None:
                x, extra = solve_shared(system, anchor=self.params.anchor)
                entry.update(extra)
            else:
                x, _ = solve_rows(system)
            found = np.isfinite(x).all(axis=1)
            entry["rows_estimated"] = int(found.sum())
            entry["rows"] = int(system.n_rows)
            entry["rows_missing"] = np.flatnonzero(~found)[:1000].tolist()
            x[~found] = system.baseline
            for key, start, stop in system.parts:
                value = x[:, start:stop]
                if key.startswith("outcome/gram"):
                    value = 0.5 * (value + value.T)
                estimates[key] = value
                baseline[key] = np.full_like(value, system.baseline)
            info["systems"].append(entry)
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates=estimates,
                              baseline=baseline, info=info)

    def _choose(self, systems: list[LinearSystem]) -> list[LinearSystem]:
        wanted = self.params.estimator
        fdskl = [s for s in systems if s.label.startswith("fdskl")]
        if not fdskl:
            return systems
        if wanted == "auto":  # shared offsets where they exist, per-sample for the rest
            shared = [s for s in fdskl if s.label.endswith("shared-offsets")]
            covered = {key for s in shared for key, _, _ in s.parts}
            rest = [s for s in fdskl if s not in shared
                    and not {key for key, _, _ in s.parts} <= covered]
            return rest + shared
        return [s for s in fdskl if s.label.endswith(wanted)]


def _recovery(estimate: np.ndarray, truth: np.ndarray, eps: float) -> dict[str, float]:
    gap = estimate - truth
    norm = max(float(np.linalg.norm(truth)), 1e-300)
    columns = np.linalg.norm(gap, axis=0) / np.maximum(np.linalg.norm(truth, axis=0), 1e-300)
    rows = np.linalg.norm(gap, axis=1) / np.maximum(np.linalg.norm(truth, axis=1), 1e-300)
    return {"relative_error": float(np.linalg.norm(gap)) / norm,
            "feature_error_mean": float(columns.mean()), "feature_error_max": float(columns.max()),
            "sample_error_mean": float(rows.mean()), "sample_error_median": float(np.median(rows)),
            "fraction_recovered": float((rows <= eps).mean())}


@register("scorer", "feature-recovery")
class FeatureRecovery(Scorer):
    """Per-feature and per-sample relative errors of recovered feature blocks.

    Per target (a worker's ``n x d_l`` block): the overall relative error, the
    relative error of each feature (column: mean and worst), of each sample
    (row: mean and median) and the fraction of samples whose relative error is
    at most ``epsilon``; each next to the naive baseline's. No alignment: an
    estimate off by a translation is scored as such.
    """

    summary = ("Relative error per feature and per sample, fraction of samples recovered "
               "within epsilon, each against the baseline.")
    paper = PAPER

    @dataclass(frozen=True, kw_only=True)
    class Params:
        epsilon: float = 0.05

        def __post_init__(self) -> None:
            check_float(self.epsilon, owner="scorer 'feature-recovery'", name="epsilon",
                        min_value=0.0)

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        eps = self.params.epsilon
        per_target: dict[str, dict[str, float]] = {}
        check_truth(reconstruction.estimates, truth)
        for key, estimate in reconstruction.estimates.items():
            target = np.atleast_2d(np.asarray(truth[key], dtype=np.float64))
            entry = _recovery(np.atleast_2d(np.asarray(estimate, dtype=np.float64)), target, eps)
            if key in reconstruction.baseline:
                base = np.atleast_2d(np.asarray(reconstruction.baseline[key], dtype=np.float64))
                entry.update({f"baseline_{k}": v for k, v in _recovery(base, target, eps).items()})
            per_target[key] = entry
        summary: dict[str, Any] = {"n_targets": len(per_target), "epsilon": eps}
        names = ("relative_error", "feature_error_mean", "sample_error_mean",
                 "fraction_recovered")
        for name in names:
            for prefix in ("", "baseline_"):
                values = [e[prefix + name] for e in per_target.values() if prefix + name in e]
                summary[prefix + name] = float(np.mean(values)) if values else float("nan")
        error, base = summary["relative_error"], summary["baseline_relative_error"]
        summary["advantage"] = advantage(error, base)
        summary["per_target"] = per_target
        return summary
