"""What the FedCG protocols share: parameters, the clients' seed, pooled statistics, landmarks.

Damiani, Rodina, Decherchi, "A Hybrid Federated Kernel Regularized Least
Squares Algorithm" (2024), sections 2.2–2.5. The clients share one seed (a
key one hospital gives to the others, and to the server in the paper's
design); landmarks, per-landmark kernel widths, the starting point ``alpha0``
(unless a public ``start_seed`` fixes it) and the label noise all come from a
generator keyed by it, so every client draws the same ones. Method P needs
actual training rows as landmarks: their owners send the landmark features to
the other owners of the same feature group, in the clear, which is the privacy
cost of P the paper discusses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated

import numpy as np

from fedsec.backends import prg
from fedsec.backends.primitives import secure_sum
from fedsec.declare import Bool, Choice, Declared, Float, Int
from fedsec.errors import ValidationError
from fedsec.protocols.fedcg import krls, tags
from fedsec.protocols.fedcg.model import KRLSModel
from fedsec.seeding import generator, keyed_generator

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.data import Dataset
    from fedsec.federation import Federation
    from fedsec.interfaces import MaskingBackend

SERVER = "server"
START_PURPOSE = "fedcg/alpha0"
"""Purpose of the starting point's stream under a public ``start_seed``."""


@dataclass(frozen=True, kw_only=True)
class FedCGParams(Declared):
    """Parameters of CenCG, FedCG naive and FedCG secure.

    ``gamma`` 0 means scikit-learn's ``"scale"``: ``1 / (n_features Var(X))``
    from the pooled training statistics. ``gamma_jitter`` > 0 gives each
    landmark its own width ``gamma (1 + u_j)``, ``u_j ~ U(0, jitter)`` (a
    defence). ``tol`` bounds the squared residual relative to its start.
    """

    n_landmarks: Annotated[int, Int(min=1)] = 50
    """Number of Nyström landmarks m (the columns of the kernel block); P landmarks need at least m
    training rows."""
    landmark_method: Annotated[str, Choice(*krls.LANDMARK_METHODS)] = "P"
    """How landmarks are drawn from the clients' shared seed: P (training rows, whose features their
    owners send in the clear), U (uniform in [0, 1] per feature) or N (normal with the pooled
    training mean and std)."""
    gamma: Annotated[float, Float(min=0.0)] = 0.0
    """RBF kernel width in exp(-gamma ||x - w||^2); 0: scikit-learn's "scale", 1 / (n_features
    Var(X)) from pooled training statistics."""
    gamma_jitter: Annotated[float, Float(min=0.0)] = 0.0
    """Per-landmark width gamma (1 + u_j), u_j ~ U(0, gamma_jitter), a defence; 0: one common
    width."""
    regularization: Annotated[float, Float(min=0.0, min_inclusive=False)] = 1e-3
    """Ridge weight lambda in (K^T K + lambda I) alpha = K^T Y."""
    tol: Annotated[float, Float(min=0.0)] = 1e-24
    """Conjugate gradient stops when every column's squared residual is below tol times its starting
    value."""
    max_epochs: Annotated[int, Int(min=1)] = 500
    """Conjugate gradient epochs at most (the federated protocols exchange messages in each)."""
    server_knows_seed: Annotated[bool, Bool()] = True
    """The hospital also gives the clients' shared seed (landmarks, widths, alpha0) to the server,
    as in the paper's design."""
    start_seed: Annotated[int | None, Int(min=0)] = None
    """Public seed of the CG starting point alpha0; None: alpha0 comes from the clients' shared
    seed with the landmarks. Varied under one secret seed, it starts CG from new points on the same
    landmarks (the paper's Tables 1-3); fixed while the secret seed varies, it keeps one start for
    new landmarks (its Tables 4-6)."""
    positive_class: str | None = None
    """The class (one of the dataset's class names) whose test recall and precision are reported;
    None: the second class (code 1) on a binary task, the mean over the classes otherwise. The
    training and the split do not depend on it: on Breast Cancer the paper's tables read
    "malignant", the first class."""


@dataclass
class Shared:
    """What the clients' seed and the pooled statistics determine (identical at every client).

    ``W`` is the full landmark matrix as the evaluator assembles it; parties
    hold their feature groups' columns of it.
    """

    W: np.ndarray
    gamma: float | np.ndarray
    alpha0: np.ndarray
    rng: np.random.Generator
    landmark_rows: np.ndarray | None = None
    base_gamma: float = 0.0
    extras: dict[str, np.ndarray] = field(default_factory=dict)


def seed_material(seed: int) -> bytes:
    """The clients' shared seed for a run (derived from the run's secret seed: reproducible)."""
    return prg.simulation_key(seed, tags.SEED_KEY)


def pooled_gamma(params: FedCGParams, total: float, squares: float, count: int,
                 n_features: int) -> float:
    """The base kernel width: the user's, or ``"scale"`` from pooled sums."""
    if params.gamma > 0:
        return params.gamma
    return krls.scale_gamma(total, squares, count, n_features)


def check_landmarks(params: FedCGParams, n_samples: int) -> None:
    """P landmarks are training rows: there must be at least ``n_landmarks`` of them."""
    if params.landmark_method == "P" and params.n_landmarks > n_samples:
        raise ValidationError(
            f"n_landmarks={params.n_landmarks} P landmarks are training rows, but the training "
            f"set has {n_samples}; use n_landmarks <= {n_samples} or random landmarks "
            "(landmark_method U or N)."
        )


def derive_shared(params: FedCGParams, material: bytes, *, n_features: int, n_rows: int,
                  n_outputs: int, base_gamma: float, mean: np.ndarray | None,
                  std: np.ndarray | None, pool: np.ndarray | None) -> Shared:
    """Landmarks, widths and ``alpha0`` from the shared seed (the same at every client);
    ``alpha0`` from ``params.start_seed`` instead when it is set.

    ``pool`` is the training matrix when the caller holds it (the centralized
    reference, the evaluator); federated clients pass None and assemble P
    landmarks from their owners' messages.
    """
    rng = keyed_generator(material)
    W, rows = krls.make_landmarks(params.landmark_method, params.n_landmarks, n_features, rng,
                                  mean=mean, std=std, pool_size=n_rows)
    if rows is not None:
        W = pool[rows] if pool is not None else np.full((params.n_landmarks, n_features), np.nan)
    assert W is not None  # make_landmarks draws the points unless it picks rows
    gamma = krls.jittered_gamma(base_gamma, params.gamma_jitter, params.n_landmarks, rng)
    alpha0 = rng.normal(0.0, 0.01, size=(params.n_landmarks, n_outputs))
    if params.start_seed is not None:  # drawn above all the same: the label noise stays put
        alpha0 = generator(params.start_seed, START_PURPOSE).normal(0.0, 0.01, size=alpha0.shape)
    return Shared(W=W, gamma=gamma, alpha0=alpha0, rng=rng, landmark_rows=rows,
                  base_gamma=base_gamma)


def n_outputs(n_classes: int) -> int:
    """Columns of the target matrix (one for binary, one per class otherwise)."""
    return 1 if n_classes <= 2 else n_classes


def centralized_shared(params: FedCGParams, train: Dataset, seed: int) -> Shared:
    """The shared values as a centralized reference computes them from the pooled data."""
    X = train.X
    mean = X.mean(axis=0)
    std = X.std(axis=0)
    base = pooled_gamma(params, float(X.sum()), float((X**2).sum()), X.size, X.shape[1])
    return derive_shared(params, seed_material(seed), n_features=X.shape[1],
                         n_rows=X.shape[0], n_outputs=n_outputs(train.n_classes),
                         base_gamma=base, mean=mean, std=std, pool=X)


def check_partition(federation: Federation) -> None:
    """FedCG needs a grid without overlaps (overlapping rows or features would be counted twice)."""
    partition = federation.the_partition()
    if partition is None:
        raise ValidationError("FedCG runs on a partitioned federation.")
    if partition.row_overlap or partition.feature_overlap:
        raise ValidationError(
            "FedCG needs a partition without overlapping rows or features (each would be counted "
            "twice in the kernel); remove the overlap options."
        )


def federated_setup(federation: Federation, backend: MaskingBackend, params: FedCGParams,
                    n_classes: int) -> Shared:
    """Share the seed, pool the statistics, agree on landmarks, through the network."""
    check_partition(federation)
    class_code(federation.test_set(), params.positive_class)  # refused before anything crosses
    partition = federation.the_partition()
    net = federation.network
    hospital = partition.label_owners[0][0]
    material = seed_material(federation.secret_seed)
    clients = [p for p in partition.data_parties if p != hospital]
    receivers = clients + ([SERVER] if params.server_knows_seed else [])
    with net.stage("setup"):
        federation.share_key(hospital, tags.SEED_KEY, material, to=receivers,
                             meta={"purpose": "landmarks, kernel widths, alpha0, label noise",
                                   "source": "derived from the run's secret seed (simulation)"})
        total, squares, mean, std = _pooled_statistics(federation, backend)
        n_features = sum(len(c) for c in partition.column_groups)
        base = pooled_gamma(params, total, squares, partition.n_samples * n_features, n_features)
        for party in partition.data_parties:
            net.send(SERVER, party, tags.KERNEL_WIDTH, np.asarray(base))
            if params.landmark_method == "N":
                net.send(SERVER, party, tags.LANDMARK_STATS, np.stack([mean, std]))
        shared = derive_shared(params, material, n_features=n_features,
                               n_rows=partition.n_samples, n_outputs=n_outputs(n_classes),
                               base_gamma=base, mean=mean, std=std, pool=None)
        if shared.landmark_rows is not None:
            _exchange_landmark_rows(federation, shared)
    return shared


def _pooled_statistics(federation: Federation, backend: MaskingBackend,
                       ) -> tuple[float, float, np.ndarray, np.ndarray]:
    """Column sums and squares per feature group, summed at the server."""
    partition = federation.the_partition()
    net = federation.network
    n_features = sum(len(c) for c in partition.column_groups)
    sums, sq = np.zeros(n_features), np.zeros(n_features)
    for g, columns in enumerate(partition.column_groups):
        vectors: dict[str, np.ndarray] = {}
        for cell in (c for c in partition.cells if c.group == g):
            X = _cell_X(federation, cell.owner, cell.cohort, g)
            stat = np.concatenate([X.sum(axis=0), (X**2).sum(axis=0)])
            vectors[cell.owner] = vectors.get(cell.owner, 0.0) + stat
        if len(vectors) >= 2:
            total = secure_sum(federation, backend, vectors, SERVER, tag=tags.COLUMN_STATISTICS,
                               meta={tags.GROUP: g})
        else:  # a single owner's statistics are the aggregate itself
            (owner, stat), = vectors.items()
            total = net.send(owner, SERVER, tags.COLUMN_STATISTICS, stat, meta={tags.GROUP: g})
        sums[columns] = total[: len(columns)]
        sq[columns] = total[len(columns):]
    n = partition.n_samples
    mean = sums / n
    std = np.sqrt(np.maximum(sq / n - mean**2, 0.0))
    return float(sums.sum()), float(sq.sum()), mean, np.where(std > 0, std, 1e-6)


def _exchange_landmark_rows(federation: Federation, shared: Shared) -> None:
    """P landmarks: each owner sends its landmark rows' features to the group's other owners."""
    partition = federation.the_partition()
    net = federation.network
    rows = shared.landmark_rows
    assert rows is not None  # called for P landmarks only, which are rows
    for g, columns in enumerate(partition.column_groups):
        owners = sorted({c.owner for c in partition.cells if c.group == g})
        for cell in (c for c in partition.cells if c.group == g):
            hits = np.flatnonzero(np.isin(rows, cell.rows))
            if not hits.size:
                continue
            local = np.searchsorted(np.sort(cell.rows), rows[hits])
            order = np.argsort(cell.rows)
            X = _cell_X(federation, cell.owner, cell.cohort, g)
            block = X[order][local]
            shared.W[np.ix_(hits, columns)] = block
            for receiver in owners:
                if receiver != cell.owner:
                    net.send(cell.owner, receiver, tags.LANDMARK_FEATURES, block,
                             meta={tags.GROUP: g, "landmarks": hits.tolist()})


def _cell_X(federation: Federation, owner: str, cohort: int, group: int) -> np.ndarray:
    for cell in federation.party(owner).held_shard().cells:
        if cell.cohort == cohort and cell.group == group:
            return np.asarray(cell.X, dtype=np.float64)
    raise ValidationError(f"{owner!r} holds no cell ({cohort}, {group}).")


def cell_index(federation: Federation, owner: str, cohort: int, group: int) -> int:
    """Position of a cell in its owner's shard (names its ground truth ``cellK/X``)."""
    for i, cell in enumerate(federation.party(owner).held_shard().cells):
        if cell.cohort == cohort and cell.group == group:
            return i
    raise ValidationError(f"{owner!r} holds no cell ({cohort}, {group}).")


def cohort_labels(federation: Federation, cohort: int, n_classes: int) -> tuple[str, np.ndarray]:
    """The label owner of a cohort and its ±1 target matrix."""
    owner = federation.the_partition().label_owners[cohort][0]
    for cell in federation.party(owner).held_shard().cells:
        if cell.cohort == cohort and cell.y is not None:
            return owner, krls.label_matrix(cell.y, n_classes)
    raise ValidationError(f"{owner!r} holds no labels for cohort {cohort}.")


def cohort_chain(federation: Federation, cohort: int) -> list[tuple[str, int]]:
    """The cohort's cell owners in chain order (other groups first, the label owner last)."""
    partition = federation.the_partition()
    label_owner = partition.label_owners[cohort][0]
    cells = [c for c in partition.cells if c.cohort == cohort]
    cells.sort(key=lambda c: (c.owner == label_owner, c.group))
    return [(c.owner, c.group) for c in cells]


def cohort_block(federation: Federation, shared: Shared, owner: str, cohort: int,
                 group: int) -> np.ndarray:
    """The kernel block an owner computes for its cell (its features, its landmark columns)."""
    columns = federation.the_partition().column_groups[group]
    X = _cell_X(federation, owner, cohort, group)
    return krls.rbf_block(X, shared.W[:, columns], shared.gamma)


def evaluate(model: KRLSModel, test: Dataset,
             positive_class: str | None = None) -> tuple[np.ndarray, dict[str, float]]:
    """Test scores, and the trained model's accuracy, recall and precision (of
    ``positive_class``, else of class 1 on a binary task, else macro over classes:
    :func:`~fedsec.protocols.fedcg.krls.recall_precision`), the evaluator's computation."""
    scores = model.decision_function(test.X)
    predicted = krls.predict_labels(scores)
    recall, precision = krls.recall_precision(test.y, predicted, binary=scores.shape[1] == 1,
                                              positive=class_code(test, positive_class))
    return scores, {"accuracy": float((predicted == test.y).mean()), "recall": recall,
                    "precision": precision}


def class_code(data: Dataset, name: str | None) -> int | None:
    """The code of class ``name`` in ``data`` (None for None), or a ValidationError naming the
    classes there are."""
    if name is None:
        return None
    if name not in data.class_names:
        raise ValidationError(
            f"The 'positive_class' parameter names {name!r}, which is not a class of dataset "
            f"{data.name!r}; its classes are {', '.join(map(repr, data.class_names))}.")
    return data.class_names.index(name)


def gram_path(cohort: int | None) -> tuple[str, str]:
    """Where a Gram matrix ``K^T K`` sits among the run's outcomes: a cohort's, or the total.

    The ground-truth key is ``truth_key(None, *gram_path(cohort))``.
    """
    return ("gram", "total" if cohort is None else f"cohort{int(cohort)}")


def gram_truth(blocks: Mapping[int, np.ndarray]) -> dict[str, np.ndarray]:
    """Per-cohort and total ``K^T K`` (ground truth for linear-inference attacks)."""
    out = {"/".join(gram_path(h)): K.T @ K for h, K in blocks.items()}
    out["/".join(gram_path(None))] = sum(out.values())
    return out
