"""The noise backend's transcripts are pinned: optimising mask generation must not change a byte.

The digests below were recorded from the backend as it stood before its masks were batched
(the complete mask graph, one AES-CTR stream per pair and sender); a change to them is a change
to what every seed produces and needs a reason.
"""

from __future__ import annotations

import numpy as np

from fedsec.backends.primitives import masked_send, secure_sum
from fedsec.registry import create

#: (senders, seed) -> transcript head after two secure sums and one masked send (50 senders:
#: more pair keys than the old per-key cipher cache held)
PINNED = {
    (3, 11): "c3c19cf8a963a18630e5536a561ca9a3ce6d9f86f9720cd187adbbf211608f5e",
    (7, 0): "c2dac65b7ebf013951a2d4ad15df6082f76cc86689ebdd2d7d3b42a8e3ec7c3c",
    (50, 3): "a6dc99c3fceecc353c2ee8ff8533524525ee2f019e79cf56e9cfc8261cdea048",
}


def _head(n_senders: int, seed: int, federation_factory) -> str:
    federation = federation_factory(n_senders, seed=seed)
    backend = create("backend", "noise")
    rng = np.random.default_rng(seed)
    for _ in range(2):
        vectors = {f"p{i:02d}": rng.normal(scale=5.0, size=37) for i in range(n_senders)}
        total = secure_sum(federation, backend, vectors, "agg")
        np.testing.assert_allclose(total, np.sum(list(vectors.values()), axis=0), atol=1e-9)
    masked_send(federation, backend, "p00", "agg", rng.normal(size=5), tag="test.labels")
    return str(federation.network.close().footer["head"])


def test_complete_graph_transcripts_match_the_pinned_digests(federation_factory) -> None:
    got = {key: _head(*key, federation_factory) for key in PINNED}
    assert got == PINNED
