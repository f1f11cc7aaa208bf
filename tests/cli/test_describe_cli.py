"""``fedsec describe``: by subprocess as a user would, the rest through ``main`` in-process."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from fedsec.cli.main import main

FEDSEC = [sys.executable, "-m", "fedsec.cli.main"]


def fedsec(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FEDSEC, *args], capture_output=True, text=True, timeout=300,
                          check=False)


# The subprocess tests name the kind: only the backends load, so each run takes well under a
# second; the lookup across every kind is exercised in-process below.
def test_describe_prints_kind_summary_and_a_row_per_parameter() -> None:
    proc = fedsec("describe", "ckks", "--kind", "backend")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "backend 'ckks' (fedsec.backends.ckks:CkksBackend)"
    assert lines[1].startswith("CKKS approximate encryption")
    header = next(line for line in lines if line.startswith("parameter"))
    assert header.split() == ["parameter", "type", "default", "allowed", "meaning"]
    sizes = next(line for line in lines if line.startswith("coeff_mod_bit_sizes"))
    assert sizes.split()[:4] == ["coeff_mod_bit_sizes", "tuple[int,", "...]", "60,40,40,60"]
    flood = next(line for line in lines if line.startswith("flood_bits"))
    assert flood.split()[:4] == ["flood_bits", "int", "0", "[0,"]
    assert "decryptions as they are" in flood


def test_describe_json_is_the_same_as_data() -> None:
    proc = fedsec("describe", "paillier", "--kind", "backend", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert (data["kind"], data["name"]) == ("backend", "paillier")
    params = {p["name"]: p for p in data["params"]}
    assert params["fraction_bits"]["constraints"] == [
        {"kind": "int", "min": 1, "min_inclusive": True, "max": 128, "max_inclusive": True}]
    assert params["fraction_bits"]["allowed"] == "[1, 128]"
    assert params["key_source"]["constraints"][0]["choices"] == ["simulation", "secrets"]
    assert params["insecure_test_keys"] == {
        "name": "insecure_test_keys", "type": "bool", "default": False, "required": False,
        "allowed": "true or false", "constraints": [{"kind": "bool"}],
        "meaning": params["insecure_test_keys"]["meaning"]}


def test_unknown_names_are_usage_errors_with_close_matches(
        capsys: pytest.CaptureFixture[str]) -> None:
    unknown = fedsec("describe", "paillierr", "--kind", "backend")
    assert unknown.returncode == 2 and unknown.stdout == ""
    assert "Unknown backend 'paillierr'. Did you mean 'paillier'?" in unknown.stderr
    assert main(["describe", "multilateraton"]) == 2
    err = capsys.readouterr().err
    assert "Unknown component 'multilateraton'. Did you mean 'multilateration'?" in err
    assert main(["describe", "multilateration"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("attack 'multilateration' (fedsec.attacks.fedcg.multilateration:")
    assert "one of 'auto', 'landmarks', 'landmark-distances'" in out


def test_components_without_parameters_and_required_ones_say_so(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["describe", "plain"]) == 0
    assert "No parameters." in capsys.readouterr().out
    assert main(["describe", "known-record-alignment"]) == 0
    out = capsys.readouterr().out
    assert "required" in next(line for line in out.splitlines() if line.startswith("records"))
    assert "The defaults alone are refused" in out


def test_a_name_of_several_kinds_needs_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["describe", "binary-columns"]) == 2
    assert "--kind attack or --kind scorer" in capsys.readouterr().err
    assert main(["describe", "binary-columns", "--kind", "attacks", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["kind"] == "attack"
    assert main(["describe", "paillier", "--kind", "cipher"]) == 2
    assert "Valid component kind names" in capsys.readouterr().err
