"""``fedsec.testing.check_attack`` finds the adversary an attack needs, coalitions included."""

from __future__ import annotations

import pytest

from fedsec import testing
from fedsec.attacks.contribution_readout import ContributionReadout
from fedsec.outcomes import Reconstruction
from fedsec.view import View


class PairReadout(ContributionReadout):
    """contribution-readout that applies only to a coalition of two or more."""

    def not_applicable(self, view: View) -> str | None:
        if len(view.threat.members) < 2:
            return "it needs a coalition of two"
        return super().not_applicable(view)

    def run(self, view: View) -> Reconstruction:
        assert len(view.threat.members) >= 2
        return super().run(view)


class NobodyReadout(ContributionReadout):
    """contribution-readout that applies to no adversary at all."""

    def not_applicable(self, view: View) -> str | None:
        return "never"


def test_an_attack_that_needs_a_coalition_passes_on_a_pair() -> None:
    testing.check_attack(PairReadout, runs={"secure-sum": {"dataset": "iris"}})


def test_an_attack_no_adversary_can_run_fails_naming_coalitions() -> None:
    with pytest.raises(AssertionError, match="coalition of up to three"):
        testing.check_attack(NobodyReadout, runs={"secure-sum": {"dataset": "iris"}})
