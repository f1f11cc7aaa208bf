"""From leaked RBF kernel blocks back to the data: distances, then multilateration.

Damiani, Rodina, Decherchi, "A Hybrid Federated Kernel Regularized Least
Squares Algorithm" (2024), section 4, and the attacks its analysis did not
try (see the project's SEEDS.md): a block ``K = exp(-gamma D_XW)`` gives the
squared distances from each private point to m landmarks. An attacker who
knows the landmarks (the server holds the clients' seed in the paper's
design) recovers each point by linear least squares once ``m > d``
(multilateration); with an unknown common width the equations stay linear in
``(gamma x, gamma ||x||^2, gamma)`` and identify both once ``m >= d + 2``.
With P landmarks (training rows) the block itself reveals which rows are
landmarks (kernel value 1), hence the landmark-to-landmark distances, and
classical MDS gives the landmarks up to a rigid motion, which leaves every
recovered distance unchanged.

Kernel blocks reach an adversary two ways: FedCG naive uploads them to the
server; in FedCG secure the first owner of a cohort's chain sends its block
scaled by the broadcast CG direction, which every client knows and divides
out. Kernel entries that underflow are treated as missing, never inverted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import numpy as np

from fedsec.attacks.fedcg.below_hull import ESTIMATORS, place_points
from fedsec.attacks.fedcg.family import KernelBlockAttack
from fedsec.attacks.fedcg.unknown_width import PRIORS, multilaterate_unknown_gamma
from fedsec.declare import Bool, Choice, Declared, Float
from fedsec.outcomes import Reconstruction
from fedsec.private_store import shard_key
from fedsec.protocols.fedcg import tags
from fedsec.registry import register
from fedsec.views import View


def kernel_distances(K: np.ndarray, gamma: float | np.ndarray, *,
                     floor: Annotated[float, Float(min=0.0)] = 1e-300) -> np.ndarray:
    """Squared distances ``-log(K) / gamma``; entries at or below ``floor`` become NaN.

    Examples
    --------
    >>> kernel_distances(np.array([[np.exp(-2.0), 0.0]]), 0.5).tolist()
    [[4.0, nan]]
    """
    K = np.asarray(K, dtype=np.float64)
    widths = np.asarray(gamma, dtype=np.float64)
    widths = widths[None, :] if widths.ndim == 1 else widths
    missing = (K <= floor) | ~np.isfinite(K)
    with np.errstate(divide="ignore", invalid="ignore"):
        D = -np.log(np.clip(K, floor, 1.0)) / widths
    D[missing] = np.nan
    return D


def multilaterate(D: np.ndarray, W: np.ndarray) -> np.ndarray:
    """Points from squared distances to known anchors (see :func:`multilaterate_spread`)."""
    return multilaterate_spread(D, W)[0]


def multilaterate_spread(D: np.ndarray, W: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Points from squared distances to known anchors, and how far they are determined.

    With ``d + 1`` or more known distances, linear least squares: ``D[i, j] = ||x_i||^2 -
    2 w_j . x_i + ||w_j||^2`` is linear in ``(x_i, ||x_i||^2)``; the point is identified
    (spread 0). With ``k`` of ``1 .. d`` known distances it is not: the positions consistent
    with them form a sphere of dimension ``d - k`` (radius ``rho``, the spread) around the
    point's projection onto the anchors' affine hull. The estimate is that projection (or,
    when ``k = d`` leaves two mirror points, the one nearer the box the features are scaled
    to), or the posterior mean under an isotropic prior fitted to the rows when it explains
    their distances significantly better (:func:`~fedsec.attacks.fedcg.below_hull.place_points`,
    which also says which estimate each group of rows kept). Rows with no known distance are
    NaN.

    Examples
    --------
    >>> W = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> x = np.array([[0.3, 0.6]])
    >>> D = ((x[:, None, :] - W[None]) ** 2).sum(-1)
    >>> points, spread = multilaterate_spread(D, W)
    >>> points.round(6).tolist(), spread.tolist()
    ([[0.3, 0.6]], [0.0])
    >>> points, spread = multilaterate_spread(D[:, :2], W[:2])  # two anchors in the plane
    >>> points.round(6).tolist(), spread.round(3).tolist()  # the mirror point is (0.3, -0.6)
    ([[0.3, 0.6]], [0.6])
    """
    placed = place_points(D, W)
    return placed.points, placed.spread


def landmark_rows(D: np.ndarray, *, atol: float = 1e-9) -> dict[int, int]:
    """Landmarks that are rows of the block (P landmarks): ``{landmark: row}`` where D is ~0."""
    found: dict[int, int] = {}
    for j in range(D.shape[1]):
        hits = np.flatnonzero(np.nan_to_num(D[:, j], nan=np.inf) <= atol)
        if hits.size:
            found[j] = int(hits[0])
    return found


@dataclass(frozen=True)
class KernelObservation:
    """A kernel block as an adversary recovered it.

    ``cells`` lists the ``(owner, cell index, columns)`` whose features the
    block covers: one cell for an uploaded block, several for a chain product
    that already multiplied in more than one owner's block.
    """

    cohort: int
    group: int
    cells: tuple[tuple[str, int, tuple[int, ...]], ...]
    n_features: int
    K: np.ndarray
    source: str

    @property
    def columns(self) -> tuple[int, ...]:
        """All feature columns the block covers, in cell order."""
        return tuple(c for _, _, cols in self.cells for c in cols)


def observed_blocks(view: View) -> list[KernelObservation]:
    """Kernel blocks in ``view``: uploaded (naive) or divided out of chain products (secure)."""
    out: dict[tuple[Any, ...], KernelObservation] = {}
    for m in view.select(tag=tags.KERNEL_BLOCK):
        if view.can_open(m):
            cells: tuple[tuple[str, int, tuple[Any, ...]], ...] = (
                (m.sender, int(m.meta[tags.CELL]), tuple(m.meta[tags.COLUMNS])),)
            out.setdefault(cells, _observation(m, cells, np.asarray(view.open(m)),
                                               tags.KERNEL_BLOCK))
    directions = {int(m.meta[tags.EPOCH]): np.asarray(view.open(m)) for m in view.messages
                  if m.tag == tags.CG_DIRECTION and view.can_open(m)}
    for m in view.select(tag=tags.CHAIN_PRODUCT):
        scaling = directions.get(int(m.meta.get(tags.EPOCH, -1)))
        by_direction = m.meta.get(tags.SCALING) == tags.SCALED_BY_DIRECTION
        if not by_direction or scaling is None or not view.can_open(m):
            continue
        cells = tuple((str(owner), int(cell), tuple(cols))
                      for owner, cell, cols in m.meta[tags.COVERS])
        if cells not in out:
            out[cells] = _observation(m, cells, divide_scaling(np.asarray(view.open(m)), scaling),
                                      f"{tags.CHAIN_PRODUCT}/direction "
                                      f"(position {m.meta[tags.POSITION]})")
    return list(out.values())


def divide_scaling(product: np.ndarray, scaling: np.ndarray) -> np.ndarray:
    """``K`` from ``K[:, :, None] * S[None, :, :]`` using each landmark's largest scaling."""
    best = np.argmax(np.abs(scaling), axis=1)
    factors = scaling[np.arange(scaling.shape[0]), best]
    with np.errstate(divide="ignore", invalid="ignore"):
        K = product[:, np.arange(scaling.shape[0]), best] / factors[None, :]
    K[:, factors == 0] = np.nan
    return K


def _observation(message: Any, cells: tuple[tuple[str, int, tuple[int, ...]], ...],
                 K: np.ndarray, source: str) -> KernelObservation:
    meta = message.meta
    return KernelObservation(cohort=int(meta[tags.COHORT]), group=int(meta[tags.GROUP]),
                             cells=cells, n_features=int(meta[tags.N_FEATURES]), K=K,
                             source=source)


def public_gamma(view: View) -> float | None:
    """The base kernel width the server announced (public to every client)."""
    for m in view.messages:
        if m.tag == tags.KERNEL_WIDTH:
            return float(np.asarray(m.payload))
    for m in view.select(tag=tags.KERNEL_BLOCK):
        return float(m.meta[tags.GAMMA])
    return None


def seeded_landmarks(view: View, n_features: int, gamma: float,
                     ) -> tuple[np.ndarray, float | np.ndarray] | None:
    """Landmarks and widths regenerated from the clients' seed, when the adversary holds it.

    Uses the protocol's public derivation (the same function every client runs).
    Possible for U and N landmarks; P landmarks are data rows, not seed output.
    """
    material = view.keys.get(tags.SEED_KEY)
    params = dict(view.header.get("protocol", {}).get("params", {}))
    if material is None or params.get("landmark_method") not in ("U", "N"):
        return None
    from fedsec.protocols.fedcg.setup import FedCGParams, derive_shared

    stats = [np.asarray(m.payload) for m in view.messages if m.tag == tags.LANDMARK_STATS]
    if params["landmark_method"] == "N" and not stats:
        return None
    mean, std = (stats[0][0], stats[0][1]) if stats else (None, None)
    shared = derive_shared(FedCGParams(**params), material, n_features=n_features, n_rows=0,
                           n_outputs=1, base_gamma=gamma, mean=mean, std=std, pool=None)
    return shared.W, shared.gamma


_FEW_LANDMARKS = (
    "fewer landmarks than the block's features + 1: each point is known only to lie on a "
    "sphere; the estimate is its centre (or, with as many landmarks as features, the mirror "
    "point nearer the landmarks), or the posterior mean under an isotropic prior fitted to the "
    "block where that explains the distances better (below_hull says which, per block)")
_UNKNOWN_WIDTH = (
    "fewer landmarks than the block's features + 2 with the width unknown: the width is "
    "guessed (width_from names how) and the points placed at it, each on the centre of the "
    "sphere it is known to lie on below features + 1 landmarks; mean_spread is that radius at "
    "the guessed width, a lower bound on the uncertainty")


@register("attack", "multilateration")
class Multilateration(KernelBlockAttack):
    """Kernel blocks to distances to landmarks, then linear least squares (landmarks from the
    clients' seed, or from P-landmark rows up to a rigid motion).

    Recover each owner's features from the kernel blocks an adversary sees.
    """

    closed_form = True

    @dataclass(frozen=True, kw_only=True)
    class Params(Declared):
        knowledge: Annotated[str, Choice("auto", "landmarks", "landmark-distances")] = "auto"
        """Where the landmarks come from: landmarks (regenerated from the clients' seed),
        landmark-distances (P landmarks located in the blocks, classical MDS frame) or auto (the
        seed when held, else the blocks)."""
        unknown_gamma: Annotated[bool, Bool()] = False
        """Treat the kernel width as unknown and estimate it with the points (identified once
        m >= d + 2 landmarks; below, the best estimate the equations allow, reported as
        not identifiable)."""
        floor: Annotated[float, Float(min=0.0)] = 1e-300
        """Kernel entries at or below floor are treated as missing (underflowed), never inverted."""
        below_hull: Annotated[str, Choice(*ESTIMATORS)] = "auto"
        """The estimate of points below d + 1 landmarks: affine-hull (the sphere's centre, or the
        mirror point nearer the box at d), isotropic-prior (the posterior mean under an isotropic
        Gaussian prior fitted to the block's distances) or auto (the prior where it explains the
        distances significantly better, by a likelihood-ratio test; never by the truth)."""

    def run(self, view: View) -> Reconstruction:
        blocks = observed_blocks(view)
        gamma = public_gamma(view)
        n_features = max((b.n_features for b in blocks), default=0)
        seeded = None
        if self.params.knowledge in ("auto", "landmarks") and gamma is not None:
            seeded = seeded_landmarks(view, n_features, gamma)
        estimates, baseline, used = {}, {}, {}
        unidentified: dict[str, float] = {}
        width_from: dict[str, str] = {}
        below_hull: dict[str, list[dict[str, Any]]] = {}
        frames = {} if seeded else self._p_frames(blocks, gamma)
        widths: float | np.ndarray | None
        for block in sorted(blocks, key=lambda b: len(b.cells)):
            keys = [shard_key(owner, cell, "X") for owner, cell, _ in block.cells]
            if all(k in estimates for k in keys):
                continue  # already recovered from a block covering fewer owners
            cols = list(block.columns)
            if seeded is not None:
                W, widths = seeded[0][:, cols], seeded[1]
                how = "landmarks from the seed"
            elif len(block.cells) == 1 and block.group in frames:
                W, widths = frames[block.group], gamma
                how = "P landmarks located in the blocks, classical MDS frame"
            else:
                continue
            guessed = ""
            if self.params.unknown_gamma:
                fit = multilaterate_unknown_gamma(
                    kernel_distances(block.K, 1.0, floor=self.params.floor), W,
                    announced=gamma, estimator=self.params.below_hull)
                estimate, spread, guessed, below = (fit.points, fit.spread, fit.width_from,
                                                    fit.below)
            else:
                assert widths is not None  # the frames exist only with the announced width
                estimate, spread, below = place_points(
                    kernel_distances(block.K, widths, floor=self.params.floor), W,
                    estimator=self.params.below_hull)
            start = 0
            for key, (owner, _, cell_cols) in zip(keys, block.cells, strict=True):
                part = slice(start, start + len(cell_cols))
                start += len(cell_cols)
                if owner in view.knowledge or (key in estimates and len(block.cells) > 1):
                    continue  # the coalition's own data, or already recovered
                estimates[key] = estimate[:, part]
                baseline[key] = np.tile(W[:, part].mean(axis=0), (block.K.shape[0], 1))
                used[key] = f"{block.source}; {how}"
                if np.nanmax(spread, initial=0.0) > 0 or guessed in PRIORS:
                    unidentified[key] = float(np.nanmean(spread))
                if guessed:
                    width_from[key] = guessed
                if below:
                    below_hull[key] = below
        info: dict[str, Any] = {"blocks_seen": len(blocks), "blocks_attacked": len(estimates),
                                "seed_held": tags.SEED_KEY in view.keys, "methods": used}
        if width_from:
            info["width_from"] = width_from
        if below_hull:
            info["below_hull"] = below_hull
        if unidentified:
            info["not_identifiable"] = {"why": _UNKNOWN_WIDTH if self.params.unknown_gamma
                                        else _FEW_LANDMARKS, "mean_spread": unidentified}
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates=estimates,
                              baseline=baseline, info=info)

    def _p_frames(self, blocks: list[KernelObservation], gamma: float | None,
                  ) -> dict[int, np.ndarray]:
        """Per feature group, the P landmarks in a frame of the attacker's own (classical MDS)."""
        if self.params.knowledge == "landmarks" or gamma is None:
            return {}
        from fedsec.geometry.edm import classical_mds

        frames = {}
        by_group: dict[int, list[KernelObservation]] = {}
        for b in blocks:
            if len(b.cells) == 1:
                by_group.setdefault(b.group, []).append(b)
        for group, members in by_group.items():
            D = np.vstack([kernel_distances(b.K, gamma, floor=self.params.floor)
                           for b in members])
            rows = landmark_rows(D)
            m = D.shape[1]
            if len(rows) < m:
                continue  # some landmarks are rows the adversary never saw
            D_W = D[[rows[j] for j in range(m)]]
            D_W = 0.5 * (D_W + D_W.T)
            frames[group] = classical_mds(D_W, len(members[0].columns))
        return frames


