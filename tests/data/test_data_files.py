"""Packaged files: checksums verified on every read, attribution complete."""

from __future__ import annotations

import hashlib
import shutil
from importlib.resources import as_file, files
from pathlib import Path

import pytest

from fedsec.data import builtin, load, packaged, verify_packaged_files
from fedsec.errors import DataError

WRONG = "0" * 64


@pytest.fixture
def fresh_cache():
    """Parse packaged files again in this test, and leave no doctored result behind."""
    builtin.clear_cache()
    yield
    builtin.clear_cache()


def test_every_packaged_file_matches_its_checksum():
    assert set(verify_packaged_files()) == set(packaged.SHA256)


def test_table_matches_the_files_on_disk():
    with as_file(files("fedsec.data").joinpath("files")) as root:
        for path, digest in packaged.SHA256.items():
            assert hashlib.sha256((root / path).read_bytes()).hexdigest() == digest


def test_checksum_mismatch_names_file_hashes_and_reinstall(monkeypatch):
    actual = packaged.SHA256["sonar.csv"]
    monkeypatch.setattr(packaged, "SHA256", {**packaged.SHA256, "sonar.csv": WRONG})

    with pytest.raises(DataError) as info:
        packaged.read_packaged("sonar.csv")

    message = str(info.value)
    assert "'sonar.csv'" in message
    assert WRONG in message and actual in message
    assert "corrupt" in message and "reinstall" in message


def test_load_checks_the_checksum_when_it_parses(monkeypatch, fresh_cache):
    monkeypatch.setattr(packaged, "SHA256", {**packaged.SHA256, "mfeat/mfeat-mor.csv.gz": WRONG})
    with pytest.raises(DataError, match=r"mfeat-mor\.csv\.gz"):
        load("mfeat")


def test_tampered_copy_is_detected(monkeypatch, tmp_path, fresh_cache):
    with as_file(files("fedsec.data").joinpath("files")) as root:
        shutil.copytree(root, tmp_path / "files")
    target = tmp_path / "files" / "ionosphere.csv"
    target.write_bytes(target.read_bytes().replace(b"0.99539", b"0.99538", 1))
    monkeypatch.setattr(packaged, "_files_root", lambda: tmp_path / "files")

    assert load("sonar").n_samples == 208  # untouched files still load
    with pytest.raises(DataError, match=r"'ionosphere.csv' failed its checksum"):
        load("ionosphere")


def test_missing_file_is_reported_as_corrupt_installation(monkeypatch, tmp_path, fresh_cache):
    monkeypatch.setattr(packaged, "_files_root", lambda: tmp_path)
    with pytest.raises(DataError, match=r"'pima_diabetes.csv' cannot be read.*reinstall"):
        load("pima")


def test_unlisted_file_is_refused():
    with pytest.raises(DataError, match="No checksum is recorded"):
        packaged.read_packaged("ATTRIBUTION.md")


def test_attribution_lists_every_packaged_dataset():
    text = (files("fedsec.data") / "files" / "ATTRIBUTION.md").read_text("utf-8")
    for path in packaged.SHA256:
        folder = Path(path).parent.name
        assert (f"`{folder}/" if folder else f"`{path}`") in text
    for fact in ("10.24432/C5T01Q", "10.24432/C5W01B", "10.24432/C52P4X", "CC BY 4.0",
                 "CC BY-SA 3.0", "CC0 1.0"):
        assert fact in text
