"""``flower-app``: a user's own Flower app (the numpy fixture in ``numpy_app/``) run from its
folder by the command line, recorded by fedsec; its parameters checked against the app."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("flwr.simulation")

from fedsec.errors import FedsecError, ValidationError
from fedsec.protocols.flower import tags
from fedsec.registry import create
from fedsec.transcript import check_file, read_transcript

APP = Path(__file__).parent / "numpy_app"
FEDSEC = [sys.executable, "-m", "fedsec.cli.main"]


@pytest.mark.slow  # the default suite runs a user's app in the deployment engine
def test_the_cli_records_a_users_app_with_the_messages_it_counted(tmp_path: Path) -> None:
    out = tmp_path / "run"
    proc = subprocess.run([*FEDSEC, "run", "flower-app", "--set", f"app={APP}",
                           "--set", "local-steps=2", "--seed", "1", "--out", str(out)],
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert check_file(out / "transcript.arrow").status == "intact"
    transcript = read_transcript(out / "transcript.arrow")
    heads = [m for m in transcript.messages if tags.N_ARRAYS in m.meta]
    metrics = json.loads((out / "result.json").read_text())["metrics"]["federated"]
    # counted by the app's own strategy, and matched digest by digest with the clients' logs
    assert len(heads) == metrics["counts.messages"] == metrics["flower_messages"] == 8
    assert metrics["digests_matched"] == 8
    assert {m.receiver for m in heads if m.sender == "server"} == {"client0", "client1"}
    protocol = json.loads((out / "result.json").read_text())["protocol"]
    assert protocol["params"]["run_config"] == {"local-steps": 2}
    assert protocol["params"]["server_app"] == "numpyfed.server_app:app"


def test_run_config_entries_are_parameters_of_the_apps_own_type() -> None:
    protocol = create("protocol", "flower-app", {"app": str(APP), "lr": "0.5",
                                                 "num-server-rounds": "3"})
    assert protocol.params.run_config == {"lr": 0.5, "num-server-rounds": 3}
    with pytest.raises(ValidationError, match="'lr' of protocol 'flower-app' must be float"):
        create("protocol", "flower-app", {"app": str(APP), "lr": "fast"})


def test_an_unknown_entry_names_the_apps_entries() -> None:
    with pytest.raises(ValidationError, match=r"'lrate'.*Its entries: local-steps, lr, min-nodes"):
        create("protocol", "flower-app", {"app": str(APP), "lrate": 1})


def test_a_folder_without_pyproject_or_component_says_what_to_add(tmp_path: Path) -> None:
    with pytest.raises(FedsecError, match=r"holds no pyproject\.toml"):
        create("protocol", "flower-app", {"app": str(tmp_path)})
    (tmp_path / "pyproject.toml").write_text(
        '[tool.flwr.app.components]\nserverapp = "a.b:app"\n')
    with pytest.raises(FedsecError, match=r"names no clientapp.*client_app=module:attr"):
        create("protocol", "flower-app", {"app": str(tmp_path)})
    with pytest.raises(ValidationError, match="'app' parameter"):
        create("protocol", "flower-app", {})


def test_a_component_of_the_wrong_type_is_refused() -> None:
    protocol = create("protocol", "flower-app", {"app": str(APP),
                                                 "client_app": "numpyfed.server_app:app"})
    with pytest.raises(FedsecError, match="is a ServerApp, not a Flower ClientApp"):
        protocol.apps()
