"""A Flower app run as a fedsec protocol: Flower's engines, fedsec's transcript.

:class:`FlowerProtocol` runs a ServerApp and a ClientApp (one SuperNode per data party of
the federation, partition ``i`` for the ``i``-th) with the recorder in the message path
(:mod:`.recorder`, :mod:`.client`), then checks the clients' own logs against the transcript
(:func:`.simulation.cross_check`) and puts what the truth mod recorded into the parties'
private holdings. The ``engine`` parameter picks Flower's engine: ``simulation`` (Ray, in
this process: :mod:`.simulation`) or ``deployment`` (a SuperLink and SuperNodes as processes
of their own, over TLS on 127.0.0.1: :mod:`.deployment`, the recorder's rows relayed through
the spool by :mod:`.relay`); the transcript has the same rows either way. A subclass says
which apps to run, with which run config, and what the run produced (:meth:`apps`,
:meth:`run_config`, :meth:`outcome`). The transcript, the private store and
``result.json`` are the same as any fedsec protocol's; reading them needs no Flower.

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
from fedsec.params import params_dict
from fedsec.protocols.flower import spool, tags
from fedsec.protocols.flower.recorder import Recorder
from fedsec.protocols.flower.simulation import (
    collect_truth,
    cross_check,
    require_flower,
    run_recorded,
)
from fedsec.validation import check_choice

if TYPE_CHECKING:  # pragma: no cover
    from fedsec.federation import Federation

SERVER = "server"
SIMULATION, DEPLOYMENT = "simulation", "deployment"
ENGINES = (SIMULATION, DEPLOYMENT)
"""Flower's engines a Flower protocol runs in (its ``engine`` parameter)."""
DEPLOYMENT_SECONDS = 3600.0
"""How long a run in the deployment engine may take, unless the protocol says otherwise."""


def check_engine(value: object, *, owner: str) -> str:
    """The ``engine`` parameter of a Flower protocol, checked: one of :data:`ENGINES`."""
    return check_choice(value, owner=owner, name="engine", choices=ENGINES)


class FlowerProtocol(Protocol):
    """Runs a Flower app in one of Flower's engines, every message recorded."""

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

    def deployed_apps(self, folder: Path) -> tuple[Any, Any]:
        """The apps as the deployment engine's app processes build them, ``folder`` being the
        run's app folder as Flower extracted it there (by default :meth:`apps`)."""
        return self.apps()

    def deployment_options(self) -> dict[str, Any]:
        """Keyword arguments of :func:`.deployed_run.run_deployed` beyond the run's own: the
        ``timeout``, and for a user's app its folder (``source``, ``project``) or the
        ``pythonpath`` its modules import from."""
        return {"timeout": DEPLOYMENT_SECONDS}

    def run(self, federation: Federation, backend: MaskingBackend,
            defenses: Sequence[Defense] = ()) -> Outcome:
        require_flower()
        clients = [p.name for p in federation.data_parties()]
        where = spool.make_spool()
        try:
            self.prepare(where, federation)
            for partition, name in enumerate(clients):
                spool.save_seed(where, partition, spool.party_seed(federation.secret_seed, name))
            config = {**self.run_config(federation), spool.SPOOL_KEY: str(where),
                      spool.SEED_KEY: spool.party_seed(federation.secret_seed, SERVER)}
            engine = getattr(self.params, "engine", SIMULATION)
            if engine == DEPLOYMENT:
                recorder, context = self._deploy(federation, clients, where, config)
            else:
                recorder = Recorder(federation.network, SERVER, clients)
                server_app, client_app = self.apps()
                federation.report(f"running the Flower app with {len(clients)} simulated "
                                  "clients", every=0.0)
                context = run_recorded(server_app, client_app, recorder, config).context
            summary = cross_check(where, recorder)
            for party, held in collect_truth(where, recorder).items():
                federation.party(party).private.update(held)
            nodes = {recorder.names[node]: (str(node), recorder.partitions[node])
                     for node in sorted(recorder.names, key=recorder.partitions.__getitem__)}
            outcome = self.outcome(context, federation, summary)
        finally:
            try:  # the logs explain a failed run best: kept whatever happened
                spool.keep_logs(where, federation.log_folder)
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

    def _deploy(self, federation: Federation, clients: list[str], where: Path,
                config: dict[str, Any]) -> tuple[Recorder, Any]:
        """Run in the deployment engine, then replay what its ServerApp recorded through
        ``federation.network``: the recorder and the ServerApp's context."""
        from fedsec.protocols.flower.deployed_run import run_deployed
        from fedsec.protocols.flower.relay import replay

        spec = {"protocol": self.name, "params": params_dict(self.params)}
        run_deployed(spec, config, len(clients), where,
                     report=lambda text: federation.report(text, every=0.0),
                     **self.deployment_options())
        return replay(where, federation.network, clients, config)
