"""The report's epsilon row, sentence and plot, and the empirical privacy gates, on small
hand-made audit results."""

from __future__ import annotations

from typing import Any

import pytest

from fedsec.audit.gate import Gate, evaluate
from fedsec.errors import ValidationError
from fedsec.report.aggregate import configurations
from fedsec.report.privacy import exceeding, privacy_png, privacy_rows, privacy_sentences


def _cell(sigma: float, seed: int, epsilon: float | None, bounds: dict[str, float],
          advantage: float = 0.2) -> dict[str, Any]:
    defence = {"name": "gaussian-noise", "params": {"sigma": sigma, "clip": 1.0}}
    attacks = []
    for threat, bound in bounds.items():
        attacks.append({"attack": "canary-guess", "threat": threat, "scorer": "canary-epsilon",
                        "status": "ok", "targets": ["party/party1/value/canary_included"],
                        "scores": {"empirical_epsilon": bound, "empirical_ceiling": 5.3,
                                   "confidence": 0.95, "n_canaries": 1000, "advantage": 0.1}})
        attacks.append({"attack": "contribution-readout", "threat": threat,
                        "scorer": "reconstruction-error", "status": "ok",
                        "targets": ["party/party1/value/vector"],
                        "scores": {"advantage": advantage, "relative_error": 0.5}})
    return {"cell": f"c{sigma}-{seed}",
            "configuration": f"secure-sum | plain | gaussian-noise:sigma={sigma}",
            "status": "ok", "command": "", "metrics": {"sum_relative_error": 0.1},
            "agrees_with_reference": True, "cost": {},
            "config": {"protocol": "secure-sum", "dataset": "iris", "backend": "plain",
                       "defense": defence, "params": {"canaries": 1000}, "seed": seed},
            "privacy": {"noised": True, "epsilon": epsilon, "delta": 1e-5},
            "attacks": attacks}


CELLS = [_cell(sigma, seed, epsilon, {"aggregator": 0.5 * bound, "aggregator,party2": bound})
         for sigma, epsilon, bound in ((1.0, 4.4, 1.3), (2.0, 2.0, 2.5))
         for seed in (0, 1)]


def test_one_row_per_configuration_and_adversary_holds_the_three_figures() -> None:
    rows = privacy_rows(configurations(CELLS))
    assert len(rows) == 4
    row = next(r for r in rows if r[0].endswith("sigma=1.0") and r[1] == "aggregator,party2")
    assert row[2] == "4.4 (delta 1e-05)"
    assert row[3].startswith("1.3")
    assert "95% each run" in row[4] and "ceiling 5.3 (1000 canaries)" in row[4]
    assert row[5] == "contribution-readout: advantage 0.20"


def test_a_sentence_flags_each_configuration_whose_bound_exceeds_its_epsilon() -> None:
    assert [(e["configuration"], e["threat"]) for e in exceeding(CELLS)] == [
        ("secure-sum | plain | gaussian-noise:sigma=2.0", "aggregator,party2")] * 2
    (sentence,) = privacy_sentences(configurations(CELLS), CELLS)
    assert sentence.startswith("In secure-sum | plain | gaussian-noise:sigma=2.0, "
                               "aggregator,party2's canary guesses prove epsilon >= 2.5")
    assert "seeds 0, 1" in sentence and "above the accountant's 2" in sentence
    honest = CELLS[:2]
    (sentence,) = privacy_sentences(configurations(honest), honest)
    assert sentence.startswith("No configuration's empirical lower bound exceeds")


def test_the_plot_draws_the_three_against_the_noise_parameter() -> None:
    png = privacy_png(configurations(CELLS), "gaussian-noise", "sigma")
    assert png is not None and png.startswith(b"\x89PNG")
    assert privacy_png(configurations(CELLS), "other-defence", "sigma") is None


def test_the_empirical_gates_compare_each_adversary_with_the_accountant() -> None:
    failed, lines = evaluate([Gate.parse("privacy.empirical_excess > 0")], CELLS)
    assert failed and len(lines) == 2
    assert "canary-guess as aggregator,party2: privacy.empirical_excess = 0.5 > 0" in lines[0]
    assert "(lower bound 2.5; accountant epsilon 2)" in lines[0]
    assert not evaluate([Gate.parse("privacy.empirical_epsilon > 3")], CELLS)[0]
    unclaimed = [{**c, "privacy": {"noised": False, "epsilon": None}} for c in CELLS]
    failed, lines = evaluate([Gate.parse("privacy.empirical_excess > 0")], unclaimed)
    assert failed and "gate measured nothing" in lines[0]
    with pytest.raises(ValidationError, match="empirical_excess"):
        Gate.parse("privacy.empirical_exces > 0")
