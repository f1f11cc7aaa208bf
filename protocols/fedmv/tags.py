"""The FedMV family's transcript contract: message tags and metadata keys.

V-FedMV and H-FedMV send these; the attacks on them (:mod:`fedsec.attacks.fedmv`) read
them. Nothing else types a tag of this family: import the constant.
"""

from __future__ import annotations

# -- tags: V-FedMV ---------------------------------------------------------------------------
LABELS = "fedmv.labels"
"""The training labels ``Y`` (one-hot), from the client holding them to the server, once.

The paper's server holds ``Y`` from the start; fedsec's partitions give labels to a data
party, so the hand-over is a recorded setup message."""
CONSENSUS = "fedmv.consensus"
"""The server's consensus ``Z`` (N x C), to every client, each training round."""
VIEW_ESTIMATE = "fedmv.view_estimate"
"""A client's ``[zeta_k, zeta_k Z_k]`` (flattened) to the server, through the backend's sum."""
TEST_ESTIMATE = "fedmv.test_view_estimate"
"""A client's ``[zeta_k, zeta_k Z_k^test]`` to the server, each test-phase step."""
TEST_CONSENSUS = "fedmv.test_consensus"
"""The server's test consensus ``Z^test``, to every client, each test-phase step."""

# -- tags: H-FedMV ---------------------------------------------------------------------------
GLOBAL_WEIGHTS = "fedmv.global_weights"
"""The server's averaged ``{W_k}`` (flattened in view order), to every client, each round."""
LOCAL_WEIGHTS = "fedmv.local_weights"
"""A client's ``[N_l, N_l W_1^l, ..., N_l W_K^l]`` to the server, through the backend's sum."""

# -- tags: S-FedMV ---------------------------------------------------------------------------
EXTRACTOR_GLOBAL = "fedmv.extractor_global"
"""The server's averaged GRU extractors (every view's weights, flattened in view order, each
in its :data:`LAYOUTS` order), to every client, each FedAvg round."""
EXTRACTOR_UPDATE = "fedmv.extractor_update"
"""A client's ``[N_l, N_l w^l]`` after its local epochs (``w^l``: every view's extractor,
flattened as in :data:`EXTRACTOR_GLOBAL`), to the server through the backend's sum."""

# -- metadata keys ---------------------------------------------------------------------------
VIEW = "view"
"""The view a V-FedMV client holds (its feature group's name)."""
VIEWS = "views"
"""The views, in order, of an H-FedMV weight vector."""
SHAPE = "shape"
"""The matrix shape a flattened payload unpacks to (rows, columns)."""
SHAPES = "shapes"
"""Each view's ``W_k`` shape in an H-FedMV weight vector."""
PHASE_STEP = "step"
"""The step of the test phase."""
LAYOUTS = "layouts"
"""Per view, the ``[name, shape]`` of each extractor parameter in a flattened vector."""
EXTRACTORS = "extractors"
"""Per view, the extractor's architecture (inputs, hidden, classes)."""
SEQUENCES = "sequences"
"""Per view, the sequence length ``T`` and its channels in column order (the model reads
every channel but ``present``, which marks real steps)."""
LOCAL_TRAINING = "local_training"
"""The clients' local training (epochs, batch size, learning rate, optimizer), which the
server sets and every client follows."""

# -- private holdings (ground truth for scoring) -------------------------------------------
TEST_ROWS = "test_X"
"""A V-FedMV client's view of the test rows (``party/NAME/value/test_X``)."""
FINAL_LOCAL_WEIGHTS = "local_W"
"""An H-FedMV client's last local weights, flattened in view order."""
INITIAL_WEIGHTS = "W_init"
"""A V-FedMV client's starting ``W_k`` (its own secret, as is everything it computes from it)."""
INITIAL_ESTIMATE = "Z_init"
"""A V-FedMV client's starting ``Z_k``."""
TRAINED_ROWS = "sequences/X"
"""The rows an S-FedMV client trained its extractors on (its shard's first ``local_rows``)."""
TRAINED_LABELS = "sequences/y"
"""Their labels."""

RENAMED: dict[str, str] = {}
"""Tag in a transcript of fedsec 0.1.0 → tag today (none: the family is newer)."""
