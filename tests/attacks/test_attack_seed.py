"""An attack's own random stream derives from the run's public seed (the View's ``run_seed``)
unless its ``seed`` parameter names one: runs of other seeds start it elsewhere, a given seed
wins, and a View without the seed (a transcript alone) starts it as seed 0."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from fedsec import registry
from fedsec.declare import declared_constraints
from fedsec.runner import RunResult
from fedsec.threat import ThreatModel
from fedsec.view import View
from fedsec.views import build_view

SEEDED = ["edm-completion", "dlg", "idlg", "inverting-gradients", "fedavg-inversion",
          "flower-gradient-inversion", "inverse-network", "learned-decoder"]


def _view(run_seed: int | None) -> View:
    return View(threat=ThreatModel.parse("server"), header={}, messages=(), knowledge={},
                run_seed=run_seed)


@pytest.mark.parametrize("name", SEEDED)
def test_the_seed_parameter_defaults_to_the_run_and_keeps_its_constraint(name: str) -> None:
    cls = registry.attacks.get(name)
    constraint, optional = declared_constraints(cls.Params)["seed"]
    assert (constraint.text(), optional, cls.Params().seed) == (">= 0", True, None)


def test_seed_for_takes_the_given_seed_then_the_run_then_zero() -> None:
    derived = registry.create("attack", "edm-completion")
    given = registry.create("attack", "edm-completion", {"seed": 5})
    assert [derived.seed_for(_view(s)) for s in (None, 0, 1, 7)] == [0, 0, 1, 7]
    assert [given.seed_for(_view(s)) for s in (None, 0, 1)] == [5, 5, 5]
    assert registry.create("attack", "multilateration").seed_for(_view(3)) == 3  # no parameter


def test_a_negative_seed_is_refused() -> None:
    with pytest.raises(ValueError, match="'seed' parameter of attack 'dlg' must be an int >= 0"):
        registry.create("attack", "dlg", {"seed": -1})


def _dlg(result: RunResult, run_seed: int | None, **params: Any) -> dict[str, np.ndarray]:
    view = build_view(result.transcript, "server", result.private, run_seed=run_seed)
    attack = registry.create("attack", "dlg", {"steps": 5, "restarts": 1, **params})
    return {k: np.asarray(v) for k, v in attack.run(view).estimates.items()}


def _same(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def test_runs_of_other_seeds_start_the_attack_elsewhere(
        tiny_sfedmv: Callable[..., RunResult]) -> None:
    pytest.importorskip("torch")
    result = tiny_sfedmv()
    zero, one = _dlg(result, 0), _dlg(result, 1)
    assert not _same(zero, one)  # the same update, other starts
    assert _same(_dlg(result, None), zero)  # a transcript alone: seed 0
    assert _same(_dlg(result, 1, seed=0), zero)  # a given seed wins
    assert _same(_dlg(result, 1), one)
