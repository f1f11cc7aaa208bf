"""The FedGraph family's transcript contract: message tags, metadata keys, private keys.

Hybrid FedGraph sends these; the attacks on it (:mod:`fedsec.attacks.fedgraph`) read them.
Nothing else types a tag of this family: import the constant.
"""

from __future__ import annotations

# -- tags ------------------------------------------------------------------------------------
FEATURES = "fedgraph.features"
"""A client's feature (column) indices, to the server, once: the server draws the client
graph from them (an edge where two clients share a feature, the shared features as the edge
feature)."""
CLUSTER_SEED = "fedgraph.cluster_seed"
"""The 32-byte seed a sample group's first client draws and sends to the group's other
clients; it fixes the group's clusters (with the sample ids and labels). Its metadata names
the group (:data:`GROUP`), its rows (:data:`ROWS`), the draw (:data:`DRAW`) and how clusters
are drawn (:data:`CLUSTERING`, :data:`CLUSTER_SIZE`, :data:`IN_CLASS`). The server never
receives it."""
LABELS = "fedgraph.labels"
"""The labels of a sample group's training rows, from the group's first client to the
server, when embeddings travel raw (``clustering`` ``none`` or ``kmeans``)."""
TRAIN_EMBEDDINGS = "fedgraph.train_embeddings"
"""A client's raw embeddings ``g^j(x)`` of its training rows (rows in :data:`ROWS` order)."""
CLUSTER_EMBEDDINGS = "fedgraph.cluster_embeddings"
"""A client's cluster-mean embeddings of one sample group (one row per cluster)."""
CLUSTER_LABELS = "fedgraph.cluster_labels"
"""A sample group's cluster-mean one-hot labels (one row per cluster), from its first
client."""
TEST_EMBEDDINGS = "fedgraph.test_embeddings"
"""A client's raw embeddings of the test rows, at prediction time (the paper's test phase)."""

# -- metadata keys ---------------------------------------------------------------------------
ROWS = "rows"
"""The training-row ids (positions in the run's training set) of an embedding or label
matrix, in its row order."""
GROUP = "group"
"""The sample group of a cluster message: the clients that hold its samples, in order."""
DEPTH = "depth"
"""The extractor depth ``j`` (hidden layers) a client's embeddings come from."""
CLUSTER_SIZE = "cluster_size"
"""The cluster size ``s`` of a cluster message (a cluster holds at least ``s`` rows)."""
CLUSTERING = "clustering"
"""How a clustering seed's clusters are drawn: ``crc`` or ``random``."""
IN_CLASS = "in_class"
"""CRC's share ``r`` of one class in a cluster."""
DRAW = "draw"
"""Which of a group's clusterings (``0 .. redraws - 1``) a seed or a cluster message is of."""
SHAPE = "shape"
"""The payload's array shape, on messages a masking backend carries (its values travel flat);
absent under ``plain``, whose payloads keep their shape."""

# -- private holdings ------------------------------------------------------------------------
EXTRACTOR_WEIGHTS = "extractor/weights"
"""A client's extractor ``g^j`` (its first ``j`` layers), flattened; its layout is
:data:`EXTRACTOR_LAYOUT`."""
EXTRACTOR_LAYOUT = "extractor/layout"
"""The layout of :data:`EXTRACTOR_WEIGHTS` as JSON bytes (``[[name, shape], ...]``)."""
TRAIN_INPUTS = "inputs/train"
"""A client's scaled inputs of its training rows, in :data:`ROWS` order (ground truth)."""
TEST_INPUTS = "inputs/test"
"""A client's scaled inputs of the test rows (ground truth)."""
CLUSTERS = "clusters"
"""A client's cluster of each training row in each draw, ``(redraws, rows)`` in ``ROWS``
order (-1: the row was in no cluster it sent)."""
TRAIN_EMBEDDINGS_HELD = "embeddings/train"
"""A client's raw embeddings of the training rows it sent cluster means of (its rows in
sample groups of at least ``s`` rows), in ``ROWS`` order: ground truth for what cluster
means hide."""
CLUSTER_INPUTS = "inputs/cluster_means"
"""The mean scaled inputs of each cluster a client sent a mean embedding of, in the order of
its :data:`CLUSTER_EMBEDDINGS` messages (ground truth for inverting a cluster mean)."""
PRIVACY_SCORES = "privacy_scores"
"""A client's privacy score (diameter) at each depth ``1..layers`` (NaN: not computed)."""

RENAMED: dict[str, str] = {}
"""Tag in a transcript of fedsec 0.1.0 → tag today (none: the family is newer)."""
