"""Explicit splits: a split file's rows are exactly the run's test rows; bad files and bad rows
get one clear error; ``split_seed`` keeps one split across seeds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.data import load_spec
from fedsec.data.splits import SplitRows, read_split_file, split_at
from fedsec.errors import DataError, ValidationError
from fedsec.runner import RunConfig, run


@settings(max_examples=40, deadline=None)
@given(st.sets(st.integers(0, 149), min_size=1, max_size=100), st.booleans())
def test_the_file_s_rows_are_the_test_rows(rows: set[int], as_json: bool) -> None:
    import tempfile

    test = sorted(rows)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / ("split.json" if as_json else "split.txt")
        path.write_text(json.dumps({"test": test}) if as_json else
                        "\n".join(", ".join(map(str, test[i:i + 7]))
                                  for i in range(0, len(test), 7)), encoding="utf-8")
        iris = load_spec("iris")
        split = split_at(iris, read_split_file(path))
    np.testing.assert_array_equal(split.test.X, iris.X[test])
    assert split.train.n_samples == 150 - len(test)


@pytest.mark.parametrize(("text", "suffix", "message"), [
    ('{"train": [1]}', ".json", 'needs an object with "test"'),
    ('{"test": [1], "valid": [2]}', ".json", "unknown keys"),
    ('{"test": [1.5]}', ".json", "not a whole number"),
    ("{not json", ".json", "invalid JSON"),
    ("3 4 -1", ".txt", "not a whole number"),
    ("# nothing", ".txt", "non-empty list"),
])
def test_a_bad_file_is_refused_naming_the_problem(tmp_path: Path, text: str, suffix: str,
                                                   message: str) -> None:
    path = tmp_path / f"split{suffix}"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValidationError, match=message):
        read_split_file(path)


@pytest.mark.parametrize(("test", "train", "message"), [
    ([3, 150], None, "has 150 rows"), ([3, 3], None, "twice"),
    ([1, 2], [2, 5], "in both train and test"), (list(range(150)), None, "no training rows"),
])
def test_rows_that_do_not_fit_the_dataset_are_refused(test: list[int], train: list[int] | None,
                                                      message: str) -> None:
    rows = SplitRows(np.array(test), None if train is None else np.array(train), "x")
    with pytest.raises(DataError, match=message):
        split_at(load_spec("iris"), rows)


def test_a_named_train_list_leaves_the_other_rows_out(tmp_path: Path) -> None:
    path = tmp_path / "split.json"
    path.write_text(json.dumps({"test": [0, 1, 2], "train": list(range(10, 60))}))
    result = run(RunConfig(protocol="secure-sum", dataset="iris", split_file=str(path)))
    assert (result.record.dataset.train_samples, result.record.dataset.test_samples) == (50, 3)
    assert result.record.dataset.split.startswith(f"file {path}")


def test_split_seed_keeps_one_split_across_the_runs_seeds() -> None:
    def total(**options: object) -> np.ndarray:
        result = run(RunConfig(protocol="secure-sum", dataset="iris", **options))
        return np.asarray(result.reference.values["sum"])

    one = [total(seed=s, split_seed=7) for s in (0, 1, 2)]
    assert all(np.array_equal(one[0], other) for other in one[1:])
    assert np.array_equal(one[0], total(seed=7))  # the split of the run seeded 7
    assert not np.array_equal(total(seed=0), total(seed=1))


def test_a_split_file_and_a_test_size_together_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="without test_size or split_seed"):
        RunConfig(protocol="secure-sum", split_file="x.txt", test_size=0.2)
