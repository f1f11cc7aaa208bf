"""What every trained model shares: it reads the dataset's full feature matrix.

A protocol's model (:attr:`fedsec.outcomes.Outcome.model`) is an estimator in the
scikit-learn sense: ``predict(X)`` (and ``decision_function`` or ``predict_proba`` where the
maths gives them) on the rows of a feature matrix in the dataset's column order, as the run's
test set is given (``fedsec.runner.data_split(config).test.X``), returning class codes in the
dataset's label encoding (``0 .. n_classes - 1``) or values for a regression task.
"""

from __future__ import annotations

import numpy as np

from fedsec.errors import DataError


def check_features(X: object, n_features: int, *, model: str) -> np.ndarray:
    """``X`` as a float64 matrix of ``n_features`` columns, or :class:`DataError` saying why not.

    Examples
    --------
    >>> check_features([[1, 2]], 2, model="KRLSModel").dtype
    dtype('float64')
    >>> check_features(np.zeros((3, 5)), 4, model="KRLSModel")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    fedsec.errors.DataError: KRLSModel reads rows of 4 features ... got an array of shape (3, 5).
    """
    array = np.asarray(X, dtype=np.float64)
    if array.ndim != 2 or array.shape[1] != n_features:
        raise DataError(f"{model} reads rows of {n_features} features (the dataset's columns, "
                        f"in order); got an array of shape {array.shape}.")
    return array
