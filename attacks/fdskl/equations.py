"""FDSKL's transcripts as linear systems: what a coalition holds about other workers' features.

Gu, Dang, Li, Huang, "Federated Doubly Stochastic Kernel Learning for
Vertically Partitioned Data", Definition 6 and Lemma 8. From what a coalition
observed (:mod:`fedsec.attacks.fdskl.observations`), per call type of Algorithm
3, the combinations of observed sums in which the members' own partial
products cancel: exact ones (no offset left), per-sample ones (the offsets'
part whitened, as noise of known mean and variance) and shared-offset ones
(offsets the same for every sample of a feature kept as unknowns). Registered
as the ``fdskl`` extractor of ``linear-inference``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import null_space, orth

from fedsec.attacks.fdskl import observations as fo
from fedsec.attacks.linear_systems import LinearSystem, register_extractor
from fedsec.private_store import parse_truth_key
from fedsec.protocols.fdskl import tags
from fedsec.views import View


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
    computes exactly on the trees, see :mod:`fedsec.attacks.fdskl.tree_collusion`).
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
        coefficients=coefficients, baseline=baseline, estimator=kind,
        info={"workers": [parse_truth_key(p[0]).party for p in parts],
              "equation_types": len(types)})
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


register_extractor("fdskl", frozenset({tags.PARTIAL_DOT}), applicable=fo.applicable)(fdskl_systems)
