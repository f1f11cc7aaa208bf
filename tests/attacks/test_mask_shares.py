"""mask-share-coalition: at the Shamir threshold the aggregator and its colluders read a
sender's contribution to a dropout-tolerant sum; below it they stay at the baseline."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from fedsec.errors import CapabilityError
from fedsec.registry import create
from fedsec.runner import RunConfig, RunResult, run
from fedsec.views import build_view

THRESHOLD = 5  # of 8 holders per sender: the complete graph of 8 senders


@cache
def _run(backend_params: tuple = (("threshold", THRESHOLD), ("dropped", "party8"))) -> RunResult:
    return run(RunConfig(protocol="secure-sum", partition="horizontal:parties=8",
                         backend="noise", backend_params=dict(backend_params), secret_seed=5))


def _attack(threat: str, result: RunResult | None = None):
    result = result or _run()
    view = build_view(result.transcript, threat, result.private)
    return create("attack", "mask-share-coalition").run(view), result


def test_the_aggregator_with_threshold_holders_reads_every_other_survivor() -> None:
    members = [f"party{i}" for i in range(1, THRESHOLD + 1)]
    reconstruction, result = _attack("aggregator," + ",".join(members))
    targets = {"party6", "party7"}  # party8 dropped: its input never arrived
    assert set(reconstruction.info["targets"]) == targets
    assert reconstruction.info["recovered"] == 2
    for party in targets:
        key = f"party/{party}/value/vector"
        np.testing.assert_allclose(reconstruction.estimates[key], result.private[key],
                                   atol=1e-9)
        assert reconstruction.info["targets"][party]["mask_key_rebuilt"]


@pytest.mark.parametrize("n_members", [0, 1, THRESHOLD - 1])
def test_below_the_threshold_the_coalition_stays_at_the_baseline(n_members) -> None:
    members = [f"party{i}" for i in range(1, n_members + 1)]
    reconstruction, result = _attack(",".join(["aggregator", *members]))
    assert reconstruction.info["recovered"] == 0
    assert reconstruction.info["sum_observed"]
    for key, estimate in reconstruction.estimates.items():
        np.testing.assert_array_equal(estimate, reconstruction.baseline[key])
        assert np.max(np.abs(estimate - result.private[key])) > 1e-3
    facts = next(iter(reconstruction.info["targets"].values()))
    assert facts["mask_key_shares"] == n_members
    assert "pairwise masks shared with" in facts["lacks"]


def test_a_run_without_key_shares_is_not_applicable() -> None:
    plain_noise = _run(())
    view = build_view(plain_noise.transcript, "aggregator", plain_noise.private)
    attack = create("attack", "mask-share-coalition")
    assert "no key share" in (attack.not_applicable(view) or "")
    with pytest.raises(CapabilityError, match="does not apply"):
        attack.run(view)
