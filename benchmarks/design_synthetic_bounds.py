"""Design measurement for DPSyntheticData: private bounds of numeric columns.

On generated data (not a benchmark table), how close each synthetic
numeric column comes to the real one when its bounds are released
privately (``bounds=None``, the default) and when they are declared
(``bounds=`` the public range a user would know).  Two categorical
columns ``a`` and ``b`` of 3 values each (uniform) and three numeric ones:
``N(5 + 2a, 3)``, ``exp(N(8 + 0.3 b, 1))`` (a "dollar" column, heavy right
tail) and ``N(0.3 a, 1)``.  The declared bounds are the columns' 0.5% and
99.5% quantiles in a large sample of the generator drawn with another
seed (public knowledge of the column's range, not the training rows).

Each fit is ``DPSyntheticData(epsilon, delta=1e-9, domain={0: 3, 1: 3},
random_state=seed)`` on ``n`` rows; it then samples ``n`` rows.  The error
of a numeric column is the Wasserstein-1 distance between the synthetic
and the real column, over the real column's standard deviation: 0 is
exact, about 1 is a distribution off by a standard deviation.  Medians
over seeds 0 to 4.

Usage::

    python benchmarks/design_synthetic_bounds.py            # full (minutes)
    python benchmarks/design_synthetic_bounds.py --quick    # CI's subset

Writes ``docs/benchmarks/_generated/design_synthetic_bounds.md`` (or
``.quick.md``), read by the DPSyntheticData design page.
"""

import argparse
import os
import sys

import numpy as np
from scipy.stats import wasserstein_distance

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from report import Report  # noqa: E402

from skdpopt import DPSyntheticData  # noqa: E402

COLUMNS = ("N(5, 3)", "dollars", "N(0, 1)")
SIZES = (3_000, 20_000)
EPSILONS = (0.5, 1.0, 3.0)
SEEDS = range(5)
# The seed of the large public sample the declared bounds come from.
PUBLIC_SEED = 12345


def generate(n, rng):
    """Columns a, b (codes 0..2) then the three numeric columns."""
    a = rng.integers(0, 3, size=n)
    b = rng.integers(0, 3, size=n)
    numeric = np.column_stack([
        rng.normal(5.0 + 2.0 * a, 3.0),
        np.exp(rng.normal(8.0 + 0.3 * b, 1.0)),
        rng.normal(0.3 * a, 1.0),
    ])
    return np.column_stack([a, b, numeric])


def declared_bounds():
    public = generate(1_000_000, np.random.default_rng(PUBLIC_SEED))[:, 2:]
    low, high = np.quantile(public, [0.005, 0.995], axis=0)
    return {2 + j: (float(low[j]), float(high[j])) for j in range(3)}


def column_errors(X, bounds, epsilon, seed):
    model = DPSyntheticData(epsilon=epsilon, delta=1e-9, domain={0: 3, 1: 3},
                            bounds=bounds, random_state=seed).fit(X)
    synthetic = np.asarray(model.sample(len(X), random_state=seed), dtype=float)
    return [wasserstein_distance(synthetic[:, j], X[:, j]) / X[:, j].std()
            for j in range(2, 5)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="3,000 rows at epsilon 1, seeds 0 and 1")
    Report.add_arguments(parser)
    args = parser.parse_args()
    report = Report("design_synthetic_bounds", args)
    sizes = SIZES[:1] if args.quick else SIZES
    epsilons = (1.0,) if args.quick else EPSILONS
    seeds = range(2) if args.quick else SEEDS
    declared = declared_bounds()
    rows = []
    for n in sizes:
        for epsilon in epsilons:
            private, public = [], []
            for seed in seeds:
                X = generate(n, np.random.default_rng(seed))
                private.append(column_errors(X, None, epsilon, seed))
                public.append(column_errors(X, declared, epsilon, seed))
            private = np.median(private, axis=0)
            public = np.median(public, axis=0)
            row = [f"{n:,}", f"{epsilon:g}"]
            row += [f"{p:.3f} / {d:.3f}" for p, d in zip(private, public, strict=True)]
            rows.append(row)
            print(" | ".join(row), flush=True)
    report.table(
        "bounds",
        "Wasserstein-1 error over the real column's standard deviation, "
        "private bounds / declared bounds (medians over seeds "
        f"{seeds[0]} to {seeds[-1]})",
        ["n", "epsilon", *[f"{c} private / declared" for c in COLUMNS]],
        rows)
    report.write()


if __name__ == "__main__":
    main()
