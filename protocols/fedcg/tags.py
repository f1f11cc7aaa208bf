"""The FedCG family's transcript contract: message tags, metadata keys and key ids.

FedCG naive, FedCG secure and CenCG send these; the attacks on them
(:mod:`fedsec.attacks.fedcg`) read them. Nothing else types a tag of this
family: import the constant.

Tags are namespaced by the family (``fedcg.``). Transcripts written before
the namespace (fedsec 0.1.0, format 1 and 2) carry the bare names in
:data:`RENAMED`; views translate them, so those files still load, verify and
attack.
"""

from __future__ import annotations

# -- tags ------------------------------------------------------------------------------------
KERNEL_BLOCK = "fedcg.kernel_block"
"""Naive: a cell owner's kernel block ``K(X_cell, W)`` to the server."""
MASKED_LABELS = "fedcg.masked_labels"
"""Naive: a cohort's labels to the server, protected by the backend."""
LANDMARK_FEATURES = "fedcg.landmark_features"
"""P landmarks: an owner's landmark rows' features to the group's other owners."""
MODEL = "fedcg.model"
"""The trained coefficients, broadcast by the server."""
KERNEL_WIDTH = "fedcg.kernel_width"
"""The base kernel width (gamma), server to clients."""
LANDMARK_STATS = "fedcg.landmark_stats"
"""N landmarks: pooled column means and deviations, server to clients."""
COLUMN_STATISTICS = "fedcg.column_statistics"
"""Per-group column statistics pooled at the server (for gamma and N landmarks)."""
CHAIN_PRODUCT = "fedcg.chain_product"
"""Secure: the running Hadamard product ``K_1 ∘ ... ∘ K_i`` times a vector, along a chain."""
CHAIN_TRANSPOSE = "fedcg.chain_transpose"
"""Secure: the transposed product back along the chain."""
CG_DIRECTION = "fedcg.cg_direction"
"""Secure: the CG direction (unit columns) the server broadcasts each epoch."""
MASKED_RESIDUAL_GRADIENT = "fedcg.masked_residual_gradient"
"""Secure: ``K^T (Y + eta - K alpha0)`` per cohort, summed by the backend."""
NOISE_GRADIENT = "fedcg.noise_gradient"
"""Secure: ``K^T eta`` per cohort, removed from the masked gradient."""
GRAM_PRODUCT = "fedcg.gram_product"
"""Secure: ``K_h^T K_h p`` per cohort (or its sum under a masking backend)."""

# -- metadata keys ---------------------------------------------------------------------------
COHORT = "cohort"
COHORTS = "cohorts"
N_COHORTS = "n_cohorts"
GROUP = "group"
CELL = "cell"
COLUMNS = "columns"
COVERS = "covers"
POSITION = "position"
N_FEATURES = "n_features"
GAMMA = "gamma"
EPOCH = "epoch"
SCALING = "scaling"
SCALED_BY_DIRECTION = "direction"
"""Value of :data:`SCALING` when a chain product multiplies the epoch's CG direction."""

# -- key ids ---------------------------------------------------------------------------------
SEED_KEY = "fedcg:landmark-seed"
"""The clients' shared seed (landmarks, kernel widths, alpha0, label noise)."""

# -- transcripts written before the namespace ------------------------------------------------
RENAMED: dict[str, str] = {
    "kernel_block": KERNEL_BLOCK,
    "masked_labels": MASKED_LABELS,
    "landmark_features": LANDMARK_FEATURES,
    "model": MODEL,
    "kernel_width": KERNEL_WIDTH,
    "landmark_stats": LANDMARK_STATS,
    "column_statistics": COLUMN_STATISTICS,
    "chain_product": CHAIN_PRODUCT,
    "chain_transpose": CHAIN_TRANSPOSE,
    "cg_direction": CG_DIRECTION,
    "masked_residual_gradient": MASKED_RESIDUAL_GRADIENT,
    "noise_gradient": NOISE_GRADIENT,
    "gram_product": GRAM_PRODUCT,
}
"""Tag in a transcript of fedsec 0.1.0 → tag today."""
