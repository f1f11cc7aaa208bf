"""BasicMotions: the packaged .ts files, their parser and the two sequence views."""

from __future__ import annotations

import gzip
import hashlib
from importlib.resources import files

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.data import builtin, load, packaged
from fedsec.data.basic_motions import BASIC_MOTIONS_FILES, parse_ts, time_major
from fedsec.data.sequences import sequence_layouts, split_present, to_steps
from fedsec.errors import DataError

CLASSES = ("Standing", "Running", "Walking", "Badminton")
# Compressed and uncompressed SHA-256 as documented with the shared copy of the files.
COMPRESSED = {
    "basic_motions/BasicMotions_TRAIN.ts.gz":
        "9bf98638f7147d4eaa563e80bd3fc8099bb16b80ea8f5992696921514d65fc7d",
    "basic_motions/BasicMotions_TEST.ts.gz":
        "0d72101300d5d9649e5ef2117dc426840f2bff4ba176d0b9e2baa16cced25f05",
}
UNCOMPRESSED = {
    "basic_motions/BasicMotions_TRAIN.ts.gz":
        "8dc43cc6306cb679c888c01e26f91772ac4441a916da43bac8b79734a538b9d6",
    "basic_motions/BasicMotions_TEST.ts.gz":
        "79213102bc6fca1a398ad98ce1185dff0208fa3d1465e687f48288946b0ff8dc",
}


@pytest.fixture(scope="module")
def motions():
    return load("basic_motions")


@pytest.fixture
def fresh_cache():
    builtin.clear_cache()
    yield
    builtin.clear_cache()


def _raw(path: str) -> bytes:
    resource = files("fedsec.data").joinpath("files")
    for part in path.split("/"):
        resource = resource.joinpath(part)
    return resource.read_bytes()


def test_checksums_are_recorded_for_the_compressed_files():
    for path in BASIC_MOTIONS_FILES:
        raw = _raw(path)
        assert packaged.SHA256[path] == COMPRESSED[path] == hashlib.sha256(raw).hexdigest()
        assert hashlib.sha256(gzip.decompress(raw)).hexdigest() == UNCOMPRESSED[path]


def test_load_verifies_the_checksum(monkeypatch, fresh_cache):
    path = BASIC_MOTIONS_FILES[1]
    monkeypatch.setattr(packaged, "SHA256", {**packaged.SHA256, path: "0" * 64})
    with pytest.raises(DataError, match=r"BasicMotions_TEST\.ts\.gz' failed its checksum"):
        load("basic_motions")


def test_rows_classes_and_predefined_split(motions):
    assert motions.X.shape == (80, 600) and motions.task == "multiclass"
    assert motions.class_names == CLASSES
    np.testing.assert_array_equal(motions.test_rows, np.arange(40, 80))
    train, test = motions.split(rng=0)
    for part in (train, test):
        assert part.n_samples == 40
        np.testing.assert_array_equal(np.bincount(part.y), [10, 10, 10, 10])
    np.testing.assert_array_equal(train.X, motions.X[:40])
    assert "arXiv:1811.00075" in motions.source and motions.cohorts is None


def test_two_equal_length_views_follow_the_sequence_convention(motions):
    layouts = sequence_layouts(motions)
    assert list(layouts) == ["accelerometer", "gyroscope"]
    for view, layout in layouts.items():
        assert layout.channels == ("x", "y", "z") and layout.length == 100
        steps, lengths = split_present(to_steps(motions.X[:, motions.feature_groups[view]],
                                                layout), layout)
        assert steps.shape == (80, 100, 3)
        np.testing.assert_array_equal(lengths, 100)


def test_values_are_the_files_values_unscaled(motions):
    text = gzip.decompress(_raw(BASIC_MOTIONS_FILES[1])).decode()
    last = [line for line in text.splitlines() if line.strip()][-1].split(":")
    assert last[-1] == "Badminton" and motions.y[-1] == 3
    gyro_z = [float(v) for v in last[5].split(",")]
    layout = sequence_layouts(motions)["gyroscope"]
    steps = to_steps(motions.X[:, motions.feature_groups["gyroscope"]], layout)
    np.testing.assert_array_equal(steps[-1, :, 2], gyro_z)


def _ts_text(values: np.ndarray, labels: list[str], classes: list[str]) -> str:
    _, dims, length = values.shape
    lines = ["# generated", f"@dimensions {dims}", f"@seriesLength {length}",
             "@classLabel true " + " ".join(classes), "@data"]
    for case, label in zip(values, labels, strict=True):
        lines.append(":".join(",".join(repr(float(v)) for v in s) for s in case) + f":{label}")
    return "\n".join(lines) + "\n"


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 4), dims=st.integers(1, 3), length=st.integers(1, 5),
       data=st.data())
def test_parse_ts_reads_back_what_was_written(n, dims, length, data):
    values = np.array(data.draw(st.lists(
        st.floats(-1e6, 1e6, allow_nan=False), min_size=n * dims * length,
        max_size=n * dims * length))).reshape(n, dims, length)
    labels = data.draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n))

    table = parse_ts(_ts_text(values, labels, ["c", "a", "b"]))

    np.testing.assert_array_equal(table.values, values)
    assert table.labels == tuple(labels) and table.class_names == ("c", "a", "b")


@settings(max_examples=25, deadline=None)
@given(shape=st.tuples(st.integers(1, 3), st.integers(1, 4), st.integers(1, 5)))
def test_time_major_puts_every_channel_at_each_step(shape):
    values = np.arange(np.prod(shape), dtype=float).reshape(shape)
    rows = time_major(values)
    np.testing.assert_array_equal(rows.reshape(shape[0], shape[2], shape[1]),
                                  values.transpose(0, 2, 1))


GOOD = "@dimensions 2\n@seriesLength 2\n@classLabel true a b\n@data\n"


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("@dimensions 2\n@data\n1,2:3,4:a\n", "@classLabel true"),
        ("@classLabel true a b\n1,2:3,4:a\n", "before '@data'"),
        (GOOD + "1,2:3,4:5,6:a\n", "case 0 does not have 2 dimensions"),
        (GOOD + "1,2:3:a\n", "case 0 does not have 2 dimensions of 2 steps"),
        (GOOD + "1,?:3,4:a\n", "not a number"),
        (GOOD + "1,2:3,4:c\n", r"label\(s\) \['c'\]"),
    ],
)
def test_parse_ts_refuses_malformed_files(text, pattern):
    with pytest.raises(DataError, match=pattern):
        parse_ts(text, "'x.ts'")
