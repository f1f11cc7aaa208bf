"""``fedsec.testing.check_defense`` holds a defence to what it declares."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest

from fedsec import testing
from fedsec.defenses.fedcg.landmarks import FewLandmarks
from fedsec.defenses.gaussian_noise import GaussianNoise
from fedsec.federation import Party

IRIS = {"secure-sum": {"dataset": "iris"}}


class SilentNoise(GaussianNoise):
    """gaussian-noise that declares its point but sends every value unchanged."""

    def transform(self, party: Party, tag: str, values: np.ndarray) -> np.ndarray:
        return values


class ForgetfulLandmarks(FewLandmarks):
    """few-landmarks that declares it sets n_landmarks but leaves the parameters alone."""

    def configure(self, params):  # type: ignore[no-untyped-def]
        return dict(params)


class Nowhere(GaussianNoise):
    """gaussian-noise declared for a protocol that does not exist."""

    protocols: ClassVar[frozenset[str]] = frozenset({"secure-summ"})


def test_the_shipped_noise_passes() -> None:
    testing.check_defense(GaussianNoise, runs=IRIS)


def test_a_defence_that_changes_nothing_at_its_point_fails() -> None:
    with pytest.raises(AssertionError, match="sends the same there as one without"):
        testing.check_defense(SilentNoise, runs=IRIS)


def test_a_defence_that_does_not_set_what_it_declares_fails() -> None:
    with pytest.raises(AssertionError, match="declares it sets 'n_landmarks'"):
        testing.check_defense(ForgetfulLandmarks)


def test_a_defence_for_an_unknown_protocol_fails_naming_the_known_ones() -> None:
    from fedsec.errors import UnknownNameError

    with pytest.raises(UnknownNameError, match="secure-sum"):
        testing.check_defense(Nowhere, runs=IRIS)
