"""NRI-DC's Figures 4-6 and Tables 1-4: box plots of the test ROC-AUC over seeded distributions.

Run: ``python tests/benchmarks/nri_dc_boxplots.py [--seeds 100]
[--models logistic,mlp,random-forest] [--methods opp,gopp,...] [--plots DIR]``. A seed of MLP
or random forest costs about a minute of one core (13 workers each fit a model on the 2,000
anchor rows, for every method); SIGINT or SIGTERM ends the current model after the seed under
way and prints and plots the seeds done.

Pima as in ``nri_dc_table1.py`` (13 workers x 50 samples, 100 test samples, standardised
features, scikit-learn's default models; one seeded split and partition per seed, the same
seeds for every model and method, no parameter chosen on the test rows). Prints, per model
and method, the box plot's numbers of the workers' mean ROC-AUC (min, quartiles, max, mean
and std over seeds) above the paper's row of Table 1 (logistic regression), 2 (MLP) or 3
(random forest), then the time of each collaboration function over every run beside the
paper's Table 4, and the order of the methods by mean time. ``--plots DIR`` writes one SVG
box plot per model (``nri_dc_<model>.svg``), methods on the y-axis and the mean marked by a
red dot, as the paper draws them.

LS and GEP appear twice: as the paper computes them (``rescale=False``) and with the common
rescaling this package applies by default; the paper's LS and GEP rows stand beside both.
"""

from __future__ import annotations

import argparse
import inspect
import io
import signal
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from nri_dc_table1 import METHODS, config

from fedsec.runner import run

#: The box plot's numbers, in the order the tables print them.
STATISTICS = ("min", "q1", "median", "q3", "max", "mean", "std")
#: The paper's columns, in its order, and the methods here each stands beside.
PAPER_COLUMNS = {"central": ("central",), "local": ("local",), "ls": ("ls (paper)", "ls"),
                 "gep": ("gep (paper)", "gep"), "opp": ("opp",), "gopp": ("gopp",),
                 "rdp-ls": ("rdp-ls",), "rdp-opp": ("rdp-opp",)}
#: The paper's Tables 1 (logistic regression), 2 (MLP) and 3 (random forest) on Pima, one
#: row (mean, std, min, 25%, 50%, 75%, max) per column of ``PAPER_COLUMNS``.
PAPER_TABLES: dict[str, tuple[tuple[float, ...], ...]] = {
    "logistic": (  # Table 1
        (0.835, 0.051, 0.652, 0.809, 0.836, 0.867, 0.941),
        (0.791, 0.045, 0.642, 0.764, 0.792, 0.823, 0.887),
        (0.536, 0.073, 0.500, 0.500, 0.500, 0.546, 0.804),
        (0.5, 0.0, 0.5, 0.5, 0.5, 0.5, 0.5),
        (0.820, 0.050, 0.648, 0.794, 0.818, 0.857, 0.936),
        (0.821, 0.050, 0.651, 0.794, 0.818, 0.857, 0.937),
        (0.817, 0.050, 0.645, 0.785, 0.813, 0.852, 0.930),
        (0.816, 0.050, 0.645, 0.783, 0.813, 0.851, 0.930)),
    "mlp": (  # Table 2
        (0.836, 0.053, 0.671, 0.803, 0.843, 0.871, 0.934),
        (0.778, 0.041, 0.632, 0.754, 0.780, 0.811, 0.848),
        (0.820, 0.049, 0.654, 0.791, 0.820, 0.856, 0.922),
        (0.799, 0.045, 0.645, 0.771, 0.797, 0.831, 0.901),
        (0.825, 0.049, 0.671, 0.792, 0.832, 0.859, 0.938),
        (0.826, 0.049, 0.662, 0.792, 0.833, 0.860, 0.940),
        (0.827, 0.050, 0.663, 0.798, 0.830, 0.862, 0.949),
        (0.825, 0.050, 0.663, 0.794, 0.825, 0.861, 0.949)),
    "random-forest": (  # Table 3
        (0.824, 0.052, 0.670, 0.795, 0.826, 0.860, 0.934),
        (0.777, 0.043, 0.649, 0.752, 0.776, 0.808, 0.891),
        (0.805, 0.052, 0.645, 0.777, 0.806, 0.845, 0.921),
        (0.742, 0.055, 0.571, 0.713, 0.741, 0.771, 0.860),
        (0.804, 0.052, 0.654, 0.779, 0.806, 0.842, 0.923),
        (0.805, 0.052, 0.659, 0.778, 0.806, 0.847, 0.927),
        (0.806, 0.051, 0.657, 0.774, 0.810, 0.845, 0.926),
        (0.803, 0.051, 0.660, 0.772, 0.804, 0.842, 0.911)),
}
#: The paper's Table 4: mean seconds of each collaboration function over its 300 runs
#: (AMD Ryzen 7 5800X; GOPP and RDP in MATLAB through Manopt).
PAPER_SECONDS = {"ls": 0.033, "gep": 0.007, "opp": 0.025, "gopp": 0.038, "rdp-ls": 7.886,
                 "rdp-opp": 10.356}


def box_statistics(values: Sequence[float]) -> dict[str, float]:
    """The numbers a box plot of ``values`` shows, with the mean and the (population) std;
    quartiles interpolate linearly, as pandas' ``describe`` does.

    Examples
    --------
    >>> s = box_statistics([1, 2, 3, 4, 5, 6, 7, 8, 9])
    >>> [s[k] for k in ("min", "q1", "median", "q3", "max", "mean")]
    [1.0, 3.0, 5.0, 7.0, 9.0, 5.0]
    """
    v = np.asarray(values, dtype=float)
    q1, median, q3 = np.percentile(v, [25, 50, 75])
    return {"min": float(v.min()), "q1": float(q1), "median": float(median), "q3": float(q3),
            "max": float(v.max()), "mean": float(v.mean()), "std": float(v.std())}


def paper_statistics(model: str) -> dict[str, dict[str, float]]:
    """The paper's numbers for ``model``, keyed by the methods here they stand beside."""
    out = {}
    for column, row in zip(PAPER_COLUMNS.values(), PAPER_TABLES[model], strict=True):
        mean, std, low, q1, median, q3, high = row
        for name in column:
            out[name] = {"min": low, "q1": q1, "median": median, "q3": q3, "max": high,
                         "mean": mean, "std": std}
    return out


def by_mean_time(seconds: Mapping[str, Sequence[float]]) -> list[str]:
    """Method names from the fastest to the slowest mean time.

    Examples
    --------
    >>> by_mean_time({"gep": [3.0, 1.0], "opp": [1.5, 1.5], "ls": [9.0]})
    ['opp', 'gep', 'ls']
    """
    return sorted(seconds, key=lambda name: (float(np.mean(seconds[name])), name))


def boxplot_svg(values: Mapping[str, Sequence[float]], title: str) -> bytes:
    """One horizontal box plot per method (the first on top), its mean a red dot, as SVG;
    whiskers reach the farthest value within 1.5 IQR of the box, values beyond are circles.

    The figure is a bare ``matplotlib.figure.Figure`` (Agg canvas, no pyplot state); text stays
    text in the SVG (``svg.fonttype: none``), so the method names can be read back from it.
    """
    import matplotlib
    from matplotlib.figure import Figure

    names = list(values)
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        fig = Figure(figsize=(6.4, 0.45 * len(names) + 1.2), dpi=100)
        ax = fig.subplots()
        horizontal = ({"orientation": "horizontal"}  # matplotlib >= 3.10; before, vert=False
                      if "orientation" in inspect.signature(ax.boxplot).parameters
                      else {"vert": False})
        ax.boxplot([np.asarray(values[n], dtype=float) for n in names], **horizontal,
                   showmeans=True, widths=0.6,
                   meanprops={"marker": "o", "markerfacecolor": "red",
                              "markeredgecolor": "red", "markersize": 5},
                   medianprops={"color": "black"},
                   flierprops={"marker": "o", "markersize": 3, "markerfacecolor": "none"})
        ax.set_yticks(range(1, len(names) + 1), names)
        ax.invert_yaxis()
        ax.set_xlabel("ROC-AUC (mean over the workers)")
        ax.set_title(title, fontsize=10)
        ax.grid(axis="x", alpha=0.3)
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="svg")
    return buffer.getvalue()


#: Set by SIGINT or SIGTERM: the seed under way is the last (scikit-learn's MLP swallows a
#: KeyboardInterrupt raised inside its training and returns a half-trained model).
STOP = threading.Event()


def collect(model: str, seeds: int, methods: Sequence[str]
            ) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """ROC-AUC per method (Central and Local from the OPP run) and collaboration seconds, over
    the seeds completed (``STOP`` ends the loop after the seed under way)."""
    auc: dict[str, list[float]] = {"central": [], "local": [], **{m: [] for m in methods}}
    seconds: dict[str, list[float]] = {m: [] for m in methods}
    start = time.perf_counter()
    for seed in range(seeds):
        if STOP.is_set():
            print(f"{model}: stopped after {seed} seeds", file=sys.stderr, flush=True)
            break
        print(f"{model}: seed {seed + 1}/{seeds}, {time.perf_counter() - start:.0f} s",
              file=sys.stderr, flush=True)
        for name in methods:
            result = run(config("pima", seed, model, reference=name == "opp", **METHODS[name]))
            metrics = result.outcome.metrics
            auc[name].append(metrics["roc_auc"])
            seconds[name].append(metrics["collab_seconds"])
            if name == "opp":
                assert result.reference is not None
                auc["central"].append(result.reference.metrics["roc_auc"])
                auc["local"].append(metrics["local_roc_auc"])
    return auc, seconds


def _stop(signum: int, frame: object) -> None:
    STOP.set()


def print_table(model: str, auc: Mapping[str, Sequence[float]]) -> None:
    paper = paper_statistics(model)
    print(f"{'':12} {'':6} " + " ".join(f"{k:>6}" for k in STATISTICS))
    for name, values in auc.items():
        here = box_statistics(values)
        print(f"{name:12} {'here':6} " + " ".join(f"{here[k]:6.3f}" for k in STATISTICS))
        print(f"{'':12} {'paper':6} " + " ".join(f"{paper[name][k]:6.3f}" for k in STATISTICS))


def print_times(seconds: Mapping[str, Sequence[float]]) -> None:
    print("\ncollaboration functions, seconds per run (paper: Table 4, mean of 300 runs)")
    print(f"{'':12} " + " ".join(f"{k:>9}" for k in ("runs", "mean", "median", "max", "paper")))
    for name, values in seconds.items():
        v = np.asarray(values)
        paper = PAPER_SECONDS.get(name.removesuffix(" (paper)"), float("nan"))
        print(f"{name:12} {v.size:9d} {v.mean():9.4f} {np.median(v):9.4f} {v.max():9.4f} "
              f"{paper:9.3f}")
    print("order here (fastest first): " + " < ".join(by_mean_time(seconds)))
    print("order in the paper:         "
          + " < ".join(sorted(PAPER_SECONDS, key=PAPER_SECONDS.__getitem__)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--models", default="logistic,mlp,random-forest")
    parser.add_argument("--methods", default=",".join(METHODS),
                        help="collaboration functions to run (opp gives Central and Local too)")
    parser.add_argument("--plots", type=Path, default=None, help="folder for one SVG per model")
    args = parser.parse_args()
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if "opp" not in methods or not set(methods) <= set(METHODS):
        parser.error(f"--methods must include opp and name only {', '.join(METHODS)}")
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    seconds: dict[str, list[float]] = {m: [] for m in methods}
    for model in models:
        start = time.perf_counter()
        auc, spent = collect(model, args.seeds, methods)
        n_seeds = len(auc["central"])
        if n_seeds == 0:
            continue
        table = {"logistic": 1, "mlp": 2, "random-forest": 3}[model]
        print(f"\npima: 13 workers x 50, 100 test rows, {model}, {n_seeds} seeds "
              f"({time.perf_counter() - start:.0f} s); paper: Table {table}, 100 distributions")
        print_table(model, auc)
        for name, values in spent.items():
            seconds[name].extend(values)
        if args.plots is not None:
            args.plots.mkdir(parents=True, exist_ok=True)
            path = args.plots / f"nri_dc_{model}.svg"
            path.write_bytes(boxplot_svg(auc, f"Pima, {model}: ROC-AUC over {n_seeds} "
                                              "seeded distributions (red dot: mean)"))
            print(f"wrote {path}")
    print_times(seconds)


if __name__ == "__main__":
    main()
