"""An audit's cells on a Dask cluster (``fedsec audit --executor dask``).

`distributed <https://distributed.dask.org>`_ (the ``dask`` extra) runs the cells; this process
stays the audit's client: it holds the output folder and writes each cell's file atomically as
its result arrives, so resuming, ``--cell``, ``--fail-if`` and the report work as with the local
pool. Without a scheduler address it starts a :class:`~distributed.LocalCluster` on 127.0.0.1
(one single-threaded worker process per job, no dashboard) and stops it at the end.

A Dask scheduler runs whatever code its clients send on its workers, so the local cluster is
closed to every other process: its scheduler and workers listen on 127.0.0.1 only, on ports
the system picks (none of Dask's defaults, 8786 and 8787, is taken), and speak TLS with
credentials made for this audit alone (:meth:`distributed.Security.temporary`: a certificate
authority and keys held in this process's memory and handed to the workers it starts). A
process that connects without them is refused at the TLS handshake.

A cluster of your own (``--scheduler``) is as safe as you set it up: give a ``tls://``
address and the client's credentials in Dask's configuration (``distributed.comm.tls.ca-file``,
``distributed.comm.tls.client.cert`` and ``.key``, and ``distributed.comm.require-encryption``,
in a YAML file of ``~/.config/dask/`` or as ``DASK_DISTRIBUTED__COMM__TLS__CA_FILE=...``
environment variables); :func:`dask_results` takes them from there, or from ``security``. A
``tcp://`` scheduler authenticates no one: ``fedsec audit`` warns about it.

Each worker is set up by :class:`FedsecWorkerSetup`, as the local pool's workers are: one thread
for the linear-algebra libraries (PyTorch's threads and deterministic algorithms are set around
each model by :func:`fedsec.nn.deterministic`). A worker whose fedsec or result-shaping
libraries (:func:`fedsec.results.versions`) differ from the client's is refused, naming them.

What a worker needs, besides fedsec, distributed and the same library versions:

- the scenario's own ``module:Class`` components, at the scenario folder's absolute path (a
  shared file system) or installed as a package on the worker;
- the files the scenario names, a CSV dataset or a ``split_file``, at the same path as on the
  client (a relative CSV path is read from the worker's working directory: name it absolutely);
- PyTorch (the ``nn`` extra) when a cell needs it.

Something missing on a worker fails the cells it ran with the worker's own error, recorded in
their files; the others run on, and rerunning the audit retries only the failed ones.

Stopping the client (Ctrl-C, SIGTERM: :mod:`fedsec.cli.signals`) cancels the audit's tasks on
the scheduler and stops a local cluster before the command ends; a remote cluster stays up.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from distributed import Client, LocalCluster, Security, WorkerPlugin, as_completed

from fedsec.audit.cell import failed_cell, run_cell
from fedsec.audit.spec import AuditSpec, Cell, parse_spec
from fedsec.errors import ValidationError
from fedsec.results import versions

#: seconds to reach the scheduler, and to wait for its first worker
CONNECT_TIMEOUT = 30.0
WORKER_TIMEOUT = 60.0
PLUGIN_NAME = "fedsec-worker-setup"
#: where a local cluster listens
LOCAL_HOST = "127.0.0.1"

#: why this worker refuses cells (set by :class:`FedsecWorkerSetup`), None when it accepts them
_REFUSAL: str | None = None
#: the scenarios this worker has parsed, by digest
_SPECS: dict[str, AuditSpec] = {}


class WorkerRefusedError(ValidationError):
    """A Dask worker cannot run the audit's cells (its versions differ from the client's)."""


def version_differences(client: Mapping[str, str], worker: Mapping[str, str]) -> list[str]:
    """What differs between the client's and a worker's versions, one entry per package.

    Examples
    --------
    >>> version_differences({"fedsec": "0.1.0", "numpy": "2.1"},
    ...                     {"fedsec": "0.1.0", "numpy": "1.26"})
    ['numpy 1.26 (client: 2.1)']
    """
    return [f"{name} {worker.get(name, 'not installed')} (client: {version})"
            for name, version in sorted(client.items()) if worker.get(name) != version]


class FedsecWorkerSetup(WorkerPlugin):
    """Set a Dask worker up to run audit cells: check its versions, limit its threads.

    The thread limits are given back when the plugin is removed or the worker closes.
    """

    name = PLUGIN_NAME

    def __init__(self, client_versions: Mapping[str, str]) -> None:
        self.client_versions = dict(client_versions)
        self._limits: Any = None

    def setup(self, worker: Any) -> None:
        global _REFUSAL
        differences = version_differences(self.client_versions, versions())
        if differences:
            _REFUSAL = (f"Dask worker {worker.address} is refused: its versions differ from "
                        f"the client's: {'; '.join(differences)}. Install the client's "
                        "versions on every worker.")
            raise WorkerRefusedError(_REFUSAL)
        _REFUSAL = None
        from threadpoolctl import threadpool_limits

        self._limits = threadpool_limits(1)

    def teardown(self, worker: Any) -> None:
        if self._limits is not None:
            self._limits.restore_original_limits()
            self._limits = None


def dask_results(spec: AuditSpec, todo: list[Cell], *, jobs: int, scheduler: str | None,
                 commands: Mapping[str, str], security: Security | None = None
                 ) -> Iterator[dict[str, Any]]:
    """Each cell's result, in the order they finish, run on ``scheduler`` (an address such as
    ``tls://host:8786``, reached with ``security`` or else the credentials of Dask's
    configuration) or on a local cluster of ``jobs`` worker processes (TLS, with credentials
    of its own).

    ``commands`` maps each cell's id to the command that reruns it alone.
    """
    with connected(scheduler, jobs, security) as client:
        _check_versions(client)
        client.register_plugin(FedsecWorkerSetup(versions()), name=PLUGIN_NAME)
        arguments = (dict(spec.raw), spec.source, spec.base_dir, spec.secret_seed)
        run = uuid.uuid4().hex[:8]
        futures = {client.submit(run_cell_task, *arguments, cell.id, commands[cell.id],
                                 key=f"fedsec-cell-{cell.id}-{run}", pure=False): cell
                   for cell in todo}
        try:
            for future in as_completed(futures):
                cell = futures[future]
                if future.status == "finished":
                    yield future.result()
                    continue
                error = None if future.cancelled() else future.exception()
                why = ("cancelled by the scheduler" if error is None
                       else f"{type(error).__name__}: {error}")
                yield failed_cell(spec, cell, commands[cell.id], f"on a Dask worker: {why}")
        finally:
            client.cancel(list(futures))


@contextlib.contextmanager
def connected(scheduler: str | None, jobs: int,
              security: Security | None = None) -> Iterator[Client]:
    """A client of ``scheduler`` (with ``security``, or Dask's configured credentials), or of
    a local cluster started (and stopped) here: ``jobs`` workers on 127.0.0.1, every link TLS
    with credentials made for it alone, no port of Dask's defaults taken."""
    where = ("a local Dask cluster" if scheduler is None
             else f"the Dask scheduler at {scheduler}")
    with contextlib.ExitStack() as stack:
        try:
            if scheduler is None:
                own = Security.temporary()
                cluster = stack.enter_context(LocalCluster(
                    n_workers=jobs, threads_per_worker=1, processes=True, host=LOCAL_HOST,
                    protocol="tls://", security=own, scheduler_port=0,
                    dashboard_address=None, worker_dashboard_address=None,
                    # the scheduler serves its health routes even without a dashboard:
                    # on a port of its own, not Dask's default 8787
                    scheduler_kwargs={"dashboard_address": f"{LOCAL_HOST}:0"},
                    memory_limit=0))
                client = stack.enter_context(Client(cluster, security=own,
                                                    timeout=CONNECT_TIMEOUT))
            else:
                client = stack.enter_context(Client(scheduler, security=security,
                                                    timeout=CONNECT_TIMEOUT))
            client.wait_for_workers(1, timeout=WORKER_TIMEOUT)
        except TypeError as error:  # distributed's word for missing TLS credentials
            if "TLS" not in str(error):
                raise
            raise ValidationError(f"Could not run on {where}: it speaks TLS and this client "
                                  "has no credentials for it; set them in Dask's configuration "
                                  "(distributed.comm.tls.ca-file, distributed.comm.tls.client."
                                  "cert and .key).") from None
        except (OSError, TimeoutError) as error:
            raise ValidationError(f"Could not run on {where}: {error}. Check that the "
                                  "scheduler runs and has workers ('dask scheduler', then "
                                  "'dask worker ADDRESS' on each machine), and, for tls://, "
                                  "the credentials in Dask's configuration.") from None
        yield client


def unauthenticated(scheduler: str | None) -> str | None:
    """A warning when ``scheduler`` is reached without TLS (anyone who reaches it can run
    code on its workers), else None.

    Examples
    --------
    >>> unauthenticated("tls://10.0.0.5:8786") is None
    True
    >>> print(unauthenticated("tcp://10.0.0.5:8786"))  # doctest: +ELLIPSIS
    the Dask scheduler at tcp://10.0.0.5:8786 authenticates no one: ...
    """
    if scheduler is None or scheduler.startswith("tls://"):
        return None
    return (f"the Dask scheduler at {scheduler} authenticates no one: any process that "
            "reaches it can run code on its workers, and read the audit's data; give a "
            "tls:// address with credentials in Dask's configuration "
            "(distributed.comm.tls.*)")


def _check_versions(client: Client) -> None:
    """Refuse the cluster when a worker lacks fedsec or has other versions than the client."""
    try:
        found = client.run(versions)
    except ImportError as error:
        raise WorkerRefusedError(f"A Dask worker cannot import fedsec ({error}): install the "
                                 "client's fedsec on every worker.") from None
    mine = versions()
    refused = [f"{address}: {'; '.join(differences)}" for address, theirs in sorted(found.items())
               if (differences := version_differences(mine, theirs))]
    if refused:
        raise WorkerRefusedError("Dask workers refused: their versions differ from the "
                                 f"client's: {' | '.join(refused)}. Install the client's "
                                 "versions on every worker.")


def run_cell_task(raw: dict[str, Any], source: str, base_dir: str,
                  secret_seed: int | None, cell_id: str, command: str) -> dict[str, Any]:
    """On a worker: one cell's result (the scenario is parsed once per worker; the audit's
    secret seed travels with each task, over the cluster's TLS)."""
    if _REFUSAL is not None:
        raise WorkerRefusedError(_REFUSAL)
    key = hashlib.blake2b(json.dumps([raw, source, base_dir, secret_seed], sort_keys=True,
                                     default=str).encode(), digest_size=16).hexdigest()
    spec = _SPECS.get(key)
    if spec is None:
        spec = replace(parse_spec(raw, source=source, base_dir=base_dir),
                       secret_seed=secret_seed)
        _SPECS.clear()  # one audit at a time per worker, usually
        _SPECS[key] = spec
    cell = next((c for c in spec.cells() if c.id == cell_id), None)
    if cell is None:
        raise ValidationError(f"The worker's reading of {source} has no cell {cell_id}: the "
                              "scenario parses differently there (other versions?).")
    return run_cell(spec, cell, command=command)
