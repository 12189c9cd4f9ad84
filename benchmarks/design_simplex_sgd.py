"""Design runs behind DPLogisticSimplex's ``solver="sgd"`` defaults.

The default feature bound of DP-SGD over the polytope
(``SGD_FEATURE_BOUND``) and its gradient clip (``SGD_CLIP`` bounds) were
chosen here, on the panel's **design** half only (``panel_data.PANEL``,
binary and grouped tables with at least 2,000 rows but the 1.4e6-row
multiclass table), through the documented path of ``bench_panel.py``:
``make_private_pipeline(default_preprocessor(spec), DPLogisticSimplex(classes=...))``
at ``delta = 1 / n_train^2``.  For each table, seed and epsilon the
pipeline is fitted once with the defaults; each variant then refits the
final step, with the budget the pipeline gave it, on the rows the fitted
preprocessor produced, so that the variants differ only in the estimator.

Each variant sets estimator parameters and module constants of
:mod:`skdpopt.plans.logistic_simplex` (and the estimator module's copies)
for its fits.  The table prints,
per epsilon and variant, the median over the tables of each table's
median fraction of the non-private gain (as ``bench_panel.py``), the mean
over the tables, the number of tables whose median improves on the first
variant and the mean paired difference (same table, seed and epsilon).

Decision rule used: keep a variant when, at epsilon 1 over 10 seeds, it
raises the median over the tables, improves most tables and has a
positive mean paired difference, without lowering either at epsilon 0.3
and 3.

Usage: ``python benchmarks/design_simplex_sgd.py --seeds 10`` (about 10
minutes on 2 cores; ``--epsilon 1 --seeds 2`` for a quick look).
"""

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.model_selection import train_test_split

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

import bench_panel as bp  # noqa: E402
from panel_data import PANEL, load_table  # noqa: E402

import skdpopt.logistic_simplex as estimator_module  # noqa: E402
import skdpopt.plans.logistic_simplex as plans  # noqa: E402

TABLES = ("email", "doctor_visits", "lending_club", "taxi", "resume_names",
          "health_insurance", "chile")
# name: (estimator parameters, plan constants)
VARIANTS = {
    "bound 1, clip 1": ({"feature_bound": 1.0}, {"SGD_CLIP": 1.0}),
    "defaults": ({}, {}),
    "bound 3, clip 1": ({"feature_bound": 3.0}, {"SGD_CLIP": 1.0 / 3.0}),
    "bound 2, clip 2": ({"feature_bound": 2.0}, {"SGD_CLIP": 1.0}),
    "radius 3": ({"radius": 3.0}, {}),
    "radius 30": ({"radius": 30.0}, {}),
}


def _set_constants(values):
    for key, value in values.items():
        setattr(plans, key, value)
        if hasattr(estimator_module, key):
            setattr(estimator_module, key, value)


def _fits(spec, seed, epsilons, scaler):
    X, y, groups = load_table(spec.name, random_state=seed)
    split = train_test_split(X, y, *([] if groups is None else [groups]),
                             test_size=bp.TEST_SIZE, random_state=seed,
                             stratify=y)
    X_tr, X_te, y_tr, y_te = split[:4]
    g_te = None if groups is None else split[5]
    delta = bp.delta_for(len(y_tr))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nonprivate = bp.scores(bp.nonprivate_model(spec).fit(X_tr, y_tr), X_te,
                               y_te, g_te, spec)["auc"]
    trivial = bp.scores(bp.trivial_model(spec).fit(X_tr, y_tr), X_te, y_te,
                        g_te, spec)["auc"]
    defaults = {name: getattr(plans, name) for name in ("SGD_CLIP",)}
    for eps in epsilons:
        pipeline = bp.private_model(spec, "DPLogisticSimplex", eps, delta, scaler)
        bp._set_seed(pipeline, seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pipeline.fit(X_tr, y_tr)
            Z_tr, Z_te = pipeline[:-1].transform(X_tr), pipeline[:-1].transform(X_te)
        for name, (params, constants) in VARIANTS.items():
            try:
                _set_constants({**defaults, **constants})
                est = clone(pipeline[-1]).set_params(**params)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    est.fit(Z_tr, y_tr)
            finally:
                _set_constants(defaults)
            auc = bp.scores(est, Z_te, y_te, g_te, spec)["auc"]
            yield dict(table=spec.name, seed=seed, epsilon=eps, variant=name,
                       fraction=bp.fraction(auc, nonprivate, trivial),
                       below=auc < trivial)


def summary(frame):
    per = frame.groupby(["epsilon", "variant", "table"]).fraction.median()
    paired = frame.set_index(["epsilon", "variant", "table", "seed"]).fraction
    paired = paired.sort_index()
    first = next(iter(VARIANTS))
    rows = []
    order = list(VARIANTS)
    groups = sorted(per.groupby(["epsilon", "variant"]),
                    key=lambda g: (g[0][0], order.index(g[0][1])))
    for (eps, name), sub in groups:
        base = per.loc[eps, first]
        diff = paired.loc[eps, name] - paired.loc[eps, first]
        better = int(np.sum(sub.to_numpy() > base.to_numpy() + 1e-9))
        rows.append({"epsilon": eps, "variant": name,
                     "median": sub.median(), "mean": sub.mean(),
                     "tables better": better,
                     "paired diff": diff.mean(),
                     "below trivial": int(frame[(frame.epsilon == eps)
                                               & (frame.variant == name)].below.sum())})
    return pd.DataFrame(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default=",".join(TABLES))
    parser.add_argument("--epsilon", default="0.3,1,3")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--scaler", choices=("private", "exact"), default="private")
    args = parser.parse_args(argv)
    specs = {s.name: s for s in PANEL}
    names = args.tables.split(",")
    if any(specs[name].half != "design" for name in names):
        parser.error("design runs read the design half only")
    epsilons = [float(e) for e in args.epsilon.split(",")]
    records = [record for name in names for seed in range(args.seeds)
               for record in _fits(specs[name], seed, epsilons, args.scaler)]
    frame = pd.DataFrame(records)
    per = frame.groupby(["epsilon", "variant", "table"]).fraction.median()
    print(per.unstack("table").round(3).to_string())
    print(summary(frame).round(3).to_string(index=False))


if __name__ == "__main__":
    main()
