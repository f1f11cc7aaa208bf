"""A run in two steps: the plan checks everything without data; the record is typed."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest

from fedsec.errors import CapabilityError, FedsecError, UnknownNameError, ValidationError
from fedsec.plan import RunConfig, plan
from fedsec.progress import Progress
from fedsec.results import RESULT_FILE, Comparison, RunRecord
from fedsec.runner import execute, run


@pytest.mark.parametrize(("config", "error", "needle"), [
    (RunConfig(protocol="secure-sum", params={"statistic": "median"}), ValidationError,
     "statistic"),
    (RunConfig(protocol="dsg", backend="ckks"), CapabilityError, "would change nothing"),
    (RunConfig(protocol="secure-sum", dataset="irris"), UnknownNameError, "Valid dataset names"),
    (RunConfig(protocol="secure-sum", partition="vertical:parties=2"), ValidationError,
     "horizontal"),
    (RunConfig(protocol="secure-sum", defenses=[("random-landmarks", {})]), ValidationError,
     "does not apply to protocol 'secure-sum'"),
    (RunConfig(protocol="secure-sum", backend="rot13"), UnknownNameError, "Valid backend names"),
])
def test_the_plan_refuses_a_bad_run_without_loading_data(config: RunConfig,
                                                         error: type[FedsecError],
                                                         needle: str) -> None:
    with patch("fedsec.data.load_spec", side_effect=AssertionError("data loaded")), \
            pytest.raises(error, match=needle):
        plan(config)


def test_the_plan_builds_what_the_run_uses() -> None:
    checked = plan(RunConfig(protocol="fedcg-secure", backend="noise", params={"n_landmarks": 4},
                             defenses=[("random-landmarks", {"method": "N"})], test_size=30))
    assert checked.protocol.params.n_landmarks == 4
    assert [d.name for d in checked.defenses] == ["random-landmarks"]
    assert checked.backend.name == "noise" and checked.test_size == 30
    assert checked.partition.kind in checked.protocol.partition_kinds


def test_execute_of_a_plan_is_the_run(tmp_path: Path) -> None:
    config = RunConfig(protocol="secure-sum", dataset="iris", seed=4, secret_seed=4)
    planned = execute(plan(config), tmp_path)
    direct = run(config)
    assert planned.transcript.footer == direct.transcript.footer
    record = planned.record
    assert isinstance(record, RunRecord) and isinstance(record.comparison, Comparison)
    assert record.comparison.agrees and record.comparison.worst <= record.comparison.rtol
    assert record.transcript.messages == len(planned.transcript)
    written = json.loads((tmp_path / RESULT_FILE).read_text(encoding="utf-8"))
    assert written == json.loads(json.dumps(record.to_json()))
    assert written["comparison"]["agrees"] is True and written["dataset"]["name"] == "iris"
    assert written["metrics"]["federated"] == dict(record.federated_metrics)


def test_a_module_class_is_loaded_from_the_search_path_appended_to_sys_path(
        tmp_path: Path) -> None:
    (tmp_path / "fedsec_test_user_defences.py").write_text(textwrap.dedent('''
        from fedsec.interfaces import Defense

        class Nothing(Defense):
            """Changes nothing."""
    '''))
    before = list(sys.path)
    name = "fedsec_test_user_defences:Nothing"
    try:
        with pytest.raises(ValidationError, match="Cannot import 'fedsec_test_user_defences'"):
            plan(RunConfig(protocol="secure-sum", defenses=[(name, {})]))
        checked = plan(RunConfig(protocol="secure-sum", defenses=[(name, {})],
                                 search_path=(tmp_path,)))
        assert type(checked.defenses[0]).__module__ == "fedsec_test_user_defences"
        # the folder comes last: every installed or standard module keeps precedence
        assert sys.path == [*before, str(tmp_path)]
    finally:
        sys.modules.pop("fedsec_test_user_defences", None)
        sys.path[:] = before


def test_long_protocols_report_their_progress() -> None:
    from fedsec.testing import small_federation

    federation = small_federation(2, 0)
    federation.report("nobody listens")  # no progress callback: nothing happens
    heard: list[str] = []
    federation.progress = heard.append
    for step in range(5):
        federation.report(f"step {step}", every=3600.0)
    assert heard == ["step 0"]
    updates: list[Progress] = []
    run(RunConfig(protocol="v-fedmv", dataset="mfeat:views=zer+mor"), on_progress=updates.append)
    rounds = [u for u in updates if u.label.startswith("v-fedmv rounds")]
    assert rounds and rounds[0].unit == "round" and rounds[0].total >= rounds[-1].done >= 1
    assert [u.done for u in rounds] == sorted(u.done for u in rounds)


def test_a_run_refuses_parameters_its_training_set_cannot_hold() -> None:
    with pytest.raises(ValidationError, match="training set has 112"):
        run(RunConfig(protocol="fedcg-naive", dataset="iris:positive=setosa",
                      params={"n_landmarks": 500}))


def test_a_run_reports_the_gap_to_its_reference_in_model_quality(nri_dc: Any) -> None:
    record = nri_dc().record
    gaps = record.metric_gaps
    assert gaps and set(gaps) <= {"accuracy", "precision", "recall", "f1", "roc_auc", "mse"}
    for name, gap in gaps.items():
        assert gap == record.federated_metrics[name] - record.centralized_metrics[name]
    assert record.to_json()["metrics"]["gap"] == gaps
