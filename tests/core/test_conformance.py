"""Every registered component passes the public conformance checks."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fedsec import registry, testing
from fedsec.private_store import parse_truth_key
from fedsec.runner import RunResult

#: Smaller runs for the protocols whose defaults take tens of seconds (paper-scale defaults).
QUICK: dict[str, dict[str, Any]] = {
    "h-fedmv": {"dataset": "mfeat:views=zer+mor", "partition": "horizontal:parties=2"},
    "v-fedmv": {"dataset": "mfeat:views=zer+mor"},
    "mvl": {"dataset": "mfeat:views=zer+mor"},
    "s-fedmv": {"dataset": "keystrokes:participants=2,sessions=8,min_presses=4,max_presses=8",
                "params": {"fedavg_rounds": 2, "local_epochs": 1, "hidden": 4, "rounds": 2,
                           "local_baselines": False, "optimizer": "sgd"}},
    # a user's Flower app is named by its folder: the test fixture's numpy FedAvg app
    "flower-app": {"params": {"app": str(Path(__file__).parents[1] / "protocols" / "flower"
                                         / "numpy_app")}},
    "fdskl": {"params": {"n_iterations": 300}},
    "fedgraph": {"partition": "random:parties=3,features=0.1",
                 "params": {"hidden": 32, "layers": 2, "epochs": 2, "gcn_epochs": 2,
                            "score_steps": 5, "compare": False, "redraws": 2}},
}
#: Smaller budgets for the attacks whose defaults take minutes (conformance checks what they
#: report and that they repeat, not how strong they are: tests/attacks/ and
#: tests/benchmarks/bench_attack_strength.py do that). One L-BFGS step of dlg, idlg and
#: fedavg-inversion is up to 20 iterations with their line searches.
SMALL_BUDGET: dict[str, dict[str, Any]] = {
    "inverting-gradients": {"steps": 40, "restarts": 1, "max_samples": 4},
    "dlg": {"steps": 1, "max_samples": 4}, "idlg": {"steps": 1, "restarts": 1, "max_samples": 4},
    "fedavg-inversion": {"steps": 1, "max_samples": 4},
    "embedding-inversion": {"steps": 20, "starts": "prior", "sources": "test", "max_rows": 20},
    "inverse-network": {"epochs": 30, "patience": 5, "hidden": 64},
}
#: Components checked elsewhere, and why: a Flower run (protocols/flower) is not bit-reproducible
#: (the engine delivers replies in arrival order and draws node and message ids at random) and
#: starts Ray; tests/protocols/flower checks its transcript, count, aggregate and read-out.
ELSEWHERE: dict[str, str] = {
    "flower-fedavg": "tests/protocols/flower (a Flower run is not bit-reproducible)",
    "flower-app": "tests/protocols/flower (it runs a user's app folder, named by app=)",
    "flower-update-readout": "tests/protocols/flower (it reads only Flower runs)",
    "flower-secagg-coalition": "tests/protocols/flower (it reads only Flower SecAgg+ runs)",
    "flower-gradient-inversion": "tests/protocols/flower (it reads only Flower FedSGD runs)",
}
#: Runs an attack needs beyond QUICK: the canaries canary-guess reads, the key shares of a
#: dropout-tolerant sum mask-share-coalition reads.
ATTACK_RUNS: dict[str, dict[str, dict[str, Any]]] = {
    "canary-guess": {"secure-sum": {"dataset": "iris", "params": {"canaries": 20}}},
    # partial predictions cross only between two or more active workers (label holders)
    "model-readout": {"fdskl": {"partition": "vertical:parties=4,labels=party1+party3",
                                "params": {"n_iterations": 300}}},
    "mask-share-coalition": {"secure-sum": {"backend": "noise",
                                            "backend_params": {"threshold": 3,
                                                               "dropout": 0.2}}},
}
#: Attacks that need the adversary's prior knowledge (known records) beyond the View.
NEEDS_RECORDS = {"known-record-alignment", "test-inference"}


def known_records(result: RunResult, folder: Path) -> Mapping[str, Any]:
    """The first d_k + 5 training rows of every client's view, as an adversary's known records."""
    arrays = {}
    for key, value in result.private.items():
        parsed = parse_truth_key(key)
        if parsed.path[:1] == ("shard",) and parsed.path[-1] == "X":
            X = np.asarray(value)
            rows = np.arange(min(X.shape[0], X.shape[1] + 5))
            arrays.update({f"{parsed.party}/rows": rows, f"{parsed.party}/X": X[rows]})
    np.savez(folder / "known.npz", **arrays)
    return {"records": str(folder / "known.npz")}


@pytest.mark.parametrize("name", registry.names("protocol"))
def test_protocol_conformance(name: str) -> None:
    if name in ELSEWHERE:
        pytest.skip(f"checked in {ELSEWHERE[name]}")
    testing.check_protocol(registry.get("protocol", name), **QUICK.get(name, {}))


@pytest.mark.parametrize("name", registry.names("backend"))
def test_backend_conformance(name: str) -> None:
    testing.check_backend(registry.get("backend", name))


@pytest.mark.parametrize("name", registry.names("attack"))
def test_attack_conformance(name: str) -> None:
    if name in ELSEWHERE:
        pytest.skip(f"checked in {ELSEWHERE[name]}")
    testing.check_attack(registry.get("attack", name),
                         runs={**QUICK, **ATTACK_RUNS.get(name, {})},
                         knowledge=known_records if name in NEEDS_RECORDS else None,
                         params=SMALL_BUDGET.get(name))


@pytest.mark.parametrize("name", registry.names("defense"))
def test_defense_conformance(name: str) -> None:
    testing.check_defense(registry.get("defense", name))


@pytest.mark.parametrize("name", registry.names("scorer"))
def test_scorer_conformance(name: str) -> None:
    testing.check_scorer(registry.get("scorer", name))


def test_same_seed_same_transcript_different_seed_differs() -> None:
    from fedsec.runner import RunConfig, run

    a = run(RunConfig(protocol="secure-sum", seed=5, secret_seed=11))
    b = run(RunConfig(protocol="secure-sum", seed=5, secret_seed=11))
    c = run(RunConfig(protocol="secure-sum", seed=6, secret_seed=11))
    testing.assert_same_transcript(a.transcript, b.transcript)
    assert a.transcript.footer["head"] != c.transcript.footer["head"]


@pytest.mark.parametrize("backend", ["noise", "paillier"])
def test_secure_sum_conforms_under_deterministic_backends(backend: str) -> None:
    testing.check_protocol(registry.get("protocol", "secure-sum"), backend=backend,
                           dataset="iris")


def test_an_attack_silent_about_its_convergence_fails_the_check() -> None:
    from fedsec.attacks.contribution_readout import ContributionReadout
    from fedsec.convergence import judge

    class Silent(ContributionReadout):
        closed_form = False

    with pytest.raises(AssertionError, match="must report its convergence"):
        testing.check_convergence_record(Silent, {})
    with pytest.raises(AssertionError, match="malformed"):
        testing.check_convergence_record(Silent, {"convergence": {"stopped": "sideways"}})
    testing.check_convergence_record(Silent, {"convergence": judge([2.0, 1.0], budget=9)
                                              .to_info()})
    testing.check_convergence_record(ContributionReadout, {})
