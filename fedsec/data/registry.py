"""Datasets by name: :func:`load` and :func:`dataset_names`."""

from __future__ import annotations

import difflib
import inspect
import os
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import Any

from fedsec.data.builtin import BUILTIN_LOADERS
from fedsec.data.dataset import Dataset
from fedsec.data.keystrokes import make_keystrokes
from fedsec.data.synthetic import make_classification, make_fedcg_toy
from fedsec.data.user_csv import from_csv
from fedsec.errors import DataError, UnknownNameError, ValidationError
from fedsec.params import did_you_mean
from fedsec.validation import param_error

LOADERS: Mapping[str, Callable[..., Dataset]] = MappingProxyType({
    **BUILTIN_LOADERS,
    "fedcg-toy": make_fedcg_toy,
    "classification": make_classification,
    "keystrokes": make_keystrokes,
})
"""Every named dataset; a loader's keyword-only arguments are the dataset's options."""


SUMMARIES: Mapping[str, str] = MappingProxyType({
    "iris": "Iris flowers: 150 samples, 4 features, 3 classes (scikit-learn).",
    "wine": "Wine cultivars: 178 samples, 13 features, 3 classes (scikit-learn).",
    "breast_cancer": "Wisconsin diagnostic breast cancer: 569 samples, 30 features, binary "
                     "(scikit-learn).",
    "digits": "Handwritten digits 8x8: 1,797 samples, 64 features, 10 classes (scikit-learn).",
    "sonar": "Sonar mines vs rocks: 208 samples, 60 features, binary (UCI).",
    "ionosphere": "Ionosphere radar returns: 351 samples, 34 features, binary (UCI).",
    "pima": "Pima Indians diabetes: 768 samples, 8 clinical features, binary (NIDDK).",
    "heart": "Cleveland heart disease: 297 complete samples, 13 features, binary presence (UCI).",
    "mnist5k": "MNIST subset: 5,000 images, 784 pixels, 10 classes.",
    "fashion_mnist_1k": "Fashion-MNIST subset: 1,000 images, 784 pixels, 10 clothing classes "
                        "(Zalando Research).",
    "mfeat": "UCI multiple features: 2,000 digits in six views (649 features), 10 classes.",
    "nutrimouse": "Nutrimouse: 40 mice, gene (120) and lipid (21) omics views, genotype label.",
    "fedcg-toy": "FedCG's toy set: 6,000 + 6,000 samples from three hospitals, 2-D plus bias.",
    "classification": "Synthetic classification set (scikit-learn make_classification).",
    "basic_motions": "BasicMotions smart-watch recordings: 80 sequences (40 train, 40 test), "
                     "accelerometer and gyroscope views of 3 channels x 100 steps, 4 "
                     "activities (UEA archive).",
    "keystrokes": "Synthetic typing sessions: 8 participants x 60 sessions, keys, special-key "
                  "and accelerometer sequence views, binary mood; cohorts are participants.",
})
"""One line per named dataset, for listings."""


def dataset_names() -> tuple[str, ...]:
    """The names :func:`load` accepts, sorted.

    Examples
    --------
    >>> "sonar" in dataset_names()
    True
    """
    return tuple(sorted(LOADERS))


def dataset_options(name: str) -> dict[str, Any]:
    """The options a named dataset accepts, with their defaults.

    Examples
    --------
    >>> dataset_options("heart")
    {'target': 'presence', 'missing': 'drop', 'views': 'none'}
    """
    return _options(_loader(name))


def load(name: str | os.PathLike[str], /, **options: Any) -> Dataset:
    """Load a dataset by name, or a user's CSV file by path.

    Parameters
    ----------
    name : str or path-like
        One of :func:`dataset_names`, or the path of an existing ``.csv`` file
        (then ``options`` are those of :func:`fedsec.data.from_csv`, including
        its ``name``). Positional only.
    **options
        Dataset-specific options, listed below.

    Returns
    -------
    Dataset

    Raises
    ------
    fedsec.errors.UnknownNameError
        For an unknown name; the message lists the valid names.
    fedsec.errors.ValidationError
        For an unknown option (the message lists the accepted ones) or a bad
        option value.
    fedsec.errors.DataError
        If a packaged file fails its checksum (the installation is corrupt) or
        a ``.csv`` path does not exist.

    Notes
    -----
    Class code ``i`` always means ``class_names[i]``.

    ===============  ============  ====================================================
    name             shape         classes and options
    ===============  ============  ====================================================
    iris             150 x 4       3 species (scikit-learn coding)
    wine             178 x 13      3 cultivars (scikit-learn coding)
    breast_cancer    569 x 30      0 malignant (212), 1 benign (357)
    digits           1797 x 64     10 digits
    sonar            208 x 60      0 ``R`` rock (97), 1 ``M`` mine (111)
    ionosphere       351 x 34      0 ``b`` bad (126), 1 ``g`` good (225)
    pima             768 x 8       0 (500), 1 diabetes (268)
    heart            297 x 13      ``target="presence"`` (default): 0 (160), 1 = num
                                   1-4 (137); ``target="num"``: 5 classes 0-4.
                                   ``missing="drop"`` (the only choice) drops the 6
                                   rows with a missing ``ca`` or ``thal``.
    mnist5k          5000 x 784    10 digits, 500 each; features ``px_row_col``
    fashion_mnist_1k 1000 x 784    10 clothing classes (83-114 each); ``px_row_col``
    mfeat            2000 x 649    10 digits, 200 each; groups fou (76), fac (216),
                                   kar (64), pix (240), zer (47), mor (6)
    nutrimouse       40 x 141      ``target="genotype"`` (default): 0 ``wt``, 1
                                   ``ppar``; ``target="diet"``: coc, fish, lin, ref,
                                   sun. Groups gene (120) and lipid (21)
    basic_motions    80 x 600      Standing, Running, Walking, Badminton (20 each);
                                   sequence views accelerometer and gyroscope (x, y,
                                   z over 100 steps); test_rows = rows 40-79
    fedcg-toy        12000 x 3     see :func:`fedsec.data.make_fedcg_toy`; ``seed``
    classification   1000 x 20     see :func:`fedsec.data.make_classification`
    keystrokes       480 x 850     0 ``calm``, 1 ``elevated``; sequence views keys,
                                   special, motion; cohorts are participants; see
                                   :func:`fedsec.data.keystrokes.make_keystrokes`
    ===============  ============  ====================================================

    Examples
    --------
    >>> load("heart", target="num").class_names
    ('0', '1', '2', '3', '4')
    >>> load("sonar").describe()["classes"]
    {'R': 97, 'M': 111}
    """
    loader = _loader(name)
    accepted = _options(loader)
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        shown = os.fspath(name) if isinstance(name, os.PathLike) else name
        raise ValidationError(
            f"Unknown option(s) {', '.join(map(repr, unknown))} for dataset {shown!r}."
            f"{did_you_mean(unknown, accepted)} "
            f"Accepted options: {', '.join(accepted) if accepted else '(none)'}."
        )
    return loader(**options)


def load_spec(spec: str | os.PathLike[str]) -> Dataset:
    """Load a dataset from a spec string: ``NAME`` or ``NAME:key=value,key=value``.

    The keys are the dataset's options (:func:`dataset_options`) plus
    ``positive=<class>``, which any classification set accepts and which
    turns it into the binary task "that class against the rest"
    (:meth:`Dataset.one_vs_rest`). Values are converted to the type of the
    option's default. A path ending in ``.csv`` loads that file.

    Raises
    ------
    fedsec.errors.ValidationError
        For a malformed option, an option given twice, an unknown option
        (the message lists the accepted ones) or a bad value.

    Examples
    --------
    >>> iris = load_spec("iris:positive=setosa")
    >>> iris.name, iris.class_names, int(iris.y.sum())
    ('iris:positive=setosa', ('not-setosa', 'setosa'), 50)
    >>> load_spec("heart:target=num").n_classes
    5
    """
    if isinstance(spec, os.PathLike) or str(spec).lower().endswith(".csv"):
        return load(spec)
    if not isinstance(spec, str) or not spec.strip():
        raise param_error("load_spec", "spec", "a dataset name, NAME:key=value,... or a .csv path",
                          spec)
    name, _, rest = spec.strip().partition(":")
    name = name.strip()
    defaults = {**_options(_loader(name)), **_typed_none(_loader(name))}
    options: dict[str, Any] = {}
    for item in (part for part in rest.split(",") if part.strip()):
        key, eq, value = (part.strip() for part in item.partition("="))
        if not eq or not key or not value:
            raise ValidationError(
                f"Dataset option {item.strip()!r} in {spec!r} is not of the form key=value."
            )
        if key in options:
            raise ValidationError(f"Dataset option {key!r} is given twice in {spec!r}.")
        options[key] = value if key == "positive" else _typed(value, defaults.get(key), key)
    positive = options.pop("positive", None)
    dataset = load(name, **options)
    return dataset if positive is None else dataset.one_vs_rest(positive)


def check_spec(spec: str | os.PathLike[str]) -> None:
    """Check a dataset spec as far as can be done cheaply, before a run.

    A named set must exist; its options (``NAME:key=value``) are checked by
    loading it; a ``.csv`` path is left to the run, which may start elsewhere.

    Examples
    --------
    >>> check_spec("iris")
    >>> from fedsec.errors import UnknownNameError
    >>> try:
    ...     check_spec("irris:positive=setosa")
    ... except UnknownNameError as error:
    ...     print(error.name)
    irris
    """
    if isinstance(spec, os.PathLike) or str(spec).lower().endswith(".csv"):
        return
    if not isinstance(spec, str) or not spec.strip():
        raise param_error("check_spec", "spec", "a dataset name, NAME:key=value,... or a .csv path",
                          spec)
    _loader(spec.partition(":")[0].strip())
    if ":" in spec:
        load_spec(spec)


def _typed(value: str, default: Any, key: str) -> Any:
    if isinstance(default, bool):
        if value.lower() not in ("true", "false"):
            raise ValidationError(f"Dataset option {key!r} must be true or false; got {value!r}.")
        return value.lower() == "true"
    for kind in (int, float):
        if isinstance(default, kind):
            try:
                return kind(value)
            except ValueError:
                raise ValidationError(
                    f"Dataset option {key!r} must be a number ({kind.__name__}); got {value!r}."
                ) from None
    return value


def _loader(name: Any) -> Callable[..., Dataset]:
    if isinstance(name, os.PathLike):
        name = os.fspath(name)
    if not isinstance(name, str):
        raise param_error("load", "name", "a dataset name or the path of a .csv file", name)
    if name in LOADERS:
        return LOADERS[name]
    if name.lower().endswith(".csv"):
        if not Path(name).is_file():
            raise DataError(f"No CSV file exists at {name!r}.")
        return partial(from_csv, name)
    raise UnknownNameError("dataset", name, dataset_names(),
                           close=difflib.get_close_matches(name, dataset_names(), n=3))


def _typed_none(loader: Callable[..., Dataset]) -> dict[str, Any]:
    """For each keyword option of ``loader`` without a default (None) but annotated ``bool``,
    ``int`` or ``float`` (optional or not), a value of that type, so that its text is read as
    one: ``classification:n_informative=2`` gives the integer 2."""
    out: dict[str, Any] = {}
    for p in inspect.signature(loader).parameters.values():
        if p.kind is not inspect.Parameter.KEYWORD_ONLY or p.default is not None:
            continue
        names = str(p.annotation).replace(" ", "").split("|")
        kind = next((k for k in (bool, int, float) if k.__name__ in names), None)
        if kind is not None:
            out[p.name] = kind()
    return out


def _options(loader: Callable[..., Dataset]) -> dict[str, Any]:
    parameters = inspect.signature(loader).parameters.values()
    return {
        p.name: p.default for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY
    }
