"""The NRI-DC family's transcript contract: message tags and metadata keys.

NRI-DC sends these; the attacks on it (:mod:`fedsec.attacks.nri_dc`) read them.
Nothing else types a tag of this family: import the constant. NRI-DC's tags
were namespaced from the start, so transcripts of every version read as they are.
"""

from __future__ import annotations

# -- tags ------------------------------------------------------------------------------------
ANCHOR = "nri_dc.anchor"
"""The shared anchor data, from its owner to each worker."""
INTERMEDIATE = "nri_dc.intermediate"
"""A worker's secretly reduced, row-shuffled data ``P X F`` to the master."""
ANCHOR_REPRESENTATION = "nri_dc.anchor_representation"
"""A worker's image of the anchor ``X_anc F`` to the master."""
LABELS = "nri_dc.labels"
"""A worker's shuffled labels ``P y`` to the master."""
ANCHOR_PREDICTIONS = "nri_dc.anchor_predictions"
"""The master's predictions on the anchor, back to each worker."""

# -- metadata keys ---------------------------------------------------------------------------
N_FEATURES = "n_features"
N_COMPONENTS = "n_components"
N_CLASSES = "n_classes"
N_ANCHOR = "n_anchor"
KIND = "kind"
MODEL = "model"
N_ROWS = "n_rows"
SHAPE = "shape"
"""The payload's array shape, on messages a masking backend carries (its values travel flat);
absent under ``plain``, whose payloads keep their shape."""

# -- what a worker keeps (its private store, under value/) -------------------------------------
PRIVATE_ANCHOR = "anchor"
"""The anchor its owner drew (the other workers hold it as the message that brought it)."""

RENAMED: dict[str, str] = {}
"""Tag in a transcript of fedsec 0.1.0 → tag today (none: already namespaced)."""
