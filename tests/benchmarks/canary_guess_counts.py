"""How many canaries to guess: the one-run bound on the Gaussian mechanism itself, per guess
schedule, claim and epsilon (plain script).

Run: ``python tests/benchmarks/canary_guess_counts.py [--audits 200] [--canaries 1000]``.

For accountant epsilon 2, 4 and 8 (delta 1e-5, sensitivity 1, the analytic Gaussian
mechanism's noise), ``--audits`` white-box audits of ``--canaries`` orthogonal canaries
(:func:`fedsec.privacy.canary.gaussian_mechanism_audit`) under each guess schedule (the
``(n_included, n_excluded)`` counts tried, the union bound splitting beta over them) and each
claim (``gaussian``: the Gaussian trade-off curve; ``any``: any (epsilon, delta)-DP
mechanism). Prints the median and largest bound as fractions of epsilon. This is the
measurement behind :data:`fedsec.privacy.canary.GUESS_FRACTIONS`; every audit of one epsilon
and schedule draws from the same seed, so the schedules meet the same noise.
"""

from __future__ import annotations

import argparse

import numpy as np

from fedsec.privacy.canary import gaussian_mechanism_audit
from fedsec.privacy.gaussian import gaussian_sigma

SCHEDULES = {"5%": (0.05,), "5% + 10%": (0.05, 0.1), "2.5% + 5% + 10%": (0.025, 0.05, 0.1),
             "1% to 50%": (0.01, 0.05, 0.1, 0.25, 0.5)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--audits", type=int, default=200)
    parser.add_argument("--canaries", type=int, default=1000)
    args = parser.parse_args()
    m = args.canaries
    print(f"{args.audits} audits of {m} canaries each; median (largest) bound / epsilon")
    print(f"{'schedule':<18}{'claim':<10}" + "".join(f"{f'epsilon {e}':>16}" for e in (2, 4, 8)))
    for name, fractions in SCHEDULES.items():
        counts = sorted({(max(1, int(f * m)),) * 2 for f in fractions})
        for claim in ("gaussian", "any"):
            cells = []
            for epsilon in (2, 4, 8):
                sigma = gaussian_sigma(epsilon, 1e-5)
                rng = np.random.default_rng(100 + epsilon)
                bounds = [gaussian_mechanism_audit(m, sigma, 1.0, rng, n_guesses=counts,
                                                   delta=1e-5, claim=claim).epsilon / epsilon
                          for _ in range(args.audits)]
                cells.append(f"{np.median(bounds):.2f} ({max(bounds):.2f})")
            print(f"{name:<18}{claim:<10}" + "".join(f"{c:>16}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
