"""The panel benchmark: every estimator, its defaults, on public real tables.

For each table of ``panel_data.PANEL`` (or ``OUTSIDE`` with
``--outside``), each estimator that fits its task, epsilon in
{0.3, 1, 3} and 5 split/seed pairs, on a held-out quarter:

* **private**: the documented default path,
  ``make_private_pipeline(default_preprocessor(spec), Estimator(),
  epsilon=eps, delta=1/n_train**2)``, the estimator with its defaults
  (classifiers are given the declared ``classes``, DPMinimaxClassifier
  also the declared ``groups`` and the group column as
  ``sensitive_features``);
* **non-private**: the same preprocessing with scikit-learn's
  StandardScaler, then ``Ridge(alpha=1.0)`` (regression) or
  ``LogisticRegression(max_iter=1000)`` (classification);
* **trivial**: the training mean (regression) or the class prior.

Estimators: regression DPSGDRegressor and DPLasso; binary and multiclass
DPSGDClassifier and DPLogisticSimplex; binary tables with groups also
DPMinimaxClassifier.  Scores: R^2 (regression), ROC AUC (binary; macro
one-vs-rest AUC for multiclass), and for DPMinimaxClassifier the
worst-group log-loss (the largest over the declared groups of the mean
test log-loss in the group).  On grouped tables the worst-group log-loss
of every classifier is printed as well.

The fraction of the non-private gain of one fit is
``(private - trivial) / (non-private - trivial)``, each score measured
on the same split: 1 is as good as scikit-learn, 0 as good as the
trivial model, negative worse than it (for a loss the formula is the
same: both differences are negative when the model helps).  A fit is
"below trivial" when its score is worse than the trivial model's on its
split.  Warnings are those raised during the private fit and its
prediction, counted by class.

Seed ``s`` draws the table's subsample (tables above ``--max-rows`` rows)
and the 75/25 split (stratified by class for classification) with
``random_state=s`` and passes ``random_state=s`` to every private step.

Usage::

    nice -n 10 python benchmarks/bench_panel.py              # both halves
    nice -n 10 python benchmarks/bench_panel.py --outside
    python benchmarks/bench_panel.py --quick                 # CI's subset
    python benchmarks/bench_panel.py --half design --epsilon 1 \\
        --tables txhousing,taxi --estimators DPSGDRegressor,DPSGDClassifier

A whole run writes ``docs/benchmarks/_generated/panel.md`` (or
``panel_outside.md``, ``panel.quick.md``; ``report.py``) with a header
naming the commit, the command, the machine and the date, every fit's
record beside it as CSV (``panel_fits.csv``), and the list of tables
(``panel_tables.md``, from the specs); a run restricted by ``--half``,
``--tables``, ``--epsilon``, ``--estimators``, ``--seeds`` or
``--max-rows`` only prints its tables.
"""

import argparse
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
from joblib import Parallel, delayed
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.metrics import log_loss, r2_score, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE)]

from panel_data import (  # noqa: E402
    OUTSIDE,
    PANEL,
    _preprocessor,
    default_preprocessor,
    load_table,
    public_preprocessor,
)
from report import Report  # noqa: E402

import skdpopt  # noqa: E402

EPSILONS = (0.3, 1.0, 3.0)
N_SEEDS = 5
TEST_SIZE = 0.25
# Tables above this many rows are subsampled per seed (military: 1.4e6,
# Birthdays: 3.7e5), to fit the run on a shared 2-core machine.
MAX_ROWS = 200_000
# --quick: the smallest table of each stratum (CI repeats it).
QUICK_TABLES = ("concrete", "titanic", "contraception", "fishing")

ESTIMATORS = {
    "regression": ("DPSGDRegressor", "DPLasso"),
    "binary": ("DPSGDClassifier", "DPLogisticSimplex"),
    "grouped": ("DPSGDClassifier", "DPLogisticSimplex", "DPMinimaxClassifier"),
    "multiclass": ("DPSGDClassifier", "DPLogisticSimplex"),
}
ALL_ESTIMATORS = ("DPSGDRegressor", "DPLasso", "DPSGDClassifier",
                  "DPLogisticSimplex", "DPMinimaxClassifier")
# Higher is better for these metrics; lower for the losses.
HIGHER_IS_BETTER = {"r2": True, "auc": True, "wg_logloss": False}


def delta_for(n_train):
    """The same rule for every table: delta = 1 / n_train^2."""
    return 1.0 / n_train ** 2


def make_estimator(name, spec):
    """The estimator with its defaults and the declared public sets."""
    cls = getattr(skdpopt, name)
    if spec.task == "regression":
        return cls()
    classes = list(range(len(spec.classes)))
    if name == "DPMinimaxClassifier":
        return cls(classes=classes, groups=list(spec.groups))
    return cls(classes=classes)


def nonprivate_model(spec):
    model = (Ridge(alpha=1.0) if spec.task == "regression"
             else LogisticRegression(max_iter=1000))
    return make_pipeline(public_preprocessor(spec), model)


def trivial_model(spec):
    return (DummyRegressor() if spec.task == "regression"
            else DummyClassifier(strategy="prior"))


def _probabilities(model, X):
    if hasattr(model, "predict_proba"):
        return model.predict_proba(X)
    scores = model.decision_function(X)
    if scores.ndim == 1:
        p = 1.0 / (1.0 + np.exp(-scores))
        return np.column_stack([1.0 - p, p])
    scores = scores - scores.max(axis=1, keepdims=True)
    e = np.exp(scores)
    return e / e.sum(axis=1, keepdims=True)


def scores(model, X, y, groups, spec):
    """{metric: score} of a fitted model on the test rows.

    Binary tasks also record the test log-loss, the mean predicted
    probability of the positive class and the share of rows predicted
    positive (for the calibration and imbalance diagnostics)."""
    if spec.task == "regression":
        return {"r2": r2_score(y, model.predict(X))}
    proba = _probabilities(model, X)
    if spec.task == "binary":
        out = {"auc": roc_auc_score(y, proba[:, 1]),
               "logloss": log_loss(y, proba, labels=[0, 1]),
               "mean_proba": float(proba[:, 1].mean()),
               "predicted_positive": float(np.mean(model.predict(X) == 1))}
    else:
        out = {"auc": roc_auc_score(y, proba, multi_class="ovr",
                                    average="macro",
                                    labels=list(range(len(spec.classes))))}
    if spec.group is not None:
        losses = [log_loss(y[groups == g], proba[groups == g], labels=[0, 1])
                  for g in spec.groups if np.any(groups == g)]
        out["wg_logloss"] = max(losses)
    return out


def primary_metric(spec, estimator):
    if spec.task == "regression":
        return "r2"
    return "wg_logloss" if estimator == "DPMinimaxClassifier" else "auc"


def fraction(private, nonprivate, trivial):
    gain = nonprivate - trivial
    if not np.isfinite(private) or abs(gain) < 1e-12:
        return np.nan
    return (private - trivial) / gain


def is_below(metric, private, trivial):
    if not np.isfinite(private):
        return True
    sign = 1.0 if HIGHER_IS_BETTER[metric] else -1.0
    return sign * (private - trivial) < 0


def _set_seed(pipeline, seed):
    names = [k for k in pipeline.get_params(deep=True)
             if k.endswith("random_state")]
    pipeline.set_params(**dict.fromkeys(names, seed))


class _ExactMeanScaler(skdpopt.DPStandardScaler):
    """An oracle, not a private path: DPStandardScaler whose released mean
    is replaced after the fit by the exact mean of the clipped values."""

    def fit(self, X, y=None):
        super().fit(X, y)
        self.mean_ = np.clip(np.asarray(X, dtype=float), *self.bounds_).mean(0)
        return self


class _ExactScaleScaler(skdpopt.DPStandardScaler):
    """An oracle, not a private path: DPStandardScaler whose released scale
    is replaced after the fit by the exact one of the clipped values."""

    def fit(self, X, y=None):
        super().fit(X, y)
        scale = np.clip(np.asarray(X, dtype=float), *self.bounds_).std(0)
        self.scale_ = np.where(scale > 0, scale, 1.0)
        return self


ORACLE_SCALERS = {"exact-mean": _ExactMeanScaler, "exact-scale": _ExactScaleScaler}


def private_model(spec, name, eps, delta, scaler):
    """The private path: the documented pipeline (``scaler="private"``), or
    the oracle that scales with scikit-learn's exact StandardScaler and
    gives the estimator the share of the budget it gets in the pipeline
    (``scaler="exact"``: separates the scaler's effect from the model's),
    or the documented pipeline with one of the scaler's released
    statistics replaced by the exact one (``"exact-mean"``,
    ``"exact-scale"``: which of its noises the model feels)."""
    if scaler in ("private", *ORACLE_SCALERS):
        preprocessor = (default_preprocessor(spec) if scaler == "private"
                        else _preprocessor(spec, ORACLE_SCALERS[scaler]()))
        return skdpopt.make_private_pipeline(
            preprocessor, make_estimator(name, spec), epsilon=eps, delta=delta)
    share = 1.0 - skdpopt.pipeline.PREPROCESSING_SHARE
    estimator = make_estimator(name, spec).set_params(
        epsilon=share * eps, delta=share * delta)
    return make_pipeline(public_preprocessor(spec), estimator)


def run_task(spec, seed, estimators, epsilons, max_rows, scaler="private",
             table=None):
    """Every fit of one table and one seed: a list of records.  ``table``:
    the ``(X, y, groups)`` to use instead of loading ``spec``'s (generated
    data, described by a spec of its columns)."""
    X, y, groups = (load_table(spec.name, max_rows=max_rows, random_state=seed)
                    if table is None else table)
    stratify = None if spec.task == "regression" else y
    if groups is None:
        X_tr, X_te, y_tr, y_te = train_test_split(
            X, y, test_size=TEST_SIZE, random_state=seed, stratify=stratify)
        g_tr = g_te = None
    else:
        X_tr, X_te, y_tr, y_te, g_tr, g_te = train_test_split(
            X, y, groups, test_size=TEST_SIZE, random_state=seed,
            stratify=stratify)
    n_train = len(y_tr)
    delta = delta_for(n_train)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nonprivate = scores(nonprivate_model(spec).fit(X_tr, y_tr), X_te, y_te,
                            g_te, spec)
    trivial = scores(trivial_model(spec).fit(X_tr, y_tr), X_te, y_te, g_te,
                     spec)
    base = dict(table=spec.name, half=spec.half, task=spec.task,
                stratum=spec.stratum, n_rows=spec.n_rows, n_used=len(y),
                n_train=n_train, seed=seed, delta=delta)
    records = []
    for name in estimators:
        metric = primary_metric(spec, name)
        other = None
        if spec.group is not None:
            other = "auc" if metric == "wg_logloss" else "wg_logloss"
        for eps in epsilons:
            pipeline = private_model(spec, name, eps, delta, scaler)
            _set_seed(pipeline, seed)
            fit_params = {}
            if name == "DPMinimaxClassifier":
                fit_params[f"{pipeline.steps[-1][0]}__sensitive_features"] = g_tr
            error = ""
            start = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    pipeline.fit(X_tr, y_tr, **fit_params)
                    elapsed = time.perf_counter() - start
                    private = scores(pipeline, X_te, y_te, g_te, spec)
                except Exception as exc:  # a failure is a result here
                    elapsed = time.perf_counter() - start
                    error = f"{type(exc).__name__}: {exc}"[:200]
                    private = {}
            counts = Counter(w.category.__name__ for w in caught)
            record = dict(
                base, estimator=name, epsilon=eps, metric=metric,
                private=private.get(metric, np.nan),
                nonprivate=nonprivate[metric], trivial=trivial[metric],
                warnings=";".join(f"{k}:{v}" for k, v in sorted(counts.items())),
                utility_warning=counts["UtilityWarning"] > 0,
                error=error, fit_seconds=elapsed)
            if spec.task == "binary":
                record.update(
                    base_rate=float(np.mean(y_tr)),
                    **{f"{key}_private": private.get(key, np.nan)
                       for key in ("logloss", "mean_proba",
                                   "predicted_positive")},
                    **{f"{key}_{ref}": values[key] for ref, values in (
                        ("nonprivate", nonprivate), ("trivial", trivial))
                       for key in ("logloss", "mean_proba",
                                   "predicted_positive")})
            record["fraction"] = fraction(record["private"],
                                          record["nonprivate"],
                                          record["trivial"])
            record["below"] = is_below(metric, record["private"],
                                       record["trivial"])
            if other is not None:
                record.update(
                    metric2=other, private2=private.get(other, np.nan),
                    nonprivate2=nonprivate[other], trivial2=trivial[other])
            records.append(record)
    return records


# -- reporting ----------------------------------------------------------------


def _fmt(x, digits=2):
    return "nan" if not np.isfinite(x) else f"{x:.{digits}f}"


def _markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def per_table(frame, epsilons):
    """One row per table and estimator: references, then one cell per
    epsilon: median fraction over seeds, seeds below trivial (b), seeds
    with a UtilityWarning (w), failed fits (x)."""
    header = ["table", "half", "n used", "metric", "non-private", "trivial",
              "estimator"] + [f"ε={e:g}" for e in epsilons]
    rows = []
    order = {s.name: k for k, s in enumerate(PANEL + OUTSIDE)}
    keys = sorted(frame.groupby(["table", "estimator"]).groups,
                  key=lambda k: (order[k[0]], ALL_ESTIMATORS.index(k[1])))
    for table, name in keys:
        sub = frame[(frame.table == table) & (frame.estimator == name)]
        first = sub.iloc[0]
        row = [table, first.half, int(sub.n_used.max()), first.metric,
               _fmt(sub.nonprivate.median(), 3), _fmt(sub.trivial.median(), 3),
               name]
        for eps in epsilons:
            cell = sub[np.isclose(sub.epsilon, eps)]
            if cell.empty:
                row.append("")
                continue
            text = _fmt(cell.fraction.median())
            marks = [f"{tag}{count}" for tag, count in (
                ("b", int(cell.below.sum())),
                ("w", int(cell.utility_warning.sum())),
                ("x", int((cell.error != "").sum()))) if count]
            row.append(" ".join([text, *marks]))
        rows.append(row)
    return header, rows


def _medians(frame, epsilons, min_rows=None):
    """Median over tables of each table's median fraction, by half,
    estimator and epsilon."""
    if min_rows is not None:
        frame = frame[frame.n_rows >= min_rows]
    per = frame.groupby(["half", "estimator", "epsilon", "table"]).fraction
    per = per.median().reset_index()
    header = ["half", "estimator", "tables"] + [f"ε={e:g}" for e in epsilons]
    rows = []
    for (half, name), sub in per.groupby(["half", "estimator"]):
        row = [half, name, sub.table.nunique()]
        for eps in epsilons:
            cell = sub[np.isclose(sub.epsilon, eps)].fraction
            row.append(_fmt(cell.median()) if len(cell) else "")
        rows.append(row)
    rows.sort(key=lambda r: (r[0], ALL_ESTIMATORS.index(r[1])))
    return header, rows


def _below(frame, epsilons):
    header = ["half", "ε", "fits", "below trivial", "of which warned",
              "below without UtilityWarning", "failed (error)"]
    rows = []
    for (half, eps), sub in frame.groupby(["half", "epsilon"]):
        below = sub[sub.below]
        rows.append([half, f"{eps:g}", len(sub), len(below),
                     int(below.utility_warning.sum()),
                     int((~below.utility_warning).sum()),
                     int((sub.error != "").sum())])
    return header, rows


def _below_list(frame):
    below = frame[frame.below]
    header = ["table", "half", "estimator", "ε", "seeds below",
              "without UtilityWarning", "median score", "trivial"]
    rows = []
    for (table, name, eps), sub in below.groupby(["table", "estimator",
                                                  "epsilon"]):
        rows.append([table, sub.half.iloc[0], name, f"{eps:g}", len(sub),
                     int((~sub.utility_warning).sum()),
                     _fmt(sub.private.median(), 3),
                     _fmt(sub.trivial.median(), 3)])
    return header, rows


def _warning_counts(frame):
    counts = {}
    for name, sub in frame.groupby("estimator"):
        total = Counter()
        for text in sub.warnings:
            for item in filter(None, text.split(";")):
                kind, count = item.split(":")
                total[kind] += int(count)
        fits_warned = int(sub.utility_warning.sum())
        counts[name] = (len(sub), fits_warned, total)
    header = ["estimator", "fits", "fits with a UtilityWarning",
              "warnings raised (by class)"]
    rows = [[name, n, warned,
             ", ".join(f"{k} {v}" for k, v in sorted(total.items())) or "none"]
            for name, (n, warned, total) in sorted(
                counts.items(), key=lambda kv: ALL_ESTIMATORS.index(kv[0]))]
    return header, rows


def _grouped(frame, epsilons):
    """Worst-group log-loss of every classifier on the grouped tables."""
    sub = frame[frame.stratum == "grouped"].copy()
    if sub.empty:
        return None
    wg = np.where(sub.metric == "wg_logloss", sub.private, sub.private2)
    sub["wg"] = wg
    sub["wg_np"] = np.where(sub.metric == "wg_logloss", sub.nonprivate,
                            sub.nonprivate2)
    sub["wg_tr"] = np.where(sub.metric == "wg_logloss", sub.trivial,
                            sub.trivial2)
    header = ["table", "half", "ε", "non-private", "trivial"] + [
        e for e in ESTIMATORS["grouped"]]
    rows = []
    for (table, eps), cell in sub.groupby(["table", "epsilon"]):
        row = [table, cell.half.iloc[0], f"{eps:g}",
               _fmt(cell.wg_np.median(), 3), _fmt(cell.wg_tr.median(), 3)]
        for name in ESTIMATORS["grouped"]:
            values = cell[cell.estimator == name].wg
            row.append(_fmt(values.median(), 3) if len(values) else "")
        rows.append(row)
    return header, rows


def _errors(frame):
    failed = frame[frame.error != ""]
    if failed.empty:
        return None
    header = ["table", "estimator", "ε", "seed", "error"]
    rows = [[r.table, r.estimator, f"{r.epsilon:g}", r.seed,
             r.error.replace("|", "/")] for r in failed.itertuples()]
    return header, rows


def report_tables(report, frame, epsilons):
    """Add the run's tables to ``report`` (a ``report.Report``)."""
    report.table(
        "by_table", "Fraction of the non-private gain, by table",
        *per_table(frame, epsilons),
        note="Median over the seeds of `(private - trivial) / (non-private - "
             "trivial)`; `bN`: N seeds below the trivial model, `wN`: N seeds "
             "whose fit raised a UtilityWarning, `xN`: N fits that failed with "
             "an error.  `non-private` and `trivial`: median scores.")
    report.table("medians", "Median fraction per estimator and half (median "
                 "over the tables of each table's median over seeds)",
                 *_medians(frame, epsilons))
    report.table("medians_2000", "Median fraction per estimator and half, "
                 "tables with at least 2,000 published rows only",
                 *_medians(frame, epsilons, min_rows=2000))
    report.table("below", "Fits below the trivial model", *_below(frame, epsilons))
    below = _below_list(frame)
    if below[1]:
        report.table("below_by_table", "Fits below the trivial model by table, "
                     f"estimator and ε (seeds of {frame.seed.nunique()})", *below)
    report.table("warnings", "Warnings", *_warning_counts(frame))
    grouped = _grouped(frame, epsilons)
    if grouped is not None:
        report.table("grouped", "Worst-group log-loss on the grouped tables "
                     "(median over the seeds; lower is better)", *grouped)
    errors = _errors(frame)
    if errors is not None:
        report.table("errors", "Failed fits", *errors)


def tables_markdown():
    """The list of tables with their half, from the specs."""
    header = ["table", "source", "half", "task", "rows", "target",
              "numeric", "categorical", "groups", "what it brings"]
    rows = []
    for spec in PANEL + OUTSIDE:
        task = spec.task if spec.group is None else f"{spec.task}, grouped"
        groups = "" if spec.group is None else (
            f"{spec.group}: {', '.join(map(str, spec.groups))}")
        rows.append([f"`{spec.name}`", f"{spec.package}::{spec.item}",
                     spec.half, task, f"{spec.n_rows:,}",
                     spec.target_rule.replace("|", "/"), len(spec.numeric),
                     len(spec.categorical), groups, spec.why])
    return ("<!-- Generated by benchmarks/bench_panel.py from "
            "benchmarks/panel_data.py; do not edit by hand. -->\n\n"
            + _markdown_table(header, rows) + "\n")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--half", choices=("design", "report", "all"),
                        default="all")
    parser.add_argument("--outside", action="store_true",
                        help="run the three tables kept outside the panel")
    parser.add_argument("--epsilon", default=None,
                        help="comma-separated epsilons (default 0.3,1,3)")
    parser.add_argument("--tables", default=None,
                        help="comma-separated table names")
    parser.add_argument("--estimators", default=None,
                        help="comma-separated estimator names")
    parser.add_argument("--seeds", type=int, default=None,
                        help="number of split/seed pairs (default 5)")
    parser.add_argument("--max-rows", type=int, default=MAX_ROWS)
    parser.add_argument("--quick", action="store_true",
                        help=f"tables {', '.join(QUICK_TABLES)}, epsilon 1, "
                             "2 seeds")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--scaler",
                        choices=("private", "exact", "exact-mean", "exact-scale"),
                        default="private",
                        help="exact: scale with scikit-learn's StandardScaler "
                             "(an oracle, not a private path) and give the "
                             "estimator its pipeline share of the budget; "
                             "exact-mean, exact-scale: the private pipeline "
                             "with the scaler's released mean or scale "
                             "replaced by the exact one of the clipped values")
    parser.add_argument("--csv", default=None,
                        help="also write every fit's record to this CSV")
    Report.add_arguments(parser)
    return parser.parse_args(argv)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    specs = OUTSIDE if args.outside else PANEL
    if args.half != "all" and not args.outside:
        specs = [s for s in specs if s.half == args.half]
    tables = args.tables.split(",") if args.tables else None
    if args.quick and tables is None and not args.outside:
        tables = list(QUICK_TABLES)
    if tables is not None:
        unknown = set(tables) - {s.name for s in specs}
        if unknown:
            raise SystemExit(f"unknown tables (or not in this half): {unknown}")
        specs = [s for s in specs if s.name in tables]
    if args.epsilon:
        epsilons = tuple(float(e) for e in args.epsilon.split(","))
    else:
        epsilons = (1.0,) if args.quick else EPSILONS
    n_seeds = args.seeds or (2 if args.quick else N_SEEDS)
    chosen = args.estimators.split(",") if args.estimators else None
    if chosen is not None and set(chosen) - set(ALL_ESTIMATORS):
        raise SystemExit(f"unknown estimators: {set(chosen) - set(ALL_ESTIMATORS)}")

    tasks = []
    for spec in specs:
        names = [e for e in ESTIMATORS[spec.stratum]
                 if chosen is None or e in chosen]
        if names:
            tasks += [(spec, seed, names) for seed in range(n_seeds)]
    # Largest first, so that the workers finish together.
    tasks.sort(key=lambda t: -min(t[0].n_rows, args.max_rows) * len(t[2]))
    n_fits = sum(len(t[2]) for t in tasks) * len(epsilons)
    print(f"{len(tasks)} table/seed tasks, {n_fits} "
          f"private fits, epsilons {epsilons}, {args.n_jobs} jobs", flush=True)
    # A run restricted by an option is a trial: printed, not written.
    whole = not (args.tables or args.epsilon or args.estimators or args.seeds
                 or args.half != "all" or args.max_rows != MAX_ROWS)
    report = Report("panel_outside" if args.outside else "panel", args,
                    write=whole)
    report.note(f"{len(tasks)} table/seed tasks, {n_fits} private fits, "
                f"{args.n_jobs} jobs")
    start = time.perf_counter()
    records = []
    results = Parallel(n_jobs=args.n_jobs, return_as="generator_unordered")(
        delayed(run_task)(spec, seed, names, epsilons, args.max_rows,
                          args.scaler)
        for spec, seed, names in tasks)
    for k, result in enumerate(results, 1):
        records += result
        print(f"  [{k}/{len(tasks)}] {result[0]['table']} seed "
              f"{result[0]['seed']} ({time.perf_counter() - start:.0f} s)",
              flush=True)
    wall = time.perf_counter() - start
    frame = pd.DataFrame(records)
    for column in ("metric2", "private2", "nonprivate2", "trivial2"):
        if column not in frame:
            frame[column] = np.nan
    frame["error"] = frame["error"].fillna("")
    print()
    report_tables(report, frame, epsilons)
    print(f"wall time {wall:.0f} s")
    if args.csv:
        frame.to_csv(args.csv, index=False, float_format="%.6g")
    # The generated tables record the documented private path only.
    if args.scaler == "private" and report.write() is not None:
        (report.out / "panel_tables.md").write_text(tables_markdown())
        if not args.quick:
            fits = report.out / f"{report.name}_fits.csv"
            frame.sort_values(["table", "estimator", "epsilon", "seed"]).to_csv(
                fits, index=False, float_format="%.6g")
            print(f"wrote {fits}")
    return frame


if __name__ == "__main__":
    main()
