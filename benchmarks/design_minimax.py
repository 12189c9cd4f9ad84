"""Design study behind DPMinimaxClassifier's gradient descent-ascent defaults.

A seeded family of worst-group tasks, the references, and the candidate
settings of ``solver="gda"`` (the path ``solver="auto"`` takes on them).

The family (:func:`make_task`): ``k`` groups of the given sizes (ratios up
to 1:20), ``d`` features uniform in [-1, 1]; group ``g`` (ranked by size,
0 the largest, ``r_g = g / (k - 1)``) has its features' mean moved by
``shift r_g`` along a random sign vector (then clipped to [-1, 1]), its
true direction tilted by ``tilt r_g`` degrees away from the shared one
(``beta``, of norm ``SIGNAL``) towards a random orthogonal direction, a
label-flip rate ``noise r_g`` and a common base logit (``base_rate``: the
share of positives at a zero margin).  The smallest groups differ most,
which is where the worst-group objective matters.  A test set of the same
sizes is drawn fresh with every seed.

References on every task: ERM (scikit-learn's LogisticRegression, C = 1),
the exact non-private minimax over gda's feasible set (the l2 ball of the
default radius, ``bench_minimax.ExactMinimaxL2``), DPSGDClassifier with its
defaults at the same epsilon and delta (``1 / n_train^2``); then
DPMinimaxClassifier (defaults) and candidate settings, each a set of
module constants of DPMinimaxClassifier's plans (``skdpopt.plans.minimax``
and its ``minimax_*`` siblings) replaced for the run.  The
score is the worst-group test log loss (lower is better).

Seeds: the development seeds 0-2 choose; the table of
``docs/design/minimax.md`` is printed from the fresh seeds 100-104
(``--report``), which nothing was chosen on.  ``--develop`` compares the
defaults with the alternatives to each constant (``CANDIDATES``, one
replaced at a time; ``--set`` other combinations, printed only) on the
development seeds, and gda without privacy
with the exact minimax on the member ``four``.  ``--auto`` measures
``solver="auto"``'s rule: gda against vertex sampling on the tuning
designs of ``bench_minimax.py`` (``AUTO_DESIGNS``), with privacy and
without, beside the solver the rule picks; ``--vertex`` the vertex
sampler's constants (``NON_PRIVATE_PASSES``, ``STEP_CAP_FACTOR``,
``STEP_RATIO``) against their alternatives on the same designs.

Usage::

    python benchmarks/design_minimax.py --report     # the fresh seeds' table
    python benchmarks/design_minimax.py --develop --n-jobs 2  # the alternatives
    python benchmarks/design_minimax.py --quick      # CI's subsets
    python benchmarks/design_minimax.py --develop --quick
    python benchmarks/design_minimax.py --develop --set CLIP_FACTOR=0.5,WEIGHT_DECAY=0.6
    python benchmarks/design_minimax.py --auto --n-jobs 2   # the auto rule
    python benchmarks/design_minimax.py --auto --quick
    python benchmarks/design_minimax.py --vertex --n-jobs 2  # vertex sampler
    python benchmarks/design_minimax.py --vertex --quick
    python benchmarks/design_minimax.py --members a,b  # printed only

``--report`` writes ``docs/benchmarks/_generated/design_minimax.md``,
``--develop`` ``design_minimax.develop.md``, ``--auto``
``design_minimax.auto.md``, ``--vertex`` ``design_minimax.vertex.md``
(with ``--quick``: ``NAME.quick.md``; see ``report.py``).
"""

import argparse
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from joblib import Parallel, delayed
from sklearn.linear_model import LogisticRegression

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]

from report import Report  # noqa: E402

from skdpopt import DPMinimaxClassifier, DPSGDClassifier  # noqa: E402
from skdpopt.metrics import worst_group_log_loss  # noqa: E402
from skdpopt.plans import (  # noqa: E402
    minimax,
    minimax_checks,
    minimax_gda,
    minimax_vertex,
)

SIGNAL = 3.0
DEVELOP_SEEDS = (0, 1, 2)
REPORT_SEEDS = (100, 101, 102, 103, 104)
QUICK_MEMBERS = ("four", "small")

# The family's members: (name, sizes, d, shift, tilt in degrees, noise,
# base rate).  They cover the ranges: 2 to 5 groups, ratios 1:1 to 1:20,
# d from 5 to 200, no shift to a strong one, no tilt to orthogonal
# directions, clean labels to 10% flips, balanced and imbalanced classes.
FOUR_GROUPS = (6000, 2500, 900, 300)
MEMBERS = [
    ("four", FOUR_GROUPS, 12, 0.3, 60, 0.09, 0.5),
    ("four-d5", FOUR_GROUPS, 5, 0.3, 60, 0.09, 0.5),
    ("four-d50", FOUR_GROUPS, 50, 0.3, 60, 0.09, 0.5),
    ("four-d200", FOUR_GROUPS, 200, 0.3, 60, 0.09, 0.5),
    ("four-flat", FOUR_GROUPS, 12, 0.0, 0, 0.0, 0.5),
    ("four-tilt90", FOUR_GROUPS, 12, 0.0, 90, 0.0, 0.5),
    ("four-noisy", FOUR_GROUPS, 12, 0.3, 30, 0.10, 0.5),
    ("four-rare", FOUR_GROUPS, 12, 0.3, 60, 0.05, 0.15),
    ("two-1:20", (6000, 300), 10, 0.2, 75, 0.05, 0.5),
    ("two-1:20-d100", (6000, 300), 100, 0.2, 75, 0.05, 0.5),
    ("two-1:1", (1500, 1500), 20, 0.3, 45, 0.05, 0.3),
    ("three-1:5", (5000, 2000, 1000), 30, 0.4, 45, 0.08, 0.5),
    ("three-1:5-rare", (5000, 2000, 1000), 8, 0.2, 60, 0.02, 0.1),
    ("five-1:20", (8000, 4000, 2000, 800, 400), 20, 0.3, 60, 0.06, 0.5),
    ("five-1:20-d200", (8000, 4000, 2000, 800, 400), 200, 0.3, 60, 0.06, 0.5),
    ("small", (1500, 600, 150), 8, 0.3, 60, 0.05, 0.5),
    ("large", (30000, 10000, 3000, 1500), 25, 0.3, 60, 0.05, 0.5),
]


def make_task(seed, sizes, d, shift, tilt, noise, base_rate):
    """Train and test rows of one family member: ``(X, y, groups)`` each."""
    rng = np.random.default_rng(seed)
    k = len(sizes)
    beta = rng.normal(size=d)
    beta *= SIGNAL / np.linalg.norm(beta)
    base = np.log(base_rate / (1.0 - base_rate))
    ranks = np.arange(k) / max(k - 1, 1)
    signs = rng.choice([-1.0, 1.0], size=(k, d))
    directions = []
    for r in ranks:
        other = rng.normal(size=d)
        other -= (other @ beta) / (beta @ beta) * beta
        other *= SIGNAL / np.linalg.norm(other)
        angle = np.deg2rad(tilt * r)
        directions.append(np.cos(angle) * beta + np.sin(angle) * other)

    def draw(factor):
        X, y, g = [], [], []
        for group, size in enumerate(sizes):
            size = int(size * factor)
            Z = np.clip(rng.uniform(-1, 1, (size, d))
                        + shift * ranks[group] * signs[group], -1, 1)
            logit = Z @ directions[group] + base
            label = rng.random(size) < 1.0 / (1.0 + np.exp(-logit))
            flip = rng.random(size) < noise * ranks[group]
            X.append(Z)
            y.append((label ^ flip).astype(int))
            g.append(np.full(size, f"g{group}"))
        return np.vstack(X), np.concatenate(y), np.concatenate(g)

    return draw(1.0), draw(1.0)


# The modules of DPMinimaxClassifier's plans, whose constants a run may
# replace: a constant is replaced where its plans read it.
PLAN_MODULES = (minimax, minimax_gda, minimax_vertex, minimax_checks)


def owner(name):
    """The plan module that holds the constant ``name`` (None: none)."""
    return next((module for module in PLAN_MODULES if hasattr(module, name)),
                None)


@contextmanager
def constants(**values):
    """Replace module constants of DPMinimaxClassifier's plans for a run."""
    old = {name: getattr(owner(name), name) for name in values}
    try:
        for name, value in values.items():
            setattr(owner(name), name, value)
        yield
    finally:
        for name, value in old.items():
            setattr(owner(name), name, value)


def worst(model, X, y, g):
    p = np.clip(model.predict_proba(X)[:, 1], 1e-12, 1 - 1e-12)
    return worst_group_log_loss(y, p, sensitive_features=g)


def references(train, test, seed, epsilon, exact=True):
    """Worst-group test log loss of ERM, the exact minimax, DP-SGD."""
    from bench_minimax import ExactMinimaxL2

    (X, y, g), (Xt, yt, gt) = train, test
    out = {"erm": worst(LogisticRegression().fit(X, y), Xt, yt, gt)}
    if exact:
        out["exact"] = worst(ExactMinimaxL2().fit(X, y, g), Xt, yt, gt)
    sgd = DPSGDClassifier(epsilon=epsilon, delta=1.0 / len(y) ** 2,
                          classes=[0, 1], random_state=seed).fit(X, y)
    out["dpsgd"] = worst(sgd, Xt, yt, gt)
    return out


def candidate(train, test, seed, epsilon, consts=None, **params):
    (X, y, g), (Xt, yt, gt) = train, test
    with constants(**(consts or {})):
        model = DPMinimaxClassifier(
            epsilon=epsilon, delta=1.0 / len(y) ** 2, classes=[0, 1],
            groups=sorted(set(g)), random_state=seed, **params).fit(
                X, y, sensitive_features=g)
    return worst(model, Xt, yt, gt), model


# The alternatives to each constant (``--develop``, development seeds):
# one module constant of DPMinimaxClassifier's plans replaced at a time.
CANDIDATES = {
    "defaults": ({}, {}),
    **{f"{name} = {value:g}": ({name: value}, {}) for name, value in (
        ("CLIP_FACTOR", 0.5), ("CLIP_FACTOR", 1.0),
        ("KAPPA_NOISE", 0.03), ("KAPPA_NOISE", 0.1),
        ("WEIGHT_DECAY", 0.5), ("WEIGHT_DECAY", 2.0),
        ("GROUP_TEMPERATURE", 0.5), ("GROUP_TEMPERATURE", 2.0),
        ("MODEL_SHARE", 0.7), ("MODEL_SHARE", 0.85))},
}


def parse_sets(sets):
    """``--set`` values (``NAME=VALUE,...`` each) as candidates beside the
    defaults: ``{label: (constants, {})}``."""
    out = {"defaults": ({}, {})}
    for text in sets:
        consts = {}
        for item in text.split(","):
            name, value = item.split("=")
            if owner(name.strip()) is None:
                raise SystemExit(f"--set: no constant {name.strip()!r} in "
                                 "DPMinimaxClassifier's plans")
            consts[name.strip()] = float(value)
        out[", ".join(f"{k} = {v:g}" for k, v in consts.items())] = (consts, {})
    return out


def member_seed(member, seed, epsilon, candidates, exact=True):
    """References and every candidate's score on one member and seed."""
    warnings.simplefilter("ignore")
    train, test = make_task(seed, *member[1:])
    scores = references(train, test, seed, epsilon, exact)
    for label, (consts, params) in candidates.items():
        scores[label] = candidate(train, test, seed, epsilon, consts,
                                  **params)[0]
    return scores


def sweep(members, candidates, seeds, epsilon, exact=True, n_jobs=1,
          out=print):
    """Median worst-group test log loss per member of each candidate.

    ``candidates``: ``{label: (constants, params)}``.  Prints one row per
    member, then per candidate the members where the exact minimax beats
    ERM, how many of them it is at most DP-SGD on, and its mean excess
    over DP-SGD there.  The (member, seed) fits run in ``n_jobs``
    processes (each replaces the constants in its own process).
    """
    jobs = [(member, seed) for member in members for seed in seeds]
    scores = Parallel(n_jobs=n_jobs)(
        delayed(member_seed)(member, seed, epsilon, candidates, exact)
        for member, seed in jobs)
    table = {}
    for member in members:
        runs = [s for (m, _), s in zip(jobs, scores, strict=True) if m is member]
        med = {k: float(np.median([r[k] for r in runs])) for k in runs[0]}
        table[member[0]] = med
        out(f"| {member[0]} | " + " | ".join(f"{v:.4f}" for v in med.values())
            + " |")
    for label, (wins, n, mean, worst_excess) in summary(table, candidates).items():
        out(f"{label}: at most DP-SGD on {wins}/{n} members where the minimax "
            f"beats ERM; mean excess {mean:+.4f}, worst {worst_excess:+.4f}")
    return table


def summary(table, candidates):
    """Per candidate: members at most DP-SGD, of the members where the exact
    minimax beats ERM, and the mean and worst excess over DP-SGD there."""
    relevant = [m for m, v in table.items() if v.get("exact", 0) < v["erm"]]
    out = {}
    for label in candidates:
        excess = [table[m][label] - table[m]["dpsgd"] for m in relevant]
        out[label] = (sum(e <= 0 for e in excess), len(relevant),
                      float(np.mean(excess)), float(np.max(excess)))
    return out


def develop_tables(report, table, seeds, n_jobs=1):
    """The alternatives' summary on the development seeds (``--develop``),
    and gda without privacy against the exact minimax on ``four``."""
    rows = []
    for label, (wins, n, mean, worst_excess) in summary(table, CANDIDATES).items():
        consts = CANDIDATES[label][0]
        default = ", ".join(f"{getattr(owner(k), k):g}" for k in consts)
        rows.append([label, default, f"{wins} of {n}", f"{mean:+.3f}",
                     f"{worst_excess:+.3f}"])
    report.table(
        "candidates", "One constant replaced at a time: members where "
        "DPMinimaxClassifier's worst-group test log loss is at most DP-SGD's "
        "(of those where the exact minimax beats ERM), and its mean and worst "
        "excess over DP-SGD there; epsilon = 1, medians over the seeds "
        + ", ".join(map(str, seeds)),
        ["setting", "default", "at most DP-SGD", "mean excess", "worst excess"],
        rows)
    four = next(m for m in MEMBERS if m[0] == "four")
    runs = Parallel(n_jobs=n_jobs)(
        delayed(nonprivate_four)(four, seed) for seed in seeds)
    report.table(
        "nonprivate", "Without privacy, member four: worst-group test log "
        "loss of gda (its default steps) and of the exact minimax over the "
        "same l2 ball", ["seed", "gda", "exact minimax"],
        [[seed, f"{g:.3f}", f"{e:.3f}"] for seed, (g, e) in
         zip(seeds, runs, strict=True)])


def nonprivate_four(member, seed):
    from bench_minimax import ExactMinimaxL2

    warnings.simplefilter("ignore")
    train, test = make_task(seed, *member[1:])
    (X, y, g), (Xt, yt, gt) = train, test
    gda = candidate(train, test, seed, np.inf)[0]
    return gda, worst(ExactMinimaxL2().fit(X, y, g), Xt, yt, gt)


# solver="auto"'s rule (``--auto``): gda against vertex sampling on the
# tuning designs of ``bench_minimax.py`` (never reported there), with
# privacy and without.  Quick: the smallest two, one seed, two epsilons.
AUTO_DESIGNS = ("4 groups", "8 groups", *(f"{d} features" for d in (
    30, 100, 300, 500, 1000, 3000)))
AUTO_EPSILONS = (1.0, 3.0, 10.0, np.inf)
AUTO_SEEDS = (0, 1, 2)
QUICK_AUTO = ("4 groups", "30 features")


def auto_design(name, seed):
    import bench_minimax

    if name == "4 groups":
        return bench_minimax.tuning_groups(seed)
    if name == "8 groups":
        return bench_minimax.tuning_groups8(seed)
    return bench_minimax.tuning_sparse(seed, int(name.split()[0]))


def auto_run(name, seed, epsilons):
    """Worst-group test log loss of both solvers on one design and seed."""
    warnings.simplefilter("ignore")
    X, y, g = auto_design(name, 5000 + seed)
    Xt, yt, gt = auto_design(name, 6000 + seed)
    out = {}
    for epsilon in epsilons:
        for solver in ("gda", "vertex_sampling"):
            model = DPMinimaxClassifier(
                epsilon=epsilon, delta=1.0 / len(y) ** 2, solver=solver,
                random_state=seed).fit(X, y, sensitive_features=g)
            out[epsilon, solver] = worst(model, Xt, yt, gt)
    return len(y), X.shape[1] + 1, len(set(g)), out


def auto_tables(report, designs, seeds, epsilons, n_jobs=1):
    """The medians per design and epsilon, the winner, the rule's pick, and
    the ranges the page quotes."""
    runs = Parallel(n_jobs=n_jobs)(delayed(auto_run)(name, seed, epsilons)
                                   for name in designs for seed in seeds)
    rows, private, public = [], [], []
    for i, name in enumerate(designs):
        part = runs[i * len(seeds):(i + 1) * len(seeds)]
        n, d, k = part[0][:3]
        for epsilon in epsilons:
            loss = {s: f"{np.median([r[3][epsilon, s] for r in part]):.3f}"
                    for s in ("gda", "vertex_sampling")}
            winner = ("tie" if loss["gda"] == loss["vertex_sampling"] else
                      min(loss, key=lambda s: float(loss[s])))
            pick = minimax.choose_solver(n, d, k, epsilon, 1.0 / n**2)
            ratio = np.sqrt(d) / (n * epsilon)
            rows.append([name, n, d, f"{epsilon:g}",
                         "" if np.isinf(epsilon) else f"{ratio:.1e}",
                         f"{d / n:.4f}", loss["gda"], loss["vertex_sampling"],
                         winner, pick])
            (public if np.isinf(epsilon) else private).append(
                (ratio if not np.isinf(epsilon) else d / n, winner, pick))
    report.table(
        "auto", "gda against vertex sampling: worst-group test log loss, "
        "medians over the seeds " + ", ".join(map(str, seeds))
        + " (d counts the intercept; \"auto\" is the rule's pick)",
        ["design", "n", "d", "epsilon", "sqrt(d) / (n epsilon)", "d / n",
         "gda", "vertex_sampling", "lower", "auto"], rows)
    for key, cases, fmt in (("private", private, "{:.1e}"),
                            ("nonprivate", public, "{:.4f}")):
        gda = [r for r, w, _ in cases if w == "gda"]
        vertex = [r for r, w, _ in cases if w == "vertex_sampling"]
        report.value(f"{key}_gda_won_up_to",
                     fmt.format(max(gda)) if gda else "none")
        report.value(f"{key}_vertex_won_from",
                     fmt.format(min(vertex)) if vertex else "none")
        agree = sum(w in (p, "tie") for _, w, p in cases)
        report.value(f"{key}_rule_agrees", f"{agree} of {len(cases)}")


# The vertex sampler's constants (``--vertex``), on the tuning designs
# of ``bench_minimax.py``: the passes without privacy, the step cap
# factor and STEP_RATIO, each against its alternatives.
VERTEX_PASSES = (1, 5, 20)
VERTEX_CAPS = (1.0, 3.0, 10.0)
VERTEX_RATIOS = (0.25, 0.075, 0.05, 0.025, 0.0075)
VERTEX_EPSILONS = (1.0, 3.0, 10.0)
VERTEX_DESIGNS = ("4 groups", "4 groups x10", "8 groups")


def vertex_design(name, seed):
    import bench_minimax

    if name == "4 groups":
        return bench_minimax.tuning_groups(seed)
    if name == "4 groups x10":
        return bench_minimax.tuning_groups(
            seed, tuple(10 * size for size in (6000, 1500, 600, 200)))
    return bench_minimax.tuning_groups8(seed)


def vertex_fit(X, y, g, epsilon, seed, **params):
    from bench_minimax import RADIUS

    delta = 0.0 if np.isinf(epsilon) else 1.0 / len(y) ** 2
    return DPMinimaxClassifier(solver="vertex_sampling", epsilon=epsilon,
                               delta=delta, radius=RADIUS, random_state=seed,
                               **params).fit(X, y, sensitive_features=g)


def vertex_passes(seed, passes):
    """Train worst-group log loss after ``passes`` passes without privacy,
    and the exact minimax's over the same l1 ball."""
    from bench_minimax import ExactMinimax

    warnings.simplefilter("ignore")
    X, y, g = vertex_design("4 groups", 5000 + seed)
    exact = ExactMinimax().fit(X, y, g).objective_
    root = round(np.sqrt(len(y)))
    return exact, [worst(vertex_fit(X, y, g, np.inf, seed,
                                    max_iter=p * root), X, y, g)
                   for p in passes]


def vertex_accuracy(design, seed, epsilons, name, values):
    """Worst-group test accuracy and train log loss per epsilon and value
    of the constant ``name`` (None: DP-SGD at its defaults)."""
    from skdpopt.metrics import worst_group_accuracy

    warnings.simplefilter("ignore")
    X, y, g = vertex_design(design, 5000 + seed)
    Xt, yt, gt = vertex_design(design, 6000 + seed)
    out = {}
    for epsilon in epsilons:
        for value in values:
            if value is None:
                model = DPSGDClassifier(epsilon=epsilon, delta=1.0 / len(y) ** 2,
                                        random_state=seed).fit(X, y)
            else:
                with constants(**{name: value}):
                    model = vertex_fit(X, y, g, epsilon, seed)
            out[epsilon, value] = worst_group_accuracy(
                yt, model.predict(Xt), sensitive_features=gt)
            out[epsilon, value, "train"] = worst(model, X, y, g)
    return out


def vertex_tables(report, quick=False, n_jobs=1):
    seeds = (0,) if quick else (0, 1, 2)
    passes = (1, 20) if quick else VERTEX_PASSES
    runs = Parallel(n_jobs=n_jobs)(delayed(vertex_passes)(seed, passes)
                                   for seed in seeds)
    rows, gaps = [], {p: [] for p in passes}
    for seed, (exact, losses) in zip(seeds, runs, strict=True):
        for p, loss in zip(passes, losses, strict=True):
            gaps[p].append(loss - exact)
            rows.append([p, seed, f"{loss:.3f}", f"{exact:.3f}",
                         f"{loss - exact:.3f}"])
    report.table(
        "passes", "Without privacy, 4 groups: train worst-group log loss "
        "after the passes, against the exact minimax over the l1 ball",
        ["passes", "seed", "vertex sampling", "exact minimax", "gap"], rows)
    report.value("passes_20_worst_gap", f"{max(gaps[20]):.3f}")
    report.value("passes_1_gaps", f"{min(gaps[1]):.3f} to {max(gaps[1]):.3f}")

    seeds = (0, 1) if quick else (0, 1, 2, 3, 4)
    epsilons = (1.0,) if quick else VERTEX_EPSILONS
    runs = Parallel(n_jobs=n_jobs)(
        delayed(vertex_accuracy)("4 groups", seed, epsilons, "STEP_CAP_FACTOR",
                                 (*VERTEX_CAPS, None)) for seed in seeds)
    rows, beats, beats_loss = [], 0, 0
    values = (*VERTEX_CAPS, None)
    for epsilon in epsilons:
        med = {v: round(float(np.median([r[epsilon, v] for r in runs])), 3)
               for v in values}
        loss = {v: round(float(np.median([r[epsilon, v, "train"] for r in runs])),
                         3) for v in values}
        # As printed: a tie to the third decimal is no win.
        beats += all(med[c] > med[1.0] for c in (3.0, 10.0))
        beats_loss += all(loss[c] < loss[1.0] for c in (3.0, 10.0))
        rows += [[f"{epsilon:g}", "DPSGDClassifier" if v is None else f"{v:g}",
                  f"{med[v]:.3f}", f"{loss[v]:.3f}"] for v in values]
    report.table(
        "step_cap", "4 groups: medians over the seeds "
        + ", ".join(map(str, seeds)) + " per step cap factor (DP-SGD beside)",
        ["epsilon", "STEP_CAP_FACTOR", "worst-group test accuracy",
         "train worst-group log loss"], rows)
    report.value("caps_beat_1", f"{beats} of {len(epsilons)}")
    report.value("caps_beat_1_loss", f"{beats_loss} of {len(epsilons)}")

    designs = ("4 groups",) if quick else VERTEX_DESIGNS
    jobs = [(d, seed) for d in designs for seed in seeds]
    runs = Parallel(n_jobs=n_jobs)(
        delayed(vertex_accuracy)(d, seed, epsilons, "STEP_RATIO", VERTEX_RATIOS)
        for d, seed in jobs)
    rows, medians = [], {r: [] for r in VERTEX_RATIOS}
    for design in designs:
        part = [r for (d, _), r in zip(jobs, runs, strict=True) if d == design]
        for epsilon in epsilons:
            cells = []
            for ratio in VERTEX_RATIOS:
                med = float(np.median([r[epsilon, ratio] for r in part]))
                medians[ratio].append(med)
                cells.append(f"{med:.3f}")
            rows.append([design, f"{epsilon:g}", *cells])
    report.table(
        "step_ratio", "Median worst-group test accuracy over the seeds "
        + ", ".join(map(str, seeds)) + " per STEP_RATIO",
        ["design", "epsilon", *(f"{r:g}" for r in VERTEX_RATIOS)], rows)
    means = {r: np.mean(v) for r, v in medians.items()}
    report.table(
        "step_ratio_means", "Mean of the medians above per STEP_RATIO",
        ["STEP_RATIO", "mean"], [[f"{r:g}", f"{m:.4f}"] for r, m in means.items()])
    best = max(means, key=means.get)
    report.value("best_step_ratio", f"{best:g}")


def report_tables(report, members, table):
    """The fresh seeds' table and its summary figures (``--report``)."""
    rows = []
    for name, sizes, d, shift, tilt, noise, base_rate in members:
        med = table[name]
        beats = med["exact"] < med["erm"]
        rows.append([name, " / ".join(map(str, sizes)), d, f"{shift:g}",
                     f"{tilt:g}", f"{noise:g}", f"{base_rate:g}",
                     *(f"{med[k]:.3f}" for k in ("erm", "exact", "dpsgd",
                                                 "dpminimax")),
                     "yes" if beats else "no",
                     ("yes" if med["dpminimax"] <= med["dpsgd"] else "no")
                     if beats else ""])
    report.table(
        "fresh", "Worst-group test log loss at epsilon = 1, medians over the "
        "seeds", ["member", "group sizes", "d", "shift", "tilt", "noise",
                  "base rate", "ERM", "exact minimax", "DP-SGD",
                  "DPMinimaxClassifier", "minimax beats ERM",
                  "at most DP-SGD"], rows)
    relevant = [m for m in table if table[m]["exact"] < table[m]["erm"]]
    excess = [table[m]["dpminimax"] - table[m]["dpsgd"] for m in relevant]
    report.value("members", len(relevant))
    report.value("at_most_dpsgd", sum(e <= 0 for e in excess))
    report.value("mean_excess", f"{np.mean(excess):+.3f}")
    report.value("worst_excess", f"{np.max(excess):+.3f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--members", default=None)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--report", action="store_true",
                        help="the fresh seeds' table (design_minimax.md)")
    parser.add_argument("--develop", action="store_true",
                        help="the alternatives (CANDIDATES) on the development "
                             "seeds (design_minimax.develop.md)")
    parser.add_argument("--auto", action="store_true",
                        help="the rule of solver='auto' on the tuning designs "
                             "(design_minimax.auto.md)")
    parser.add_argument("--vertex", action="store_true",
                        help="the vertex sampler's constants on the tuning "
                             "designs (design_minimax.vertex.md)")
    parser.add_argument("--quick", action="store_true",
                        help=f"on {', '.join(QUICK_MEMBERS)} and one seed "
                             "(the first fresh or development seed); with "
                             f"--auto {', '.join(QUICK_AUTO)}")
    parser.add_argument("--set", action="append", default=[],
                        metavar="NAME=VALUE[,NAME=VALUE]",
                        help="with --develop: only the defaults and these "
                             "settings (a combination per --set; printed "
                             "only)")
    parser.add_argument("--no-exact", action="store_true")
    parser.add_argument("--n-jobs", type=int, default=1)
    Report.add_arguments(parser)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.auto:
        report = Report("design_minimax.auto", args)
        auto_tables(report, QUICK_AUTO if args.quick else AUTO_DESIGNS,
                    AUTO_SEEDS[:1] if args.quick else AUTO_SEEDS,
                    (1.0, np.inf) if args.quick else AUTO_EPSILONS,
                    n_jobs=args.n_jobs)
        report.write()
        return
    if args.vertex:
        report = Report("design_minimax.vertex", args)
        vertex_tables(report, quick=args.quick, n_jobs=args.n_jobs)
        report.write()
        return
    args.report = (args.report or args.quick) and not args.develop
    seeds = DEVELOP_SEEDS if args.develop else REPORT_SEEDS if args.report \
        else DEVELOP_SEEDS
    seeds = seeds[:1] if args.quick else seeds
    names = args.members.split(",") if args.members else \
        QUICK_MEMBERS if args.quick else None
    warnings.simplefilter("ignore")
    members = [m for m in MEMBERS if not names or m[0] in names]
    candidates = (parse_sets(args.set) if args.develop and args.set else
                  CANDIDATES if args.develop else {"dpminimax": ({}, {})})
    # Only a whole run (every member, or the quick ones with --quick;
    # epsilon 1, the exact minimax, every candidate) writes its table.
    written = (args.report or args.develop) and not (
        args.no_exact or args.epsilon != 1.0 or args.set
        or (args.members and not args.quick))
    name = "design_minimax.develop" if args.develop else "design_minimax"
    report = Report(name, args, write=written)
    print("| member | " + " | ".join(
        ["ERM"] + (["exact minimax"] if not args.no_exact else [])
        + ["DP-SGD", *candidates]) + " |")
    table = sweep(members, candidates, seeds, args.epsilon,
                  exact=not args.no_exact, n_jobs=args.n_jobs)
    if written and args.develop:
        develop_tables(report, table, seeds, n_jobs=args.n_jobs)
        report.write()
    elif written:
        report_tables(report, members, table)
        report.write()


if __name__ == "__main__":
    main()
