"""``fedsec.testing.check_scorer`` holds a scorer to known answers: a perfect estimate scores as
exact recovery, an uninformed one as no leak."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import pytest

from fedsec import testing
from fedsec.interfaces import ESTIMATE_KINDS, Scorer
from fedsec.outcomes import Reconstruction
from fedsec.scoring.epsilon_dr import EpsilonDR
from fedsec.scoring.reconstruction import ReconstructionError, relative_error
from fedsec.testing.cases import CASES


class Flattering(ReconstructionError):
    """reconstruction-error whose advantage forgets the baseline: 1 - relative error."""

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        out = super().score(reconstruction, truth)
        return {**out, "advantage": 1.0 - out["relative_error"]}


class Backwards(ReconstructionError):
    """reconstruction-error that scores the attack's baseline in place of its estimates."""

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        swapped = Reconstruction(attack=reconstruction.attack, threat=reconstruction.threat,
                                 estimates=reconstruction.baseline,
                                 baseline=reconstruction.baseline)
        return super().score(swapped, truth)


class Miscounted(ReconstructionError):
    """reconstruction-error that counts one target too many."""

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        out = super().score(reconstruction, truth)
        return {**out, "n_targets": out["n_targets"] + 1}


class Mute(Scorer):
    """A scorer that says nothing of how close an estimate came."""

    reads = frozenset({"values"})

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        return {"n_targets": len(reconstruction.estimates)}


class Certifying(EpsilonDR):
    """epsilon-dr that reports every sample reconstructed exactly."""

    def score(self, reconstruction: Reconstruction,
              truth: Mapping[str, np.ndarray | bytes]) -> dict[str, Any]:
        return {**super().score(reconstruction, truth), "min_error": 0.0}


class Pixels(ReconstructionError):
    """reconstruction-error declaring a kind of estimate that does not exist."""

    reads: ClassVar[frozenset[str]] = frozenset({"pixels"})


def test_the_shipped_reconstruction_error_passes() -> None:
    testing.check_scorer(ReconstructionError)


def test_an_advantage_that_forgets_the_baseline_fails() -> None:
    with pytest.raises(AssertionError, match=r"prior's mean of values scores advantage 0\.293"):
        testing.check_scorer(Flattering)


def test_a_scorer_blind_to_the_estimates_fails_on_a_perfect_one() -> None:
    with pytest.raises(AssertionError, match=r"a perfect estimate of rows has advantage 0\.0,"):
        testing.check_scorer(Backwards)


def test_a_wrong_target_count_fails() -> None:
    with pytest.raises(AssertionError, match=r"has 1 target\(s\), but n_targets is 2"):
        testing.check_scorer(Miscounted)


def test_a_scorer_reporting_no_figure_fails() -> None:
    with pytest.raises(AssertionError, match="neither an advantage nor an error"):
        testing.check_scorer(Mute)


def test_a_check_that_certifies_a_guess_as_exact_fails() -> None:
    with pytest.raises(AssertionError, match="scores every error 0, as exact recovery"):
        testing.check_scorer(Certifying)


def test_an_unknown_kind_of_estimate_fails_naming_the_kinds() -> None:
    with pytest.raises(AssertionError, match="no kinds of estimate; the kinds are"):
        testing.check_scorer(Pixels)


@pytest.mark.parametrize("kind", sorted(ESTIMATE_KINDS))
def test_every_kind_has_a_case_whose_estimates_fit_its_truth(kind: str) -> None:
    case = CASES[kind]()
    assert case.kind == kind and set(case.perfect) <= set(case.truth)
    for estimates in (case.perfect, case.baseline, *case.uninformed.values()):
        assert set(estimates) <= set(case.perfect)
    assert CASES[kind]().truth.keys() == case.truth.keys()  # built the same each time
    if kind in ("values", "rows"):  # in the truth's own order: the truth itself
        ((key, estimate),) = case.perfect.items()
        assert relative_error(estimate, np.asarray(case.truth[key])) == 0.0
