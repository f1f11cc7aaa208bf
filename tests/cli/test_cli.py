"""The fedsec command line, exercised by subprocess as a user would."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fedsec.transcript import read_transcript
from fedsec.transcript.damage import fingerprint

FEDSEC = [sys.executable, "-m", "fedsec.cli.main"]


def fedsec(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FEDSEC, *args], capture_output=True, text=True, timeout=300,
                          check=False)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run")
    proc = fedsec("run", "secure-sum", "--dataset", "iris", "--partition",
                  "horizontal:parties=4", "--seed", "3", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "matches the centralized reference" in proc.stdout
    return out


def test_run_writes_transcript_result_and_private_store(run_dir: Path) -> None:
    assert {p.name for p in run_dir.iterdir()} == {"transcript.arrow", "result.json", "private.npz"}
    record = json.loads((run_dir / "result.json").read_text())
    assert record["protocol"]["name"] == "secure-sum"
    assert record["backend"]["name"] == "plain"
    assert record["dataset"]["name"] == "iris"
    assert record["seed"] == 3
    assert record["comparison"]["agrees"] is True
    assert record["cost"]["total"]["messages"] == 8
    assert set(record["versions"]) >= {"fedsec", "numpy", "python"}
    assert record["partition"]["spec"].startswith("horizontal")


def test_partition_from_a_toml_file(tmp_path: Path) -> None:
    spec = tmp_path / "sites.toml"
    spec.write_text('[partition]\nkind = "horizontal"\nnames = ["north", "south"]\n')
    proc = fedsec("run", "secure-sum", "--dataset", "iris", "--partition", str(spec), "--out",
                  str(tmp_path / "out"), "--json")
    assert proc.returncode == 0, proc.stderr
    parties = json.loads(proc.stdout)["cost"]["by_party"]
    assert set(parties) == {"north", "south", "aggregator"}
    (tmp_path / "bad.toml").write_text("kind = ")
    proc = fedsec("run", "secure-sum", "--partition", str(tmp_path / "bad.toml"), "--out",
                  str(tmp_path / "o2"))
    assert proc.returncode == 2 and "invalid TOML" in proc.stderr


def test_run_json_is_the_result(tmp_path: Path) -> None:
    proc = fedsec("run", "secure-sum", "--dataset", "iris", "--out", str(tmp_path), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["seed"] == 0


def test_inspect_reports_counts_and_integrity(run_dir: Path) -> None:
    proc = fedsec("inspect", str(run_dir / "transcript.arrow"))
    assert proc.returncode == 0, proc.stderr
    assert "secure_sum.contribution" in proc.stdout and "intact" in proc.stdout
    data = json.loads(fedsec("inspect", str(run_dir / "transcript.arrow"), "--json").stdout)
    assert data["integrity"]["ok"] is True
    assert data["cost"]["by_party"]["aggregator"]["messages_received"] == 4


def test_inspect_on_corrupt_transcript_says_where_and_exits_1(run_dir: Path,
                                                              tmp_path: Path) -> None:
    data = (run_dir / "transcript.arrow").read_bytes()
    (tmp_path / "cut.arrow").write_bytes(data[: len(data) * 2 // 3])
    proc = fedsec("inspect", str(tmp_path / "cut.arrow"))
    assert proc.returncode == 1
    assert "truncated" in proc.stdout
    (tmp_path / "junk.arrow").write_bytes(b"not a transcript")
    proc = fedsec("inspect", str(tmp_path / "junk.arrow"))
    assert proc.returncode == 1
    # a verdict like any other: one line on standard output
    assert proc.stdout.count("\n") == 1 and "not a transcript" in proc.stdout
    assert "not a fedsec transcript" in proc.stdout


def test_inspect_gives_a_verdict_after_eleven_inserted_bytes(run_dir: Path,
                                                             tmp_path: Path) -> None:
    # an 11-byte insertion used to make the Arrow decoder read outside the file (exit 139)
    data = (run_dir / "transcript.arrow").read_bytes()
    original = fingerprint(read_transcript(run_dir / "transcript.arrow"))
    rng = np.random.default_rng(11)
    for at in rng.integers(8, len(data), size=4):
        (tmp_path / "x.arrow").write_bytes(data[:at] + rng.bytes(11) + data[at:])
        proc = fedsec("inspect", str(tmp_path / "x.arrow"))
        last = proc.stdout.strip().splitlines()[-1]
        assert proc.stderr == ""
        if proc.returncode == 0:  # the bytes went where the chain does not reach (the index)
            assert "intact" in last
            assert fingerprint(read_transcript(tmp_path / "x.arrow")) == original
        else:
            assert proc.returncode == 1
            assert any(s in last for s in ("truncated", "tampered", "not a transcript")), last


def test_attack_succeeds_under_plain(run_dir: Path) -> None:
    proc = fedsec("attack", str(run_dir / "transcript.arrow"), "--attack",
                  "contribution-readout", "--as", "aggregator", "--truth", str(run_dir), "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["scores"]["relative_error"] == 0.0
    assert out["scores"]["baseline_relative_error"] > 0
    assert "estimates" not in out["reconstruction"]  # redacted by default
    assert out["convergence"]["stopped"] == "closed-form"
    assert out["convergence"]["converged"] is True


def test_truth_from_another_run_is_refused(run_dir: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    assert fedsec("run", "secure-sum", "--dataset", "iris", "--partition",
                  "horizontal:parties=4", "--seed", "4", "--out", str(other)).returncode == 0
    proc = fedsec("attack", str(run_dir / "transcript.arrow"), "--attack",
                  "contribution-readout", "--as", "aggregator", "--truth", str(other))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "belongs to another run" in proc.stderr
    # a damaged store beside the transcript: one line, not an internal error
    (other / "private.npz").write_bytes(b"PK\x03\x04 damaged")
    proc = fedsec("attack", str(other / "transcript.arrow"), "--attack",
                  "contribution-readout", "--as", "aggregator")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "not a readable private store" in proc.stderr


def test_attack_prints_a_short_summary_and_the_details_under_json(run_dir: Path) -> None:
    proc = fedsec("attack", str(run_dir / "transcript.arrow"), "--attack",
                  "contribution-readout", "--as", "aggregator", "--truth", str(run_dir))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == ("contribution-readout as aggregator: 8 messages observed, 4 targets, "
                        "scored by reconstruction-error")
    assert lines[1].split() == ["target", "relative", "error", "fraction", "recovered",
                                "advantage"]
    rows = {line.split()[0]: line for line in lines[3:8]}
    assert set(rows) == {f"party/party{i}/value/vector" for i in range(1, 5)} | {"all"}
    assert rows["party/party1/value/vector"].split()[1] == "0"  # read exactly
    assert rows["all"].split()[-1] == "1"  # the advantage
    assert "convergence: converged (closed form)" in lines
    assert lines[-1] == "details: --json"
    assert "{" not in proc.stdout and len(proc.stdout) < 1000  # no raw dicts
    assert len(rows["all"]) == len(lines[1]) == len(lines[2])  # aligned: right under the rule


def test_a_scorer_that_cannot_read_the_estimates_is_refused_before_the_attack(
        run_dir: Path) -> None:
    proc = fedsec("attack", str(run_dir / "transcript.arrow"), "--attack",
                  "contribution-readout", "--as", "aggregator", "--truth", str(run_dir),
                  "--scorer", "column-space")
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
    assert "cannot score what 'contribution-readout' recovers" in proc.stderr
    assert "--scorer reconstruction-error (its default)" in proc.stderr


def test_attack_without_truth_is_not_scored(run_dir: Path) -> None:
    proc = fedsec("attack", str(run_dir / "transcript.arrow"), "--attack",
                  "contribution-readout", "--as", "aggregator")
    assert proc.returncode == 0 and "not scored" in proc.stdout
    assert "converged (closed form)" in proc.stdout


def test_attack_that_does_not_apply_says_why(run_dir: Path) -> None:
    proc = fedsec("attack", str(run_dir / "transcript.arrow"), "--attack",
                  "contribution-readout", "--as", "eavesdropper:party1->party2")
    assert proc.returncode == 1
    assert "does not apply" in proc.stderr and "observed no message" in proc.stderr


@pytest.mark.parametrize(("args", "needle"), [
    (("run", "secure-sum", "--dataset", "nope", "--out", "X"), "Valid dataset names"),
    (("run", "no-protocol", "--out", "X"), "Valid protocol names: cencg, "),
    (("run", "secure-sum", "--backend", "rot13", "--out", "X"),
     "Valid backend names: ckks, noise, paillier, plain"),
    (("run", "secure-sum", "--set", "statistic=median", "--out", "X"), "'statistic' parameter"),
    (("run", "secure-sum", "--partition", "vertical:parties=2", "--out", "X"),
     "runs on horizontal partitions"),
    (("run", "secure-sum", "--defense", "gaussian-noise:sigma=-1", "--out", "X"), "sigma"),
    (("run", "secure-sum"), "--out"),
])
def test_usage_errors_exit_2_with_one_line(tmp_path: Path, args: tuple[str, ...],
                                           needle: str) -> None:
    args = tuple(str(tmp_path / a) if a == "X" else a for a in args)
    proc = fedsec(*args)
    assert proc.returncode == 2, proc.stderr
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "X").exists()  # nothing half-written


def test_unknown_party_in_attack_lists_parties(run_dir: Path) -> None:
    proc = fedsec("attack", str(run_dir / "transcript.arrow"), "--attack",
                  "contribution-readout", "--as", "mallory")
    assert proc.returncode == 2
    assert "Valid party names: aggregator, party1" in proc.stderr


def test_debug_shows_traceback(tmp_path: Path) -> None:
    proc = fedsec("--debug", "inspect", str(tmp_path / "missing.arrow"))
    assert proc.returncode == 2 and "Traceback" in proc.stderr


def test_list_kinds() -> None:
    proc = fedsec("list")
    assert proc.returncode == 0
    for needle in ("protocols:", "secure-sum", "backends:", "plain", "attacks:", "datasets:",
                   "pima"):
        assert needle in proc.stdout
    data = json.loads(fedsec("list", "protocols", "--json").stdout)
    by_name = {d["name"]: d for d in data}
    assert [d["name"] for d in data] == sorted(by_name)
    assert "sum" in by_name["secure-sum"]["capabilities"]["requires"]
    bad = fedsec("list", "gizmos")
    assert bad.returncode == 2 and "Valid kind names" in bad.stderr


def test_a_key_others_can_read_is_warned_about_in_one_line(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = tmp_path / "key.pem"
    key.write_bytes(Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()))
    key.chmod(0o644)
    result = fedsec("run", "secure-sum", "--dataset", "iris", "--sign-key", str(key),
                    "--out", str(tmp_path / "run"))
    assert result.returncode == 0, result.stderr
    warned = [line for line in result.stderr.splitlines() if "warning" in line]
    assert warned == [line for line in warned if line.startswith("fedsec: warning: ")]
    assert len(warned) == 1 and "chmod 600" in warned[0]
    assert "KeyFileWarning" not in result.stderr


def test_python_dash_m_fedsec_is_the_fedsec_command() -> None:
    done = subprocess.run([sys.executable, "-m", "fedsec", "describe", "gaussian-noise"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("defense 'gaussian-noise'")
    refused = subprocess.run([sys.executable, "-m", "fedsec", "describe", "gausian-noise"],
                             capture_output=True, text=True, check=False)
    assert refused.returncode != 0 and "gaussian-noise" in refused.stderr  # did you mean
