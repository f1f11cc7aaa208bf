"""S-FedMV: the GRU extractor reads only real steps; FedAvg weights by N_l / N; one seed, one
transcript; update clipping; torch missing is one clear line."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import numpy as np
import pytest

from fedsec.data.dataset import Dataset
from fedsec.data.sequences import sequence_feature_names
from fedsec.errors import CapabilityError, ValidationError
from fedsec.plan import RunConfig, plan
from fedsec.protocols.fedmv import extractor, tags
from fedsec.protocols.fedmv.sequential import privatize

torch = pytest.importorskip("torch")

SMALL = {"fedavg_rounds": 3, "local_epochs": 2, "hidden": 4, "batch_size": 16, "rounds": 3,
         "lr": 0.02, "local_baselines": False}


def toy_sequences(n: int = 90, T: int = 8, seed: int = 0) -> Dataset:
    """Two sequence views; view ``a`` has variable lengths (a ``present`` channel)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    a = rng.normal(size=(n, T, 2)) + 0.8 * y[:, None, None]
    b = rng.normal(size=(n, T, 1)) - 0.5 * y[:, None, None]
    lengths = rng.integers(3, T + 1, n)
    present = (np.arange(T)[None, :] < lengths[:, None]).astype(float)
    a = np.concatenate([a * present[:, :, None], present[:, :, None]], axis=2)
    names = (sequence_feature_names("a", ("u", "v", "present"), T)
             + sequence_feature_names("b", ("w",), T))
    return Dataset(name="toy-sequences", X=np.concatenate([a.reshape(n, -1), b.reshape(n, -1)],
                                                          axis=1),
                   y=y, task="binary", feature_names=names,
                   feature_groups={"a": tuple(range(3 * T)), "b": tuple(range(3 * T, 4 * T))},
                   cohorts=np.arange(n) % 3)


@pytest.fixture
def toy(add_dataset: Callable[[str, Callable[[], Dataset]], str]) -> str:
    return add_dataset("toy-sequences", toy_sequences)


def test_features_ignore_padding_and_read_each_sequence_backwards() -> None:
    spec = extractor.ExtractorSpec(inputs=2, hidden=3, classes=2)
    model = extractor.build(spec, seed=1)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1, 6, 2))
    padded_zero, padded_noise = x.copy(), x.copy()
    padded_zero[:, 4:] = 0.0
    padded_noise[:, 4:] = rng.normal(size=(1, 2, 2))
    lengths = np.array([4])
    a = extractor.extract(model, padded_zero, lengths)
    b = extractor.extract(model, padded_noise, lengths)
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-7)
    short = extractor.extract(model, x[:, :4], np.array([4]))
    np.testing.assert_allclose(a, short, atol=1e-6)
    with torch.no_grad():  # the backward half is the backward GRU on the reversed prefix
        _, h = model.backward_gru(torch.as_tensor(x[:, 3::-1].copy(), dtype=torch.float32))
    np.testing.assert_allclose(a[0, 3:], h[0, 0].numpy(), atol=1e-6)


def test_privatize_clips_the_change_not_the_weights() -> None:
    rng = np.random.default_rng(0)
    start = np.array([10.0, -10.0])
    out = privatize(start + np.array([3.0, 4.0]), start, 0.5, 0.0, rng)
    np.testing.assert_allclose(np.linalg.norm(out - start), 0.5)
    small = start + np.array([0.1, 0.0])
    np.testing.assert_array_equal(privatize(small, start, 0.5, 0.0, rng), small)


def test_noise_without_clip_and_scaling_are_refused(toy: str) -> None:
    with pytest.raises(ValidationError, match="set clip"):
        plan(RunConfig(protocol="s-fedmv", dataset=toy, params={"noise_multiplier": 1.0}))
    with pytest.raises(ValidationError, match="scalings none"):
        plan(RunConfig(protocol="s-fedmv", dataset=toy, scaling="minmax"))


def test_fedavg_weights_clients_by_rows_and_one_seed_one_transcript(toy: str) -> None:
    from fedsec.runner import run
    from fedsec.testing import assert_same_transcript

    config = RunConfig(protocol="s-fedmv", dataset=toy, params=SMALL, secret_seed=0,
                       partition="horizontal:parties=2,size=25")
    first, second = run(config), run(config)
    assert_same_transcript(first.transcript, second.transcript)
    messages = first.transcript.messages
    updates = [m for m in messages if m.tag == tags.EXTRACTOR_UPDATE and m.round == 1]
    broadcast = next(m for m in messages if m.tag == tags.EXTRACTOR_GLOBAL and m.round == 2)
    counts = np.array([u.payload[0] for u in updates])
    np.testing.assert_array_equal(counts, [25.0, 25.0])
    average = sum(u.payload[1:] for u in updates) / counts.sum()
    np.testing.assert_allclose(broadcast.payload, average, rtol=1e-12)
    meta = broadcast.meta
    assert meta[tags.LOCAL_TRAINING] == {"epochs": 2, "batch_size": 16, "lr": 0.02,
                                         "optimizer": "rmsprop"}
    assert [s["channels"] for s in meta[tags.SEQUENCES]] == [["u", "v", "present"], ["w"]]
    assert first.record.federated_metrics["accuracy"] > 0.6
    assert "accuracy" in first.record.centralized_metrics


def test_without_torch_one_line_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    extractor._extractor_class.cache_clear()
    monkeypatch.setitem(sys.modules, "torch", None)
    try:
        with pytest.raises(CapabilityError) as caught:
            extractor.build(extractor.ExtractorSpec(inputs=1, hidden=1, classes=2), seed=0)
    finally:
        extractor._extractor_class.cache_clear()
    message = str(caught.value)
    assert "\n" not in message and "fedsec[nn]" in message and "torch==2.13.0" in message


def test_deterministic_sets_the_flag_inside_restores_it_and_skips_the_compiler() -> None:
    # a fresh process: the compiler's import (about a second) is what the context avoids
    code = ("import sys, torch\n"
            "from fedsec import nn\n"
            "before = torch.are_deterministic_algorithms_enabled()\n"
            "with nn.deterministic(0):\n"
            "    inside = torch.are_deterministic_algorithms_enabled()\n"
            "print(before, inside, torch.are_deterministic_algorithms_enabled(),\n"
            "      'torch._inductor' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True", "False", "False"]


def test_deterministic_keeps_the_compilers_option_in_step_once_it_is_loaded() -> None:
    import torch._inductor.config as inductor_config

    from fedsec import nn

    with nn.deterministic(0):
        assert torch.are_deterministic_algorithms_enabled() and inductor_config.deterministic
    assert not torch.are_deterministic_algorithms_enabled()
    assert not inductor_config.deterministic
