"""Datasets for audits and benchmarks: one immutable :class:`Dataset` type.

Load a dataset by name with :func:`load` (see :func:`dataset_names`), a user's
CSV with :func:`from_csv`, split it with :meth:`Dataset.split` and scale the
split with :meth:`Split.scaled`. Packaged files are checksum-verified on every
read (:mod:`fedsec.data.packaged`); their sources and licences are listed in
``fedsec/data/files/ATTRIBUTION.md``.

Examples
--------
>>> from fedsec.data import load
>>> train, test = load("sonar").split(test_size=0.25, rng=0).scaled("minmax")
>>> train.n_samples, test.n_samples, train.n_features
(156, 52, 60)
"""

from __future__ import annotations

from fedsec.data.dataset import TASKS, Dataset, Split, Task
from fedsec.data.keystrokes import make_keystrokes
from fedsec.data.packaged import verify_packaged_files
from fedsec.data.registry import check_spec, dataset_names, dataset_options, load, load_spec
from fedsec.data.scaling import SCALING_METHODS, Scaler, ScalingMethod, fit_scaler
from fedsec.data.synthetic import make_classification, make_fedcg_toy
from fedsec.data.user_csv import from_csv

__all__ = [
    "SCALING_METHODS",
    "TASKS",
    "Dataset",
    "Scaler",
    "ScalingMethod",
    "Split",
    "Task",
    "check_spec",
    "dataset_names",
    "dataset_options",
    "fit_scaler",
    "from_csv",
    "load",
    "load_spec",
    "make_classification",
    "make_fedcg_toy",
    "make_keystrokes",
    "verify_packaged_files",
]
