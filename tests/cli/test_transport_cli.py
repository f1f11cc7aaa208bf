"""``fedsec run --transport tcp``, by subprocess as a user would run it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from fedsec.transcript import read_transcript
from fedsec.transcript.damage import fingerprint

FEDSEC = [sys.executable, "-m", "fedsec.cli.main"]


def fedsec(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*FEDSEC, *args], capture_output=True, text=True, timeout=300,
                          check=False)


def test_fedcg_over_tcp_gives_the_in_process_digest_chain(tmp_path: Path) -> None:
    heads = {}
    for transport in ("inproc", "tcp"):
        out = tmp_path / transport
        proc = fedsec("run", "fedcg-secure", "--dataset", "iris", "--transport", transport,
                      "--secret-seed", "12", "--out", str(out))
        assert proc.returncode == 0, proc.stderr
        transcript = read_transcript(out / "transcript.arrow")
        assert transcript.verify().ok
        # the chain value after every message (format 4 chains them a batch at a time) and
        # everything it covers, message by message
        heads[transport] = (transcript.footer["head"] if transcript.footer else None,
                            fingerprint(transcript))
        record = json.loads((out / "result.json").read_text())
        assert record["transcript"]["head"] == heads[transport][0]
    assert heads["tcp"] == heads["inproc"]
    assert "digests matched for all" in proc.stdout
    assert record["transport"]["kind"] == "tcp"
    assert sorted(p.name for p in (tmp_path / "tcp" / "parties").iterdir()) == [
        "centre1.log", "centre2.log", "hospital1.log", "hospital2.log", "server.log"]
    assert not (tmp_path / "inproc" / "parties").exists()


def test_a_bad_transport_timeout_is_a_usage_error(tmp_path: Path) -> None:
    proc = fedsec("run", "secure-sum", "--transport", "tcp", "--transport-timeout", "-1",
                  "--out", str(tmp_path))
    assert proc.returncode == 2
    assert "'timeout' parameter of the tcp transport" in proc.stderr
