"""The small datasets scikit-learn ships (iris, wine, breast_cancer, digits), read without it.

``sklearn.datasets.load_iris`` and its siblings read CSV files inside scikit-learn's package;
importing scikit-learn to call them costs about a second, more than a small run. This module
finds scikit-learn's data folder without importing the package and parses the files the way
its loaders do (the feature names are those its loaders write out).
tests/data/test_sklearn_files.py checks every array and name against scikit-learn's loaders.

Examples
--------
>>> X, y, features, classes = sklearn_arrays("iris")
>>> X.shape, classes
((150, 4), ('setosa', 'versicolor', 'virginica'))
"""

from __future__ import annotations

import csv
import gzip
import importlib.util
import io
from pathlib import Path

import numpy as np

from fedsec.errors import DataError

_BREAST_CANCER_BASE = ("radius", "texture", "perimeter", "area", "smoothness", "compactness",
                       "concavity", "concave points", "symmetry", "fractal dimension")

#: Each dataset's file in scikit-learn's ``datasets/data`` folder and its feature names.
FILES: dict[str, tuple[str, tuple[str, ...]]] = {
    "iris": ("iris.csv", ("sepal length (cm)", "sepal width (cm)", "petal length (cm)",
                          "petal width (cm)")),
    "wine": ("wine_data.csv", ("alcohol", "malic_acid", "ash", "alcalinity_of_ash",
                               "magnesium", "total_phenols", "flavanoids",
                               "nonflavanoid_phenols", "proanthocyanins", "color_intensity",
                               "hue", "od280/od315_of_diluted_wines", "proline")),
    "breast_cancer": ("breast_cancer.csv", (*(f"mean {b}" for b in _BREAST_CANCER_BASE),
                                            *(f"{b} error" for b in _BREAST_CANCER_BASE),
                                            *(f"worst {b}" for b in _BREAST_CANCER_BASE))),
    "digits": ("digits.csv.gz", tuple(f"pixel_{row}_{col}" for row in range(8)
                                      for col in range(8))),
}


def data_folder() -> Path:
    """scikit-learn's ``datasets/data`` folder, found without importing scikit-learn."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None or not spec.submodule_search_locations:
        raise DataError("scikit-learn is not installed; its bundled datasets (iris, wine, "
                        "breast_cancer, digits) are read from its package: "
                        "pip install scikit-learn.")
    return Path(next(iter(spec.submodule_search_locations))) / "datasets" / "data"


def sklearn_arrays(name: str) -> tuple[np.ndarray, np.ndarray, tuple[str, ...], tuple[str, ...]]:
    """``(X, y, feature_names, class_names)`` of one of :data:`FILES`, as scikit-learn loads it
    (``X`` float64, ``y`` int64)."""
    file_name, features = FILES[name]
    path = data_folder() / file_name
    if not path.is_file():
        raise DataError(f"{path} is missing from the scikit-learn installation; reinstall "
                        "scikit-learn.")
    if file_name.endswith(".gz"):  # digits: a header-less table, the class in the last column
        with gzip.open(path) as compressed:
            data = np.loadtxt(io.TextIOWrapper(compressed, encoding="utf-8"), delimiter=",")
        y = data[:, -1].astype(np.int64)
        return data[:, :-1].copy(), y, features, tuple(str(k) for k in range(10))
    with path.open(encoding="utf-8", newline="") as handle:
        rows = csv.reader(handle)
        header = next(rows)
        n_samples, n_features = int(header[0]), int(header[1])
        X = np.empty((n_samples, n_features))
        y = np.empty(n_samples, dtype=np.int64)
        for i, row in enumerate(rows):
            X[i] = np.asarray(row[:-1], dtype=np.float64)
            y[i] = int(row[-1])
    return X, y, features, tuple(header[2:])
