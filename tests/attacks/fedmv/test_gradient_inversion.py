"""DLG, iDLG and Inverting Gradients as registered attacks on S-FedMV's updates: exact on a tiny
undefended one-step case, back to the prior under update noise, refused (with the reason) when
the update is several local steps, and every run reports its convergence."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from fedsec import registry
from fedsec.attacks.fedmv.inversion_params import UpdateInversion, UpdateRead
from fedsec.declare import declared_constraints
from fedsec.errors import ValidationError
from fedsec.runner import RunResult
from fedsec.views import build_view

pytest.importorskip("torch")

Tiny = Callable[..., RunResult]
#: Budgets small enough for a test, large enough for the tiny case.
FAST: dict[str, dict[str, object]] = {"dlg": {"steps": 40}, "idlg": {"steps": 40, "restarts": 1},
                                      "inverting-gradients": {"steps": 300, "restarts": 1}}


def attack(result: RunResult, name: str, threat: str = "server",
           **params: object) -> dict[str, Any]:
    view = build_view(result.transcript, threat, result.private)
    inversion = registry.create("attack", name, {**FAST[name], **params})
    reason = inversion.not_applicable(view)
    if reason is not None:
        return {"not_applicable": reason}
    reconstruction = inversion.run(view)
    scores = registry.create("scorer", "sequence-match", {}).score(reconstruction,
                                                                   result.private)
    scores["convergence"] = reconstruction.info["convergence"]
    return scores


@pytest.mark.parametrize("name", ["dlg", "idlg", "inverting-gradients"])
def test_one_sgd_step_on_one_sequence_gives_it_back(tiny_sfedmv: Tiny, name: str) -> None:
    scores = attack(tiny_sfedmv(), name)
    assert scores["mse"] < 1e-2 * scores["baseline_mse"]
    assert scores["correlation"] > 0.98
    assert scores["label_accuracy"] == 1.0
    assert scores["convergence"]["runs"] == 2  # one per view
    assert scores["convergence"]["stopped"] in {"converged", "stalled", "budget"}


@pytest.mark.parametrize("name", ["dlg", "idlg", "inverting-gradients"])
def test_update_noise_takes_each_attack_back_to_the_prior(tiny_sfedmv: Tiny,
                                                          name: str) -> None:
    scores = attack(tiny_sfedmv(clip=0.1, noise_multiplier=1.0), name)
    assert scores["advantage"] < 0.2


def test_the_other_client_inverts_the_gradient_read_from_the_average(tiny_sfedmv: Tiny) -> None:
    scores = attack(tiny_sfedmv(backend="noise"), "idlg", "party1", other_rows=1)
    assert scores["mse"] < 1e-2 * scores["baseline_mse"]


@pytest.mark.parametrize(("params", "why"), [
    ({"local_epochs": 2}, "it trains 2 local epochs"),
    ({"optimizer": "rmsprop"}, "it trains with rmsprop"),
    ({"local_rows": 8, "batch_size": 4}, "several batches of 4"),
])
def test_several_local_steps_are_not_a_gradient(tiny_sfedmv: Tiny, params: dict[str, object],
                                                why: str) -> None:
    reason = attack(tiny_sfedmv(**params), "dlg")["not_applicable"]
    assert why in reason and "fedavg-inversion" in reason


@pytest.mark.parametrize("name", ["dlg", "idlg"])
def test_a_batch_of_four_in_one_step_beats_the_prior(tiny_sfedmv: Tiny, name: str) -> None:
    scores = attack(tiny_sfedmv(local_rows=4), name)
    assert scores["advantage"] > 0.3


@pytest.mark.parametrize("name", ["dlg", "idlg", "inverting-gradients", "fedavg-inversion",
                                  "update-labels"])
def test_a_redeclared_field_keeps_the_shared_constraint(name: str) -> None:
    params = registry.get("attack", name).Params
    shared = declared_constraints(UpdateInversion if name != "update-labels" else UpdateRead)
    own = declared_constraints(params)
    assert {field: own[field] for field in shared} == shared


def test_the_shared_parameters_are_refused_under_the_attack_name() -> None:
    with pytest.raises(ValidationError, match=r"'restarts' parameter of attack 'idlg' must be an "
                                              r"int >= 1\. Got 0 instead"):
        registry.create("attack", "idlg", {"restarts": 0})
    with pytest.raises(ValidationError, match=r"'low' and 'high' parameters of attack "
                                              r"'inverting-gradients' must bound a box"):
        registry.create("attack", "inverting-gradients", {"low": 1.0, "high": 0.0})
