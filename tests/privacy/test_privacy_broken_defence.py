"""A defence that adds less noise than it declares is caught: by the canary audit, the report's
sentence and the gate ``privacy.empirical_excess > 0``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from fedsec import registry
from fedsec.audit import run_audit
from fedsec.audit.gate import Gate, evaluate
from fedsec.audit.spec import parse_spec
from fedsec.defenses.gaussian_noise import GaussianNoise, clip_norm
from fedsec.federation import Party
from fedsec.report.build import build_report

BROKEN = "test-broken-gaussian-noise"


class TenTimesTooLittleNoise(GaussianNoise):
    """gaussian-noise declaring sigma but adding sigma / 10."""

    def transform(self, party: Party, tag: str, values: np.ndarray) -> np.ndarray:
        values = np.asarray(values, dtype=float)
        if self.params.clip:
            values = clip_norm(values, self.params.clip)
        return values + party.rng.normal(0.0, self.params.sigma / 10, size=values.shape)


@pytest.fixture
def broken() -> Iterator[str]:
    registry.register("defense", BROKEN)(TenTimesTooLittleNoise)
    try:
        yield BROKEN
    finally:
        registry.unregister("defense", BROKEN)


def _scenario(defence: str) -> dict[str, object]:
    return {
        "audit": {"name": "broken", "description": "a defence with a tenth of its noise",
                  "protocols": ["secure-sum"], "dataset": "iris",
                  "partition": "horizontal:parties=5", "backends": ["plain"], "seeds": [0],
                  "secret_seed": 0},
        "params": {"canaries": 1000},
        "defenses": [{"name": defence, "sigma": [2.0], "sensitivity": [1.0]}],
        "attacks": [{"name": "canary-guess", "as": ["aggregator"], "scorer": "canary-epsilon"},
                    {"name": "contribution-readout", "as": ["aggregator"]}],
    }


@pytest.mark.parametrize("defence", ["gaussian-noise", BROKEN])
def test_the_gate_and_the_report_catch_a_defence_with_less_noise_than_declared(
        broken: str, defence: str, tmp_path: Path) -> None:
    spec = parse_spec(_scenario(defence))
    cells = run_audit(spec, tmp_path)
    defended = next(c for c in cells if c["config"]["defense"])
    stated = defended["privacy"]["epsilon"]  # the declared sigma 2: about 1.99
    bound = next(a for a in defended["attacks"] if a["attack"] == "canary-guess")
    failed, lines = evaluate([Gate.parse("privacy.empirical_excess > 0")], cells)
    sentences = build_report(tmp_path)["privacy"]["sentences"]
    print(f"{defence}: accountant epsilon {stated:.2f}, empirical bound "
          f"{bound['scores']['empirical_epsilon']:.2f} (any mechanism: "
          f"{bound['scores']['empirical_epsilon_any']:.2f})")
    if defence == BROKEN:
        assert bound["scores"]["empirical_epsilon"] > stated
        assert failed and any("empirical_excess" in line for line in lines)
        assert sentences[0].startswith("In secure-sum | plain | " + BROKEN)
        assert "less noise than it declares" in sentences[0]
    else:
        assert bound["scores"]["empirical_epsilon"] <= stated
        assert not failed, lines
        assert sentences[0].startswith("No configuration's empirical lower bound exceeds")
