"""BasicMotions: smart-watch accelerometer and gyroscope sequences, read from the ``.ts`` format.

The problem comes from the UEA multivariate time-series classification archive (A. Bagnall,
H. A. Dau, J. Lines, M. Flynn, J. Large, A. Bostrom, P. Southam, E. Keogh, "The UEA
multivariate time series classification archive, 2018", arXiv:1811.00075), as shipped in
sktime 1.2.0. Four students wore a smart watch while standing, running, walking and playing
badminton; each recording is ten seconds of a 3-axis accelerometer and a 3-axis gyroscope
sampled at 10 Hz. The files are packaged unchanged (``files/basic_motions/``) and verified
against their SHA-256 before parsing.

The archive's ``.ts`` text format: header lines start with ``@`` (``@dimensions 6``,
``@seriesLength 100``, ``@classLabel true A B ...``, then ``@data``) or ``#`` (comments); each
data line is one case, its dimensions separated by ``:``, each a comma-separated series, and
the class label last.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from functools import cache

import numpy as np

from fedsec.data.dataset import Dataset
from fedsec.data.fields import readonly
from fedsec.data.packaged import read_packaged
from fedsec.data.sequences import sequence_feature_names
from fedsec.errors import DataError

BASIC_MOTIONS_FILES = ("basic_motions/BasicMotions_TRAIN.ts.gz",
                       "basic_motions/BasicMotions_TEST.ts.gz")
BASIC_MOTIONS_VIEWS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("accelerometer", ("x", "y", "z")),
    ("gyroscope", ("x", "y", "z")),
)
"""The views in the order of the file's dimensions: dimensions 0-2, then 3-5."""
BASIC_MOTIONS_LENGTH = 100
BASIC_MOTIONS_CITATION = (
    "A. Bagnall, H. A. Dau, J. Lines, M. Flynn, J. Large, A. Bostrom, P. Southam, E. Keogh, "
    "The UEA multivariate time series classification archive, 2018, arXiv:1811.00075"
)


@dataclass(frozen=True)
class TsTable:
    """A parsed ``.ts`` file: ``values`` ``(n_cases, n_dimensions, length)``, text labels."""

    values: np.ndarray
    labels: tuple[str, ...]
    class_names: tuple[str, ...]


def parse_ts(text: str, what: str = "the .ts file") -> TsTable:
    """Parse an equal-length, labelled ``.ts`` file.

    Parameters
    ----------
    text : str
        The file's content.
    what : str
        How to name the file in error messages.

    Returns
    -------
    TsTable
        Cases in file order; ``class_names`` in the order of the ``@classLabel`` line.

    Raises
    ------
    fedsec.errors.DataError
        If the header lacks ``@classLabel true`` or ``@data``, a case has another number of
        dimensions or steps than the header states, a value is not a number, or a label is
        not among the declared classes.

    Examples
    --------
    >>> table = parse_ts("# two cases\\n@dimensions 2\\n@seriesLength 3\\n"
    ...                  "@classLabel true up down\\n@data\\n"
    ...                  "1,2,3:4,5,6:down\\n0,0,0:1,1,1:up\\n")
    >>> table.values.shape, table.labels, table.class_names
    ((2, 2, 3), ('down', 'up'), ('up', 'down'))
    """
    header: dict[str, list[str]] = {}
    cases: list[list[list[float]]] = []
    labels: list[str] = []
    in_data = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if not in_data:
            if not line.startswith("@"):
                raise DataError(f"{what}: line {number} comes before '@data' but is not a "
                                "header line (starting with '@' or '#').")
            key, *words = line[1:].split()
            header[key.lower()] = words
            in_data = key.lower() == "data"
            continue
        *series, label = line.split(":")
        try:
            cases.append([[float(v) for v in s.split(",")] for s in series])
        except ValueError:
            raise DataError(f"{what}: line {number} holds a value that is not a number "
                            "(missing values are not supported).") from None
        labels.append(label.strip())
    class_line = header.get("classlabel", [])
    if not in_data or len(class_line) < 2 or class_line[0].lower() != "true":
        raise DataError(f"{what} needs an '@classLabel true <classes>' line and an '@data' "
                        "line; the packaged file may be corrupt.")
    class_names = tuple(class_line[1:])
    dims = int(header.get("dimensions", [str(len(cases[0]) if cases else 0)])[0])
    length = int(header.get("serieslength", [str(len(cases[0][0]) if cases else 0)])[0])
    for k, case in enumerate(cases):
        if len(case) != dims or any(len(s) != length for s in case):
            raise DataError(f"{what}: case {k} does not have {dims} dimensions of {length} "
                            "steps each, as the header states.")
    unexpected = sorted(set(labels) - set(class_names))
    if unexpected:
        raise DataError(f"{what} has label(s) {unexpected!r} outside the declared classes "
                        f"{', '.join(class_names)}.")
    values = np.asarray(cases, dtype=np.float64).reshape(len(cases), dims, length)
    return TsTable(values=values, labels=tuple(labels), class_names=class_names)


def time_major(values: np.ndarray) -> np.ndarray:
    """Series ``(n, channels, T)`` as rows ``(n, T * channels)``, every channel at each step.

    Examples
    --------
    >>> time_major(np.array([[[1.0, 2.0], [10.0, 20.0]]])).tolist()
    [[1.0, 10.0, 2.0, 20.0]]
    """
    n, channels, length = values.shape
    return values.transpose(0, 2, 1).reshape(n, length * channels)


@cache
def _basic_motions_arrays() -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    tables = [parse_ts(gzip.decompress(read_packaged(path)).decode("utf-8"), repr(path))
              for path in BASIC_MOTIONS_FILES]
    n_dims = sum(len(channels) for _, channels in BASIC_MOTIONS_VIEWS)
    class_names = tables[0].class_names
    for path, table in zip(BASIC_MOTIONS_FILES, tables, strict=True):
        if table.values.shape != (40, n_dims, BASIC_MOTIONS_LENGTH):
            raise DataError(f"{path!r} has shape {table.values.shape}, expected "
                            f"(40, {n_dims}, {BASIC_MOTIONS_LENGTH}).")
        if table.class_names != class_names:
            raise DataError(f"{path!r} declares classes {table.class_names}, the training "
                            f"file {class_names}.")
    values = np.concatenate([t.values for t in tables])
    blocks, start = [], 0
    for _, channels in BASIC_MOTIONS_VIEWS:
        blocks.append(time_major(values[:, start:start + len(channels)]))
        start += len(channels)
    lookup = {name: code for code, name in enumerate(class_names)}
    y = np.array([lookup[label] for t in tables for label in t.labels], dtype=np.int64)
    return readonly(np.hstack(blocks), np.float64), readonly(y, np.int64), class_names


def load_basic_motions() -> Dataset:
    """BasicMotions: 80 smart-watch recordings in two sequence views, four activities.

    Rows 0-39 are the archive's training cases and rows 40-79 its test cases (``test_rows``,
    so :meth:`~fedsec.data.Dataset.split` keeps the archive's split). The views
    ``accelerometer`` and ``gyroscope`` each hold channels ``x``, ``y``, ``z`` over 100 steps
    (10 Hz, ten seconds), stored time major as in :mod:`fedsec.data.sequences`, without a
    ``present`` channel (every recording has the full length). Values are unscaled, as in the
    file. Classes in the file's order: Standing, Running, Walking, Badminton (10 of each per
    part).

    Examples
    --------
    >>> ds = load_basic_motions()
    >>> ds.X.shape, ds.class_names, ds.test_rows.size
    ((80, 600), ('Standing', 'Running', 'Walking', 'Badminton'), 40)
    >>> ds.feature_names[:2], ds.feature_names[300]
    (('accelerometer.x[0]', 'accelerometer.y[0]'), 'gyroscope.x[0]')
    """
    X, y, class_names = _basic_motions_arrays()
    names: list[str] = []
    groups: dict[str, tuple[int, ...]] = {}
    for view, channels in BASIC_MOTIONS_VIEWS:
        view_names = sequence_feature_names(view, channels, BASIC_MOTIONS_LENGTH)
        groups[view] = tuple(range(len(names), len(names) + len(view_names)))
        names.extend(view_names)
    n_train = X.shape[0] // 2
    return Dataset(
        name="basic_motions", X=X, y=y, task="multiclass", feature_names=tuple(names),
        feature_groups=groups, class_names=class_names,
        source=f"BasicMotions, UEA multivariate time series classification archive; "
        f"{BASIC_MOTIONS_CITATION}; via sktime 1.2.0 (BSD-3-Clause)",
        notes=f"Rows 0-{n_train - 1} are the archive's training cases, {n_train}-"
        f"{X.shape[0] - 1} its test cases (test_rows). Two sequence views of 100 steps at "
        "10 Hz: accelerometer (x, y, z) and gyroscope (x, y, z), unscaled; read them with "
        "scaling 'none'.",
        test_rows=np.arange(n_train, X.shape[0]),
    )
