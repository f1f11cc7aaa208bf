"""FDSKL's messages are pinned: at batch_size=1 and features_per_iteration=1 a run sends what it
sent before mini-batches existed, byte for byte.

The digests below were recorded from FDSKL as it stood before mini-batches and the median
kernel width (one sample and one feature per iteration). They cover every message field the
transcript chain covers (payload bytes included) but not the run header, which now also lists
the new parameters at their defaults. A change to them is a change to what every seed produces
and needs a reason.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from fedsec.runner import RunConfig, run
from fedsec.transcript.message import canonical_json

#: (partition, params) -> (sha256 of the messages, sha256 of alpha)
PINNED = {
    ("vertical:parties=4", ()): (
        "303cb21f8c4e9c49abd11f323130b8c3e7266cd23280e8c2aeaea2a1724b0f18",
        "95471cb6b463dbfa9fec425be00acb7f2904acefc60fe88626d41b9522814836"),
    ("vertical:parties=4,labels=party1+party3", (("offsets", "fresh"),)): (
        "de5a96eba49e0839594d751708fcebb4446d8eab0e21afd82c0fe646c93ba1d6",
        "a713032cd27a0e99132350dfe77218752024b3f9062ffd1e02fe4fee5bd1c98c"),
    ("vertical:parties=3", (("offsets", "none"), ("block", 7))): (
        "f80f418917e6fdaa701c65fad456dad67f0fb68215a4087dadf9c011b9444713",
        "ae99afd7a0d6f3cfad507c3903b499ff174895ce408095d814ea923a81e88e0c"),
}


def messages_digest(transcript) -> str:
    """SHA-256 over every message's chained fields and payload, without the header."""
    h = hashlib.sha256()
    for m in transcript.messages:
        fields = (m.seq, m.round, m.phase, m.sender, m.receiver, m.tag, m.kind, m.protection,
                  m.key_id, m.dtype, tuple(m.shape), m.size, canonical_json(dict(m.meta)))
        h.update(repr(fields).encode())
        payload = m.payload
        h.update(payload if isinstance(payload, bytes) else np.ascontiguousarray(payload).tobytes())
    return h.hexdigest()


def _digests(partition: str, params: tuple) -> tuple[str, str]:
    result = run(RunConfig(protocol="fdskl", dataset="breast_cancer", partition=partition,
                           params={"n_iterations": 150, **dict(params)}))
    values = result.outcome.values
    return (messages_digest(result.transcript),
            hashlib.sha256(np.asarray(values["alpha"]).tobytes()).hexdigest())


@pytest.mark.parametrize(("partition", "params"), list(PINNED))
def test_one_sample_one_feature_runs_match_the_pinned_digests(partition: str, params) -> None:
    assert _digests(partition, params) == PINNED[(partition, params)]
