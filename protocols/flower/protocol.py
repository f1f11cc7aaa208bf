"""A Flower app run as a fedsec protocol: Flower's simulation engine, fedsec's transcript.

:class:`FlowerProtocol` runs a ServerApp and a ClientApp (one simulated SuperNode per data
party of the federation, partition ``i`` for the ``i``-th) with the recorder in the
message path (:mod:`.recorder`, :mod:`.client`), then checks the clients' own logs
against the transcript (:func:`.simulation.cross_check`) and puts what the truth mod
recorded into the parties' private holdings. A subclass says which apps to run, with which
run config, and what the run produced (:meth:`apps`, :meth:`run_config`,
:meth:`outcome`). The transcript, the private store and ``result.json`` are the same as
any fedsec protocol's; reading them needs no Flower.

What fedsec cannot see: anything Flower does not send. The ClientApps' local computation,
their local data (unless exposed), the engine's own bookkeeping (heartbeats, node
registration, Ray's object store) and anything an app sends outside Flower's messages.
"""

from __future__ import annotations

import shutil
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from fedsec.interfaces import Defense, MaskingBackend, Protocol
from fedsec.outcomes import Outcome
from fedsec.protocols.flower import spool, tags
from fedsec.protocols.flower.recorder import Recorder
from fedsec.protocols.flower.simulation import (
    collect_truth,
    cross_check,
    require_flower,
    run_recorded,
)

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.federation import Federation

SERVER = "server"


class FlowerProtocol(Protocol):
    """Runs a Flower app in Flower's simulation engine, every message recorded."""

    partition_kinds = ("horizontal",)
    default_partition = "horizontal:parties=2,names=client0+client1"
    coordinators = ((SERVER, "server"),)
    uses_backend = False
    backend_note = ("a Flower app protects its messages with its own mods and workflows "
                    "(SecAgg+, DP), not with fedsec's backends")
    renamed_tags: ClassVar[Mapping[str, str]] = tags.RENAMED

    def agreement_rtol(self, backend: MaskingBackend) -> float:
        """No agreement is claimed: a FedAvg'd model is not the pooled one."""
        return float("inf")

    @abstractmethod
    def apps(self) -> tuple[Any, Any]:
        """The ServerApp and the ClientApp to run (Flower imported by now)."""

    @abstractmethod
    def run_config(self, federation: Federation) -> dict[str, Any]:
        """The app's run config (Flower's ``context.run_config``), from the parameters."""

    @abstractmethod
    def outcome(self, server_context: Any, federation: Federation,
                summary: Mapping[str, Any]) -> Outcome:
        """What the run produced, from the ServerApp's context after it ended; ``summary``
        is the cross-check's (messages, digests matched)."""

    def prepare(self, where: Path, federation: Federation) -> None:
        """Put what the clients need in the spool before the run (nothing by default)."""

    def run(self, federation: Federation, backend: MaskingBackend,
            defenses: Sequence[Defense] = ()) -> Outcome:
        require_flower()
        clients = [p.name for p in federation.data_parties()]
        where = spool.make_spool()
        try:
            self.prepare(where, federation)
            config = {**self.run_config(federation), spool.SPOOL_KEY: str(where),
                      spool.SEED_KEY: int(federation.seed)}
            recorder = Recorder(federation.network, SERVER, clients)
            server_app, client_app = self.apps()
            federation.report(f"running the Flower app with {len(clients)} simulated clients",
                              every=0.0)
            server = run_recorded(server_app, client_app, recorder, config)
            summary = cross_check(where, recorder)
            for party, held in collect_truth(where, recorder).items():
                federation.party(party).private.update(held)
            nodes = {recorder.names[node]: (str(node), recorder.partitions[node])
                     for node in sorted(recorder.names, key=recorder.partitions.__getitem__)}
            outcome = self.outcome(server.context, federation, summary)
        finally:
            shutil.rmtree(where, ignore_errors=True)
        return Outcome(metrics={**outcome.metrics,
                                "flower_messages": summary["instructions"] + summary["replies"],
                                "digests_matched": summary["digests_matched"]},
                       values=outcome.values, model=outcome.model,
                       truth={**outcome.truth,
                              **{f"{tags.NODES}/{name}": np.array([int(node), partition],
                                                                   dtype=np.uint64)
                                 for name, (node, partition) in nodes.items()}})
