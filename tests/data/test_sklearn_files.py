"""scikit-learn's bundled datasets, read without importing it, equal its own loaders' output."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn import datasets

from fedsec.data.sklearn_files import FILES, sklearn_arrays


@pytest.mark.parametrize("name", sorted(FILES))
def test_arrays_and_names_equal_scikit_learns(name: str) -> None:
    bunch = getattr(datasets, f"load_{name}")()
    X, y, features, classes = sklearn_arrays(name)
    assert X.dtype == np.float64 and y.dtype == np.int64
    np.testing.assert_array_equal(X, bunch.data)
    np.testing.assert_array_equal(y, bunch.target)
    assert features == tuple(str(f) for f in bunch.feature_names)
    assert classes == tuple(str(c) for c in bunch.target_names)
