"""Design measurements for DPSyntheticData: variants on development seeds.

Development seeds only (10, 11, 12); the reported benchmark
(``bench_synthetic.py``) uses seeds 0, 1, 2.  Each run fits
DPSyntheticData on one of the benchmark's tables with a variant of its
fit, samples as many rows as the table has (default, systematic sampler)
and prints the 2-way and 3-way mean errors as the benchmark computes them,
with the CPU seconds of the fit.  The variants replace parts of the fit
from this script; the library is not changed.

Variants (keys of the JSON given with ``--variant``; ``{}`` is the
estimator as it is):

* ``anneal``: AIM's budget annealing (McKenna et al. 2022) instead of
  equal rounds.  The rounds share the zCDP budget the plan gives its
  rounds; each starts with ``1 / (first_per_column * d)`` of it (a tenth
  to the selection, as planned), and when a round's measurement moved the
  model's answer on the selected marginal by at most
  ``threshold * sqrt(2/pi) * sigma * cells`` in L1 (AIM's test with
  threshold 1), later rounds get ``factor`` times the budget (AIM: 4, the
  noise halved and the selection epsilon doubled); a round that would
  leave less than its own budget takes all that is left.  Options:
  ``first_per_column`` (4), ``threshold`` (1), ``factor`` (4),
  ``criterion`` ("change": the model's answer before and after the
  update; "noisy": the model's answer before against the projected
  measurement), ``grow_limit`` (AIM's size limit: ``max_model_size``
  times the share of the rounds' budget spent).  The rounds then depend on
  the data, so a real implementation would need a privacy filter; here it
  spends exactly the plan's zCDP budget of the rounds, which for the
  plans measured equals (to 0.3%) the budget a zCDP filter converting to
  the same (epsilon, delta) would have (see ``--rho``).
* ``one_way_exponent``: the warm start's budget split over the columns
  in proportion to ``cells ** exponent`` (same total) instead of equally.
* ``group``: after the warm start, the categories of a column whose noisy
  1-way share is below ``group`` times its noise standard deviation are
  merged into one (as MST compresses its domain; McKenna, Sheldon and
  Miklau 2021), and the marginals of two or more columns are measured on
  the merged categories (a post-processed linear query of the marginal:
  no more sensitive); the model keeps every category.
* ``iters``: steps of the final joint estimation (40 in the estimator).
* ``penalty``: share of the expected L1 size of a measurement's noise
  subtracted in the selection score (0.5 in the estimator).
* ``max_iter``: the estimator's number of rounds (its default if absent).

Usage::

    python benchmarks/design_synthetic.py --table 3 --epsilon 1 --variant '{}'
    python benchmarks/design_synthetic.py --table 3 --epsilon 1 \\
        --variant '{"anneal": {"first_per_column": 4, "threshold": 1}}'
    python benchmarks/design_synthetic.py --rho
    python benchmarks/design_synthetic.py --table 3 --breakdown
    python benchmarks/design_synthetic.py --report     # the design page's table
    python benchmarks/design_synthetic.py --report --quick

``--report`` runs the variants of ``REPORTED`` (the alternatives the
design page weighs against each default) on GSS, TV16 and Adult, seeds
10 to 12, and writes their mean 3-way errors and CPU seconds to
``docs/benchmarks/_generated/design_synthetic.md`` (``--quick``: GSS,
seed 10, three variants, ``design_synthetic.quick.md``).  Besides the keys
above, a variant may set ``round_factor`` (rounds ``round_factor * d *
2 ** log10(epsilon)`` instead of the default's factor 2),
``max_model_size`` (the estimator's parameter) and ``patch`` (module
constants of the library set for the run, restored after it).

``--breakdown`` splits the estimator's 3-way error on a table: the
released rows', the fitted model's (its exact marginals) and that of a
model fitted to the exact, noiseless marginals the fit selected (what
the selections would give without noise).
"""

import argparse
import importlib
import json
import os
import sys
import time
from contextlib import contextmanager

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import bench_synthetic as bench  # noqa: E402
from report import Report  # noqa: E402

import skdpopt.synthetic  # noqa: E402
from skdpopt import DPSyntheticData  # noqa: E402
from skdpopt.mechanisms import exponential_mechanism, gaussian_noise  # noqa: E402
from skdpopt.solvers import query_release as qr  # noqa: E402
from skdpopt.solvers.graphical_model import GraphicalModel  # noqa: E402

SEEDS = (10, 11, 12)
# The library's selection penalty (a variant's fit sets the module's).
NOISE_PENALTY = qr.NOISE_PENALTY
REPORT_TABLES = ("happiness (GSS)", "TV16 (CCES)", "Adult")
# The design page's alternatives: (name, epsilon, variant).
REPORTED = (
    ("the estimator's defaults", 1.0, {}),
    ("rounds: factor 1 (d rounds) instead of 2", 1.0, {"round_factor": 1}),
    ("one-way and selection shares halved (0.05)", 1.0,
     {"patch": {"skdpopt.plans.synthetic.ONE_WAY_SHARE": 0.05,
                "skdpopt.plans.synthetic.SELECTION_SHARE": 0.05}}),
    ("the estimator's defaults", 0.3, {}),
    ("one-way and selection shares halved (0.05)", 0.3,
     {"patch": {"skdpopt.plans.synthetic.ONE_WAY_SHARE": 0.05,
                "skdpopt.plans.synthetic.SELECTION_SHARE": 0.05}}),
    ("noise penalty 1 (AIM's) instead of 0.5", 1.0, {"penalty": 1.0}),
    ("noise penalty 0.25", 1.0, {"penalty": 0.25}),
    ("damping 1 noise std instead of 3", 1.0,
     {"patch": {"skdpopt.solvers.query_release.DAMPING": 1.0}}),
    ("damping 10 noise std", 1.0,
     {"patch": {"skdpopt.solvers.query_release.DAMPING": 10.0}}),
    ("200 estimation steps instead of 40", 1.0, {"iters": 200}),
    ("max_model_size 1e5 instead of 2e5", 1.0, {"max_model_size": 1e5}),
    ("max_model_size 1e6", 1.0, {"max_model_size": 1e6}),
)
QUICK_REPORTED = (0, 5, 9)


class GroupedMarginals(qr.MarginalWorkload):
    """Marginals of two or more columns answered on merged categories."""

    def __init__(self, marginals, shape, groups):
        super().__init__(marginals, shape)
        self.groups = groups
        self.n_groups = [int(g.max()) + 1 for g in groups]
        self.cell_group, sizes = [], []
        for m in self.marginals:
            if len(m) == 1:
                self.cell_group.append(None)
                sizes.append(self.shape[m[0]])
                continue
            grids = np.meshgrid(*[groups[a] for a in m], indexing="ij")
            self.cell_group.append(np.ravel_multi_index(
                [g.ravel() for g in grids], [self.n_groups[a] for a in m]))
            sizes.append(int(np.prod([self.n_groups[a] for a in m])))
        self.sizes = np.array(sizes)

    def expand(self, j, grouped):
        idx = self.cell_group[j]
        return grouped if idx is None else grouped[idx]

    def answer(self, model, j):
        full = model.marginal(self.marginals[j]).ravel()
        idx = self.cell_group[j]
        return full if idx is None else np.bincount(idx, weights=full,
                                                    minlength=self.sizes[j])

    def answer_records(self, codes, j):
        if self.cell_group[j] is None:
            return super().answer_records(codes, j)
        keep = self.marginals[j]
        flat = np.ravel_multi_index([self.groups[a][codes[:, a]] for a in keep],
                                    [self.n_groups[a] for a in keep])
        return np.bincount(flat, minlength=self.sizes[j]) / codes.shape[0]

    def update(self, model, j, estimate, noise_std):
        # Proportional fitting of the merged cells, each fine cell scaled
        # by its group's ratio (the estimator's damping).
        target = qr.project_to_simplex(estimate)
        damping = max(qr.DAMPING * noise_std, 1e-15)
        ratio = np.log(target + damping) - np.log(self.answer(model, j) + damping)
        model.update(self.marginals[j], self.expand(j, ratio))


class _Expanding:
    """A model as the solver's joint estimation sees it: an update on a
    grouped marginal's cells reaches every fine cell of its group."""

    def __init__(self, model, workload):
        self._model, self._workload = model, workload
        self._index = {tuple(m): j for j, m in enumerate(workload.marginals)}

    def update(self, clique, values):
        j = self._index[tuple(clique)]
        self._model.update(clique, self._workload.expand(j, values))

    def __getattr__(self, name):
        return getattr(self._model, name)


def joint_estimate(workload, model, measurements, n_iter):
    """The estimator's final joint estimation, for grouped measurements too."""
    if isinstance(workload, GroupedMarginals):
        model = _Expanding(model, workload)
    qr.joint_estimate(workload, model, measurements, n_iter=n_iter)


def release_annealed(workload, real, n_samples, result, rng, max_model_cells, *,
                     rho, first_rounds, threshold=1.0, factor=4.0,
                     criterion="change", grow_limit=False, selection_share=0.1,
                     penalty=qr.NOISE_PENALTY, log=None):
    """AIM's annealed rounds over a zCDP budget ``rho`` (replace-one:
    a normalised marginal has L2 sensitivity sqrt(2)/n, so a Gaussian
    measurement of std sigma costs 1 / (n sigma)^2; a selection of epsilon
    e costs e^2 / 8)."""
    model = result.model
    left, round_rho = rho, rho / first_rounds
    while left > 1e-12 * rho:
        if left < 2 * round_rho:
            round_rho = left
        left -= round_rho
        selection_epsilon = np.sqrt(8 * selection_share * round_rho)
        sigma = 1.0 / (n_samples * np.sqrt((1 - selection_share) * round_rho))
        limit = max_model_cells * (rho - left) / rho if grow_limit else max_model_cells
        allowed = qr.candidates(workload, model, limit) or qr.candidates(
            workload, model, max_model_cells)
        noise_l1 = penalty * np.sqrt(2 / np.pi) * sigma * workload.sizes
        scores = np.full(len(workload), -np.inf)
        scores[allowed] = (workload.errors(model, real, allowed) - noise_l1)[allowed]
        scale = selection_epsilon * n_samples / (2 * workload.l1_sensitivity_times_n)
        j = int(exponential_mechanism(rng, scale * scores))
        result.selected.append(j)
        before = workload.answer(model, j)
        noisy = real[j] + gaussian_noise(rng, sigma, real[j].shape)
        weighted, precision = result.measurements.get(j, (0.0, 0.0))
        result.measurements[j] = (weighted + noisy / sigma**2,
                                  precision + 1 / sigma**2)
        qr._fit_measurements(workload, model, result.measurements, [j], 1)
        if criterion == "change":
            moved = np.abs(workload.answer(model, j) - before).sum()
        else:
            moved = np.abs(qr.project_to_simplex(noisy) - before).sum()
        if moved <= threshold * np.sqrt(2 / np.pi) * sigma * workload.sizes[j]:
            round_rho *= factor
            if log is not None:
                log["anneals"].append(len(result.selected))
    return result


def make_fit(variant, log):
    """The estimator's ``fit_synthetic`` with the variant's changes
    (marginal workloads with a warm start only, as in the benchmark)."""
    anneal = variant.get("anneal")
    exponent = variant.get("one_way_exponent")
    group = variant.get("group")
    iters = variant.get("iters", qr.ESTIMATION_ITERS)
    penalty = variant.get("penalty", NOISE_PENALTY)

    def fit(problem, plan, rng, *, verbose=0):
        codes, workload = problem.codes, problem.workload
        max_model_cells = problem.max_model_cells
        qr.NOISE_PENALTY = penalty  # read by release_workload
        n_samples, shape = codes.shape[0], workload.shape
        real = [workload.answer_records(codes, j) for j in range(len(workload))]
        model = GraphicalModel(shape, [(a,) for a in range(len(shape))])
        one_way = [j for j, m in enumerate(workload.marginals) if len(m) == 1]
        weights = np.ones(len(one_way))
        if exponent is not None:
            weights = workload.sizes[one_way].astype(float) ** exponent
        # Same total zCDP cost: rho_a proportional to the weights.
        stds = plan.one_way_noise_std * np.sqrt(weights.mean() / weights)
        measurements = {}
        for j, std in zip(one_way, stds, strict=True):
            noisy = real[j] + gaussian_noise(rng, std, real[j].shape)
            measurements[j] = (noisy / std**2, 1 / std**2)
            estimate = qr.project_to_simplex(noisy) + qr.START_FLOOR / noisy.size
            model.update(workload.marginals[j], np.log(estimate / estimate.sum()))
        if group is not None:
            groups = [None] * len(shape)
            for j, std in zip(one_way, stds, strict=True):
                noisy = measurements[j][0] / measurements[j][1]
                small = noisy < group * std
                merged = np.arange(noisy.size)
                if small.sum() >= 2:
                    big = np.flatnonzero(~small)
                    merged[big] = np.arange(big.size)
                    merged[small] = big.size
                groups[workload.marginals[j][0]] = merged
            workload = GroupedMarginals(workload.marginals, shape, groups)
            real = [workload.answer_records(codes, j) for j in range(len(workload))]
        if anneal is None:
            result = qr.release_workload(
                workload, real, n_samples, n_rounds=plan.n_rounds,
                selection_epsilon=plan.selection_epsilon,
                noise_std=plan.round_noise_std, rng=rng, model=model,
                initial_measurements=measurements,
                max_model_cells=max_model_cells)
        else:
            options = dict(anneal)
            first = options.pop("first_per_column", 4) * len(shape)
            rho = plan.n_rounds * (1 / (2 * plan.round_noise_multiplier**2)
                                   + plan.selection_epsilon**2 / 8)
            result = release_annealed(
                workload, real, n_samples, qr.ReleaseResult(model, [], measurements),
                rng, max_model_cells, rho=rho, first_rounds=int(round(first)),
                penalty=penalty, log=log, **options)
        joint_estimate(workload, result.model, result.measurements, iters)
        return result

    return fit


def _conversion_gap(rho, epsilon):
    from skdpopt.accounting import rdp

    orders = rdp.DEFAULT_ORDERS
    return rdp.rdp_to_epsilon(orders, orders * rho, bench.DELTA) - epsilon


def budget_check():
    """zCDP budget of today's plans against the rho that converts to the
    same (epsilon, delta) directly (what a zCDP filter would have)."""
    from scipy.optimize import brentq

    from skdpopt.plans.synthetic import plan_synthetic

    codes, sizes = bench.load(*bench.TABLES["Adult"])
    d = len(sizes)
    n_queries = d + d * (d - 1) // 2 + d * (d - 1) * (d - 2) // 6
    for epsilon in bench.EPSILONS:
        plan = plan_synthetic(
            n_samples=len(codes), n_columns=d, n_queries=n_queries, n_one_way=d,
            n_bounded=0, l2_sensitivity_times_n=np.sqrt(2.0),
            epsilon=epsilon, delta=bench.DELTA)
        planned = (d / (2 * plan.one_way_noise_multiplier**2)
                   + plan.n_rounds * (1 / (2 * plan.round_noise_multiplier**2)
                                      + plan.selection_epsilon**2 / 8))
        direct = brentq(_conversion_gap, 1e-8, 10.0, args=(epsilon,))
        print(f"epsilon {epsilon:g}: plan's zCDP sum {planned:.6g}, "
              f"rho converting to ({epsilon:g}, {bench.DELTA:g}) {direct:.6g}, "
              f"ratio {direct / planned:.4f}")


def breakdown(title, epsilon, seeds):
    codes, sizes = bench.load(*bench.TABLES[title])
    triples = bench.triples(len(sizes))

    def real(cols):
        dims = [sizes[c] for c in cols]
        flat = np.ravel_multi_index(codes[:, list(cols)].T, dims)
        counts = np.bincount(flat, minlength=int(np.prod(dims)))
        return counts.reshape(dims) / len(codes)

    def model_error(model):
        return np.mean([np.abs(model.marginal(t) - real(t)).sum() for t in triples])

    for seed in seeds:
        gen = DPSyntheticData(epsilon=epsilon, delta=bench.DELTA, domain=list(sizes),
                              random_state=seed).fit(codes)
        rows = bench.summary(codes, gen.sample(random_state=seed + 1000).astype(int),
                             sizes)[2]
        queries = gen._queries
        chosen = sorted(set(gen.selected_) | {j for j, m in enumerate(queries.marginals)
                                              if len(m) == 1})
        exact = GraphicalModel(tuple(sizes), [queries.marginals[j] for j in chosen])
        # Noiseless measurements: proportional fitting to convergence.
        measured = {j: (queries.answer_records(codes, j) * 1e12, 1e12) for j in chosen}
        for _ in range(30):
            qr.fit_measurements(queries, exact, measured)
        print(f"  seed {seed}: rows {rows:.4f}, model {model_error(gen.model_):.4f}, "
              f"same marginals without noise {model_error(exact):.4f}", flush=True)


@contextmanager
def patched(constants):
    """Set library module constants (``"module.NAME": value``) for a run."""
    saved = []
    try:
        for path, value in constants.items():
            module_name, name = path.rsplit(".", 1)
            module = importlib.import_module(module_name)
            saved.append((module, name, getattr(module, name)))
            setattr(module, name, value)
        yield
    finally:
        for module, name, value in reversed(saved):
            setattr(module, name, value)


def run_variant(codes, sizes, epsilon, variant, seeds, *, verbose=True):
    """Mean over seeds of [2-way error, 3-way error, CPU seconds]."""
    max_iter = variant.get("max_iter")
    if "round_factor" in variant:
        max_iter = max(2, round(variant["round_factor"] * codes.shape[1]
                                * 2 ** np.log10(epsilon)))
    rows = []
    fit_synthetic = skdpopt.synthetic.fit_synthetic
    try:
        for seed in seeds:
            log = {"anneals": []}
            skdpopt.synthetic.fit_synthetic = make_fit(variant, log)
            start = time.process_time()
            with patched(variant.get("patch", {})):
                gen = DPSyntheticData(
                    epsilon=epsilon, delta=bench.DELTA, domain=list(sizes),
                    random_state=seed, max_iter=max_iter,
                    max_model_size=variant.get(
                        "max_model_size", skdpopt.synthetic.DEFAULT_MAX_MODEL_SIZE),
                ).fit(codes)
            cpu = time.process_time() - start
            errors = bench.summary(
                codes, gen.sample(random_state=seed + 1000).astype(int), sizes)
            rows.append([errors[0], errors[2], cpu])
            if verbose:
                print(f"  seed {seed}: 2-way {errors[0]:.4f}, 3-way {errors[2]:.4f}, "
                      f"{cpu:.1f} s CPU, {len(gen.selected_)} rounds, "
                      f"annealed after rounds {log['anneals']}, "
                      f"{gen.model_.cells:,} cells", flush=True)
    finally:
        skdpopt.synthetic.fit_synthetic = fit_synthetic
        qr.NOISE_PENALTY = NOISE_PENALTY
    return np.mean(rows, axis=0)


def report_variants(args):
    report = Report("design_synthetic", args)
    titles = REPORT_TABLES[:1] if args.quick else REPORT_TABLES
    seeds = SEEDS[:1] if args.quick else SEEDS
    reported = ([REPORTED[i] for i in QUICK_REPORTED] if args.quick
                else REPORTED)
    data = {title: bench.load(*bench.TABLES[title]) for title in titles}
    rows = []
    for name, epsilon, variant in reported:
        row = [name, f"{epsilon:g}"]
        cpu = []
        for title in titles:
            codes, sizes = data[title]
            mean = run_variant(codes, sizes, epsilon, variant, seeds,
                               verbose=False)
            row.append(f"{mean[1]:.3f}")
            cpu.append(mean[2])
        row.append(f"{np.sum(cpu):.1f}")
        rows.append(row)
        print(" | ".join(row), flush=True)
    report.table(
        "variants",
        "Mean 3-way marginal error of the synthetic records, by variant "
        f"(mean over seeds {seeds[0]} to {seeds[-1]}; CPU s: the fits' "
        "processor seconds per seed, summed over the tables)",
        ["variant", "epsilon", *titles, "CPU s"], rows, timing=["CPU s"])
    report.write()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", type=int, default=3,
                        help="index into bench_synthetic.TABLES")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seeds", default=",".join(str(s) for s in SEEDS))
    parser.add_argument("--variant", default="{}")
    parser.add_argument("--rho", action="store_true",
                        help="only compare the plans' zCDP budgets")
    parser.add_argument("--breakdown", action="store_true",
                        help="only split the estimator's 3-way error")
    parser.add_argument("--report", action="store_true",
                        help="run the design page's variants, write its table")
    parser.add_argument("--quick", action="store_true",
                        help="with --report: CI's subset")
    Report.add_arguments(parser)
    args = parser.parse_args()
    if args.report:
        report_variants(args)
        return
    if args.rho:
        budget_check()
        return
    title = list(bench.TABLES)[args.table]
    if args.breakdown:
        breakdown(title, args.epsilon, [int(s) for s in args.seeds.split(",")])
        return
    variant = json.loads(args.variant)
    codes, sizes = bench.load(*bench.TABLES[title])
    mean = run_variant(codes, sizes, args.epsilon, variant,
                       [int(s) for s in args.seeds.split(",")])
    print(f"{title}, epsilon {args.epsilon:g}, {json.dumps(variant)}: "
          f"mean over seeds 2-way {mean[0]:.4f}, 3-way {mean[1]:.4f}, "
          f"{mean[2]:.1f} s CPU", flush=True)


if __name__ == "__main__":
    main()
