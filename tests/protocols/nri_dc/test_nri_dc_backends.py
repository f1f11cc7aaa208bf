"""NRI-DC under masking backends: each message opened by its receiver alone, the same result as
under ``plain``, the eavesdropper of the paper's warning left with nothing to read."""

from __future__ import annotations

import functools
import hashlib

import numpy as np
import pytest

from fedsec.protocols.nri_dc import tags
from fedsec.registry import create
from fedsec.runner import RunConfig, run
from fedsec.transcript.message import canonical_json
from fedsec.views import build_view

BACKENDS = {"plain": {}, "noise": {}, "ckks": {},
            "paillier": {"key_bits": 512, "insecure_test_keys": True}}
DIRECT = (tags.ANCHOR, tags.INTERMEDIATE, tags.ANCHOR_REPRESENTATION, tags.LABELS,
          tags.ANCHOR_PREDICTIONS)

#: sha256 of the default run's messages (secret seed 0), recorded before NRI-DC took a backend
PINNED_PLAIN = "d268331f0017f242bce896df67d6a7957a4db2811981fbd61d4fd66643ac2c10"


@functools.cache
def nri_dc(backend: str):
    return run(RunConfig(protocol="nri-dc", secret_seed=0, backend=backend,
                         backend_params=BACKENDS[backend],
                         partition="horizontal:parties=4,size=50", params={"n_anchor": 200}))


def pinv(result, threat: str):
    view = build_view(result.transcript, threat, result.private)
    attack = create("attack", "pinv-reconstruction")
    reason = attack.not_applicable(view)
    if reason is not None:
        return reason, None
    reconstruction = attack.run(view)
    return reconstruction, create("scorer", "matched-rows").score(reconstruction, result.private)


def messages_digest(transcript) -> str:
    h = hashlib.sha256()
    for m in transcript.messages:
        fields = (m.seq, m.round, m.phase, m.sender, m.receiver, m.tag, m.kind, m.protection,
                  m.key_id, m.dtype, tuple(m.shape), m.size, canonical_json(dict(m.meta)))
        h.update(repr(fields).encode())
        payload = m.payload
        h.update(payload if isinstance(payload, bytes) else np.ascontiguousarray(payload).tobytes())
    return h.hexdigest()


def test_the_default_plain_transcript_is_unchanged() -> None:
    result = run(RunConfig(protocol="nri-dc", secret_seed=0))
    assert messages_digest(result.transcript) == PINNED_PLAIN


@pytest.mark.parametrize("backend", ["noise", "ckks", "paillier"])
def test_each_backend_gives_the_plain_result_and_protects_every_message(backend: str) -> None:
    plain, result = nri_dc("plain"), nri_dc(backend)
    for key in ("roc_auc", "accuracy", "alignment_error"):
        assert result.outcome.metrics[key] == pytest.approx(plain.outcome.metrics[key],
                                                            rel=1e-9, abs=1e-12)
    assert result.record.comparison.agrees
    sent = [m for m in result.transcript.messages if m.tag in DIRECT]
    assert len(sent) == sum(1 for m in plain.transcript.messages if m.tag in DIRECT)
    assert all(m.protection == backend for m in sent)
    master = build_view(result.transcript, "master", result.private)
    shared = master.select(tag=tags.INTERMEDIATE)
    assert shared and all(master.can_open(m) for m in shared)  # the master reads what it needs


@pytest.mark.parametrize("backend", ["noise", "ckks", "paillier"])
def test_the_eavesdropper_falls_to_nothing_while_the_colluders_still_recover(
        backend: str) -> None:
    plain, result = nri_dc("plain"), nri_dc(backend)
    _, tapped = pinv(plain, "eavesdropper:*")
    assert tapped["advantage"] > 0.5  # without protection: the paper's warning
    reason, _ = pinv(result, "eavesdropper:*")
    assert isinstance(reason, str) and "cannot read any intermediate" in reason
    view = build_view(result.transcript, "eavesdropper:*", result.private)
    assert not any(view.can_open(m) for m in view.messages if m.tag in DIRECT)
    # the backend protects the links, not against the parties that must read the data
    _, colluders = pinv(result, "master,party1")
    _, colluders_plain = pinv(plain, "master,party1")
    assert colluders["reidentified"] == colluders_plain["reidentified"] > 0.5
    # labels are class codes: read as the master reads them (rounded under approximate CKKS)
    assert colluders["label_accuracy"] == colluders_plain["label_accuracy"] > 0.5
    _, master = pinv(result, "master")
    assert master["advantage"] == 0.0
