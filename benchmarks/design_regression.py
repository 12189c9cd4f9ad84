"""Design measurements for the regressors' defaults (DPSGDRegressor, DPLasso).

Design data only: the panel's **design** half (``panel_data.PANEL`` with
``half == "design"``) and generated families; the report half is never
read here.  Seeds 100 and up for the generated data.

* ``panel``: the design half's regression tables through the documented
  private pipeline (``make_private_pipeline(default_preprocessor(spec),
  estimator)``) and, to separate the estimator from the scaler, through
  an exact (non-private) scaler: ``make_pipeline(public_preprocessor(spec),
  estimator)``, the estimator with the share of the budget it gets in the
  pipeline (an oracle no user has).  Fraction of the non-private gain, as
  ``bench_panel.py`` reports it (non-private reference: Ridge(alpha=1) on
  standardised features; trivial: the training mean).
* ``families``: generated regression sets whose features are already on
  a unit scale (so only the target handling varies), n in {2,000,
  20,000}, d = 10: a linear target plus noise (``base``), shifted by 100
  (``offset``), multiplied by 1,000 (``scale``), with Student-t(2) noise
  (``heavy``), exponentiated (``skewed``: a log-normal target), and a
  sparse design (d = 50, 5 informative columns, ``sparse``) with the
  informative columns in correlated pairs (``pairs``).
* ``clip_check``: on every design table (all tasks), the share of rows
  with a value beyond 1, 2, 4 and 10 after the documented private
  preprocessing (epsilon = 1) and after an exact scaler: what DPLasso's
  clip check (rows beyond ``FAR_FACTOR`` feature bounds of 1) sees on the
  documented path; written to ``design_regression.clip_check.md``
  (``--quick``: the first design tables, ``.quick.md``) with the check's
  noise and the clipped normal's correlation that
  ``docs/privacy/clipping.md`` quotes.
* ``support``: DPLasso's support recall on the sparse design of the
  earlier defaults benchmark (n = 20,000, p = 2,000, features uniform in
  [-1, 1], 15 coefficients +-1, noise 0.5, targets clipped to [-6, 6])
  with each informative column paired with a second informative column
  correlated 0.8 with it (``pairs``: 8 pairs and one single column).

Every variant is a dict of estimator parameters (``--variant NAME`` picks
from ``VARIANTS``; extra ``key=value`` pairs with ``--set``); module
constants can be changed for a run with ``--patch module.NAME=value``
(applied in every worker), to measure a default before it is one.

Usage::

    python benchmarks/design_regression.py --task panel --estimator DPSGDRegressor
    python benchmarks/design_regression.py --task families --estimator DPLasso
    python benchmarks/design_regression.py --task support
    python benchmarks/design_regression.py --task clip_check [--quick]
"""

import argparse
import ast
import importlib
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from sklearn.linear_model import Ridge
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

from panel_data import (  # noqa: E402
    PANEL,
    default_preprocessor,
    load_table,
    public_preprocessor,
)
from report import Report  # noqa: E402

import skdpopt  # noqa: E402
from skdpopt.exceptions import UtilityWarning  # noqa: E402

SEEDS = (100, 101, 102, 103, 104)
EPSILONS = (0.3, 1.0, 3.0)
DESIGN_TABLES = [s for s in PANEL if s.half == "design" and s.task == "regression"]


def apply(patches):
    """Set module constants (``{"skdpopt.plans.lasso.ALPHA_RATIO": 0.01}``)
    in this process: the estimators read them at fit time."""
    for target, value in (patches or {}).items():
        module, name = target.rsplit(".", 1)
        setattr(importlib.import_module(module), name, value)
        for alias in ("skdpopt.lasso", "skdpopt.sgd"):  # names imported by value
            if hasattr(importlib.import_module(alias), name):
                setattr(importlib.import_module(alias), name, value)


def fraction(private, nonprivate, trivial):
    return (private - trivial) / (nonprivate - trivial)


def _fit_score(model, X_tr, y_tr, X_te, y_te):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X_tr, y_tr)
        score = r2_score(y_te, model.predict(X_te))
    warned = any(issubclass(w.category, UtilityWarning) for w in caught)
    return score, warned


def panel_run(spec, seed, estimator, params, epsilons, patches=None):
    """Scores of one design table and seed: private and exact scaler."""
    apply(patches)
    X, y, _ = load_table(spec.name, max_rows=200_000, random_state=seed)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25,
                                              random_state=seed)
    delta = 1.0 / len(y_tr) ** 2
    reference = make_pipeline(public_preprocessor(spec), Ridge(alpha=1.0))
    nonprivate = r2_score(y_te, reference.fit(X_tr, y_tr).predict(X_te))
    trivial = r2_score(y_te, np.full(len(y_te), y_tr.mean()))
    out = []
    cls = getattr(skdpopt, estimator)
    for eps in epsilons:
        for scaler in ("private", "exact"):
            if scaler == "private":
                # The pipeline splits its budget between the scaler and the
                # estimator.
                model = skdpopt.make_private_pipeline(
                    default_preprocessor(spec), cls(**params), epsilon=eps,
                    delta=delta)
                names = [k for k in model.get_params() if k.endswith("random_state")]
                model.set_params(**dict.fromkeys(names, seed))
            else:
                # The estimator's share of the pipeline's budget, as in
                # the documented path.
                share = 1.0 - skdpopt.pipeline.PREPROCESSING_SHARE
                model = make_pipeline(public_preprocessor(spec), cls(
                    epsilon=share * eps, delta=share * delta, random_state=seed,
                    **params))
            score, warned = _fit_score(model, X_tr, y_tr, X_te, y_te)
            out.append(dict(table=spec.name, n=len(y), seed=seed, epsilon=eps,
                            scaler=scaler, score=score, warned=warned,
                            below=score < trivial,
                            fraction=fraction(score, nonprivate, trivial)))
    return out


def family(name, seed, n_samples):
    """A generated set: (X, y) with features on a unit scale."""
    rng = np.random.default_rng(seed)
    d = 50 if name in ("sparse", "pairs") else 10
    X = rng.normal(size=(n_samples, d))
    coef = rng.normal(size=d) / np.sqrt(d)
    if name in ("sparse", "pairs"):
        coef = np.zeros(d)
        coef[:6] = rng.choice([-1.0, 1.0], 6) * rng.uniform(0.3, 1.0, 6)
        if name == "pairs":  # columns (0, 1), (2, 3), (4, 5) correlated 0.8
            X[:, 1::2][:, :3] = 0.8 * X[:, 0:6:2] + 0.6 * X[:, 1:6:2]
    signal = X @ coef
    noise = rng.normal(size=n_samples)
    if name == "heavy":
        noise = rng.standard_t(2, size=n_samples)
    y = signal + noise
    if name == "offset":
        y = y + 100.0
    elif name == "scale":
        y = 1000.0 * y
    elif name == "skewed":
        y = np.exp(0.5 * y)
    return X, y


FAMILIES = ("base", "offset", "scale", "heavy", "skewed", "sparse", "pairs")


def family_run(name, seed, n_samples, estimator, params, epsilons, patches=None):
    apply(patches)
    X, y = family(name, seed, n_samples)
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.25,
                                              random_state=seed)
    delta = 1.0 / len(y_tr) ** 2
    reference = make_pipeline(StandardScaler(), Ridge(alpha=1.0))
    nonprivate = r2_score(y_te, reference.fit(X_tr, y_tr).predict(X_te))
    trivial = r2_score(y_te, np.full(len(y_te), y_tr.mean()))
    cls = getattr(skdpopt, estimator)
    out = []
    for eps in epsilons:
        est = cls(epsilon=eps, delta=delta, random_state=seed, **params)
        score, warned = _fit_score(est, X_tr, y_tr, X_te, y_te)
        out.append(dict(table=f"{name}-{n_samples}", n=n_samples, seed=seed,
                        epsilon=eps, scaler="none", score=score, warned=warned,
                        below=score < trivial,
                        fraction=fraction(score, nonprivate, trivial)))
    return out


def support_design(seed, n_samples=20_000, n_features=2_000, n_true=15,
                   correlation=0.8):
    """The earlier defaults benchmark's sparse design, informative columns
    in correlated pairs (columns 2k and 2k + 1 of the support)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, size=(n_samples, n_features))
    support = rng.choice(n_features, n_true, replace=False)
    first, second = support[0:n_true - 1:2], support[1:n_true:2]
    # Uniform columns mixed and clipped back into [-1, 1].
    X[:, second] = np.clip(correlation * X[:, first]
                           + np.sqrt(1 - correlation**2) * X[:, second], -1, 1)
    coef = np.zeros(n_features)
    coef[support] = rng.choice([-1.0, 1.0], n_true)
    y = np.clip(X @ coef + 0.5 * rng.normal(size=n_samples), -6.0, 6.0)
    return X, y, coef != 0


def support_run(seed, params, epsilon, patches=None):
    apply(patches)
    X, y, truth = support_design(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = skdpopt.DPLasso(epsilon=epsilon, delta=1.0 / len(y) ** 2,
                                random_state=seed, **params).fit(X, y)
    chosen = model.coef_ != 0
    return dict(seed=seed, recall=np.sum(chosen & truth) / truth.sum(),
                precision=np.sum(chosen & truth) / max(chosen.sum(), 1))


CLIP_LEVELS = (1, 2, 4, 10)
# The quick run's tables (CI): the first design tables, a few seconds.
QUICK_CLIP_TABLES = 3


def clip_check(report):
    """Shares of rows beyond 1, 2, 4 and 10 after the preprocessing, and
    the check's noise and the clipped normal's correlation the page
    quotes."""
    from scipy import integrate, stats

    from skdpopt.accounting.zcdp import rho_for
    from skdpopt.plans.clipping import CLIP_CHECK_SHARE, FAR_FACTOR
    from skdpopt.plans.clipping import clip_check as plan_check

    specs = [s for s in PANEL if s.half == "design"]
    specs = specs[:QUICK_CLIP_TABLES] if report.quick else specs
    rows, peaks = [], {c: [] for c in CLIP_LEVELS}
    for spec in specs:
        X, y, _ = load_table(spec.name, max_rows=20_000, random_state=0)
        private = skdpopt.make_private_pipeline(
            default_preprocessor(spec), epsilon=1.0, delta=1e-8, random_state=0)
        for name, Z in (("private", private.fit_transform(X, y)),
                        ("exact", public_preprocessor(spec).fit_transform(X))):
            peak = np.abs(np.asarray(Z, dtype=float)).max(axis=1)
            shares = [np.mean(peak > c) for c in CLIP_LEVELS]
            for c, share in zip(CLIP_LEVELS, shares, strict=True):
                peaks[c].append(share)
            rows.append([spec.name, name, Z.shape[1],
                         *(f"{v:.3f}" for v in shares)])
    report.table(
        "shares", "Share of the rows with a value beyond c after the "
        "preprocessing (the default private one at epsilon = 1, seed 0, or "
        "an exact scaler); at most 20,000 rows per table",
        ["table", "scaler", "d", *(f"> {c}" for c in CLIP_LEVELS)], rows)
    for c in (FAR_FACTOR, 10):
        report.value(f"max_beyond_{c:g}", f"{100 * max(peaks[c]):.1f}%")
    for n in (2_000, 5_000):
        rho = CLIP_CHECK_SHARE * rho_for(1.0, 1.0 / n**2)
        report.value(f"noise_rows_n{n}",
                     f"{plan_check(rho, epsilon=1.0).noise_multiplier:.0f}")
    # corr(X, clip(X, -1, 1)) for a standard normal X: E[X clip(X)] over
    # the two standard deviations (the first is 1).
    moment = integrate.quad(lambda x: x * np.clip(x, -1, 1) * stats.norm.pdf(x),
                            -np.inf, np.inf)[0]
    second = integrate.quad(lambda x: np.clip(x, -1, 1) ** 2 * stats.norm.pdf(x),
                            -np.inf, np.inf)[0]
    report.value("clipped_normal_correlation", f"{moment / np.sqrt(second):.2f}")


VARIANTS = {"defaults": {}}


def summarise(records):
    import pandas as pd

    frame = pd.DataFrame(records)
    per = (frame.groupby(["scaler", "table", "epsilon"])
           .agg(fraction=("fraction", "median"), below=("below", "sum"),
                warned=("warned", "sum"),
                below_unwarned=("below", lambda b: int(
                    (b & ~frame.loc[b.index, "warned"]).sum())))
           .reset_index())
    for scaler, sub in per.groupby("scaler"):
        print(f"\nscaler: {scaler}")
        table = sub.pivot(index="table", columns="epsilon", values="fraction")
        marks = sub.pivot(index="table", columns="epsilon", values="below_unwarned")
        for name, row in table.iterrows():
            cells = [f"{row[e]:7.2f}" + (f" u{int(marks.loc[name, e])}"
                                          if marks.loc[name, e] else "   ")
                     for e in table.columns]
            print(f"  {name:16s}" + " ".join(cells))
        print(f"  {'median':16s}" + " ".join(
            f"{table[e].median():7.2f}   " for e in table.columns))
    return frame


def parse_set(pairs):
    params = {}
    for pair in pairs or ():
        key, value = pair.split("=", 1)
        try:
            params[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[key] = value
    return params


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--task", required=True,
                        choices=("panel", "families", "support", "clip_check"))
    parser.add_argument("--estimator", default="DPSGDRegressor")
    parser.add_argument("--variant", default="defaults")
    parser.add_argument("--set", nargs="*", help="extra key=value parameters")
    parser.add_argument("--patch", nargs="*",
                        help="module constants, module.NAME=value")
    parser.add_argument("--epsilon", default=None)
    parser.add_argument("--seeds", type=int, default=len(SEEDS))
    parser.add_argument("--tables", default=None)
    parser.add_argument("--families", default=None)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--quick", action="store_true",
                        help=f"clip_check on the first {QUICK_CLIP_TABLES} "
                             "design tables (CI's subset)")
    Report.add_arguments(parser)
    args = parser.parse_args(argv)
    params = {**VARIANTS[args.variant], **parse_set(args.set)}
    patches = parse_set(args.patch)
    epsilons = (tuple(float(e) for e in args.epsilon.split(","))
                if args.epsilon else EPSILONS)
    seeds = SEEDS[:args.seeds]
    print(f"{args.task} {args.estimator} {params} {patches} epsilons {epsilons}",
          flush=True)
    start = time.perf_counter()
    if args.task == "clip_check":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            report = Report("design_regression.clip_check", args)
            clip_check(report)
            report.write()
        return None
    if args.task == "support":
        for eps in epsilons:
            rows = Parallel(n_jobs=args.n_jobs)(
                delayed(support_run)(s, params, eps, patches) for s in seeds)
            recall = [r["recall"] for r in rows]
            precision = [r["precision"] for r in rows]
            print(f"epsilon {eps:g}: recall {np.round(recall, 2)} median "
                  f"{np.median(recall):.2f}; precision median "
                  f"{np.median(precision):.2f}", flush=True)
        print(f"{time.perf_counter() - start:.0f} s")
        return None
    if args.task == "panel":
        specs = DESIGN_TABLES
        if args.tables:
            specs = [s for s in specs if s.name in args.tables.split(",")]
        jobs = [delayed(panel_run)(spec, s, args.estimator, params, epsilons,
                                   patches)
                for spec in specs for s in seeds]
    else:
        names = args.families.split(",") if args.families else FAMILIES
        jobs = [delayed(family_run)(name, s, n, args.estimator, params,
                                    epsilons, patches)
                for name in names for n in (2_000, 20_000) for s in seeds]
    records = [r for part in Parallel(n_jobs=args.n_jobs)(jobs) for r in part]
    frame = summarise(records)
    print(f"{time.perf_counter() - start:.0f} s")
    return frame


if __name__ == "__main__":
    main()
