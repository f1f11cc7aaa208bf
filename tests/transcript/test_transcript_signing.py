"""Signed transcripts: a re-chained edit passes the chain but not the signature, whatever
format it is re-chained as (the downgrade forgery), and whatever header field it changes."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import warnings
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from fedsec.cli.main import main
from fedsec.errors import ValidationError
from fedsec.transcript import (
    STATUSES,
    Transcript,
    TranscriptWriter,
    check_file,
    read_transcript,
)
from fedsec.transcript.arrow_format import bare_schema
from fedsec.transcript.batch_chain import BatchChain
from fedsec.transcript.damage import (
    EDITS,
    FORGERIES,
    MUTATIONS,
    fingerprint,
    mutate,
    rechain,
)
from fedsec.transcript.message import canonical_json, seal
from fedsec.transcript.payload import encode
from fedsec.transcript.signing import KeyFileWarning, load_signing_key, load_verify_key
from fedsec.transcript.sink import to_batch

HEADER = {"protocol": {"name": "demo"}, "parties": {"a": "client", "b": "server"}, "seed": 1}


def keypair(folder: Path, name: str = "key") -> tuple[Path, Path]:
    key = Ed25519PrivateKey.generate()
    private = folder / f"{name}.pem"
    public = folder / f"{name}.pub.pem"
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                          serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))
    private.chmod(0o600)
    public.write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return private, public


def signed_transcript(path: Path, key: Path) -> None:
    writer = TranscriptWriter(HEADER, path, sign_key=load_signing_key(key))
    for i in range(4):
        writer.record(round=i, phase="p", sender="a", receiver="b", tag="t",
                      payload=np.arange(3.0) * i)
    writer.close()


def rechained(transcript: Transcript, header: dict[str, Any] | None = None) -> Transcript:
    """Message 1's payload edited (or the header replaced by ``header``), and the chain value
    and the seal recomputed, as anyone can (the algorithm is open); the old signature is
    kept."""
    messages = list(transcript.messages)
    if header is None:
        messages[1] = messages[1]._replace(payload=np.array([9.0, 9.0, 9.0]))
    else:
        transcript = replace(transcript, header=header)
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


@cache
def signed_bytes_and_key() -> tuple[bytes, bytes]:
    """A signed format-4 transcript of eight messages over three batches, and the PEM of its
    public key."""
    with tempfile.TemporaryDirectory() as tmp:
        private, public = keypair(Path(tmp))
        writer = TranscriptWriter(HEADER, Path(tmp) / "t.arrow", flush_rows=3,
                                  sign_key=load_signing_key(private))
        rng = np.random.default_rng(0)
        payloads = [rng.normal(size=(3, 2)), np.arange(5, dtype=np.int32), b"ciphertext",
                    np.array(True), rng.normal(size=40), np.zeros(0), b"", np.uint8(7)]
        for i, payload in enumerate(payloads):
            writer.record(round=i // 3, phase="main", sender="a" if i % 2 else "b",
                          receiver="b" if i % 2 else "a", tag=f"t{i % 3}", payload=payload,
                          meta={"i": i} if i % 2 else None)
        writer.close()
        return (Path(tmp) / "t.arrow").read_bytes(), public.read_bytes()


def signed_verdict(data: bytes, tmp: Path) -> tuple[str, str, str | None]:
    """The verdict without and with the key, and the fingerprint of what was read."""
    _, public = signed_bytes_and_key()
    (tmp / "key.pub.pem").write_bytes(public)
    (tmp / "t.arrow").write_bytes(data)
    key = load_verify_key(tmp / "key.pub.pem")
    plain = check_file(tmp / "t.arrow").status
    verdict = check_file(tmp / "t.arrow", verify_key=key)
    seen = None if verdict.transcript is None else fingerprint(verdict.transcript)
    assert check_file(tmp / "t.arrow", verify_key=key, keep_messages=False).status == \
        verdict.status  # the streaming check agrees
    return plain, verdict.status, seen


@pytest.mark.parametrize(("version", "end"), FORGERIES)
def test_no_rechained_forgery_of_any_format_passes_the_key(tmp_path: Path, version: str,
                                                           end: str) -> None:
    original, _ = signed_bytes_and_key()
    assert signed_verdict(original, tmp_path)[:2] == ("intact", "intact")
    forged = rechain(original, version, end, np.random.default_rng(1))
    plain, keyed, _ = signed_verdict(forged, tmp_path)
    assert keyed == "tampered"
    if end == "keep":  # the downgrade forgery: the old seal no longer matches, key or not
        assert plain == "tampered"
    if version in ("1", "2"):
        problems = check_file(tmp_path / "t.arrow",
                              verify_key=load_verify_key(tmp_path / "key.pub.pem")).summary()
        assert "cannot carry a sealed signature" in problems or "seal" in problems \
            or "end record" in problems


@pytest.mark.parametrize("version", ["1", "2", "3"])
def test_inspect_with_the_key_rejects_the_downgrade_forgery(tmp_path: Path, version: str,
                                                            capsys: pytest.CaptureFixture[str]
                                                            ) -> None:
    original, public = signed_bytes_and_key()
    (tmp_path / "key.pub.pem").write_bytes(public)
    for end in ("keep", "drop"):
        forged = tmp_path / f"forged-{end}.arrow"
        forged.write_bytes(rechain(original, version, end, np.random.default_rng(2)))
        assert main(["inspect", str(forged), "--verify-key", str(tmp_path / "key.pub.pem")]) == 1
        assert "tampered" in capsys.readouterr().out
    (tmp_path / "t.arrow").write_bytes(original)
    assert main(["inspect", str(tmp_path / "t.arrow"), "--verify-key",
                 str(tmp_path / "key.pub.pem")]) == 0


def header_changes() -> list[dict[str, Any]]:
    """HEADER with each field changed, added or removed."""
    out: list[dict[str, Any]] = [{**HEADER, "seed": 2}, {**HEADER, "extra": True},
                                 {k: v for k, v in HEADER.items() if k != "seed"},
                                 {**HEADER, "protocol": {"name": "other"}},
                                 {**HEADER, "parties": {"a": "server", "b": "client"}}]
    return out


@pytest.mark.parametrize("header", header_changes())
def test_a_change_to_any_header_field_of_a_signed_file_is_rejected(tmp_path: Path,
                                                                   header: dict[str, Any]
                                                                   ) -> None:
    private, public = keypair(tmp_path)
    signed_transcript(tmp_path / "t.arrow", private)
    forged = rechained(read_transcript(tmp_path / "t.arrow"), header=header)
    forged.save(tmp_path / "forged.arrow")
    assert check_file(tmp_path / "forged.arrow").status == "intact"  # the chain alone
    verdict = check_file(tmp_path / "forged.arrow", verify_key=load_verify_key(public))
    assert verdict.status == "tampered"


def test_the_format_version_is_signed(tmp_path: Path) -> None:
    from fedsec.transcript.signing import signature_problem

    private, public = keypair(tmp_path)
    signed_transcript(tmp_path / "t.arrow", private)
    transcript = read_transcript(tmp_path / "t.arrow")
    key = load_verify_key(public)
    assert signature_problem(transcript.footer, key, header=HEADER, version="4") is None
    assert signature_problem(transcript.footer, key, header=HEADER, version="3") is not None
    assert signature_problem(transcript.footer, key, header={**HEADER, "seed": 2},
                             version="4") is not None


def test_a_scheme_1_signature_still_verifies(tmp_path: Path) -> None:
    """Files signed before the format version was signed (over the seal alone)."""
    from fedsec.transcript.signing import LABEL

    key = Ed25519PrivateKey.generate()
    path = tmp_path / "t.arrow"
    writer = TranscriptWriter(HEADER, path)
    writer.record(round=0, phase="p", sender="a", receiver="b", tag="t", payload=np.ones(2))
    transcript = writer.close()
    footer = dict(transcript.footer or {})
    from fedsec.transcript.signing import fingerprint as key_fingerprint

    footer.update(signature=key.sign(LABEL + bytes.fromhex(footer["end"])).hex(),
                  signer=key_fingerprint(key.public_key()))
    replace(read_transcript(path), footer=footer).save(path)
    assert check_file(path, verify_key=key.public_key()).ok
    signed = path.read_bytes()
    for version, end in FORGERIES:  # the old scheme signed the seal alone
        path.write_bytes(rechain(signed, version, end, np.random.default_rng(0)))
        assert check_file(path, verify_key=key.public_key()).status == "tampered"


def test_a_shared_private_key_is_warned_about(tmp_path: Path) -> None:
    private, _ = keypair(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_signing_key(private)  # 0600: no warning
    private.chmod(0o644)
    with pytest.warns(KeyFileWarning, match="chmod 600"):
        load_signing_key(private)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_verify_key(private)  # reading its public half signs nothing


@settings(max_examples=150, deadline=None)
@given(kind=st.sampled_from(MUTATIONS + tuple(f"{v}:{e}" for v, e in FORGERIES)),
       seed=st.integers(0, 2**32 - 1))
def test_with_the_key_no_mutation_or_forgery_passes(kind: str, seed: int) -> None:
    original, _ = signed_bytes_and_key()
    rng = np.random.default_rng(seed)
    if ":" in kind:
        version, end = kind.split(":")
        data = rechain(original, version, end, rng)
    else:
        data = mutate(original, kind, rng)
    with tempfile.TemporaryDirectory() as tmp:
        _, intact = signed_verdict(original, Path(tmp))[1:]
        _, status, seen = signed_verdict(data, Path(tmp))
    if status == "intact":  # only what neither the chain nor the signature covers changed
        assert seen == intact and ":" not in kind


def test_attack_with_the_key_refuses_unsigned_wrongly_signed_and_forged_transcripts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    private, public = keypair(tmp_path)
    _, other = keypair(tmp_path, "other")
    signed, unsigned = tmp_path / "signed", tmp_path / "unsigned"
    assert main(["run", "secure-sum", "--out", str(signed), "--sign-key", str(private)]) == 0
    assert main(["run", "secure-sum", "--out", str(unsigned)]) == 0
    attack = ["--attack", "contribution-readout", "--as", "aggregator", "--json"]

    def attacked(folder: Path, key: Path | None) -> int:
        capsys.readouterr()
        keyed = [] if key is None else ["--verify-key", str(key)]
        return main(["attack", str(folder / "transcript.arrow"), *attack, *keyed])

    assert attacked(signed, public) == 0
    assert attacked(unsigned, None) == 0  # no key: as before
    assert attacked(unsigned, public) == 1
    assert "not signed" in capsys.readouterr().err
    assert attacked(signed, other) == 1
    assert "not by the given key" in capsys.readouterr().err
    forged = tmp_path / "forged"
    forged.mkdir()
    (forged / "transcript.arrow").write_bytes(rechain(
        (signed / "transcript.arrow").read_bytes(), "2", "drop", np.random.default_rng(0)))
    assert attacked(forged, None) == 0  # the chain alone cannot tell
    assert attacked(forged, public) == 1
    assert "cannot carry a sealed signature" in capsys.readouterr().err


#: files of the slow campaign (FEDSEC_FUZZ_FILES lowers it for a quick look)
CAMPAIGN_FILES = int(os.environ.get("FEDSEC_FUZZ_FILES", "10000"))


@pytest.mark.slow
def test_a_campaign_of_ten_thousand_mutated_and_forged_files(tmp_path: Path) -> None:
    """Every mutation kind and every re-chained forgery (downgrades among them) in turn, on a
    signed transcript: without the key only what the chain does not cover may pass, with it
    no forgery; no file crashes the reader."""
    original, _ = signed_bytes_and_key()
    kinds = [*MUTATIONS, *(f"{v}:{e}" for v, e in FORGERIES)]
    _, _, intact = signed_verdict(original, tmp_path)
    passed: list[str] = []
    for i in range(CAMPAIGN_FILES):
        kind = kinds[i % len(kinds)]
        rng = np.random.default_rng(i)
        if ":" in kind:
            data = rechain(original, *kind.split(":"), rng)
        else:
            data = mutate(original, kind, rng)
        plain, keyed, seen = signed_verdict(data, tmp_path)
        assert {plain, keyed} <= set(STATUSES)
        if keyed == "intact" and (seen != intact or ":" in kind):
            passed.append(f"{i}: {kind}")
        if plain == "intact" and kind in EDITS:  # an edit without re-chaining
            passed.append(f"{i}: {kind} (no key)")
    assert passed == []
