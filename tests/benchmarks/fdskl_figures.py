"""FDSKL's Figures 3, 5 and 6 (a plain script): the paper's claims beside what fedsec measures.

Run ``python tests/benchmarks/fdskl_figures.py COMMAND`` with COMMAND one of:

* ``figure3`` — test error against training time: FDSKL (the federated run, four workers,
  the protocol's wall time) and centralized DSG at ``--iterations`` (comma-separated), next
  to scikit-learn's SVC (LIBSVM, the same RBF kernel and width, C=1) stopped after
  ``max_iter`` SMO steps and run to convergence; breast_cancer and the 20,000-sample
  synthetic task. The paper: FDSKL converges fastest among the kernel methods.
* ``figure5`` — training time against the number of training rows (``--sizes``: the first n
  of the 20,000-sample task's 15,000 training rows, the test rows fixed) for FDSKL at
  ``--fixed-iterations`` and at one pass (T = n), and for SVC, with the log-log slope (the
  growth exponent) of each. The paper: FDSKL scales much better than PP-SVMV (a kernel
  method whose kernel matrix travels around a cycle); SVC is the centralized stand-in here.
* ``figure6`` — test error over ``--splits`` train-test splits (split seeds 0, 1, ...) as a
  text box plot (min, q1, median, q3, max, mean; then the standard deviation and the mean
  training error) for FDSKL (its defaults, or ``--set KEY=VALUE``), SVC, kernel ridge and
  logistic regression on the pooled features (what a vertical linear method such as FD-SVRG
  converges to); breast_cancer, ionosphere, sonar. The paper: FDSKL has the lowest test
  error and variance.

Every parameter is a default or is computed from the training rows (the width: the "scale"
statistics FDSKL itself uses); nothing is chosen on test data. Times are wall-clock seconds,
the median of ``--repeat`` runs, with one BLAS thread (as ``fedsec run``), training and test
prediction included for every method; FDSKL's transcript is kept in memory.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from fedsec.data import Dataset, load
from fedsec.federation import Federation
from fedsec.network import Network
from fedsec.partition import parse_partition
from fedsec.protocols.fdskl import dsg
from fedsec.protocols.fdskl import protocol as fdskl
from fedsec.registry import create
from fedsec.runner import RunConfig, RunResult, data_split, run
from fedsec.seeding import generator
from fedsec.threads import limited_threads
from fedsec.transcript import TranscriptWriter

PARTITION = "vertical:parties=4"
SYNTHETIC = {"n_samples": 20000, "n_features": 4, "n_informative": 2, "seed": 0}
"""The 20,000-sample task of ``bench_fdskl.py`` (4 features, 2 informative)."""
BOX = ("min", "q1", "median", "q3", "max", "mean")

Point = tuple[float, float]
"""(seconds, test error) of one run."""
Predict = Callable[[np.ndarray], np.ndarray]
"""A fitted classifier's predict: rows to classes 0 and 1."""


def box_summary(values: Sequence[float] | np.ndarray) -> dict[str, float]:
    """Min, quartiles (linear interpolation), max and mean of ``values``.

    Examples
    --------
    >>> box_summary([1.0, 2.0, 3.0, 4.0, 5.0])["q1"]
    2.0
    """
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        raise ValueError("box_summary needs at least one value.")
    q = np.percentile(v, [0, 25, 50, 75, 100])
    return {**dict(zip(BOX[:5], (float(x) for x in q), strict=True)), "mean": float(v.mean())}


def box_text(box: dict[str, float], low: float, high: float, width: int = 40) -> str:
    """A one-line box plot of ``box`` on the axis ``[low, high]``: whiskers ``-``, the box
    ``=``, the median ``|`` and the mean ``*`` (drawn last, so it shows where they meet).

    Examples
    --------
    >>> box_text({"min": 0, "q1": 1, "median": 2, "q3": 3, "max": 4, "mean": 2}, 0, 4, 9)
    '--==*==--'
    """
    span = high - low if high > low else 1.0

    def at(x: float) -> int:
        return min(width - 1, max(0, round((x - low) / span * (width - 1))))

    line = [" "] * width
    for i in range(at(box["min"]), at(box["max"]) + 1):
        line[i] = "-"
    for i in range(at(box["q1"]), at(box["q3"]) + 1):
        line[i] = "="
    line[at(box["median"])] = "|"
    line[at(box["mean"])] = "*"
    return "".join(line)


def loglog_slope(sizes: Sequence[float] | np.ndarray, seconds: Sequence[float] | np.ndarray
                 ) -> float:
    """Least-squares slope of log(seconds) against log(sizes): the exponent ``k`` of
    ``seconds ~ sizes^k``.

    Examples
    --------
    >>> round(loglog_slope([1, 2, 4, 8], [3, 12, 48, 192]), 6)
    2.0
    """
    x, y = np.log(np.asarray(sizes, dtype=float)), np.log(np.asarray(seconds, dtype=float))
    if x.size < 2 or np.ptp(x) == 0:
        raise ValueError("loglog_slope needs at least two distinct sizes.")
    return float(np.polyfit(x, y, 1)[0])


def time_to_reach(curve: Sequence[Point], target: float) -> float:
    """The least time at which a curve's error is at most ``target`` (inf if never).

    Examples
    --------
    >>> time_to_reach([(2.0, 0.1), (1.0, 0.3), (4.0, 0.05)], 0.2)
    2.0
    """
    times = [t for t, error in curve if error <= target]
    return min(times) if times else float("inf")


def synthetic_split(seed: int = 0) -> tuple[Dataset, Dataset]:
    """The 20,000-sample task, split (15,000 training rows) and scaled as the runner does."""
    parts = load("classification", **SYNTHETIC).split(
        test_size=0.25, rng=generator(seed, "split")).scaled("minmax")
    return parts.train, parts.test


def median_run(fit: Callable[[], tuple[float, float, float]], repeat: int
               ) -> tuple[float, float, float]:
    """(test error, median seconds, width) of ``repeat`` identical runs of ``fit``."""
    runs = [fit() for _ in range(repeat)]
    return runs[0][0], float(np.median([r[1] for r in runs])), runs[0][2]


def named_split(name: str, split_seed: int) -> tuple[Dataset, Dataset]:
    """The rows a run of FDSKL on ``name`` with ``split_seed`` trains and tests on."""
    parts = data_split(RunConfig(protocol="fdskl", dataset=name, split_seed=split_seed))
    return parts.train, parts.test


def fdskl_result(name: str, params: dict, split_seed: int) -> RunResult:
    """FDSKL through the runner on split ``split_seed`` (also its secret seed), no reference."""
    return run(RunConfig(protocol="fdskl", dataset=name, partition=PARTITION, params=params,
                         split_seed=split_seed, secret_seed=split_seed, reference=False))


def fdskl_named(name: str, params: dict, split_seed: int) -> tuple[float, float, float]:
    """FDSKL through the runner: (test error, the protocol's wall seconds, kernel width)."""
    result = fdskl_result(name, params, split_seed)
    metrics = result.outcome.metrics
    return (metrics["test_error"], result.record.cost["total"]["wall_seconds"],
            metrics["kernel_width"])


def fdskl_on(train: Dataset, test: Dataset, params: dict, seed: int = 0
             ) -> tuple[float, float, float]:
    """FDSKL on dataset objects (the runner takes the synthetic task's options as text, and
    ``n_informative`` would reach the loader as a string), timed as the runner times it."""
    part = parse_partition(PARTITION).apply(
        n_samples=train.n_samples, feature_groups=train.feature_groups, y=train.y,
        rng=generator(seed, "partition"))
    network = Network(TranscriptWriter({"parties": dict(part.roles)}), part.roles)
    federation = Federation.from_partition(part, train, seed=seed, secret_seed=seed,
                                           network=network, test=test)
    with limited_threads():
        start = time.perf_counter()
        outcome = fdskl.FDSKL(**params).run(federation, create("backend", "plain"))
        elapsed = time.perf_counter() - start
    network.close()
    return outcome.metrics["test_error"], elapsed, outcome.metrics["kernel_width"]


def timed(fit: Callable[[], float], repeat: int = 1) -> Point:
    """(median seconds, error) of ``repeat`` calls of ``fit``, which trains, predicts and
    returns the test error."""
    seconds = []
    with limited_threads(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SVC stopped early warns that it did not converge
        for _ in range(repeat):
            start = time.perf_counter()
            error = fit()
            seconds.append(time.perf_counter() - start)
    return float(np.median(seconds)), error


def error(predict: Predict, data: Dataset) -> float:
    """The fraction of ``data``'s rows whose class ``predict`` gets wrong."""
    return float(np.mean(np.asarray(predict(data.X)) != data.y))


def svc_fit(train: Dataset, width: float, max_iter: int = -1) -> Predict:
    """LIBSVM's SVC (C=1) with the RBF kernel of ``width``, fitted on ``train``."""
    from sklearn.svm import SVC

    return SVC(gamma=1.0 / (2 * width**2), max_iter=max_iter).fit(train.X, train.y).predict


def svc_error(train: Dataset, test: Dataset, width: float, max_iter: int = -1) -> float:
    """Test error of :func:`svc_fit`."""
    return error(svc_fit(train, width, max_iter), test)


def ridge_fit(train: Dataset, width: float) -> Predict:
    """Kernel ridge (alpha=0.1, ±1 targets) with the RBF kernel of ``width``; class: the sign."""
    from sklearn.kernel_ridge import KernelRidge

    model = KernelRidge(alpha=0.1, kernel="rbf", gamma=1.0 / (2 * width**2))
    model.fit(train.X, 2.0 * train.y - 1)
    return lambda X: (model.predict(X) > 0).astype(int)


def linear_fit(train: Dataset) -> Predict:
    """L2 logistic regression (C=1) on the pooled features."""
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(max_iter=1000).fit(train.X, train.y).predict


def dsg_error(train: Dataset, test: Dataset, n_iterations: int, seed: int = 0) -> float:
    """Test error of centralized DSG with FDSKL's defaults and keys."""
    outcome = dsg.reference_outcome(dsg.DSGParams(n_iterations=n_iterations), train, test, seed)
    return outcome.metrics["test_error"]


def figure3_curves(name: str, iterations: Sequence[int], svc_steps: Sequence[int],
                   repeat: int) -> dict[str, list[Point]]:
    """(median seconds, test error) per method at each iteration count (SVC: step limit)."""
    if name == "synthetic":
        train, test = synthetic_split()
    else:
        train, test = named_split(name, 0)
    curves: dict[str, list[Point]] = {"FDSKL": [], "DSG": [], "SVC": []}
    width = 0.0
    for T in iterations:
        fit = (partial(fdskl_on, train, test, {"n_iterations": T}) if name == "synthetic"
               else partial(fdskl_named, name, {"n_iterations": T}, 0))
        error, seconds, width = median_run(fit, repeat)
        curves["FDSKL"].append((seconds, error))
        curves["DSG"].append(timed(partial(dsg_error, train, test, T), repeat))
    for steps in svc_steps:
        curves["SVC"].append(timed(partial(svc_error, train, test, width, steps), repeat))
    return curves


def figure3(args: argparse.Namespace) -> None:
    iterations = [int(v) for v in args.iterations.split(",")]
    svc_steps = [int(v) for v in args.svc_steps.split(",")]
    print(f"Figure 3: test error (%) against training time (s, median of {args.repeat}); FDSKL "
          "and DSG at T iterations, SVC at max_iter SMO steps (-1: to convergence)")
    for name in args.datasets.split(","):
        curves = figure3_curves(name, iterations, svc_steps, args.repeat)
        print(f"  {name}")
        labels = {"FDSKL": iterations, "DSG": iterations, "SVC": svc_steps}
        for method, curve in curves.items():
            cells = "  ".join(f"{k}: {t:.3f}s {100 * e:.2f}%"
                              for k, (t, e) in zip(labels[method], curve, strict=True))
            print(f"    {method:5s} {cells}")
        target = curves["SVC"][-1][1] + 0.01
        reach = {m: time_to_reach(c, target) for m, c in curves.items()}
        order = sorted(reach, key=reach.__getitem__)
        print(f"    time to within 1 pp of converged SVC ({100 * target:.2f}%): "
              + ", ".join(f"{m} {reach[m]:.3f}s" for m in order)
              + f"; claim (FDSKL fastest): {'holds' if order[0] == 'FDSKL' else 'does not hold'}"
              f" here ({order[0]} first)")


def figure5(args: argparse.Namespace) -> None:
    sizes = [int(v) for v in args.sizes.split(",")]
    fixed, repeat = args.fixed_iterations, args.repeat
    full, test = synthetic_split()
    print(f"Figure 5: training time (s, median of {repeat}) against training rows (the first n "
          f"of the {full.n_samples:,} training rows of the 20,000-sample task, tested on its "
          f"{test.n_samples:,} test rows); FDSKL at T={fixed} iterations and at one pass (T = n); "
          "SVC to convergence; test error in %")
    print("       n     FDSKL T fixed      FDSKL one pass        SVC")
    columns: dict[str, list[float]] = {"fixed": [], "pass": [], "svc": []}
    for n in sizes:
        train = full.subset(np.arange(n))
        e_fixed, t_fixed, width = median_run(
            partial(fdskl_on, train, test, {"n_iterations": fixed}), repeat)
        e_pass, t_pass, _ = median_run(partial(fdskl_on, train, test, {"n_iterations": n}), repeat)
        t_svc, e_svc = timed(partial(svc_error, train, test, width), repeat)
        for key, value in (("fixed", t_fixed), ("pass", t_pass), ("svc", t_svc)):
            columns[key].append(value)
        print(f"  {n:6d}  {t_fixed:7.2f} s {100 * e_fixed:5.2f}%  {t_pass:8.2f} s "
              f"{100 * e_pass:5.2f}%  {t_svc:6.2f} s {100 * e_svc:5.2f}%", flush=True)
    slopes = {key: loglog_slope(sizes, value) for key, value in columns.items()}
    print(f"  log-log slope (time ~ n^k): FDSKL T fixed k={slopes['fixed']:.2f}, FDSKL one "
          f"pass k={slopes['pass']:.2f}, SVC k={slopes['svc']:.2f}")


def figure6_errors(name: str, splits: int, params: dict
                   ) -> dict[str, tuple[list[float], list[float]]]:
    """Test and training errors of every method on split seeds ``0 .. splits - 1``."""
    methods = ("FDSKL", "SVC", "kernel ridge", "logistic (linear)")
    errors: dict[str, tuple[list[float], list[float]]] = {m: ([], []) for m in methods}
    for s in range(splits):
        train, test = named_split(name, s)
        result = fdskl_result(name, params, s)
        width = result.outcome.metrics["kernel_width"]
        model = result.outcome.model
        assert model is not None
        fits = (model.predict, svc_fit(train, width), ridge_fit(train, width),
                linear_fit(train))
        for method, predict in zip(methods, fits, strict=True):
            errors[method][0].append(error(predict, test))
            errors[method][1].append(error(predict, train))
    return errors


def parse_sets(items: Sequence[str]) -> dict[str, int | float | str]:
    """``KEY=VALUE`` items as FDSKL parameters: an int, else a float, else the text.

    Examples
    --------
    >>> parse_sets(["n_iterations=24000", "step=0.5", "loss=smooth-hinge"])
    {'n_iterations': 24000, 'step': 0.5, 'loss': 'smooth-hinge'}
    """
    params: dict[str, int | float | str] = {}
    for item in items:
        key, eq, text = item.partition("=")
        if not eq or not key:
            raise ValueError(f"--set takes KEY=VALUE; got {item!r}.")
        for kind in (int, float):
            try:
                params[key] = kind(text)
                break
            except ValueError:
                continue
        else:
            params[key] = text
    return params


def figure6(args: argparse.Namespace) -> None:
    params = parse_sets(args.set)
    label = ", ".join(f"{k}={v}" for k, v in params.items()) or "defaults (6,000 iterations)"
    print(f"Figure 6: test error (%) over split seeds 0-{args.splits - 1}; FDSKL at {label}; "
          "box: - whiskers, = quartiles, | median, * mean")
    for name in args.datasets.split(","):
        errors = figure6_errors(name, args.splits, params)
        tests = {m: 100 * np.asarray(e[0]) for m, e in errors.items()}
        boxes = {m: box_summary(e) for m, e in tests.items()}
        low = min(b["min"] for b in boxes.values())
        high = max(b["max"] for b in boxes.values())
        print(f"  {name} (axis {low:.2f}% to {high:.2f}%)")
        print("    method               " + " ".join(f"{k:>6s}" for k in BOX)
              + "    sd  train")
        sds = {m: float(np.std(e, ddof=1)) for m, e in tests.items()}
        for method, box in boxes.items():
            train_error = 100 * float(np.mean(errors[method][1]))
            print(f"    {method:20s} " + " ".join(f"{box[k]:6.2f}" for k in BOX)
                  + f" {sds[method]:5.2f} {train_error:6.2f}  {box_text(box, low, high)}")
        best_mean = min(boxes, key=lambda m: boxes[m]["mean"])
        best_sd = min(sds, key=sds.__getitem__)
        holds = best_mean == "FDSKL" and best_sd == "FDSKL"
        print(f"    lowest mean: {best_mean}; lowest sd: {best_sd}; claim (FDSKL lowest error "
              f"and variance): {'holds' if holds else 'does not hold'} here")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["figure3", "figure5", "figure6"])
    parser.add_argument("--datasets", default=None)
    parser.add_argument("--iterations", default="250,500,1000,2000,4000,8000")
    parser.add_argument("--svc-steps", default="10,30,100,300,1000,-1")
    parser.add_argument("--sizes", default="1875,3750,7500,15000")
    parser.add_argument("--fixed-iterations", type=int, default=4000)
    parser.add_argument("--splits", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="an FDSKL parameter for figure6 (repeatable)")
    args = parser.parse_args()
    if args.datasets is None:
        args.datasets = ("breast_cancer,synthetic" if args.command == "figure3"
                         else "breast_cancer,ionosphere,sonar")
    {"figure3": figure3, "figure5": figure5, "figure6": figure6}[args.command](args)


if __name__ == "__main__":
    main()
