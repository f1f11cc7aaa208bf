"""Users' own data: a CSV file with one label column and numeric features."""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

import numpy as np

from fedsec.data.dataset import TASKS, Dataset, Task
from fedsec.errors import DataError
from fedsec.validation import check_choice, param_error


def from_csv(
    path: str | os.PathLike[str], *, label: str = "label", name: str | None = None,
    task: Task | None = None,
) -> Dataset:
    """Load a dataset from a CSV file with a header row.

    Parameters
    ----------
    path : str or path-like
        Comma-separated file; the first line names the columns.
    label : str, default "label"
        Column holding the labels; every other column is a numeric feature.
    name : str, optional
        Dataset name; defaults to the file name without its extension.
    task : {"binary", "multiclass", "regression"}, optional
        Inferred when omitted: labels that are numbers with a fractional part
        give ``"regression"``; otherwise the distinct label values are classes,
        two of them ``"binary"``, more ``"multiclass"``.

    Returns
    -------
    Dataset
        Class codes follow the sorted label values (numerically for numbers);
        ``class_names`` holds those values as text (``1.0`` is written ``"1"``).
        ``source`` names the file and the start of its SHA-256.

    Raises
    ------
    fedsec.errors.DataError
        If the file cannot be read, a feature column is not numeric, or a value
        is missing or infinite (the message names the column).
    fedsec.errors.ValidationError
        If the label column does not exist or the task does not fit the labels.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     file = Path(folder) / "mine.csv"
    ...     _ = file.write_text("a,b,label\\n0.5,1,yes\\n1.5,2,no\\n")
    ...     ds = from_csv(file)
    >>> ds.name, ds.task, ds.class_names, ds.y.tolist()
    ('mine', 'binary', ('no', 'yes'), [1, 0])
    """
    import pandas as pd

    file = Path(path)
    try:
        content = file.read_bytes()
        frame = pd.read_csv(io.BytesIO(content))
    except (OSError, ValueError) as exc:
        raise DataError(f"Cannot read CSV file {str(file)!r}: {exc}") from exc
    owner = "from_csv"
    columns = [str(c) for c in frame.columns]
    if label not in columns:
        raise param_error(owner, "label", f"a column of {file.name!r} ({', '.join(columns)})",
                          label)
    if task is not None:
        check_choice(task, owner=owner, name="task", choices=TASKS)
    labels = frame.pop(label)
    what = f"CSV file {file.name!r}"
    for column in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[column]):
            raise DataError(
                f"{what} has a non-numeric value in feature column {str(column)!r}. "
                "Encode it as numbers first."
            )
    if labels.isna().any():
        row = int(np.flatnonzero(labels.isna().to_numpy())[0])
        raise DataError(f"{what} has a missing label in column {label!r} (first at row {row}).")
    y, class_names, task = _encode_labels(labels, task, what)
    digest = hashlib.sha256(content).hexdigest()
    return Dataset(
        name=name if name is not None else file.stem,
        X=frame.to_numpy(dtype=np.float64),
        y=y,
        task=task,
        feature_names=tuple(str(c) for c in frame.columns),
        class_names=class_names,
        source=f"CSV file {file.name} (sha256 {digest[:16]})",
    )


def _encode_labels(
    labels: object, task: str | None, what: str,
) -> tuple[np.ndarray, tuple[str, ...], Task]:
    import pandas as pd

    assert isinstance(labels, pd.Series)
    numeric = pd.api.types.is_numeric_dtype(labels) and not pd.api.types.is_bool_dtype(labels)
    values = labels.to_numpy(dtype=np.float64) if numeric else None
    if task is None:
        fractional = values is not None and not np.array_equal(values, np.round(values))
        task = "regression" if fractional else None
    if task == "regression":
        if values is None:
            raise DataError(f"{what} has non-numeric labels, so it cannot be a regression task.")
        return values, (), "regression"
    if values is not None:
        if not np.all(np.isfinite(values)) or not np.array_equal(values, np.round(values)):
            raise DataError(f"{what} has non-integer labels; pass task='regression'.")
        classes, y = np.unique(values, return_inverse=True)
        class_names = tuple(str(int(c)) for c in classes)
    else:
        classes, y = np.unique(labels.astype(str).to_numpy(dtype=str), return_inverse=True)
        class_names = tuple(str(c) for c in classes)
    inferred: Task = "binary" if len(class_names) == 2 else "multiclass"
    if len(class_names) < 2 or (task is not None and task != inferred):
        raise DataError(
            f"{what} has {len(class_names)} distinct label value(s), which does not fit "
            f"a {task or 'classification'} task."
        )
    return y.astype(np.int64), class_names, inferred
