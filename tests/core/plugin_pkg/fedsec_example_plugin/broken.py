"""Two attacks that break the attack contract on purpose: the conformance gate must fail them.

:class:`TruthPeek` takes every contribution from the run's private store, found in the
process's memory, instead of from what its adversary observed; :class:`ConstantGuess` returns
one guess whatever its View holds.
"""

from __future__ import annotations

import gc
from collections.abc import Mapping

import numpy as np

from fedsec.backends.primitives import CONTRIBUTION_TAG
from fedsec.interfaces import Attack
from fedsec.outcomes import Reconstruction
from fedsec.private_store import truth_key
from fedsec.results import RunResult
from fedsec.view import View
from fedsec_example_plugin.coalition import revealed_sum


def private_store_in_memory(view: View) -> Mapping[str, np.ndarray | bytes] | None:
    """The private store of the run ``view`` was cut from, if a result of it is still alive."""
    for obj in gc.get_objects():
        if isinstance(obj, RunResult) and obj.transcript.header is view.header:
            return obj.private
    return None


class TruthPeek(Attack):
    """Claims the aggregator alone recovers every contribution: it reads them from the truth."""

    summary = "Reads each sender's vector from the run's private store (broken on purpose)."
    needs_tags = frozenset({CONTRIBUTION_TAG})
    closed_form = True

    def run(self, view: View) -> Reconstruction:
        store = private_store_in_memory(view)
        senders = sorted({m.sender for m in view.select(tag=CONTRIBUTION_TAG)})
        total = revealed_sum(view)
        estimates, baseline = {}, {}
        for sender in senders:
            key = truth_key(sender, "value", "vector")
            baseline[key] = (np.zeros(0) if total is None else total / len(senders))
            estimates[key] = np.asarray(store[key]) if store is not None else baseline[key]
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates=estimates,
                              baseline=baseline)


class ConstantGuess(Attack):
    """Guesses every sender's vector as zeros, whatever it observed."""

    summary = "Returns zeros for every contribution, whatever it saw (broken on purpose)."
    needs_tags = frozenset({CONTRIBUTION_TAG})
    closed_form = True

    def run(self, view: View) -> Reconstruction:
        guesses = {truth_key(m.sender, "value", "vector"): np.zeros(int(m.meta.get("elements", 0)))
                   for m in view.select(tag=CONTRIBUTION_TAG)}
        return Reconstruction(attack=self.name, threat=str(view.threat), estimates=guesses,
                              baseline=dict(guesses))
