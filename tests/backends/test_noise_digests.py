"""The noise backend's transcripts are pinned: optimising mask generation must not change a byte.

The digests below were recorded from the backend as it stood before its masks were batched
(the complete mask graph, one AES-CTR stream per pair and sender), in transcript format 3, whose
chain links each message: the content is re-chained that way here, so the pins hold across the
format's change to a chain per batch (format 4, pinned beside them). A change to them is a
change to what every seed produces and needs a reason.
"""

from __future__ import annotations

import numpy as np

from fedsec.backends.primitives import masked_send, secure_sum
from fedsec.registry import create
from fedsec.transcript import Transcript
from fedsec.transcript.message import canonical_json, genesis, link
from fedsec.transcript.payload import encode

#: (senders, seed) -> format-3 transcript head after two secure sums and one masked send (50
#: senders: more pair keys than the old per-key cipher cache held)
PINNED = {
    (3, 11): "c3c19cf8a963a18630e5536a561ca9a3ce6d9f86f9720cd187adbbf211608f5e",
    (7, 0): "c2dac65b7ebf013951a2d4ad15df6082f76cc86689ebdd2d7d3b42a8e3ec7c3c",
    (50, 3): "a6dc99c3fceecc353c2ee8ff8533524525ee2f019e79cf56e9cfc8261cdea048",
}


#: The same transcripts' heads in format 4 (as written now).
PINNED_V4 = {
    (3, 11): "6848892811a313feb54f250d088f5177ee70d8a4ad5f7bbef59fb3a51e35c5df",
    (7, 0): "ea41ceca9f027752859a5a9df7dcfc0f978c898c657dc2f2cef58b24c9e91121",
    (50, 3): "2b1532474af296d969f8538c56d3a8998edad7128610a0143d5690504e84e98b",
}


def _heads(n_senders: int, seed: int, federation_factory) -> tuple[str, str]:
    federation = federation_factory(n_senders, seed=seed)
    backend = create("backend", "noise")
    rng = np.random.default_rng(seed)
    for _ in range(2):
        vectors = {f"p{i:02d}": rng.normal(scale=5.0, size=37) for i in range(n_senders)}
        total = secure_sum(federation, backend, vectors, "agg")
        np.testing.assert_allclose(total, np.sum(list(vectors.values()), axis=0), atol=1e-9)
    masked_send(federation, backend, "p00", "agg", rng.normal(size=5), tag="test.labels")
    transcript = federation.network.close()
    return _format3_head(transcript), str(transcript.footer["head"])  # type: ignore[index]


def _format3_head(transcript: Transcript) -> str:
    """The chain value format 3 gives the transcript's content (each message linked)."""
    head = genesis(canonical_json(dict(transcript.header)), "3")
    for m in transcript.messages:
        head = link(head, m.seq, m.round, m.phase, m.sender, m.receiver, m.tag, m.kind,
                    m.protection, m.key_id, m.dtype, m.shape, m.size, m.meta_json,
                    encode(m.payload)[3], "3")
    return head.hex()


def test_complete_graph_transcripts_match_the_pinned_digests(federation_factory) -> None:
    got = {key: _heads(*key, federation_factory) for key in PINNED}
    assert {key: v3 for key, (v3, _) in got.items()} == PINNED
    assert {key: v4 for key, (_, v4) in got.items()} == PINNED_V4
