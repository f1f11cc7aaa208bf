"""Fixtures of the audit tests: a slow attack beside a scenario."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

SLOW_ATTACK = '''
import time
from dataclasses import dataclass

from fedsec.attacks.contribution_readout import ContributionReadout


class SlowReadout(ContributionReadout):
    """contribution-readout after a pause of ``seconds``."""

    @dataclass(frozen=True, kw_only=True)
    class Params:
        seconds: float = 1.0

    def run(self, view):
        time.sleep(self.params.seconds)
        return super().run(view)
'''


@pytest.fixture
def slow_attack() -> Callable[[Path], str]:
    """Writes ``slow_attack.py`` into a folder; returns the component's name there
    (``slow_attack:SlowReadout``: contribution-readout after ``seconds`` of sleep)."""

    def write(folder: Path) -> str:
        (folder / "slow_attack.py").write_text(textwrap.dedent(SLOW_ATTACK))
        return "slow_attack:SlowReadout"

    return write
