"""Users' CSV files: round trip, task inference and refusals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fedsec.data import from_csv, load
from fedsec.errors import DataError, ValidationError


def write(path, columns):
    pd.DataFrame(columns).to_csv(path, index=False)
    return path


def test_round_trip_of_a_packaged_dataset(tmp_path):
    ds = load("ionosphere")
    frame = pd.DataFrame(ds.X, columns=list(ds.feature_names))
    frame["label"] = np.asarray(ds.class_names)[ds.y]
    path = tmp_path / "iono.csv"
    frame.to_csv(path, index=False)

    back = from_csv(path)

    assert back.name == "iono" and back.task == "binary"
    assert back.feature_names == ds.feature_names
    assert back.class_names == ds.class_names  # ("b", "g") is also the sorted order
    np.testing.assert_array_equal(back.y, ds.y)
    np.testing.assert_allclose(back.X, ds.X, rtol=1e-15, atol=0)
    assert back.source.startswith("CSV file iono.csv (sha256 ")


def test_load_accepts_a_csv_path_with_from_csv_options(tmp_path):
    path = write(tmp_path / "own.csv", {"a": [1.0, 2.0, 3.0], "target": [0, 1, 2]})

    ds = load(str(path), label="target", name="mine")

    assert ds.name == "mine" and ds.task == "multiclass" and ds.class_names == ("0", "1", "2")
    assert load(path, label="target").name == "own"
    with pytest.raises(ValidationError, match="Accepted options: label, name, task"):
        load(str(path), target="x")


@pytest.mark.parametrize(
    ("labels", "task", "class_names"),
    [
        ([0.5, 1.25, 3.0, 2.0], "regression", ()),
        ([1.0, 0.0, 1.0, 0.0], "binary", ("0", "1")),
        ([10, 2, 2, 10], "binary", ("2", "10")),
        (["b", "a", "c", "a"], "multiclass", ("a", "b", "c")),
        ([True, False, True, True], "binary", ("False", "True")),
    ],
)
def test_task_is_inferred_from_the_labels(tmp_path, labels, task, class_names):
    path = write(tmp_path / "t.csv", {"x": [1.0, 2.0, 3.0, 4.0], "label": labels})

    ds = from_csv(path)

    assert ds.task == task and ds.class_names == class_names
    if task != "regression":
        assert [ds.class_names[c] for c in ds.y] == [str(v) if not isinstance(v, float)
                                                      else str(int(v)) for v in labels]


def test_explicit_regression_task_on_integer_labels(tmp_path):
    path = write(tmp_path / "t.csv", {"x": [1.0, 2.0, 3.0], "label": [1, 2, 3]})
    ds = from_csv(path, task="regression")
    assert ds.task == "regression" and ds.y.dtype == np.float64


def test_nan_feature_is_refused_naming_the_column(tmp_path):
    path = tmp_path / "nan.csv"
    path.write_text("age,chol,label\n50,200,0\n61,,1\n70,180,0\n")
    with pytest.raises(DataError, match=r"column 'chol' \(first at row 1\)"):
        from_csv(path)


@pytest.mark.parametrize(
    ("content", "options", "error", "pattern"),
    [
        ("a,label\n1,x\n2,\n", {}, DataError, "missing label"),
        ("a,b,label\n1,x,0\n2,y,1\n", {}, DataError, "feature column 'b'"),
        ("a,y\n1,0\n2,1\n", {}, ValidationError, r"'label' parameter.*\(a, y\)"),
        ("a,label\n1,0\n2,0\n", {}, DataError, "1 distinct label"),
        ("a,label\n1,0\n2,1\n3,2\n", {"task": "binary"}, DataError, "binary"),
        ("a,label\n1,p\n2,q\n", {"task": "regression"}, DataError, "non-numeric labels"),
        ("a,label\n1,0.5\n2,1\n", {"task": "binary"}, DataError, "non-integer"),
        ("a,label\n1,0\n2,1\n", {"task": "ordinal"}, ValidationError, "'task'"),
        ("", {}, DataError, "Cannot read"),
    ],
)
def test_unusable_files_are_refused(tmp_path, content, options, error, pattern):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(error, match=pattern):
        from_csv(path, **options)


def test_missing_file_is_refused(tmp_path):
    with pytest.raises(DataError, match="Cannot read"):
        from_csv(tmp_path / "absent.csv")
