"""No View can regenerate a secret another party holds.

Every secret a party keeps (its random stream, defence noise, the clients' shared seeds,
simulation-mode keys, initial weights) derives from the run's secret seed: random by default,
kept only in the private store, never in a transcript. The header commits to the seeds with a
hash keyed by the secret seed, so a search over small seeds finds nothing to test against.
The same seeds still give the same transcript.
"""

from __future__ import annotations

import hashlib
import hmac
import subprocess
import sys

import numpy as np
import pytest

from fedsec.backends.primitives import CONTRIBUTION_TAG
from fedsec.private_store import run_seeds
from fedsec.runner import RunConfig, run
from fedsec.seeding import generator, new_secret_seed, seed_commitment
from fedsec.testing import assert_same_transcript, assert_secret_unseen
from fedsec.views import build_view

NOISY = RunConfig(protocol="secure-sum", dataset="iris", reference=False,
                  defenses=[("gaussian-noise", {"sigma": 1.0})])


def _legacy_commitment(seed: int) -> str:
    """The unsalted commitment fedsec's headers used to carry (one guess away from seed 0)."""
    return hashlib.sha256(b"fedsec-seed-commitment-v1\x00" + str(seed).encode()).hexdigest()


def test_the_header_survives_a_search_of_every_seed_below_2_to_the_20() -> None:
    result = run(NOISY)
    header = result.transcript.header["seed_commitment"]
    target = bytes.fromhex(header)
    legacy = hashlib.sha256(b"fedsec-seed-commitment-v1\x00")
    key_prefix = hashlib.sha256(b"fedsec-secret-seed-v2\x00")
    message = b"fedsec-seed-commitment-v2\x00"
    public = message + b"0"  # the run's public seed, which the scenario names
    found = []
    # every candidate as the old unsalted seed and as the secret seed beside the public seed 0
    for candidate in range(1 << 20):
        text = str(candidate).encode()
        guess = legacy.copy()
        guess.update(text)
        key = key_prefix.copy()
        key.update(text)
        if (guess.digest() == target
                or hmac.digest(key.digest(), public, "sha256") == target):
            found.append(candidate)
    # and the first 1,000 scenario seeds as both seeds at once (a secret pinned to the seed)
    for candidate in range(1000):
        if seed_commitment(candidate, candidate) == header:
            found.append(candidate)
    assert found == []
    # the search is sound: it finds a run whose secret seed was pinned small
    pinned = run(RunConfig(protocol="secure-sum", dataset="iris", reference=False,
                           secret_seed=1234))
    assert pinned.transcript.header["seed_commitment"] == seed_commitment(0, 1234)
    assert seed_commitment(0, 1234) != _legacy_commitment(0)


def test_the_aggregator_cannot_regenerate_the_gaussian_noise_from_the_seed() -> None:
    """The attack an unkeyed seed allowed: subtract the noise a party's stream would draw
    under the public seed. It now removes nothing: the estimate stays as far from the party's
    vector as the noisy contribution itself."""
    # a large secret pinned, so that the check is one fixed draw (never a lucky one)
    result = run(RunConfig(**{**NOISY.__dict__, "secret_seed": 2**100 + 7}))
    view = build_view(result.transcript, "aggregator", result.private)
    sent = {m.sender: np.asarray(m.payload, dtype=float) for m in view.messages
            if m.tag == CONTRIBUTION_TAG}
    assert sent
    for party, noisy in sent.items():
        truth = np.asarray(result.private[f"party/{party}/value/vector"], dtype=float)
        regenerated = generator(0, f"party/{party}").normal(0.0, 1.0, size=noisy.shape)
        baseline = np.linalg.norm(noisy - truth) / np.linalg.norm(truth)
        after = np.linalg.norm(noisy - regenerated - truth) / np.linalg.norm(truth)
        assert baseline > 1e-3
        assert after > 0.5 * baseline, (party, baseline, after)  # 1e-17 before


def test_a_server_without_the_clients_seed_cannot_derive_it() -> None:
    """FedCG with ``server_knows_seed=false``: the clients' shared landmark seed is neither
    the one the public seed derives nor any a search over small secret seeds finds."""
    from fedsec.protocols.fedcg.setup import seed_material

    result = run(RunConfig(protocol="fedcg-secure", dataset="iris", reference=False,
                           params={"server_knows_seed": False}))
    held = {bytes(v) for k, v in result.private.items() if k.endswith("/key/fedcg:landmark-seed")}
    assert len(held) == 1  # every client holds the same seed
    assert not any(k.startswith("party/server/key/") for k in result.private)
    guesses = {seed_material(c) for c in range(1 << 12)}
    assert held.isdisjoint(guesses)


@pytest.mark.parametrize("protocol,params", [
    ("fedcg-secure", {"server_knows_seed": False}),
    ("secure-sum", {}),
])
def test_the_secret_seed_alone_moves_every_secret_and_the_same_seeds_repeat(
        protocol: str, params: dict[str, object]) -> None:
    """Two runs that differ only in their secret seed share no key a party holds; two runs
    with the same seeds give the same transcript, which holds no trace of the secret seed."""
    def config(secret: int) -> RunConfig:
        return RunConfig(protocol=protocol, dataset="iris", backend="noise", reference=False,
                         params=params, secret_seed=secret,
                         defenses=[("gaussian-noise", {"sigma": 0.5})]
                         if protocol == "secure-sum" else [])
    secret = new_secret_seed()
    a, b, c = run(config(secret)), run(config(secret)), run(config(secret + 1))
    assert_same_transcript(a.transcript, b.transcript)
    assert_secret_unseen(a.transcript, secret)
    keys = [k for k in a.private if "/key/" in k]
    assert keys
    for k in keys:
        assert bytes(np.asarray(a.private[k]).tobytes()) != bytes(
            np.asarray(c.private[k]).tobytes()), k
    assert a.transcript.header["seed_commitment"] != c.transcript.header["seed_commitment"]


def test_fedsec_run_keeps_the_secret_seed_in_the_private_store_and_reproduces_with_it(
        tmp_path: object) -> None:
    from pathlib import Path

    out = Path(str(tmp_path))
    base = [sys.executable, "-m", "fedsec.cli.main", "run", "secure-sum", "--dataset", "iris",
            "--defense", "gaussian-noise:sigma=1"]
    first = subprocess.run([*base, "--out", str(out / "a")], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert "secret seed random" in first.stdout
    seed, secret = run_seeds(out / "a" / "private.npz")
    assert seed == 0 and secret is not None and secret.bit_length() > 64
    shown = subprocess.run([sys.executable, "-m", "fedsec.cli.main", "inspect",
                            str(out / "a" / "transcript.arrow"), "--seeds",
                            str(out / "a" / "private.npz")], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert f"--secret-seed {secret} (the header's commitment matches)" in shown.stdout
    again = subprocess.run([*base, "--out", str(out / "b"), "--secret-seed", str(secret)],
                           capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert "secret seed given" in again.stdout
    from fedsec.transcript import read_transcript

    assert_same_transcript(read_transcript(out / "a" / "transcript.arrow"),
                           read_transcript(out / "b" / "transcript.arrow"))
    other = subprocess.run([sys.executable, "-m", "fedsec.cli.main", "inspect",
                            str(out / "a" / "transcript.arrow"), "--seeds",
                            str(out / "b" / "private.npz")], capture_output=True, text=True)
    assert other.returncode == 0  # the same seeds: the same commitment
    fresh = subprocess.run([*base, "--out", str(out / "c")], capture_output=True, text=True)
    assert fresh.returncode == 0, fresh.stderr
    mismatch = subprocess.run([sys.executable, "-m", "fedsec.cli.main", "inspect",
                               str(out / "a" / "transcript.arrow"), "--seeds",
                               str(out / "c" / "private.npz")], capture_output=True, text=True)
    assert mismatch.returncode == 1
    assert "do NOT match" in mismatch.stdout
