"""Private hyperparameter search on the panel: DPGridSearchCV against the
estimator's defaults, plain GridSearchCV and the non-private search.

For each table of a half of ``panel_data.PANEL``, total epsilon in
{1, 3}, delta = 1 / n_train^2 and 5 split/seed pairs (a held-out quarter,
stratified for classification; seed ``s`` draws the subsample, the split
and every random_state), the documented private path
``make_private_pipeline(default_preprocessor(spec), estimator)`` with
DPSGDRegressor (regression) or DPSGDClassifier (binary, grouped and
multiclass tables, the declared classes given) fitted four ways:

* **defaults**: the estimator's defaults, the pipeline spending the whole
  epsilon;
* **DP search**: ``DPGridSearchCV`` over the estimator's default grid
  (``GRIDS``), spending the whole epsilon: its candidates, its selection
  and its chosen model;
* **plain search**: scikit-learn's ``GridSearchCV`` (3 folds, refit) over
  the same grid, every fit given the same budget, calibrated so that the
  composition of its fits (3 per point and the refit) spends the total
  epsilon; its selection reads the folds' scores without noise, which no
  guarantee covers;
* **non-private search**: ``GridSearchCV`` over the same grid without
  privacy (epsilon = inf): the reference.

Scores on the test quarter: R^2 (regression), ROC AUC (binary; macro
one-vs-rest for multiclass).  The fraction of the non-private gain is
``(score - trivial) / (non-private search - trivial)``, the trivial model
being the training mean or the class prior.  Time: the DP search's wall
time over ``(n_iter + 1)`` default fits (n_iter: the expected number of
candidate runs), on the same machine in the same run.

``--design`` runs the design half with variants of the search's settings
(``--variant``) instead, to choose them; the report half is only
reported.

Usage::

    nice -n 10 python benchmarks/bench_selection.py --write   # report half
    python benchmarks/bench_selection.py --quick              # 2 tables, 1 seed
    python benchmarks/bench_selection.py --half design \\
        --variant stopping_shape=0.5 --variant refit_share=0.5
"""

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.metrics import accuracy_score, log_loss, r2_score, roc_auc_score
from sklearn.model_selection import GridSearchCV, ParameterGrid, train_test_split

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:0] = [str(ROOT), str(HERE)]

from panel_data import PANEL, default_preprocessor, load_table  # noqa: E402
from report import Report  # noqa: E402

from skdpopt import (  # noqa: E402
    DPSGDClassifier,
    DPSGDRegressor,
    make_private_pipeline,
)
from skdpopt.accounting import Accountant, accountant, compose, events  # noqa: E402
from skdpopt.model_selection import DPGridSearchCV  # noqa: E402
from skdpopt.model_selection._candidates import planned_event  # noqa: E402
from skdpopt.plans import search as search_plans  # noqa: E402

EPSILONS = (1.0, 3.0)
SEEDS = (0, 1, 2, 3, 4)
TEST_SIZE = 0.25
# Tables above this many rows are subsampled per seed (about 4 minutes a
# table on a shared 2-core machine at this size).
MAX_ROWS = 20_000
PLAIN_FOLDS = 3
GENERATED = ROOT / "docs" / "benchmarks" / "_generated"
QUICK_TABLES = ("saratoga_houses", "attrition")

# The default grid of each estimator (the documented one; chosen on the
# design half, see docs/benchmarks/selection.md): the learning rate and
# the number of epochs, which decide how a private fit spends its noise.
GRIDS = {
    "DPSGDRegressor": {"eta0": [0.1, 0.5, 2.0], "max_iter": [2, 5, 10]},
    "DPSGDClassifier": {"eta0": [0.1, 0.5, 2.0], "max_iter": [2, 5, 10]},
}
# Candidate grids compared on the design half (--grid).
GRID_CHOICES = {
    "wide": {name: dict(grid) for name, grid in GRIDS.items()},
    "narrow": {name: {"eta0": [0.25, 0.5, 1.0], "max_iter": [3, 5, 8]}
               for name in GRIDS},
}


def delta_for(n_train):
    """The panel's rule: delta = 1 / n_train^2."""
    return 1.0 / n_train ** 2


def estimator_for(spec):
    if spec.task == "regression":
        return "DPSGDRegressor", DPSGDRegressor()
    return "DPSGDClassifier", DPSGDClassifier(classes=list(range(len(spec.classes))))


def pipeline_for(spec, epsilon, delta, seed):
    name, estimator = estimator_for(spec)
    pipe = make_private_pipeline(default_preprocessor(spec), estimator,
                                 epsilon=epsilon, delta=delta)
    names = [k for k in pipe.get_params(deep=True) if k.endswith("random_state")]
    return name, pipe.set_params(**dict.fromkeys(names, seed))


def grid_for(name):
    step = name.lower()
    return {f"{step}__{k}": v for k, v in GRIDS[name].items()}


def use_grids(choice):
    """Search ``GRID_CHOICES[choice]`` (the plain and non-private searches
    too)."""
    GRIDS.update({k: dict(v) for k, v in GRID_CHOICES[choice].items()})


# The classifiers' score, on the validation rows of the DP search and on
# the test rows of every method: the DP search's default (set by --metric).
CLASSIFIER_METRIC = {"value": "neg_log_loss"}


def metric_for(spec):
    """scikit-learn's name of the score every method is selected and
    measured by: R^2 for regression (the DP search selects by squared
    error, the same ranking), the DP search's classifier score otherwise."""
    return "r2" if spec.task == "regression" else CLASSIFIER_METRIC["value"]


def score(model, X, y, spec):
    """The test score (higher is better)."""
    if spec.task == "regression":
        return r2_score(y, model.predict(X))
    if metric_for(spec) == "accuracy":
        return accuracy_score(y, model.predict(X))
    labels = list(range(len(spec.classes)))
    return -log_loss(y, model.predict_proba(X), labels=labels)


def auc(model, X, y, spec):
    """ROC AUC (macro one-vs-rest for multiclass), a second view of a
    classifier; NaN for regression."""
    if spec.task == "regression":
        return np.nan
    proba = model.predict_proba(X)
    if spec.task == "binary":
        return roc_auc_score(y, proba[:, 1])
    return roc_auc_score(y, proba, multi_class="ovr", average="macro",
                         labels=list(range(len(spec.classes))))


def trivial(spec, X_tr, y_tr, X_te, y_te):
    model = DummyRegressor() if spec.task == "regression" else \
        DummyClassifier(strategy="prior")
    return score(model.fit(X_tr, y_tr), X_te, y_te, spec)


_PLAIN_BUDGETS = {}


def plain_budget(spec, X_tr, y_tr, epsilon, delta, grid):
    """Per-fit epsilon of a plain GridSearchCV whose fits (PLAIN_FOLDS per
    grid point and the refit) compose to ``epsilon``: their planned
    events, composed by the accountant, bisected on the per-fit epsilon.
    Public quantities only (shapes, grid); cached per table and epsilon."""
    key = (spec.name, len(y_tr), epsilon)
    if key in _PLAIN_BUDGETS:
        return _PLAIN_BUDGETS[key]
    points = list(ParameterGrid(grid))
    n_fits = PLAIN_FOLDS * len(points) + 1
    fit_delta = delta / n_fits
    fold_rows = np.arange(len(y_tr) * (PLAIN_FOLDS - 1) // PLAIN_FOLDS)

    def total(fit_epsilon):
        events = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for params in points:
                _, pipe = pipeline_for(spec, fit_epsilon, fit_delta, 0)
                pipe.set_params(**params)
                fold = planned_event(pipe, X_tr.iloc[fold_rows], y_tr[fold_rows],
                                     {})[0]
                events += [fold] * PLAIN_FOLDS
            _, pipe = pipeline_for(spec, fit_epsilon, fit_delta, 0)
            pipe.set_params(**points[0])
            events.append(planned_event(pipe, X_tr, y_tr, {})[0])
        return Accountant().compose(compose(*events)).epsilon(delta)

    low, high = epsilon / n_fits, epsilon
    for _ in range(12):  # bisection in log space to about 1%
        middle = np.sqrt(low * high)
        if total(middle) > epsilon:
            high = middle
        else:
            low = middle
    _PLAIN_BUDGETS[key] = low
    return low


def cold():
    """Forget every cached accounting result, so that each timed fit pays
    for its calibrations as a fit in a fresh process does."""
    accountant.clear_cache()
    events._leaf_rdp.cache_clear()
    search_plans._score_event.cache_clear()
    search_plans._guess_candidate_epsilon.cache_clear()


def run_one(spec, seed, epsilons, search_params, methods):
    X, y, _ = load_table(spec.name, max_rows=MAX_ROWS, random_state=seed)
    stratify = None if spec.task == "regression" else y
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=TEST_SIZE, random_state=seed, stratify=stratify)
    X_tr, X_te = X_tr.reset_index(drop=True), X_te.reset_index(drop=True)
    delta = delta_for(len(y_tr))
    base = dict(table=spec.name, half=spec.half, task=spec.task, n_train=len(y_tr),
                seed=seed, trivial=trivial(spec, X_tr, y_tr, X_te, y_te))
    name, _ = estimator_for(spec)
    grid = grid_for(name)
    records = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, reference = pipeline_for(spec, np.inf, delta, seed)
        nonprivate = GridSearchCV(reference, grid, cv=PLAIN_FOLDS,
                                  scoring=metric_for(spec)).fit(X_tr, y_tr)
        np_score = score(nonprivate, X_te, y_te, spec)
        for epsilon in epsilons:
            row = dict(base, estimator=name, epsilon=epsilon, nonprivate=np_score,
                       nonprivate_auc=auc(nonprivate, X_te, y_te, spec))
            _, defaults = pipeline_for(spec, epsilon, delta, seed)
            cold()
            start = time.perf_counter()
            defaults.fit(X_tr, y_tr)
            row["fit_s"] = time.perf_counter() - start
            row["defaults"] = score(defaults, X_te, y_te, spec)
            row["defaults_auc"] = auc(defaults, X_te, y_te, spec)
            if "search" in methods:
                _, template = pipeline_for(spec, epsilon, delta, None)
                params = {k: v for k, v in search_params.items()
                          if not k.startswith("classifier_")}
                if spec.task != "regression":
                    params.update({k[len("classifier_"):]: v
                                   for k, v in search_params.items()
                                   if k.startswith("classifier_")})
                search = DPGridSearchCV(template, grid, epsilon=epsilon,
                                        delta=delta, random_state=seed, **params)
                cold()
                start = time.perf_counter()
                search.fit(X_tr, y_tr)
                row["search_s"] = time.perf_counter() - start
                row["search"] = score(search, X_te, y_te, spec)
                row["search_auc"] = auc(search, X_te, y_te, spec)
                row["mean_runs"] = search.privacy_plan_.mean_repetitions
                row["candidate_share"] = search.candidate_epsilon_ / epsilon
                row["spent"] = search.privacy_spent_.epsilon
            if "plain" in methods:
                fit_epsilon = plain_budget(spec, X_tr, y_tr, epsilon, delta, grid)
                n_fits = PLAIN_FOLDS * len(ParameterGrid(grid)) + 1
                _, template = pipeline_for(spec, fit_epsilon, delta / n_fits, seed)
                plain = GridSearchCV(template, grid, cv=PLAIN_FOLDS,
                                     scoring=metric_for(spec)).fit(X_tr, y_tr)
                row["plain"] = score(plain, X_te, y_te, spec)
                row["plain_auc"] = auc(plain, X_te, y_te, spec)
                row["plain_fit_share"] = fit_epsilon / epsilon
            records.append(row)
    return records


def _view(frame):
    """The panel's scores: R^2 for regression, ROC AUC for classification
    (trivial 0.5); the DP search selects by its own score, in the columns
    without ``_auc``."""
    regression = frame.task == "regression"
    view = pd.DataFrame({"table": frame.table, "epsilon": frame.epsilon})
    view["trivial"] = np.where(regression, frame.trivial, 0.5)
    for column in ("nonprivate", "defaults", "search", "plain"):
        if column in frame:
            view[column] = np.where(regression, frame[column],
                                    frame.get(f"{column}_auc", np.nan))
    return view


def summarise(frame, methods):
    """Per table and epsilon, medians over seeds, in the panel's scores
    (``v_``) and in the DP search's own score; the fractions of the
    non-private gain are the panel's."""
    view = _view(frame)
    gain = view.nonprivate - view.trivial
    for column in ("defaults", *methods):
        frame[f"v_{column}"] = view[column]
        frame[f"f_{column}"] = (view[column] - view.trivial) / gain.where(
            gain.abs() > 1e-12)
    frame["v_trivial"], frame["v_nonprivate"] = view.trivial, view.nonprivate
    per = frame.groupby(["table", "epsilon"]).median(numeric_only=True).reset_index()
    per["time_ratio"] = per.search_s / ((per.mean_runs + 1) * per.fit_s) \
        if "search" in methods else np.nan
    return per


def _fmt(x, digits=3):
    return "" if x is None or not np.isfinite(x) else f"{x:.{digits}f}"


def add_tables(report, per, methods, epsilons):
    """The per-table table and the summary (see the page for how to read
    them), added to ``report`` (a ``report.Report``)."""
    order = {s.name: k for k, s in enumerate(PANEL)}
    per = per.sort_values(["epsilon", "table"], key=lambda c: c.map(order)
                          if c.name == "table" else c)
    names = {"search": "DP search", "plain": "plain search"}
    header = ["table", "ε", "n train", "metric", "trivial", "non-private search",
              "defaults"] + [names[m] for m in methods]
    header += ["gain: defaults"] + [f"gain: {names[m]}" for m in methods]
    timing = []
    if "search" in methods:
        header += ["DP search ≥ defaults in its score", "candidate ε share",
                   "time / ((n_iter+1) fits)"]
        timing = ["time / ((n_iter+1) fits)"]
    rows = []
    tasks = {s.name: s.task for s in PANEL}
    for _, r in per.iterrows():
        metric = "R²" if tasks[r.table] == "regression" else "AUC"
        cells = [r.table, f"{r.epsilon:g}", f"{int(r.n_train)}", metric,
                 _fmt(r.v_trivial), _fmt(r.v_nonprivate), _fmt(r.v_defaults)]
        cells += [_fmt(r[f"v_{m}"]) for m in methods]
        cells += [_fmt(r.f_defaults, 2)] + [_fmt(r[f"f_{m}"], 2) for m in methods]
        if "search" in methods:
            cells += ["yes" if r.search >= r.defaults else "no",
                      _fmt(r.candidate_share, 2), _fmt(r.time_ratio, 2)]
        rows.append(cells)
    report.table("per_table", "Per table and total ε: medians over the seeds",
                 header, rows, timing=timing)
    summary_header = ["ε", "tables", "DP search ≥ defaults (R² or AUC)",
                      "DP search ≥ defaults in its score",
                      "median gain: defaults", "median gain: DP search",
                      "median gain: plain search", "min candidate ε share",
                      "median time ratio"]
    summary = []
    for epsilon in epsilons:
        sub = per[np.isclose(per.epsilon, epsilon)]
        n = max(len(sub), 1)
        if "search" in methods:
            wins = int((sub.v_search >= sub.v_defaults).sum())
            own = int((sub.search >= sub.defaults).sum())
            cells = [f"{wins} of {len(sub)} ({100 * wins / n:.0f}%)",
                     f"{own} of {len(sub)} ({100 * own / n:.0f}%)"]
        else:
            cells = ["", ""]
        cells += [_fmt(sub.f_defaults.median(), 2),
                  _fmt(sub.f_search.median(), 2) if "search" in methods else "",
                  _fmt(sub.f_plain.median(), 2) if "plain" in methods else "",
                  _fmt(sub.candidate_share.min(), 2) if "search" in methods else "",
                  _fmt(sub.time_ratio.median(), 2) if "search" in methods else ""]
        summary.append([f"{epsilon:g}", str(len(sub)), *cells])
    report.table("summary", "Summary over the tables, per total ε",
                 summary_header, summary, timing=["median time ratio"])


def _generated_name(args):
    return f"selection_design_{args.tag}" if args.half == "design" \
        and not args.quick else "selection"


def render(args, methods, epsilons):
    """Re-render an earlier run's records under that run's header."""
    report = Report(_generated_name(args), args)
    report.keep_header(report.path)
    add_tables(report, summarise(pd.read_csv(args.render), methods),
               methods, epsilons)
    report.write()


def parse_variant(values):
    params = {}
    for item in values or ():
        key, value = item.split("=", 1)
        try:
            value = float(value) if "." in value or "e" in value else int(value)
        except ValueError:
            pass
        params[key] = value
    return params


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--half", default="report", choices=["design", "report"])
    parser.add_argument("--tables", default=None,
                        help="comma-separated table names (default: the half)")
    parser.add_argument("--epsilon", default=None,
                        help="comma-separated total epsilons (default: 1,3)")
    parser.add_argument("--seeds", type=int, default=len(SEEDS))
    parser.add_argument("--methods", default="search,plain",
                        help="comma-separated: search, plain")
    parser.add_argument("--variant", action="append",
                        help="a DPGridSearchCV parameter, key=value (repeatable;"
                             " classifier_KEY=value for classifiers only)")
    parser.add_argument("--metric", default=CLASSIFIER_METRIC["value"],
                        choices=["neg_log_loss", "accuracy"],
                        help="classifiers' score (the DP search's scoring too)")
    parser.add_argument("--grid", default="wide", choices=sorted(GRID_CHOICES))
    parser.add_argument("--quick", action="store_true",
                        help="one table per task, 1 seed, epsilon 1 (always "
                             "written: selection.quick.md)")
    parser.add_argument("--write", action="store_true",
                        help="write docs/benchmarks/_generated/selection.md "
                             "(design half: selection_design_TAG.md)")
    Report.add_arguments(parser)
    parser.add_argument("--tag", default="defaults",
                        help="name of a design run's table (with --write)")
    parser.add_argument("--csv", default=None, help="also save every record here")
    parser.add_argument("--render", default=None,
                        help="re-render the records of an earlier run's --csv "
                             "into the generated table named by --half/--tag, "
                             "keeping that file's header (no new runs)")
    args = parser.parse_args()
    epsilons = EPSILONS if args.epsilon is None else tuple(
        float(e) for e in args.epsilon.split(","))
    seeds = SEEDS[:args.seeds]
    specs = [s for s in PANEL if s.half == args.half]
    if args.tables:
        wanted = args.tables.split(",")
        specs = [s for s in PANEL if s.name in wanted]
    if args.quick:
        specs, seeds, epsilons = [s for s in PANEL if s.name in QUICK_TABLES], \
            SEEDS[:1], (1.0,)
    methods = tuple(args.methods.split(","))
    if args.render:
        render(args, methods, epsilons)
        return
    CLASSIFIER_METRIC["value"] = args.metric
    use_grids(args.grid)
    search_params = {"classifier_scoring": args.metric, **parse_variant(args.variant)}
    # Made before the runs: its header names the code that runs.
    report = Report(_generated_name(args), args, write=args.write or args.quick)
    records = []
    for spec in specs:
        start = time.perf_counter()
        for seed in seeds:
            records += run_one(spec, seed, epsilons, search_params, methods)
        print(f"{spec.name}: {time.perf_counter() - start:.0f} s", flush=True)
    frame = pd.DataFrame(records)
    if args.csv:
        frame.to_csv(args.csv, index=False)
    add_tables(report, summarise(frame, methods), methods, epsilons)
    report.write()


if __name__ == "__main__":
    main()
