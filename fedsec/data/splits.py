"""Explicit train/test splits: a paper's own split, from a file, instead of a seeded one.

A split file names the test rows (positions in the dataset as loaded, from 0), and
optionally the training rows (rows in neither are left out of the run):

- JSON: ``{"test": [3, 17, ...]}`` or ``{"test": [...], "train": [...]}``;
- anything else: the test rows as whole numbers separated by spaces, commas or new lines
  (``#`` starts a comment).

:func:`read_split_file` checks the file's form; :func:`split_at` checks the rows against the
dataset (in range, no repeats, train and test apart, neither empty) and cuts it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from fedsec.data.dataset import Dataset, Split
from fedsec.errors import DataError, ValidationError


@dataclass(frozen=True)
class SplitRows:
    """The rows a split file names, and the file's SHA-256 (what makes it this split)."""

    test: np.ndarray
    train: np.ndarray | None
    sha256: str


def read_split_file(path: str | os.PathLike[str]) -> SplitRows:
    """The test (and training) rows a split file names; a clear error for any bad file.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    ...     _ = f.write("# the paper's test rows\\n4, 7\\n9\\n")
    >>> read_split_file(f.name).test.tolist()
    [4, 7, 9]
    """
    file = Path(path)
    if not file.is_file():
        raise ValidationError(f"No split file at {str(file)!r}: give a JSON file "
                              '({"test": [...], "train": [...]}) or a text file of test rows.')
    raw = file.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationError(f"Split file {file} is not text (UTF-8): give a JSON or text "
                              "file of row numbers.") from None
    if file.suffix.lower() == ".json":
        try:
            table = json.loads(text)
        except ValueError as error:
            raise ValidationError(f"Split file {file}: invalid JSON ({error}).") from None
        if not isinstance(table, dict) or "test" not in table:
            raise ValidationError(f'Split file {file} needs an object with "test" (and '
                                  'optionally "train"): {"test": [3, 17, ...]}.')
        unknown = sorted(set(table) - {"test", "train"})
        if unknown:
            raise ValidationError(f"Split file {file} has unknown keys {unknown}; valid: "
                                  "test, train.")
        test = _rows(table["test"], file, "test")
        train = None if table.get("train") is None else _rows(table["train"], file, "train")
        return SplitRows(test, train, digest)
    words = [w for line in text.splitlines() for w in re.split(r"[\s,]+",
                                                               line.split("#", 1)[0]) if w]
    return SplitRows(_rows(words, file, "test"), None, digest)


def _rows(values: Any, file: Path, what: str) -> np.ndarray:
    if not isinstance(values, list) or not values:
        raise ValidationError(f"Split file {file}: {what} must be a non-empty list of row "
                              "numbers.")
    out = []
    for value in values:
        text = str(value).strip()
        if isinstance(value, bool) or not re.fullmatch(r"\d+", text):
            raise ValidationError(f"Split file {file}: {what} row {value!r} is not a whole "
                                  "number >= 0 (rows count from 0).")
        out.append(int(text))
    return np.array(out, dtype=np.int64)


def split_at(data: Dataset, rows: SplitRows, *, source: str = "the split file") -> Split:
    """``data`` cut at the rows of a split file (rows keep the dataset's order)."""
    n = data.n_samples
    train = rows.train if rows.train is not None else np.setdiff1d(np.arange(n), rows.test)
    for what, index in (("test", rows.test), ("train", train)):
        if index.size and int(index.max()) >= n:
            raise DataError(f"{source} names {what} row {int(index.max())}, but "
                            f"{data.name!r} has {n} rows (0 to {n - 1}).")
        if np.unique(index).size != index.size:
            raise DataError(f"{source} names some {what} rows twice.")
    both = np.intersect1d(rows.test, train)
    if both.size:
        raise DataError(f"{source} puts {both.size} rows in both train and test (first: "
                        f"{int(both[0])}).")
    if train.size == 0:
        raise DataError(f"{source} leaves no training rows.")
    return Split(train=data._take(np.sort(train), test_rows=None),
                 test=data._take(np.sort(rows.test), test_rows=None))
