"""``Attack.not_applicable`` checks the declared tags, then asks the attack's :meth:`unmet` for
the rest; an attack that overrides ``not_applicable`` itself (a plug-in's) still works."""

from __future__ import annotations

import numpy as np
import pytest

from fedsec.errors import CapabilityError
from fedsec.interfaces import Attack
from fedsec.outcomes import Reconstruction
from fedsec.transcript import Transcript, TranscriptWriter
from fedsec.view import View
from fedsec.views import build_view


@pytest.fixture
def transcript() -> Transcript:
    w = TranscriptWriter({"parties": {"a": "client", "s": "server"}})
    w.record(round=0, phase="p", sender="a", receiver="s", tag="vec", payload=np.ones(2))
    return w.close()


class NeedsVec(Attack):
    """Reads ``vec`` messages, and only as a coalition of two."""

    needs_tags = frozenset({"vec"})

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.asked: list[str] = []

    def unmet(self, view: View) -> str | None:
        self.asked.append(str(view.threat))
        return None if len(view.threat.members) > 1 else "it needs a coalition of two"

    def run(self, view: View) -> Reconstruction:
        return Reconstruction(attack="needs-vec", threat=str(view.threat), estimates={},
                              baseline={})


class NeedsSum(NeedsVec):
    """Reads ``sum`` messages the transcript does not hold."""

    needs_tags = frozenset({"sum"})


class OwnCheck(NeedsVec):
    """Overrides ``not_applicable`` itself, as a plug-in written before ``unmet`` does."""

    def not_applicable(self, view: View) -> str | None:
        return super().not_applicable(view) or ("never as a" if "a" in view.threat.members
                                                 else None)


def test_unmet_speaks_once_the_tags_are_observed(transcript: Transcript) -> None:
    attack = NeedsVec()
    assert attack.not_applicable(build_view(transcript, "s")) == "it needs a coalition of two"
    assert attack.not_applicable(build_view(transcript, "a,s")) is None
    assert attack.asked == ["s", "a,s"]


def test_unmet_is_not_asked_when_a_tag_is_missing(transcript: Transcript) -> None:
    attack = NeedsSum()
    reason = attack.not_applicable(build_view(transcript, "s"))
    assert reason == "s observed no message tagged sum; it observed: vec"
    assert attack.asked == []


def test_run_refuses_what_unmet_names(transcript: Transcript) -> None:
    with pytest.raises(CapabilityError, match="does not apply: it needs a coalition of two"):
        NeedsVec().run(build_view(transcript, "s"))
    assert NeedsVec().run(build_view(transcript, "a,s")).threat == "a,s"


def test_an_overridden_not_applicable_still_decides(transcript: Transcript) -> None:
    attack = OwnCheck()
    assert attack.not_applicable(build_view(transcript, "s")) == "it needs a coalition of two"
    assert attack.not_applicable(build_view(transcript, "a,s")) == "never as a"
    with pytest.raises(CapabilityError, match="never as a"):
        attack.run(build_view(transcript, "a,s"))
