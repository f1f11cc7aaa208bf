"""The FDSKL family's transcript contract: message tags, metadata keys and key ids.

FDSKL sends these (DSG, its centralized reference, sends nothing); the
attacks on it (:mod:`fedsec.attacks.fdskl`, and ``linear-inference``) read
them. Nothing else types a tag of this family: import the constant.

Tags are namespaced by the family (``fdskl.``). Transcripts written before the
namespace (fedsec 0.1.0, format 1 and 2) carry the bare names in
:data:`RENAMED`; views translate them, so those files still load, verify and
attack.
"""

from __future__ import annotations

# -- tags ------------------------------------------------------------------------------------
PARTIAL_DOT = "fdskl.partial_dot"
"""Masked partial dot products ``w_G^T x_G + b`` summed along T1."""
OFFSET_SUM = "fdskl.offset_sum"
"""Offsets summed along T2 (all workers but ``l'``), removed by the requester."""
SAMPLE_INDEX = "fdskl.sample_index"
"""The sample indices a requester picked, sent down T1: rows are its iterations, then their
``batch_size`` samples, then the ``l'`` of their ``features_per_iteration`` features."""
PARTIAL_PREDICTION = "fdskl.partial_prediction"
"""Each worker's share of ``f(x)`` summed along a tree (one value per sample of the batch)."""
TREE_PLAN = "fdskl.tree_plan"
"""A requester's T1 and T2 trees, sent down T1 (JSON)."""
FEATURE_COLUMNS = "fdskl.feature_columns"
"""Which global feature columns each worker holds."""
COLUMN_STATISTICS = "fdskl.column_statistics"
"""Per-worker column statistics summed along T1 (for the kernel width)."""
KERNEL_WIDTH = "fdskl.kernel_width"
"""The kernel width computed from the statistics (or the median distance), sent down T1."""
WIDTH_PAIRS = "fdskl.width_pairs"
"""The sample pairs whose distances the median heuristic takes, sent down T1 (2 × n_pairs)."""
PARTIAL_DISTANCE = "fdskl.partial_distance"
"""Each worker's partial distances of the sampled pairs (masked unless offsets=none), summed
along T1; their total, the pairs' full distances, reaches the requester."""
DISTANCE_MASK = "fdskl.distance_mask"
"""The masks of :data:`PARTIAL_DISTANCE`, summed along a tree over the workers but the requester
and delivered to it."""

# -- metadata keys ---------------------------------------------------------------------------
TREE = "tree"
TREE_SUMS = "T1"
TREE_OFFSETS = "T2"
TREE_DOWN = "T0"
"""Values of :data:`TREE`: the sum tree, the offsets' tree, a broadcast down T1."""
BACKEND_SUM = "backend"
"""Value of :data:`TREE` on a share summed by the masking backend instead of along T1 (under a
backend other than ``plain``: no offsets, no T2; see :mod:`fedsec.protocols.fdskl.backend_sums`)."""
COVERS = "covers"
ROUND = "round"
DELIVERY = "delivery"
REQUESTER = "requester"
OFFSETS = "offsets"
PAIRS = "pairs"
BLOCK = "block"
EXCLUDED = "excluded"
FEATURES = "features"
N_FEATURES = "n_features"
PLAN = "plan"
OWNER_STRIDE = "owner_stride"
PICKER = "picker"
ITERATION = "iteration"
SAMPLE = "sample"
SAMPLES = "samples"
"""A mini-batch's samples (the partial predictions of one iteration, when batch_size > 1)."""

# -- what a worker keeps (its private store, under value/) -------------------------------------
PRIVATE_OFFSETS = "offsets"
"""A worker's per-feature offsets, as the auditor's store keeps them."""
PRIVATE_ALPHAS = "alphas"
"""An active worker's final coefficients of its random features."""
PRIVATE_ALPHA_FEATURES = "alpha_features"
"""The indices of the random features those coefficients weigh."""
PRIVATE_PHASE_FEATURES = "phase_features"
"""The random features whose phase ``b_j`` the worker drew."""

# -- key ids ---------------------------------------------------------------------------------
SHARED_SEED_KEY = "dsg:shared-seed"
"""The seed of the random directions ``w_j`` shared by the workers."""
PHASE_KEY = "dsg:phases"
SAMPLE_KEY = "dsg:samples"
"""Simulation streams of DSG's phases ``b_j`` and sample picks (the reference's too)."""
WIDTH_PAIRS_KEY = "dsg:width-pairs"
"""Simulation stream of the pairs the median heuristic measures (the reference's too)."""

# -- transcripts written before the namespace ------------------------------------------------
RENAMED: dict[str, str] = {
    "partial_dot": PARTIAL_DOT,
    "offset_sum": OFFSET_SUM,
    "sample_index": SAMPLE_INDEX,
    "partial_prediction": PARTIAL_PREDICTION,
    "tree_plan": TREE_PLAN,
    "feature_columns": FEATURE_COLUMNS,
    "column_statistics": COLUMN_STATISTICS,
    "kernel_width": KERNEL_WIDTH,
}
"""Tag in a transcript of fedsec 0.1.0 → tag today."""
