"""An adversary's View of a transcript file, selected from its record batches, equals the View
built from its messages decoded one by one: for every registered protocol and adversary, the
same messages in the same order, with the same tags, metadata and bit-identical payloads."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_conformance import ELSEWHERE, QUICK

from fedsec import registry
from fedsec.runner import RunConfig, run
from fedsec.testing import coalitions
from fedsec.transcript import read_transcript
from fedsec.transcript.columnar import ColumnMessages
from fedsec.transcript.reader import open_messages
from fedsec.view import View
from fedsec.views import build_view

#: Adversaries tried per protocol at most (every party, then pairs and triples).
ADVERSARIES = 40


def payload_bits(payload: Any) -> tuple[Any, ...]:
    if isinstance(payload, np.ndarray):
        return ("array", payload.dtype.str, payload.shape, payload.tobytes())
    return ("bytes", type(payload), payload)


def assert_same_view(got: View, expected: View) -> None:
    assert (got.threat, dict(got.header)) == (expected.threat, dict(expected.header))
    assert {k: sorted(v) for k, v in got.knowledge.items()} == {
        k: sorted(v) for k, v in expected.knowledge.items()}
    assert len(got.messages) == len(expected.messages)
    for a, b in zip(got.messages, expected.messages, strict=True):
        assert a._replace(payload=None, meta={}) == b._replace(payload=None, meta={})
        assert dict(a.meta) == dict(b.meta)
        assert payload_bits(a.payload) == payload_bits(b.payload)
        assert got.can_open(a) == expected.can_open(b)
    assert got.tags() == expected.tags()
    for tag in sorted(expected.tags()):
        assert [m.seq for m in got.select(tag=tag)] == [m.seq for m in expected.select(tag=tag)]


#: Every protocol with the plain backend, and the protected payloads of the other backends.
CASES = [*[(name, "plain") for name in registry.names("protocol")],
         *[("secure-sum", backend) for backend in registry.names("backend") if backend != "plain"]]


@pytest.mark.parametrize(("name", "backend"), CASES)
def test_a_view_from_columns_equals_the_view_from_messages(name: str, backend: str,
                                                           tmp_path: Path) -> None:
    if name in ELSEWHERE:
        pytest.skip(f"a Flower run starts Ray; its Views are read from its file in "
                    f"{ELSEWHERE[name].split(' (')[0]}")
    result = run(RunConfig(protocol=name, backend=backend, reference=False,
                           **QUICK.get(name, {})), tmp_path / "run")
    path = tmp_path / "run" / "transcript.arrow"
    loaded = read_transcript(path)
    assert isinstance(loaded.messages, ColumnMessages)
    with open_messages(path) as stream:  # each message decoded on its own
        decoded = replace(loaded, messages=tuple(stream))
    assert loaded.verify() == decoded.verify() and loaded.verify().ok
    parties = list(loaded.parties)
    links = sorted({(m.sender, m.receiver) for m in decoded.messages})
    threats = [*coalitions(parties, limit=ADVERSARIES), "eavesdropper:*",
               *[f"eavesdropper:{a}->{b}" for a, b in links[:3]]]
    for threat in threats:
        expected = build_view(decoded, threat, result.private)
        assert isinstance(expected.messages, tuple)
        for transcript in (loaded, result.transcript):  # read back, and as the run left it
            got = build_view(transcript, threat, result.private)
            assert isinstance(got.messages, ColumnMessages)
            assert_same_view(got, expected)
