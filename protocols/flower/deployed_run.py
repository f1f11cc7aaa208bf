"""One run of Flower's deployment engine, from start to stop (:func:`run_deployed`); the
processes, certificates and app folder are :mod:`.deployment`'s."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from fedsec.errors import FedsecError
from fedsec.protocols.flower.deployment import (
    CONNECTION,
    HOST,
    Processes,
    StartError,
    free_port,
    open_private,
    tail,
    write_app,
    write_tls,
)

ATTEMPTS = 3
"""Starts of a SuperLink or SuperNode tried, each on a new free port, when its port was
taken by another process between fedsec finding it free and Flower binding it."""
CLI_SECONDS = 120.0
FINISHED = "finished:"
COMPLETED = "finished:completed"


def executable(name: str) -> str:
    """The path of one of Flower's executables, or FedsecError naming the extra."""
    found = shutil.which(name)
    if found is None:
        raise FedsecError(f"Flower's '{name}' executable is not on PATH; the deployment engine "
                          'needs Flower installed in this environment: pip install '
                          '"fedsec[flower]".')
    return found


def run_deployed(spec: Mapping[str, Any], run_config: Mapping[str, Any], n_clients: int,
                 where: Path, *, timeout: float, source: Path | None = None,
                 project: Mapping[str, Any] | None = None, pythonpath: Sequence[str] = (),
                 report: Callable[[str], None] | None = None) -> None:
    """Run the app ``spec`` names (``{"protocol": name, "params": {...}}``) with
    ``run_config`` on a SuperLink and ``n_clients`` SuperNodes, TLS throughout, and return
    once it finished; what it recorded is in the spool ``where``.

    Raises FedsecError (quoting the log that explains it) when a process does not start,
    one ends during the run, the run fails or it outlasts ``timeout`` seconds. Every process
    started is stopped before returning or raising.
    """
    say = report or (lambda _text: None)
    home = where / "flwr-home"
    home.mkdir(mode=0o700)
    logs = where / "logs"
    tls = write_tls(where / "tls")
    app = write_app(where / "app", spec, run_config, source=source, project=project)
    env = {**os.environ, "FLWR_HOME": str(home), "FLWR_TELEMETRY_ENABLED": "0",
           "FLWR_DISABLE_UPDATE_CHECK": "1", "FLWR_DISABLE_RUNTIME_DEPENDENCY_INSTALLATION": "1"}
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join([*pythonpath, *filter(None, [
            env.get("PYTHONPATH")])])
    processes = Processes(logs, env)
    try:
        say(f"starting a Flower SuperLink and {n_clients} SuperNodes on {HOST} (TLS)")
        link = _start(processes, {"superlink": lambda port: [
            executable("flower-superlink"), "--ssl-certfile", str(tls["cert"]),
            "--ssl-keyfile", str(tls["key"]), "--ssl-ca-certfile", str(tls["ca"]),
            "--host", HOST, "--port", str(port), "--disable-runtime-dependency-installation"]},
            lambda port: (f"running on https://{HOST}:{port}",))["superlink"]
        def supernode(i: int, port: int) -> list[str]:
            return [executable("flower-supernode"), "--root-certificates", str(tls["ca"]),
                    "--ssl-certfile", str(tls["cert"]), "--ssl-keyfile", str(tls["key"]),
                    "--ssl-ca-certfile", str(tls["ca"]), "--superlink", f"{HOST}:{link}",
                    "--host", HOST, "--port", str(port),
                    "--node-config", f"partition-id={i} num-partitions={n_clients}"]

        _start(processes, {f"supernode-{i}": partial(supernode, i) for i in range(n_clients)},
               lambda port: (f"running on https://{HOST}:{port}", "SuperNode ID:"))
        (home / "config.toml").write_text(
            f'[superlink]\ndefault = "{CONNECTION}"\n\n[superlink.{CONNECTION}]\n'
            f'address = "{HOST}:{link}"\nroot-certificates = {json.dumps(str(tls["ca"]))}\n')
        run_id = _submit(app, env, logs)
        say(f"running the Flower app (run {run_id}) in the deployment engine")
        _follow(run_id, env, logs, processes, timeout)
        status = _status(run_id, env, logs)
        if status != COMPLETED:
            raise FedsecError(f"The Flower run ended {status!r}, not completed:\n"
                              f"{tail(logs / 'serverapp.log')}")
    finally:
        processes.stop()


def _start(processes: Processes, commands: Mapping[str, Callable[[int], list[str]]],
           ready: Callable[[int], Sequence[str]]) -> dict[str, int]:
    """Start every command at once, each on a free port, and wait until each is ready; one
    whose port was taken meanwhile is started again on a new one. Each one's port."""
    ports = {name: free_port() for name in commands}
    for name, command in commands.items():
        processes.launch(name, command(ports[name]))
    for name, command in commands.items():
        for attempt in range(ATTEMPTS):
            try:
                processes.wait_ready(name, ready(ports[name]))
                break
            except StartError as error:
                if not error.port_clash or attempt == ATTEMPTS - 1:
                    raise
                ports[name] = free_port()
                processes.launch(name, command(ports[name]))
    return ports


def _cli(arguments: Sequence[str], env: Mapping[str, str], logs: Path,
         what: str) -> str:
    """Run ``flwr ARGUMENTS``; its output (kept in ``logs/flwr.log``) or FedsecError."""
    command = [executable("flwr"), *arguments]
    done = subprocess.run(  # noqa: S603 (Flower's own CLI)
        command, env=dict(env), stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=CLI_SECONDS, check=False)
    with open_private(logs / "flwr.log", "a") as log:
        log.write(f"$ flwr {' '.join(arguments)}\n{done.stdout}{done.stderr}\n")
    if done.returncode != 0:
        raise FedsecError(f"'flwr {arguments[0]}' failed while {what} (exit code "
                          f"{done.returncode}):\n{tail(logs / 'flwr.log')}")
    return done.stdout


def _json_of(output: str, what: str, logs: Path) -> dict[str, Any]:
    start = output.find("{")
    try:
        value = json.loads(output[start:]) if start >= 0 else None
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict) or value.get("success") is False:
        raise FedsecError(f"'flwr' answered no {what}:\n{tail(logs / 'flwr.log')}")
    return value


def _submit(app: Path, env: Mapping[str, str], logs: Path) -> int:
    answer = _json_of(_cli(["run", str(app), CONNECTION, "--format", "json"], env, logs,
                           "submitting the app"), "run id", logs)
    return int(answer["run-id"])


def _follow(run_id: int, env: Mapping[str, str], logs: Path, processes: Processes,
            timeout: float) -> None:
    """Stream the run's log (the ServerApp's output) to ``logs/serverapp.log`` until the run
    ends; FedsecError if a SuperLink or SuperNode ends first or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    with open_private(logs / "serverapp.log", "ab") as log:
        follower = subprocess.Popen(  # noqa: S603 (Flower's own CLI)
            [executable("flwr"), "log", str(run_id), CONNECTION, "--stream"], env=dict(env),
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    try:
        while follower.poll() is None:
            processes.check_alive()
            if time.monotonic() > deadline:
                raise FedsecError(f"The Flower run did not end within {timeout:g} s (the "
                                  f"'timeout' parameter):\n{tail(logs / 'serverapp.log')}")
            time.sleep(0.2)
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()
    # the stream ends with the run; its status may lag behind by a moment
    while not _status(run_id, env, logs).startswith(FINISHED):
        processes.check_alive()
        if time.monotonic() > deadline:
            raise FedsecError(f"The Flower run did not end within {timeout:g} s.")
        time.sleep(0.5)


def _status(run_id: int, env: Mapping[str, str], logs: Path) -> str:
    answer = _json_of(_cli(["ls", CONNECTION, "--run-id", str(run_id), "--format", "json"],
                           env, logs, "asking how the run ended"), "run status", logs)
    runs = answer.get("runs") or []
    if not runs:
        raise FedsecError(f"'flwr ls' does not know run {run_id}:\n{tail(logs / 'flwr.log')}")
    return str(runs[0].get("status", ""))
