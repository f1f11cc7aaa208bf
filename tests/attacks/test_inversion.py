"""Gradient inversion maths: iDLG labels, DLG and Inverting Gradients, FedAvg update inversion.

Reconstructions are scored against the class-mean guess (the mean mnist5k image of the true
class, over all 5,000 images), the prior an attacker has without the messages. Pixels are
scaled to [0, 1]. Run with ``-s`` to see the measured errors.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from fedsec.attacks.inversion import (
    LocalTraining,
    batch_gradient,
    idlg_label,
    invert_fedavg,
    invert_gradient,
    label_counts_from_bias_update,
    local_training,
    total_variation,
)
from fedsec.data import load
from fedsec.errors import ValidationError
from fedsec.nn import flatten, layout_of, unflatten

torch = pytest.importorskip("torch")
nn = torch.nn


@pytest.fixture(scope="module")
def mnist() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Images ``(5000, 28, 28)`` in [0, 1], labels, and the mean image of each class."""
    data = load("mnist5k")
    X = (data.X / 255.0).reshape(-1, 28, 28)
    means = np.stack([X[data.y == c].mean(axis=0) for c in range(10)])
    return X, np.asarray(data.y), means


def mlp(hidden: int = 32, seed: int = 0) -> nn.Module:
    """The DLG paper's small network: 784-hidden-10 with sigmoid activations."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return nn.Sequential(nn.Flatten(), nn.Linear(784, hidden), nn.Sigmoid(),
                             nn.Linear(hidden, 10))


class BiGRU(nn.Module):
    """A bidirectional GRU classifier on ``(n, T, c)``, reading lengths like S-FedMV's."""

    def __init__(self, channels: int = 4, hidden: int = 16, classes: int = 5) -> None:
        super().__init__()
        self.gru = nn.GRU(channels, hidden, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, classes)

    def forward(self, x, lengths=None):
        out, _ = self.gru(x)
        n, steps, width = out.shape
        half = width // 2
        last = torch.full((n,), steps - 1) if lengths is None else lengths - 1
        ahead = out[torch.arange(n), last, :half]
        return self.head(torch.cat([ahead, out[:, 0, half:]], dim=1))


def gru(seed: int = 0, **kwargs) -> BiGRU:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return BiGRU(**kwargs)


def mse(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.mean((np.asarray(a) - np.asarray(b)) ** 2))


def matched_mse(recon: np.ndarray, truth: np.ndarray) -> float:
    """Mean MSE after pairing reconstructions with true images (their order is unknown)."""
    from fedsec.scoring.reconstruction_match import match_reconstructions

    return match_reconstructions(recon, truth)["mse"]


# --- iDLG -------------------------------------------------------------------------------------


def test_idlg_recovers_the_label_of_every_single_image_gradient_of_an_mlp(mnist) -> None:
    X, y, _ = mnist
    model = mlp()
    found = [idlg_label(batch_gradient(model, X[i:i + 1], y[i:i + 1])["3.weight"])
             for i in range(0, 2000, 100)]
    assert found == y[0:2000:100].tolist()


def test_idlg_recovers_the_labels_of_a_bidirectional_gru_on_random_sequences() -> None:
    """The GRU's features have either sign: the rule reads signs of inner products."""
    model = gru()
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((20, 30, 4)), rng.integers(0, 5, 20)
    grads = [batch_gradient(model, x[i:i + 1], y[i:i + 1]) for i in range(20)]
    assert [idlg_label(g["head.weight"]) for g in grads] == y.tolist()
    assert [idlg_label(g["head.weight"], g["head.bias"]) for g in grads] == y.tolist()


def test_idlg_with_two_classes_uses_the_sign_of_the_row_sums() -> None:
    h = np.array([0.2, 1.0, 0.5])  # non-negative features (ReLU, sigmoid)
    assert idlg_label(np.outer([0.3, -0.3], h)) == 1
    assert idlg_label(np.outer([-0.6, 0.6], h)) == 0
    with pytest.raises(ValidationError):
        idlg_label(np.ones(3))


# --- DLG and Inverting Gradients --------------------------------------------------------------


def test_dlg_reconstructs_one_image_from_its_gradient(mnist) -> None:
    """DLG (L2 distance, L-BFGS, joint soft labels) on 784-32-10: the image and its label."""
    X, y, means = mnist
    model, i = mlp(), 7
    grads = batch_gradient(model, X[i:i + 1], y[i:i + 1])
    out = invert_gradient(model, grads, input_shape=(28, 28), n_samples=1, n_classes=10,
                          method="dlg", steps=50, seed=0)
    error, baseline = mse(out.inputs[0], X[i]), mse(means[y[i]], X[i])
    print(f"\nDLG, one image: MSE {error:.2e} (class-mean baseline {baseline:.3f}), "
          f"{out.steps} L-BFGS steps")
    assert error < 1e-3 * baseline
    assert out.labels.tolist() == [y[i]]
    assert out.inputs.shape == (1, 28, 28) and out.label_probs.shape == (1, 10)


def test_inverting_gradients_with_a_tv_prior_reconstructs_one_image(mnist) -> None:
    """Cosine distance, TV prior, Adam with step decay, labels from iDLG, box [0, 1]."""
    X, y, means = mnist
    model, i = mlp(), 7
    grads = batch_gradient(model, X[i:i + 1], y[i:i + 1])
    label = idlg_label(grads["3.weight"])
    out = invert_gradient(model, grads, input_shape=(28, 28), n_samples=1, n_classes=10,
                          method="ig", labels=[label], steps=300, lr=0.1, tv_weight=1e-2,
                          tv_axes=(1, 2), signed=True, bounds=(0.0, 1.0), seed=0)
    error, baseline = mse(out.inputs[0], X[i]), mse(means[y[i]], X[i])
    print(f"\nIG + TV, one image: MSE {error:.2e} (class-mean baseline {baseline:.3f})")
    assert error < 1e-2 * baseline
    assert out.inputs.min() >= 0.0 and out.inputs.max() <= 1.0


def test_the_tv_prior_fills_in_pixels_the_gradient_leaves_undetermined(mnist) -> None:
    """A stride-2 5x5 convolution never reads the last row and column of a 28x28 image, and a
    gradient determines other pixels only weakly: DLG matches the gradient yet leaves them at
    their random start, Inverting Gradients' TV prior fills them in."""
    X, y, means = mnist
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = nn.Sequential(nn.Unflatten(1, (1, 28)), nn.Conv2d(1, 4, 5, stride=2),
                              nn.Sigmoid(), nn.Flatten(), nn.Linear(4 * 12 * 12, 10))
    i = 7
    grads = batch_gradient(model, X[i:i + 1], y[i:i + 1])
    common = {"input_shape": (28, 28), "n_samples": 1, "n_classes": 10, "labels": y[i:i + 1],
              "seed": 0}
    dlg = invert_gradient(model, grads, method="dlg", steps=50, **common)
    ig = invert_gradient(model, grads, method="ig", steps=600, lr=0.1, tv_weight=1e-2,
                         tv_axes=(1, 2), **common)
    errors = mse(dlg.inputs[0], X[i]), mse(ig.inputs[0], X[i])
    baseline = mse(means[y[i]], X[i])
    print(f"\nstrided convolution: DLG MSE {errors[0]:.3f}, IG + TV MSE {errors[1]:.4f} "
          f"(class-mean baseline {baseline:.3f})")
    assert errors[1] < errors[0]
    assert errors[1] < 0.2 * baseline


def test_one_hot_channels_are_relaxed_to_a_softmax_and_a_short_sequence_is_recovered() -> None:
    model = gru(classes=3)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 5, 4))
    code = rng.integers(0, 2, 5)
    x[0, :, 2], x[0, :, 3] = code, 1 - code
    grads = batch_gradient(model, x, np.array([2]))
    out = invert_gradient(model, grads, input_shape=(5, 4), n_samples=1, n_classes=3,
                          method="dlg", labels=[2], steps=40, onehot_groups=[[2, 3]], seed=0)
    onehot = out.inputs[0, :, 2:]
    np.testing.assert_allclose(onehot.sum(axis=1), 1.0, rtol=1e-5)
    assert onehot.min() >= 0.0
    assert onehot.argmax(axis=1).tolist() == (1 - code).tolist()
    print(f"\nGRU, T=5, one-hot channels: MSE {mse(out.inputs, x):.2e} (prior "
          f"{np.mean(x ** 2):.2f})")
    assert mse(out.inputs, x) < 1e-2 * np.mean(x ** 2)


def test_padding_past_a_sequence_length_stays_zero() -> None:
    model = gru(classes=3)
    rng = np.random.default_rng(2)
    lengths = np.array([4, 2])
    x = rng.standard_normal((2, 4, 4)) * (np.arange(4)[None, :, None] < lengths[:, None, None])
    grads = batch_gradient(model, x, np.array([0, 1]), lengths=lengths)
    out = invert_gradient(model, grads, input_shape=(4, 4), n_samples=2, n_classes=3,
                          method="ig", steps=5, lengths=lengths, seed=0)
    assert np.all(out.inputs[1, 2:] == 0.0) and np.all(out.inputs[0] != 0.0)


def test_total_variation_is_the_mean_absolute_difference_of_neighbours() -> None:
    x = torch.tensor([[[0.0, 1.0], [3.0, 1.0]]])  # axes of the batch: 0 counts samples
    assert float(total_variation(x, (1,))) == pytest.approx((3 + 0) / 2)
    assert float(total_variation(x, (2,))) == pytest.approx((1 + 2) / 2)
    assert float(total_variation(x, ())) == 0.0
    with pytest.raises(ValidationError, match="TV axes"):
        total_variation(x, (0,))


# --- FedAvg ------------------------------------------------------------------------------------


@pytest.mark.parametrize("optimizer", ["sgd", "rmsprop"])
@pytest.mark.parametrize("kind", ["mlp", "gru"])
def test_the_unrolled_local_run_matches_torch_optimizers(optimizer: str, kind: str) -> None:
    model = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 3)) if kind == "mlp" \
        else gru(channels=4, hidden=8, classes=3)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((7, 6) if kind == "mlp" else (7, 5, 4))
    y = rng.integers(0, 3, 7)
    local = LocalTraining(epochs=2, batch_size=3, lr=0.05, optimizer=optimizer)
    start = flatten(model)
    simulated = local_training(model, start, x, y, local)
    reference = copy.deepcopy(model)
    opt = (torch.optim.SGD(reference.parameters(), lr=0.05) if optimizer == "sgd"
           else torch.optim.RMSprop(reference.parameters(), lr=0.05))
    X, Y = torch.as_tensor(x, dtype=torch.float32), torch.as_tensor(y)
    for _ in range(2):
        for s in range(0, 7, 3):
            opt.zero_grad()
            nn.functional.cross_entropy(reference(X[s:s + 3]), Y[s:s + 3]).backward()
            opt.step()
    moved = np.abs(flatten(reference) - start).max()
    assert np.abs(simulated - flatten(reference)).max() < 1e-5 * max(1.0, moved)
    assert np.array_equal(flatten(model), start)


def test_one_sample_one_step_fedavg_is_gradient_inversion(mnist) -> None:
    X, y, means = mnist
    model, i = mlp(), 100
    start, local = flatten(model), LocalTraining(epochs=1, batch_size=1, lr=0.1)
    end = local_training(model, start, X[i:i + 1], y[i:i + 1], local)
    np.testing.assert_allclose((start - end) / 0.1,
                               np.concatenate([g.ravel() for g in batch_gradient(
                                   model, X[i:i + 1], y[i:i + 1]).values()]), atol=1e-5)
    out = invert_fedavg(model, start, end, local=local, n_samples=1, input_shape=(28, 28),
                        n_classes=10, method="dlg", steps=30, seed=0)
    error, baseline = mse(out.inputs[0], X[i]), mse(means[y[i]], X[i])
    print(f"\nFedAvg, n=1, one step: MSE {error:.2e} (class-mean baseline {baseline:.3f})")
    assert error < 1e-3 * baseline
    assert out.labels.tolist() == [y[i]]


def test_fedavg_two_samples_in_two_local_steps_are_both_recovered(mnist) -> None:
    """Batch size 1, one epoch: each step holds one sample; whichever the client took first,
    the dummies are paired with the true images afterwards."""
    X, y, means = mnist
    model, idx = mlp(), np.array([100, 101])
    start, local = flatten(model), LocalTraining(epochs=1, batch_size=1, lr=0.1)
    end = local_training(model, start, X[idx[::-1]], y[idx[::-1]], local)
    out = invert_fedavg(model, start, end, local=local, n_samples=2, input_shape=(28, 28),
                        n_classes=10, method="dlg", steps=30, seed=0)
    error, baseline = matched_mse(out.inputs, X[idx]), mse(means[y[idx]], X[idx])
    print(f"\nFedAvg, n=2, two steps of one sample: MSE {error:.2e} (baseline {baseline:.3f})")
    assert error < 1e-2 * baseline
    assert sorted(out.labels.tolist()) == sorted(y[idx].tolist())


def full_batch_fedavg(mnist, n: int) -> tuple[float, float]:
    """IG + TV on three full-batch SGD steps of ``n`` images, labels known: (MSE, baseline)."""
    X, y, means = mnist
    model, idx = mlp(), np.arange(100, 100 + n)
    start, local = flatten(model), LocalTraining(epochs=3, batch_size=n, lr=0.1)
    end = local_training(model, start, X[idx], y[idx], local)
    out = invert_fedavg(model, start, end, local=local, n_samples=n, input_shape=(28, 28),
                        n_classes=10, labels=y[idx], method="ig", steps=500, lr=0.1,
                        tv_weight=1e-2, tv_axes=(1, 2), signed=True, bounds=(0.0, 1.0),
                        seed=0)
    return matched_mse(out.inputs, X[idx]), mse(means[y[idx]], X[idx])


def test_fedavg_two_samples_in_one_full_batch_beat_the_prior(mnist) -> None:
    error, baseline = full_batch_fedavg(mnist, 2)
    print(f"\nFedAvg, n=2, 3 full-batch steps: MSE {error:.3f} (baseline {baseline:.3f})")
    assert error < 0.8 * baseline


def test_fedavg_inversion_fails_when_the_batch_is_large_for_one_update(mnist) -> None:
    """The boundary: 32 images averaged into three full-batch steps of a 32-unit network
    leave the reconstruction near the prior (asserted loosely)."""
    error, baseline = full_batch_fedavg(mnist, 32)
    print(f"\nFedAvg, n=32, 3 full-batch steps: MSE {error:.3f} (baseline {baseline:.3f})")
    assert error > 0.7 * baseline


def test_label_counts_from_the_bias_update(mnist) -> None:
    X, y, _ = mnist
    model = mlp()
    rng = np.random.default_rng(1)
    idx = rng.choice(4000, 16, replace=False)
    local = LocalTraining(epochs=2, batch_size=8, lr=0.05)
    start = flatten(model)
    end = local_training(model, start, X[idx], y[idx], local)
    delta = unflatten(end - start, layout_of(model))["3.bias"]
    with torch.no_grad():  # the attacker's guess of the predictions: public images
        probs = torch.softmax(model(torch.as_tensor(X[4000:4500], dtype=torch.float32)), -1)
    counts = label_counts_from_bias_update(delta, n_samples=16, local=local,
                                           mean_probs=probs.mean(0).numpy())
    assert counts.sum() == 16
    assert np.abs(counts - np.bincount(y[idx], minlength=10)).sum() <= 2
    with pytest.raises(ValidationError):
        label_counts_from_bias_update(delta, n_samples=16,
                                      local=LocalTraining(1, 8, 0.1, "rmsprop"))


# --- determinism, side effects, validation -----------------------------------------------------


def test_the_same_seed_gives_the_same_reconstruction(mnist) -> None:
    X, y, _ = mnist
    model = mlp(hidden=8)
    grads = batch_gradient(model, X[:2], y[:2])
    args = {"input_shape": (28, 28), "n_samples": 2, "n_classes": 10, "steps": 5}
    for method in ("dlg", "ig"):
        a = invert_gradient(model, grads, method=method, seed=3, **args)
        b = invert_gradient(model, grads, method=method, seed=3, **args)
        c = invert_gradient(model, grads, method=method, seed=4, **args)
        assert np.array_equal(a.inputs, b.inputs) and np.array_equal(a.label_probs,
                                                                      b.label_probs)
        assert a.loss == b.loss and a.steps == b.steps
        assert not np.array_equal(a.inputs, c.inputs)
    start, local = flatten(model), LocalTraining(epochs=2, batch_size=1, lr=0.1)
    end = local_training(model, start, X[:2], y[:2], local)
    runs = [invert_fedavg(model, start, end, local=local, seed=1, **args) for _ in range(2)]
    assert np.array_equal(runs[0].inputs, runs[1].inputs)


def test_the_model_and_torch_global_state_are_left_unchanged(mnist) -> None:
    X, y, _ = mnist
    model = mlp(hidden=8)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    threads, flag = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    rng_state = torch.random.get_rng_state()
    grads = batch_gradient(model, X[:1], y[:1])
    invert_gradient(model, grads, input_shape=(28, 28), n_samples=1, n_classes=10, steps=3)
    start = flatten(model)
    invert_fedavg(model, start, start + 1e-3, local=LocalTraining(1, 1, 0.1), n_samples=1,
                  input_shape=(28, 28), n_classes=10, steps=3)
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert all(p.grad is None for p in model.parameters())
    assert torch.get_num_threads() == threads
    assert torch.are_deterministic_algorithms_enabled() == flag
    assert torch.equal(torch.random.get_rng_state(), rng_state)


def test_invalid_arguments_are_refused(mnist) -> None:
    X, y, _ = mnist
    model = mlp(hidden=8)
    grads = batch_gradient(model, X[:1], y[:1])
    args = {"input_shape": (28, 28), "n_samples": 1, "n_classes": 10, "steps": 1}
    with pytest.raises(ValidationError, match="method"):
        invert_gradient(model, grads, method="adam", **args)
    with pytest.raises(ValidationError, match="does not fit"):
        invert_gradient(model, {"1.weight": np.zeros((3, 3))}, **args)
    with pytest.raises(ValidationError, match="labels"):
        invert_gradient(model, grads, labels=[10], **args)
    for axes in ((0,), (3,)):
        with pytest.raises(ValidationError, match="TV axes"):
            invert_gradient(model, grads, tv_axes=axes, **args)
    with pytest.raises(ValidationError, match="one-hot"):
        invert_gradient(model, grads, onehot_groups=[[0, 28]], **args)
    with pytest.raises(ValidationError, match="optimizer"):
        LocalTraining(epochs=1, batch_size=1, lr=0.1, optimizer="adam")
    flat = np.concatenate([g.ravel() for g in grads.values()])
    out = invert_gradient(model, flat, **args)  # a flattened gradient is accepted
    assert out.inputs.shape == (1, 28, 28)
