"""Signed transcripts: a re-chained edit passes the chain but not the signature."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from fedsec.errors import ValidationError
from fedsec.transcript import Transcript, TranscriptWriter, check_file, read_transcript
from fedsec.transcript.arrow_format import bare_schema
from fedsec.transcript.batch_chain import BatchChain
from fedsec.transcript.message import canonical_json, seal
from fedsec.transcript.payload import encode
from fedsec.transcript.signing import load_signing_key, load_verify_key
from fedsec.transcript.sink import to_batch

HEADER = {"protocol": {"name": "demo"}, "parties": {"a": "client", "b": "server"}, "seed": 1}


def keypair(folder: Path, name: str = "key") -> tuple[Path, Path]:
    key = Ed25519PrivateKey.generate()
    private = folder / f"{name}.pem"
    public = folder / f"{name}.pub.pem"
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    public.write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return private, public


def signed_transcript(path: Path, key: Path) -> None:
    writer = TranscriptWriter(HEADER, path, sign_key=load_signing_key(key))
    for i in range(4):
        writer.record(round=i, phase="p", sender="a", receiver="b", tag="t",
                      payload=np.arange(3.0) * i)
    writer.close()


def rechained(transcript: Transcript) -> Transcript:
    """Message 1's payload edited, and the chain value and the seal recomputed, as anyone can
    (the algorithm is open); the old signature is kept."""
    messages = list(transcript.messages)
    messages[1] = messages[1]._replace(payload=np.array([9.0, 9.0, 9.0]))
    out = [m._replace(size=len(encode(m.payload)[3])) for m in messages]
    chain = BatchChain(canonical_json(dict(transcript.header)))
    chain.add(to_batch([(m, encode(m.payload)[3]) for m in out], bare_schema()))
    head = chain.head()
    footer = dict(transcript.footer or {})
    footer["head"] = head.hex()
    footer["end"] = seal(head, footer).hex()
    return replace(transcript, messages=tuple(out), footer=footer, checkpoints=())


def test_a_rechained_edit_passes_the_chain_but_not_the_signature(tmp_path: Path) -> None:
    private, public = keypair(tmp_path)
    signed_transcript(tmp_path / "t.arrow", private)
    key = load_verify_key(public)
    assert check_file(tmp_path / "t.arrow", verify_key=key).status == "intact"
    rechained(read_transcript(tmp_path / "t.arrow")).save(tmp_path / "forged.arrow")
    assert check_file(tmp_path / "forged.arrow").status == "intact"  # the chain alone
    verdict = check_file(tmp_path / "forged.arrow", verify_key=key)
    assert verdict.status == "tampered" and "edited after signing" in verdict.summary()


def test_another_key_or_no_signature_is_refused(tmp_path: Path) -> None:
    private, _ = keypair(tmp_path)
    _, other = keypair(tmp_path, "other")
    signed_transcript(tmp_path / "t.arrow", private)
    verdict = check_file(tmp_path / "t.arrow", verify_key=load_verify_key(other))
    assert verdict.status == "tampered" and "not by the given key" in verdict.summary()
    writer = TranscriptWriter(HEADER, tmp_path / "u.arrow")
    writer.close()
    verdict = check_file(tmp_path / "u.arrow", verify_key=load_verify_key(other))
    assert verdict.status == "tampered" and "not signed" in verdict.summary()
    # a private key file also gives its public half
    assert check_file(tmp_path / "t.arrow", verify_key=load_verify_key(private)).ok


def test_keys_that_are_not_ed25519_pem_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "junk.pem").write_text("not a key")
    with pytest.raises(ValidationError, match="not an unencrypted PEM private key"):
        load_signing_key(tmp_path / "junk.pem")
    with pytest.raises(ValidationError, match="Cannot read the key"):
        load_verify_key(tmp_path / "missing.pem")


def test_run_signs_and_inspect_verifies_from_the_command_line(tmp_path: Path) -> None:
    private, public = keypair(tmp_path)
    fedsec = [sys.executable, "-m", "fedsec.cli.main"]
    proc = subprocess.run([*fedsec, "run", "secure-sum", "--out", str(tmp_path / "run"),
                           "--sign-key", str(private)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([*fedsec, "inspect", str(tmp_path / "run" / "transcript.arrow"),
                           "--verify-key", str(public)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0 and "intact" in proc.stdout
    proc = subprocess.run([*fedsec, "inspect", str(tmp_path / "run" / "transcript.arrow"),
                           "--verify-key", str(tmp_path / "nope.pem")], capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1
