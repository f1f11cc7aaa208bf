"""``fedsec.testing.check_attack`` finds the adversary an attack needs, coalitions included, and
holds the attack to its View: the same without the run's truth in reach, another on another
run. (An installed plug-in's broken attacks: test_plugin_package.py.)"""

from __future__ import annotations

import gc
from dataclasses import replace

import numpy as np
import pytest

from fedsec import testing
from fedsec.attacks.contribution_readout import ContributionReadout
from fedsec.outcomes import Reconstruction
from fedsec.results import RunResult
from fedsec.view import View

IRIS = {"secure-sum": {"dataset": "iris"}}


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


class StoreReadout(ContributionReadout):
    """contribution-readout that adds every party's vector, taken from the run's result left
    in memory."""

    def run(self, view: View) -> Reconstruction:
        out = super().run(view)
        store = next((o.private for o in gc.get_objects()  # (type(), not isinstance: no
                      if type(o) is RunResult  # attribute of torch's deprecated objects is read)
                      and o.transcript.header is view.header), {})
        taken = {k: np.asarray(v) for k, v in store.items() if k.endswith("/value/vector")}
        return replace(out, estimates={**out.estimates, **taken})


class FixedReadout(ContributionReadout):
    """contribution-readout that answers ones, whatever it observed."""

    def run(self, view: View) -> Reconstruction:
        out = super().run(view)
        return replace(out, estimates={k: np.ones_like(v) for k, v in out.estimates.items()})


class DriftingReadout(ContributionReadout):
    """contribution-readout that adds noise from an unseeded generator."""

    def run(self, view: View) -> Reconstruction:
        out = super().run(view)
        rng = np.random.default_rng()
        return replace(out, estimates={k: v + rng.normal(size=np.shape(v))
                                       for k, v in out.estimates.items()})


def test_an_attack_that_needs_a_coalition_passes_on_a_pair() -> None:
    testing.check_attack(PairReadout, runs=IRIS)


def test_an_attack_no_adversary_can_run_fails_naming_coalitions() -> None:
    with pytest.raises(AssertionError, match="coalition of up to three"):
        testing.check_attack(NobodyReadout, runs=IRIS)


def test_an_attack_that_reads_the_private_store_fails() -> None:
    with pytest.raises(AssertionError, match="out of reach its estimates of party/party2"):
        testing.check_attack(StoreReadout, runs=IRIS)


def test_an_attack_whose_output_ignores_its_view_fails() -> None:
    with pytest.raises(AssertionError, match=r"seeds 3 and 4.*its output ignores its View"):
        testing.check_attack(FixedReadout, runs=IRIS, seed=3)


def test_an_attack_that_draws_at_random_fails() -> None:
    with pytest.raises(AssertionError, match="two runs on one view differ"):
        testing.check_attack(DriftingReadout, runs=IRIS)
