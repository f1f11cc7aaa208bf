"""MVL, V-FedMV and H-FedMV: federated equals centralized where it should, the gap where not."""

from __future__ import annotations

import re
from functools import cache

import numpy as np
import pytest

from fedsec.errors import ValidationError
from fedsec.protocols.fedmv import tags
from fedsec.protocols.fedmv.vertical import VFedMV
from fedsec.registry import create
from fedsec.runner import RunConfig, RunResult, run
from fedsec.testing import check_protocol

SMALL = "mfeat:views=zer+mor"  # two small views of 2,000 digits: quick, and N >> d_k


@cache
def vertical(backend: str = "plain") -> RunResult:
    return run(RunConfig(protocol="v-fedmv", dataset=SMALL, backend=backend))


def test_v_fedmv_equals_mvl_and_is_reproducible() -> None:
    result = check_protocol(VFedMV, dataset=SMALL, partition="vertical:by=groups")
    comparison = result.record.comparison
    assert comparison.rtol == 1e-9 and comparison.worst <= 1e-9
    assert set(comparison.values) == {"W/zer", "W/mor", "test_scores"}
    assert result.record.federated_metrics["accuracy"] > 0.7


def test_under_a_masking_backend_the_server_gets_only_the_sum_and_the_same_model() -> None:
    plain, noise = vertical("plain"), vertical("noise")
    assert noise.record.comparison.agrees
    estimates = [m for m in plain.transcript.messages if m.tag == tags.VIEW_ESTIMATE]
    masked = [m for m in noise.transcript.messages if m.tag == tags.VIEW_ESTIMATE]
    assert len(estimates) == len(masked) == 2 * plain.record.federated_metrics["rounds"]
    first = np.asarray(estimates[0].payload)
    assert first[0] == 1.0  # zeta_k, readable under plain: the paper's setting
    assert not np.allclose(np.asarray(masked[0].payload, dtype=float), first)


def test_the_rounds_and_the_test_phase_are_in_the_transcript() -> None:
    result = vertical()
    by_tag: dict[str, int] = {}
    for message in result.transcript.messages:
        by_tag[message.tag] = by_tag.get(message.tag, 0) + 1
    rounds = result.record.federated_metrics["rounds"]
    assert by_tag[tags.LABELS] == 1
    assert by_tag[tags.CONSENSUS] == 2 * rounds
    assert by_tag[tags.TEST_ESTIMATE] == 2 * (result.record.federated_metrics["test_steps"] + 1)


def test_h_fedmv_reports_its_gap_and_that_the_broadcast_does_not_matter() -> None:
    # beta = 0 keeps each block update one exact solve, so a tight local tolerance is quick
    tight = {"rounds": 3, "beta": 0.0, "tol": 1e-12, "max_rounds": 5000}
    converged = run(RunConfig(protocol="h-fedmv", dataset=SMALL, params=tight))
    metrics = converged.record.federated_metrics
    assert converged.record.comparison.worst > 1e-3  # not the pooled optimum: reported, not hidden
    assert metrics["local_change"] < 1e-6  # the local optimum ignores the broadcast weights
    capped = run(RunConfig(protocol="h-fedmv", dataset=SMALL,
                           params={"rounds": 3, "local_rounds": 1}))
    assert capped.record.federated_metrics["local_change"] > 1e-3
    assert metrics["accuracy"] > 0.6


@pytest.mark.parametrize(("config", "needle"), [
    (RunConfig(protocol="v-fedmv", dataset=SMALL, partition="vertical:parties=2,by=even"),
     "by=groups"),
    (RunConfig(protocol="mvl", dataset="iris"), "two or more views"),
])
def test_a_layout_without_views_is_refused_with_the_fix(config: RunConfig, needle: str) -> None:
    with pytest.raises(ValidationError, match=needle):
        run(config)


@pytest.mark.parametrize("name", ["mvl", "v-fedmv", "h-fedmv", "s-fedmv"])
def test_a_bad_shared_parameter_names_the_protocol_in_use(name: str) -> None:
    expected = (f"The 'zeta' parameter of protocol '{name}' must be a finite number > 0.0. "
                "Got 0.0 instead.")
    with pytest.raises(ValidationError, match=f"^{re.escape(expected)}$"):
        create("protocol", name, {"zeta": 0.0})
