"""The :class:`Dataset` value every protocol and attack consumes, and its train/test split.

A dataset is an immutable value: its arrays are read-only, so a loader may hand
the same arrays to several callers (see :mod:`fedsec.data.builtin`) and no caller
can change what another one sees. Derive new datasets with :meth:`Dataset.subset`,
:meth:`Dataset.split` or :func:`dataclasses.replace`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any, Literal, get_args

import numpy as np

from fedsec.data.fields import (
    as_cohorts,
    as_feature_groups,
    as_feature_matrix,
    as_feature_names,
    as_labels,
    as_row_index,
    as_test_rows,
)
from fedsec.data.scaling import ScalingMethod, fit_scaler
from fedsec.data.shuffle_split import shuffle_split
from fedsec.errors import DataError, ValidationError
from fedsec.validation import check_choice, check_finite, check_int, param_error

Task = Literal["binary", "multiclass", "regression"]
TASKS: tuple[str, ...] = get_args(Task)


@dataclass(frozen=True, kw_only=True, eq=False)
class Dataset:
    """A labelled table of samples, with named features and feature groups.

    Parameters
    ----------
    name : str
        Short name, e.g. ``"sonar"``.
    X : numpy.ndarray
        ``(n_samples, n_features)`` feature matrix, stored as read-only float64.
    y : numpy.ndarray
        ``(n_samples,)`` labels: int64 class codes ``0 .. n_classes - 1`` for
        ``"binary"`` and ``"multiclass"`` tasks (code ``i`` means
        ``class_names[i]``), float64 targets for ``"regression"``.
    task : {"binary", "multiclass", "regression"}
        ``"binary"`` has exactly two classes, ``"multiclass"`` three or more.
    feature_names : tuple of str, optional
        One unique name per column; ``f1 .. fN`` when empty.
    feature_groups : dict of str to tuple of int, optional
        Ordered mapping from a group name (a view, an omics layer) to its column
        indices. The groups must cover every column exactly once. When empty, a
        single group ``"all"`` holds every column.
    class_names : tuple of str, optional
        The original label value(s) behind each class code; empty for
        regression. When empty for a classification task, ``"0" .. "k-1"``.
    source : str, optional
        One-line attribution.
    notes : str, optional
        What the loader changed (rows dropped, labels merged, ...).
    test_rows : numpy.ndarray, optional
        Row indices of a predefined test split; :meth:`split` uses them.
    cohorts : numpy.ndarray, optional
        Non-negative int code of each row's natural cohort or site (for
        example the hospital a sample comes from), when the data has one.

    Raises
    ------
    fedsec.errors.DataError
        If shapes disagree, a value is NaN or infinite (the message names the
        column), or a label code is out of range.
    fedsec.errors.ValidationError
        If names are not unique or the groups do not partition the columns.

    Examples
    --------
    >>> ds = Dataset(name="toy", X=[[0.0, 1.0], [1.0, 0.0]], y=[0, 1], task="binary")
    >>> ds.n_samples, ds.n_features, ds.class_names, dict(ds.feature_groups)
    (2, 2, ('0', '1'), {'all': (0, 1)})
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    task: Task
    feature_names: tuple[str, ...] = ()
    feature_groups: dict[str, tuple[int, ...]] = field(default_factory=dict)
    class_names: tuple[str, ...] = ()
    source: str = ""
    notes: str = ""
    test_rows: np.ndarray | None = None
    cohorts: np.ndarray | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise param_error("Dataset", "name", "a non-empty string", self.name)
        owner = f"Dataset {self.name!r}"
        check_choice(self.task, owner=owner, name="task", choices=TASKS)
        what = f"dataset {self.name!r}"
        X = as_feature_matrix(self.X, owner)
        n_samples, n_features = X.shape
        names = as_feature_names(self.feature_names, n_features, owner)
        check_finite(X, what=what, columns=names)
        y, class_names = as_labels(self.y, self.task, self.class_names, n_samples, owner)
        if self.task == "regression":
            check_finite(y, what=f"{what} (labels)")
        self._set("X", X)
        self._set("feature_names", names)
        self._set("feature_groups", as_feature_groups(self.feature_groups, n_features, owner))
        self._set("y", y)
        self._set("class_names", class_names)
        self._set("source", str(self.source))
        self._set("notes", str(self.notes))
        self._set("test_rows", as_test_rows(self.test_rows, n_samples, owner))
        self._set("cohorts", as_cohorts(self.cohorts, n_samples, owner))

    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    @property
    def n_samples(self) -> int:
        """Number of rows."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of feature columns."""
        return int(self.X.shape[1])

    @property
    def n_classes(self) -> int:
        """Number of classes (0 for regression)."""
        return len(self.class_names)

    def subset(self, rows: Any) -> Dataset:
        """The dataset restricted to ``rows``, in the order given.

        Parameters
        ----------
        rows : array-like of int or bool
            Row indices in ``[0, n_samples)`` (repeats allowed, e.g. for a
            bootstrap sample) or a boolean mask of length ``n_samples``.

        Returns
        -------
        Dataset
            Same metadata; ``cohorts`` follow their rows and ``test_rows`` are
            renumbered (``None`` when no test row is kept).

        Examples
        --------
        >>> ds = Dataset(name="toy", X=[[0.0], [1.0], [2.0]], y=[0, 1, 1], task="binary")
        >>> ds.subset([2, 0]).X.ravel().tolist()
        [2.0, 0.0]
        """
        index = as_row_index(rows, self.n_samples, f"Dataset {self.name!r}.subset")
        test_rows = None
        if self.test_rows is not None:
            kept = np.flatnonzero(np.isin(index, self.test_rows))
            test_rows = kept if kept.size else None
        return self._take(index, test_rows=test_rows)

    def one_vs_rest(self, positive: str) -> Dataset:
        """The binary task "``positive`` against every other class".

        Code 1 is ``positive``, code 0 is ``not-<positive>`` (the other
        classes merged); the name becomes ``<name>:positive=<positive>``.
        FedCG's paper, for example, reads Iris as setosa against the rest.

        Raises
        ------
        fedsec.errors.ValidationError
            For a regression dataset, or a class name the dataset does not
            have (the message lists its classes).

        Examples
        --------
        >>> ds = Dataset(name="toy", X=[[0.0], [1.0], [2.0]], y=[0, 1, 2], task="multiclass",
        ...              class_names=("a", "b", "c"))
        >>> binary = ds.one_vs_rest("b")
        >>> binary.name, binary.class_names, binary.y.tolist()
        ('toy:positive=b', ('not-b', 'b'), [0, 1, 0])
        """
        if self.task == "regression":
            raise ValidationError(
                f"Dataset {self.name!r} is a regression set; 'positive' needs class labels."
            )
        if positive not in self.class_names:
            raise ValidationError(
                f"Dataset {self.name!r} has no class {positive!r}; its classes are "
                f"{', '.join(map(repr, self.class_names))}."
            )
        code = self.class_names.index(positive)
        return dataclasses.replace(
            self, name=f"{self.name}:positive={positive}", task="binary",
            y=(self.y == code).astype(np.int64), class_names=(f"not-{positive}", positive),
            notes=(f"{self.notes} " if self.notes else "")
            + f"Binary: class 1 is {positive!r}, class 0 every other class.",
        )

    def _take(self, index: np.ndarray, *, test_rows: np.ndarray | None) -> Dataset:
        return dataclasses.replace(
            self,
            X=_taken(self.X, index),
            y=_taken(self.y, index),
            test_rows=test_rows,
            cohorts=None if self.cohorts is None else _taken(self.cohorts, index),
        )

    def split(
        self, *, test_size: float = 0.25, rng: np.random.Generator | int,
        stratify: bool = True,
    ) -> Split:
        """Split the rows into a train and a test dataset.

        Parameters
        ----------
        test_size : float or int, default 0.25
            Fraction of rows in ``(0, 1)`` or number of rows for the test set.
            Ignored when the dataset has predefined ``test_rows``.
        rng : numpy.random.Generator or int
            Source of randomness, or a seed for :func:`numpy.random.default_rng`.
        stratify : bool, default True
            Keep the class proportions in both parts (classification only).

        Returns
        -------
        Split
            Rows keep their original order inside each part; neither part has
            ``test_rows``.

        Examples
        --------
        >>> ds = Dataset(name="toy", X=np.arange(8.0)[:, None], y=[0, 1] * 4, task="binary")
        >>> parts = ds.split(test_size=0.5, rng=0)
        >>> parts.train.n_samples, parts.test.n_samples
        (4, 4)
        """
        owner = f"Dataset {self.name!r}.split"
        generator = _generator(rng, owner)
        if self.test_rows is not None:
            is_test = np.zeros(self.n_samples, dtype=bool)
            is_test[self.test_rows] = True
            train_index, test_index = np.flatnonzero(~is_test), np.flatnonzero(is_test)
        else:
            train_index, test_index = _random_split(
                self, test_size, generator, bool(stratify), owner
            )
        if train_index.size == 0 or test_index.size == 0:
            raise DataError(
                f"{owner} would leave an empty train or test part "
                f"({train_index.size} train rows, {test_index.size} test rows)."
            )
        return Split(
            train=self._take(train_index, test_rows=None),
            test=self._take(test_index, test_rows=None),
        )

    def describe(self) -> dict[str, Any]:
        """A JSON-serialisable summary of the dataset.

        Returns
        -------
        dict
            ``name``, ``n_samples``, ``n_features``, ``task``, ``classes``
            (class name to row count; empty for regression), ``groups`` (group
            name to column count), ``n_test_rows`` and ``n_cohorts`` (``None``
            when absent), ``source`` and ``notes``.

        Examples
        --------
        >>> ds = Dataset(name="toy", X=[[0.0], [1.0], [2.0]], y=[0, 1, 1], task="binary")
        >>> ds.describe()["classes"]
        {'0': 1, '1': 2}
        """
        classes: dict[str, int] = {}
        if self.task != "regression":
            counts = np.bincount(self.y, minlength=self.n_classes)
            classes = {c: int(k) for c, k in zip(self.class_names, counts, strict=True)}
        return {
            "name": self.name,
            "n_samples": self.n_samples,
            "n_features": self.n_features,
            "task": self.task,
            "classes": classes,
            "groups": {g: len(cols) for g, cols in self.feature_groups.items()},
            "n_test_rows": None if self.test_rows is None else int(self.test_rows.size),
            "n_cohorts": None if self.cohorts is None else int(np.unique(self.cohorts).size),
            "source": self.source,
            "notes": self.notes,
        }


@dataclass(frozen=True, kw_only=True, eq=False)
class Split:
    """A train and a test :class:`Dataset` over the same features and classes.

    Unpacks as ``train, test = split``.

    Examples
    --------
    >>> ds = Dataset(name="toy", X=np.arange(8.0)[:, None], y=[0, 1] * 4, task="binary")
    >>> train, test = ds.split(test_size=0.5, rng=0).scaled("minmax")
    >>> float(train.X.min()), float(train.X.max())
    (0.0, 1.0)
    """

    train: Dataset
    test: Dataset

    def __post_init__(self) -> None:
        for part in ("train", "test"):
            if not isinstance(getattr(self, part), Dataset):
                raise param_error("Split", part, "a Dataset", getattr(self, part))
        a, b = self.train, self.test
        for attribute in ("task", "feature_names", "class_names"):
            if getattr(a, attribute) != getattr(b, attribute):
                raise ValidationError(
                    f"The train and test parts of a Split must share {attribute}. "
                    f"Got {getattr(a, attribute)!r} and {getattr(b, attribute)!r} instead."
                )

    def __iter__(self) -> Iterator[Dataset]:
        return iter((self.train, self.test))

    def scaled(self, method: ScalingMethod) -> Split:
        """Scale both parts with a scaler fitted on the train part only.

        Parameters
        ----------
        method : {"minmax", "standard", "none"}
            See :func:`fedsec.data.fit_scaler`. Constant train columns become 0
            (``"minmax"`` and ``"standard"``).

        Returns
        -------
        Split
            New datasets with scaled ``X``; everything else unchanged.

        Examples
        --------
        >>> ds = Dataset(name="toy", X=np.arange(8.0)[:, None], y=[0, 1] * 4, task="binary")
        >>> test = ds.split(test_size=0.5, rng=0).scaled("standard").test
        >>> test.X.shape
        (4, 1)
        """
        scaler = fit_scaler(self.train.X, method)
        return Split(
            train=dataclasses.replace(self.train, X=scaler.transform(self.train.X)),
            test=dataclasses.replace(self.test, X=scaler.transform(self.test.X)),
        )


def _taken(array: np.ndarray, index: np.ndarray) -> np.ndarray:
    out = array[index]
    out.setflags(write=False)
    return out


def _generator(rng: Any, owner: str) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, Integral) and not isinstance(rng, bool) and int(rng) >= 0:
        return np.random.default_rng(int(rng))
    raise param_error(owner, "rng", "a numpy.random.Generator or an int seed >= 0", rng)


def _random_split(
    data: Dataset, test_size: Any, generator: np.random.Generator, stratify: bool, owner: str,
) -> tuple[np.ndarray, np.ndarray]:
    n = data.n_samples
    if isinstance(test_size, Integral) and not isinstance(test_size, bool):
        size: float | int = check_int(test_size, owner=owner, name="test_size", min_value=1,
                                      max_value=max(n - 1, 1))
    elif isinstance(test_size, float) and 0.0 < test_size < 1.0:
        size = test_size
    else:
        raise param_error(owner, "test_size", "a float in (0, 1) or an int row count", test_size)
    strata = data.y if stratify and data.task != "regression" else None
    seed = int(generator.integers(0, 2**32 - 1))
    try:
        train, test = shuffle_split(n, size, seed, strata)
    except ValueError as exc:
        hint = " Pass stratify=False to split without strata." if strata is not None else ""
        raise DataError(f"{owner} cannot split {n} rows: {exc}{hint}") from exc
    return np.sort(train), np.sort(test)
