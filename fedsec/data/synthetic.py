"""Generated datasets: FedCG's three-hospital toy set and a make_classification wrapper.

The toy set follows the description in the FedCG paper's table of datasets
("randomly generated training and test sets, each consisting of 6000 spatially
distributed samples from three hospitals, with normalized features and a bias
term added"); the paper gives no generator, so the cluster layout and the
labelling rule below are this package's own, chosen so that a kernel method
reaches about the 0.94 test accuracy the paper reports for it.
"""

from __future__ import annotations

import numpy as np

from fedsec.data.dataset import Dataset
from fedsec.errors import ValidationError
from fedsec.seeding import generator
from fedsec.validation import check_int

TOY_CENTERS = np.array([[-2.0, -1.0], [2.0, -1.0], [0.0, 2.0]])
"""Centre of each hospital's cluster (unit-variance Gaussian) before scaling."""
TOY_ROWS_PER_HOSPITAL = 2000
TOY_LABEL_NOISE = 0.05
"""Probability that a label is flipped; the Bayes accuracy is therefore 0.95."""


def _toy_boundary(points: np.ndarray) -> np.ndarray:
    """Positive class below the curve x2 = 1.5 sin(0.7 x1) + 0.8 (unscaled units)."""
    return points[:, 1] < 1.5 * np.sin(0.7 * points[:, 0]) + 0.8


def make_fedcg_toy(*, seed: int = 0) -> Dataset:
    """FedCG's toy set: 6,000 train and 6,000 test samples from three hospitals.

    Each hospital contributes 2,000 training and 2,000 test points drawn from
    its own Gaussian cluster in two dimensions. A point is positive when it lies
    below a sine-shaped curve, and 5 % of the labels are flipped, so the best
    possible accuracy is about 0.95 and an RBF kernel method reaches about 0.94;
    the share of positives differs by hospital (about 0.7, 0.95 and 0.2). The two
    coordinates are min-max scaled to ``[0, 1]`` over all 12,000 points, and a
    constant ``bias`` column of ones is appended.

    Parameters
    ----------
    seed : int, default 0
        Root seed; the points come from
        ``fedsec.seeding.generator(seed, "dataset/fedcg-toy")``.

    Returns
    -------
    Dataset
        ``name="fedcg-toy"``, columns ``x1``, ``x2``, ``bias`` in groups
        ``spatial`` and ``bias``, binary labels, ``test_rows`` = rows
        6000-11999, ``cohorts`` = hospital 0, 1 or 2 (rows grouped by hospital
        inside each part).

    Examples
    --------
    >>> toy = make_fedcg_toy(seed=0)
    >>> toy.n_samples, toy.feature_names, toy.test_rows.size
    (12000, ('x1', 'x2', 'bias'), 6000)
    """
    seed = check_int(seed, owner="dataset 'fedcg-toy'", name="seed", min_value=0)
    rng = generator(seed, "dataset/fedcg-toy")
    n_hospitals = TOY_CENTERS.shape[0]
    points, labels, cohorts = [], [], []
    for _part in ("train", "test"):
        for hospital in range(n_hospitals):
            cluster = TOY_CENTERS[hospital] + rng.standard_normal((TOY_ROWS_PER_HOSPITAL, 2))
            flipped = rng.random(TOY_ROWS_PER_HOSPITAL) < TOY_LABEL_NOISE
            points.append(cluster)
            labels.append(_toy_boundary(cluster) ^ flipped)
            cohorts.append(np.full(TOY_ROWS_PER_HOSPITAL, hospital))
    xy = np.vstack(points)
    low, high = xy.min(axis=0), xy.max(axis=0)
    xy = (xy - low) / (high - low)
    n_total = xy.shape[0]
    return Dataset(
        name="fedcg-toy",
        X=np.column_stack([xy, np.ones(n_total)]),
        y=np.concatenate(labels).astype(np.int64),
        task="binary",
        feature_names=("x1", "x2", "bias"),
        feature_groups={"spatial": (0, 1), "bias": (2,)},
        class_names=("0", "1"),
        source="Generated in the manner of the FedCG paper's toy dataset (three hospitals)",
        notes=f"seed={seed}; rows 0-{n_total // 2 - 1} train, {n_total // 2}-{n_total - 1} "
        f"test; cohorts are hospitals 0-{n_hospitals - 1}; {TOY_LABEL_NOISE:.0%} label "
        "noise; coordinates min-max scaled over train and test together.",
        test_rows=np.arange(n_total // 2, n_total),
        cohorts=np.concatenate(cohorts),
    )


def make_classification(
    *, n_samples: int = 1000, n_features: int = 20, n_informative: int | None = None,
    n_classes: int = 2, n_groups: int = 1, seed: int = 0,
) -> Dataset:
    """A synthetic classification set from :func:`sklearn.datasets.make_classification`.

    Parameters
    ----------
    n_samples : int, default 1000
    n_features : int, default 20
    n_informative : int, optional
        Defaults to ``min(10, n_features)``. Up to two further features are
        redundant combinations of the informative ones; the rest are noise.
    n_classes : int, default 2
    n_groups : int, default 1
        When above 1, the columns are cut into that many contiguous groups of
        near-equal size named ``g1``, ``g2``, ... (for vertical partitions).
    seed : int, default 0
        Root seed; scikit-learn's ``random_state`` is drawn from
        ``fedsec.seeding.generator(seed, "dataset/classification")``.

    Returns
    -------
    Dataset
        Features ``f1 .. fN``; class codes ``0 .. n_classes - 1``.

    Examples
    --------
    >>> ds = make_classification(n_samples=100, n_features=6, n_groups=2, seed=1)
    >>> ds.X.shape, {g: len(c) for g, c in ds.feature_groups.items()}
    ((100, 6), {'g1': 3, 'g2': 3})
    """
    from sklearn import datasets

    owner = "dataset 'classification'"
    n_samples = check_int(n_samples, owner=owner, name="n_samples", min_value=2)
    n_features = check_int(n_features, owner=owner, name="n_features", min_value=1)
    if n_informative is None:
        n_informative = min(10, n_features)
    n_informative = check_int(n_informative, owner=owner, name="n_informative", min_value=1,
                              max_value=n_features)
    n_classes = check_int(n_classes, owner=owner, name="n_classes", min_value=2)
    n_groups = check_int(n_groups, owner=owner, name="n_groups", min_value=1,
                         max_value=n_features)
    seed = check_int(seed, owner=owner, name="seed", min_value=0)
    random_state = int(generator(seed, "dataset/classification").integers(0, 2**31 - 1))
    try:
        X, y = datasets.make_classification(
            n_samples=n_samples, n_features=n_features, n_informative=n_informative,
            n_redundant=min(2, n_features - n_informative), n_classes=n_classes,
            random_state=random_state,
        )
    except ValueError as exc:
        raise ValidationError(f"The options of {owner} are inconsistent: {exc}") from exc
    groups = {}
    if n_groups > 1:
        chunks = np.array_split(np.arange(n_features), n_groups)
        groups = {f"g{k + 1}": tuple(int(j) for j in chunk) for k, chunk in enumerate(chunks)}
    return Dataset(
        name="classification", X=X, y=y,
        task="binary" if n_classes == 2 else "multiclass",
        feature_groups=groups, class_names=tuple(str(k) for k in range(n_classes)),
        source="Synthetic, scikit-learn make_classification",
        notes=f"n_samples={n_samples}, n_features={n_features}, n_informative={n_informative}, "
        f"n_classes={n_classes}, seed={seed}.",
    )
