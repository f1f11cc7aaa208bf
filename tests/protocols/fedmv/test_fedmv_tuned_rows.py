"""The validation rows tests/benchmarks/fedmv_tuned.py chooses FedMV's weights on: inside the
run's own training rows, never its test rows."""

from __future__ import annotations

from fedsec.data import load_spec
from fedsec.plan import plan
from fedsec.runner import RunConfig, data_split
from fedsec.seeding import generator


def test_the_validation_rows_split_the_runs_training_rows_and_keep_its_test_rows_out(
        benchmark_script):
    tuned = benchmark_script("fedmv_tuned")
    spec = "mfeat:views=fou+kar"
    fit, validate = tuned.fitting_rows(spec, seed=3)
    assert not set(fit) & set(validate)
    config = RunConfig(protocol="mvl", dataset=spec, seed=3)
    assert plan(config).test_size == 0.25  # the split fitting_rows redraws is the run's own
    data = load_spec(spec)
    train, test = data.split(test_size=0.25, rng=generator(3, "split"))  # as the runner draws it
    assert train.n_samples == data_split(config).train.n_samples
    # the fitting and validation rows are the run's training rows, by content
    ours = sorted(map(tuple, data.X[fit + validate].tolist()))
    assert ours == sorted(map(tuple, train.X.tolist()))
    assert test.n_samples == data.n_samples - len(fit) - len(validate)
    assert len(validate) == round(0.25 * train.n_samples)
