"""Parties as processes: the same transcript as in one process, checked at both ends of
every link, and a run that fails in bounded time when a party's process dies or hangs."""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fedsec.errors import TransportError, ValidationError
from fedsec.runner import RunConfig, run
from fedsec.testing import assert_same_transcript
from fedsec.transcript import check_file, read_transcript
from fedsec.transport.logs import check_party_logs, log_file, transcript_entries
from fedsec.transport.tcp import TcpTransport

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="signals of POSIX")


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


@pytest.mark.parametrize(("protocol", "dataset"), [
    ("secure-sum", "iris"), ("fedcg-secure", "iris"), ("fdskl", "iris:positive=setosa"),
])
def test_the_same_seed_gives_the_same_transcript_as_in_one_process(
        protocol: str, dataset: str) -> None:
    config = RunConfig(protocol=protocol, dataset=dataset, seed=4, secret_seed=41, reference=False)
    transport = TcpTransport(timeout=30)
    over_tcp = run(config, transport=transport)
    in_process = run(config)
    assert_same_transcript(over_tcp.transcript, in_process.transcript)
    for a, b in zip(over_tcp.transcript.messages, in_process.transcript.messages, strict=True):
        assert (a.meta_json, a.size, a.kind, a.dtype, a.shape) == (
            b.meta_json, b.size, b.kind, b.dtype, b.shape)
    # the transcript is the merge of the party logs (checked again from the transcript itself)
    described = over_tcp.record.transport
    assert described is not None
    n_cross = sum(m.sender != m.receiver for m in in_process.transcript.messages)
    assert described["messages_on_sockets"] == n_cross
    assert described["digests_matched"] == len(in_process.transcript)
    assert described["socket_bytes"] > over_tcp.record.total_cost["bytes"]  # headers, framing
    assert all(_gone(pid) for pid in transport.pids.values())


def test_the_party_logs_of_a_run_agree_with_its_transcript_file(tmp_path: Path) -> None:
    config = RunConfig(protocol="secure-sum", dataset="iris", reference=False)
    run(config, tmp_path, transport=TcpTransport(timeout=30))
    transcript = read_transcript(tmp_path / "transcript.arrow")
    parties = list(transcript.header["parties"])
    logs = tmp_path / "parties"
    assert check_party_logs(transcript_entries(transcript), logs, parties) == sum(
        1 if m.sender == m.receiver else 2 for m in transcript.messages)
    # a log edited afterwards no longer agrees
    party = next(m.receiver for m in transcript.messages if m.sender != m.receiver)
    path = log_file(logs, party)
    lines = path.read_text().splitlines()
    row = json.loads(lines[0])
    row["digest"] = "0" * 64
    path.write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n")
    with pytest.raises(TransportError, match=f"'{party}'.*message {row['seq']}"):
        check_party_logs(transcript_entries(transcript), logs, parties)


def _fault(sig: signal.Signals, party: str, after: int, seen: dict[str, int]):
    def hook(transport: TcpTransport, n: int) -> None:
        seen.update(transport.pids)
        if n == after:
            os.kill(transport.pids[party], sig)
    return hook


@pytest.mark.parametrize(("sig", "timeout", "says"), [
    (signal.SIGKILL, 20.0, "was killed by SIGKILL"),
    (signal.SIGSTOP, 1.5, "did not answer within 1.5 s"),
], ids=["killed", "stopped"])
def test_a_party_process_that_dies_or_hangs_fails_the_run_naming_it(
        tmp_path: Path, sig: signal.Signals, timeout: float, says: str) -> None:
    seen: dict[str, int] = {}
    transport = TcpTransport(timeout=timeout, on_delivered=_fault(sig, "hospital2", 30, seen))
    config = RunConfig(protocol="fedcg-secure", dataset="iris", reference=False)
    started = time.monotonic()
    with pytest.raises(TransportError, match="party 'hospital2'") as caught:
        run(config, tmp_path, transport=transport)
    assert time.monotonic() - started < timeout + 30  # start-up, then at most one wait
    assert says in str(caught.value)
    assert all(_gone(pid) for pid in seen.values())  # no party process outlives the run
    verdict = check_file(tmp_path / "transcript.arrow")
    assert verdict.status == "aborted"
    assert verdict.report is not None and verdict.report.n_messages >= 30
    inspect = subprocess.run([sys.executable, "-m", "fedsec.cli.main", "inspect",
                              str(tmp_path / "transcript.arrow")],
                             capture_output=True, text=True, timeout=120, check=False)
    assert "aborted" in inspect.stdout and "internal error" not in inspect.stderr


def test_a_transport_timeout_must_be_positive() -> None:
    with pytest.raises(ValidationError, match="'timeout' parameter of the tcp transport"):
        TcpTransport(timeout=0)


def _scan(ports: dict[str, int], silent: list[socket.socket]) -> None:
    """What a port scanner or a stranger does to every listener: connect and close, announce
    a 2 GiB frame, send garbage, and connect and stay silent (kept open)."""
    for port in ports.values():
        with socket.create_connection(("127.0.0.1", port)):
            pass
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(struct.pack("!I", 1 << 31) + b"\x00" * 64)
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(struct.pack("!i", -1) + struct.pack("!Q", 1 << 40))
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(b"GET / HTTP/1.0\r\n\r\n")
        silent.append(socket.create_connection(("127.0.0.1", port)))


def test_a_scan_of_every_listener_during_a_run_does_not_harm_it() -> None:
    config = RunConfig(protocol="fedcg-secure", dataset="iris", seed=2, secret_seed=13,
                       reference=False)
    silent: list[socket.socket] = []

    def scan(transport: TcpTransport, n: int) -> None:
        if n in (1, 20):  # before most links are opened, and again later
            _scan(transport.ports, silent)

    transport = TcpTransport(timeout=20, handshake_timeout=0.5, on_delivered=scan)
    try:
        over_tcp = run(config, transport=transport)
        # the silent connections were dropped at the handshake's deadline
        for sock in silent:
            sock.settimeout(5)
            while sock.recv(4096):  # the challenge, then the end
                pass
    finally:
        for sock in silent:
            sock.close()
    assert_same_transcript(over_tcp.transcript, run(config).transcript)
    described = over_tcp.record.transport
    assert described is not None
    n_parties = len(transport.ports)
    assert described["connections_dropped"] >= 2 * 5 * n_parties - n_parties
    assert all(_gone(pid) for pid in transport.pids.values())


def test_a_flood_of_silent_strangers_delays_the_peers_but_never_fails_the_run() -> None:
    """More silent connections on every listener than it greets at once: the peers' first
    attempts are closed, they try again once the strangers are dropped, and the run ends
    with the transcript it would have had."""
    from fedsec.transport.party import MAX_GREETINGS

    config = RunConfig(protocol="secure-sum", dataset="iris", secret_seed=5, reference=False)
    silent: list[socket.socket] = []

    def flood(transport: TcpTransport, n: int) -> None:
        if n == 1:
            for port in transport.ports.values():
                silent.extend(socket.create_connection(("127.0.0.1", port))
                              for _ in range(MAX_GREETINGS + 8))

    transport = TcpTransport(timeout=30, handshake_timeout=1.0, on_delivered=flood)
    try:
        over_tcp = run(config, transport=transport)
    finally:
        for sock in silent:
            sock.close()
    assert_same_transcript(over_tcp.transcript, run(config).transcript)
    described = over_tcp.record.transport
    assert described is not None
    assert described["connections_dropped"] >= len(silent)
