"""Private release of a workload of linear queries through a synthetic
distribution (the query-release game; Hardt and Rothblum 2010; Hardt,
Ligett and McSherry 2012; Gaboardi et al. 2014).

The game: a query player picks the query the current synthetic
distribution answers worst, a data player reweights the distribution to
answer it better.  Only the query player sees the data, through

* an exponential-mechanism selection of one query (group) by its error,
* a Gaussian measurement of the selected query's answer on the data,

and the data player is multiplicative weights fed with every measurement
so far.  Multiplicative updates with marginal queries keep the
distribution a product of one potential per measured marginal, so it is
held as a graphical model (:class:`~skdpopt.solvers.graphical_model.GraphicalModel`)
whose size is that of its junction tree, not of the domain; as in AIM
(McKenna et al. 2022), a query whose marginal would grow the tree past a
public size limit is not a candidate.  Everything the model becomes is
post-processing of the releases; their privacy is the estimator's to
account (:class:`skdpopt.DPSyntheticData`).

Two workloads share the loop: marginals (query groups answered by message
passing, updated by noise-damped proportional fitting of the measured
clique's potential) and an explicit query matrix over the flattened domain
(single queries, updated by MWEM's exponential step on a model with one
clique holding every column: small domains only).
"""

import math
import time
from dataclasses import dataclass, field

import numpy as np

from ..mechanisms import exponential_mechanism, gaussian_noise
from .graphical_model import GraphicalModel, triangulate
from .problems import SyntheticResult

# Damping of the proportional-fitting step, in noise standard deviations,
# and the steps of the final joint estimation (docs/design/dpsynthetic.md).
DAMPING = 3.0
ESTIMATION_ITERS = 40
# Mass spread over a column's cells in the warm start, so that a cell the
# noisy 1-way marginal zeroes can still gain mass later.
START_FLOOR = 1e-6
# Share of the expected L1 size of a measurement's noise subtracted from
# its marginal's error in the selection score (AIM subtracts all of it:
# sqrt(2/pi) sigma cells); the noisy table is projected onto the simplex
# before it is fitted, which removes much of the noise of sparse tables
# (docs/design/dpsynthetic.md).
NOISE_PENALTY = 0.5


def project_to_simplex(values):
    """Euclidean projection onto {p >= 0, sum p = 1} (Duchi et al. 2008)."""
    values = np.asarray(values, dtype=np.float64).ravel()
    ordered = np.sort(values)[::-1]
    cumulative = np.cumsum(ordered) - 1.0
    rank = np.arange(1, len(values) + 1)
    last = np.flatnonzero(ordered - cumulative / rank > 0)[-1]
    return np.maximum(values - cumulative[last] / (last + 1), 0.0)


def clique_cells(cliques, shape):
    """Cells of the junction tree a model over ``cliques`` would hold."""
    return sum(math.prod(shape[a] for a in c) for c in triangulate(cliques, shape))


class MarginalWorkload:
    """All cells of a list of marginals.

    A marginal's error is the L1 distance between two normalised marginal
    tables, the largest signed sum over its cells; replacing one record
    moves two cells by ``1/n``, so the error moves by at most ``2/n`` and
    the table by ``sqrt(2)/n`` in L2.

    Parameters
    ----------
    marginals : list of tuple of int
        Columns of each marginal.
    shape : tuple of int
        Codes per column.
    """

    l1_sensitivity_times_n = 2.0
    l2_sensitivity_times_n = np.sqrt(2.0)

    def __init__(self, marginals, shape):
        self.marginals = [tuple(sorted(m)) for m in marginals]
        self.shape = tuple(shape)
        self.sizes = np.array(
            [int(np.prod([shape[a] for a in m])) for m in self.marginals]
        )

    def __len__(self):
        return len(self.marginals)

    def clique(self, j):
        """Columns whose potential query j updates."""
        return self.marginals[j]

    def answer(self, model, j):
        """Marginal j of the model, flattened."""
        return model.marginal(self.marginals[j]).ravel()

    def answer_records(self, codes, j):
        """Marginal j of the records with integer codes ``codes``
        (n_samples, n_columns), normalised."""
        keep = self.marginals[j]
        flat = np.ravel_multi_index(codes[:, keep].T, [self.shape[a] for a in keep])
        return np.bincount(flat, minlength=self.sizes[j]) / codes.shape[0]

    @property
    def count_cliques(self):
        """The column sets whose cell counts give every answer."""
        return self.marginals

    def answers_of(self, counts, n_samples):
        """Every marginal, normalised, from the counts of
        :attr:`count_cliques` (as :meth:`answer_records` would give)."""
        return [np.asarray(c, dtype=np.float64) / n_samples for c in counts]

    def errors(self, model, real, which=None):
        """L1 error of the marginals ``which`` (default all) of the model
        against ``real``; NaN for the others."""
        which = range(len(self)) if which is None else which
        out = np.full(len(self), np.nan)
        for j in which:
            out[j] = np.abs(self.answer(model, j) - real[j]).sum()
        return out

    def update(self, model, j, estimate, noise_std):
        """Proportional fitting towards a noisy marginal, damped by noise.

        The noisy marginal is first projected onto the probability simplex
        (its least-squares estimate, which zeroes cells lost in the noise);
        each cell is then rescaled by ``(target + s) / (current + s)`` with
        ``s`` :data:`DAMPING` times the noise standard deviation: cells
        whose difference is within the noise are left almost alone, and no
        cell is ever set to zero for good.  On the model this adds the log
        of that ratio to the clique's potential.
        """
        keep = self.marginals[j]
        current = model.marginal(keep)
        target = project_to_simplex(estimate).reshape(current.shape)
        damping = max(DAMPING * noise_std, 1e-15)
        model.update(keep, np.log(target + damping) - np.log(current + damping))


class MatrixWorkload:
    """Explicit linear queries: rows of a matrix over the flattened domain,
    with coefficients in [-1, 1] (checked by the estimator).

    A query's error is ``|<q, real - p>|``; replacing one record moves
    one cell's mass to another, so the answer moves by at most
    ``2 max|q| / n``.  The queries address single cells, so the model is
    one clique over every column: the whole histogram.
    """

    def __init__(self, matrix, shape):
        self.matrix = np.asarray(matrix, dtype=np.float64)
        self.shape = tuple(shape)
        self.sizes = np.ones(len(self.matrix), dtype=int)
        scale = float(np.abs(self.matrix).max()) if self.matrix.size else 1.0
        self.l1_sensitivity_times_n = 2.0 * scale
        self.l2_sensitivity_times_n = 2.0 * scale

    def __len__(self):
        return len(self.matrix)

    def clique(self, j):
        return tuple(range(len(self.shape)))

    def answer(self, model, j):
        return np.array([self.matrix[j] @ model.dense().ravel()])

    def answer_records(self, codes, j):
        flat = np.ravel_multi_index(codes.T, self.shape)
        return np.array([self.matrix[j][flat].mean()])

    @property
    def count_cliques(self):
        """The column sets whose cell counts give every answer: the whole
        domain (at most the model's size, checked by the estimator)."""
        return [tuple(range(len(self.shape)))]

    def answers_of(self, counts, n_samples):
        """Every query's answer from the counts of the whole domain."""
        answers = self.matrix @ (np.asarray(counts[0], dtype=np.float64) / n_samples)
        return [answers[j:j + 1] for j in range(len(self.matrix))]

    def errors(self, model, real, which=None):
        answers = self.matrix @ model.dense().ravel()
        return np.abs(answers - np.concatenate(real))

    def update(self, model, j, estimate, noise_std):
        """MWEM's multiplicative step for one query."""
        gap = float(estimate[0] - self.matrix[j] @ model.dense().ravel())
        model.update(self.clique(j), 0.5 * self.matrix[j] * gap)


@dataclass
class ReleaseResult:
    """What :func:`release_workload` produced.

    Attributes
    ----------
    model : GraphicalModel
        The synthetic distribution.
    selected : list of int
        The query (group) chosen at each round.
    measurements : dict
        Per measured query (group): (sum of estimate / variance,
        sum of 1 / variance), the inverse-variance combination.
    """

    model: GraphicalModel
    selected: list = field(default_factory=list)
    measurements: dict = field(default_factory=dict)


def workload_queries(workload, shape):
    """The query objects of a workload (a list of marginals or a query
    matrix); the 1-way marginals join a workload of marginals (measured
    first as the warm start, and selectable again)."""
    if isinstance(workload, np.ndarray):
        return MatrixWorkload(workload, shape)
    extra = [(a,) for a in range(len(shape)) if (a,) not in workload]
    return MarginalWorkload(workload + extra, shape)


def release_workload(
    workload,
    real_answers,
    n_samples,
    *,
    n_rounds,
    selection_epsilon,
    noise_std,
    rng,
    model=None,
    initial_measurements=None,
    n_sweeps=1,
    max_model_cells=np.inf,
    verbose=0,
):
    """The query-release game: select, measure, reweight, ``n_rounds`` times.

    Parameters
    ----------
    workload : MarginalWorkload or MatrixWorkload
    real_answers : list of ndarray
        Each query (group)'s answer on the data.  Read only inside the
        selection scores and the measurements.
    n_samples : int
        Number of records (public).
    n_rounds : int
        Number of select-and-measure rounds.
    selection_epsilon : float
        Pure-DP epsilon of each selection (exponential mechanism).
    noise_std : float
        Standard deviation of the Gaussian noise on each cell of a measured
        answer (of the normalised answers).
    rng : numpy.random.Generator
    model : GraphicalModel, default=None
        Starting distribution (uniform if None); data-independent or a
        function of released measurements.  Updated in place.
    initial_measurements : dict, default=None
        Released measurements to reuse, as in ``ReleaseResult.measurements``.
    n_sweeps : int, default=1
        Passes over all measurements after each round.
    max_model_cells : float, default=inf
        Public size limit: a query whose clique would make the model's
        junction tree hold more cells is not a candidate.
    verbose : int, default=0
        Print one line per round (round, selected columns, model size,
        seconds): released or public values only.

    Returns
    -------
    ReleaseResult
    """
    if model is None:
        model = GraphicalModel(workload.shape,
                               {workload.clique(j) for j in range(len(workload))}
                               if isinstance(workload, MatrixWorkload) else ())
    result = ReleaseResult(model, measurements=dict(initial_measurements or {}))
    # Score = epsilon * utility / (2 * sensitivity): the exponential
    # mechanism's weights.  A share of the expected L1 size of the
    # measurement noise is subtracted (a public, data-independent shift) so
    # that large tables are picked only when their error beats their noise.
    sensitivity_times_n = workload.l1_sensitivity_times_n
    score_scale = selection_epsilon * n_samples / (2.0 * sensitivity_times_n)
    noise_l1 = NOISE_PENALTY * np.sqrt(2.0 / np.pi) * noise_std * workload.sizes
    start = time.perf_counter()
    for round_ in range(n_rounds):
        allowed = candidates(workload, model, max_model_cells)
        errors = workload.errors(model, real_answers, allowed) - noise_l1
        scores = np.full(len(workload), -np.inf)
        scores[allowed] = errors[allowed]
        if np.isfinite(score_scale):
            j = int(exponential_mechanism(rng, scores, scale=1.0 / score_scale))
        else:  # no privacy asked: the worst query
            j = int(np.argmax(scores))
        result.selected.append(j)
        noisy = real_answers[j] + gaussian_noise(rng, noise_std, real_answers[j].shape)
        weighted, precision = result.measurements.get(j, (0.0, 0.0))
        variance = max(noise_std, 1e-12) ** 2  # no privacy: exact answers
        result.measurements[j] = (
            weighted + noisy / variance,
            precision + 1.0 / variance,
        )
        _fit_measurements(workload, model, result.measurements, [j], n_sweeps)
        if verbose:
            print(f"round {round_ + 1}/{n_rounds}: measured columns "
                  f"{workload.clique(j)}; model {model.cells:,} cells; "
                  f"{time.perf_counter() - start:.1f} s", flush=True)
    return result


def candidates(workload, model, max_model_cells):
    """Indices of the queries whose clique keeps the model within
    ``max_model_cells`` (a function of public quantities: the domain, the
    workload and the cliques selected so far)."""
    if not np.isfinite(max_model_cells):
        return list(range(len(workload)))
    held = {}
    allowed = []
    for j in range(len(workload)):
        clique = workload.clique(j)
        if clique not in held:
            held[clique] = (
                model.tree.node_containing(clique) is not None
                or clique_cells(model.cliques + [clique], model.shape)
                <= max_model_cells)
        if held[clique]:
            allowed.append(j)
    return allowed


def _fit_measurements(workload, model, measurements, first, n_sweeps):
    """Update the model with the queries in ``first``, then sweep over
    every measurement ``n_sweeps`` times (in the tree's order, so that
    consecutive updates reuse most cached messages)."""
    def step(k):
        weighted, precision = measurements[k]
        workload.update(model, k, weighted / precision, 1.0 / np.sqrt(precision))

    for k in first:
        step(k)
    sweep = sorted(measurements, key=lambda k: model.rank(workload.clique(k)))
    for _ in range(n_sweeps):
        for k in sweep:
            step(k)


def fit_measurements(workload, model, measurements, n_sweeps=1):
    """Sweep ``n_sweeps`` times over released measurements (post-processing).

    Parameters
    ----------
    workload : MarginalWorkload or MatrixWorkload
    model : GraphicalModel
        Updated in place.
    measurements : dict
        As in :attr:`ReleaseResult.measurements`.
    n_sweeps : int, default=1
    """
    _fit_measurements(workload, model, measurements, [], n_sweeps)


def fit_synthetic(problem, plan, rng, *, verbose=0):
    """The whole fit: warm start from noisy 1-way marginals, then the
    rounds of :func:`release_workload`, with the plan's noise and
    selection budget.

    Parameters
    ----------
    problem : skdpopt.solvers.problems.MarginalProblem
        The records (their integer codes, or their counts in the cells
        the workload reads), the workload (for marginals, every
        1-way marginal is among them and is measured first) and the public
        limit on the model's cells.
    plan : SyntheticPlan
        Reads ``n_one_way``, ``one_way_noise_std``, ``n_rounds``,
        ``selection_epsilon`` and ``round_noise_std``.
    rng : numpy.random.Generator
    verbose : int, default=0

    Returns
    -------
    SyntheticResult
    """
    workload = problem.workload
    real, n_samples = problem.answers()
    shape = workload.shape
    if isinstance(workload, MatrixWorkload):
        model = GraphicalModel(shape, [tuple(range(len(shape)))])
        one_way = []
    else:
        model = GraphicalModel(shape, [(a,) for a in range(len(shape))])
        one_way = [j for j, m in enumerate(workload.marginals) if len(m) == 1]
    if len(one_way) != plan.n_one_way:
        raise ValueError(  # the plan must account for every measurement
            f"the plan accounts for {plan.n_one_way} 1-way measurements, "
            f"the workload has {len(one_way)}"
        )
    std = plan.one_way_noise_std
    measurements = {}
    for j in one_way:
        noisy = real[j] + gaussian_noise(rng, std, real[j].shape)
        precision = 1.0 / max(std, 1e-12) ** 2  # no privacy: exact answers
        measurements[j] = (noisy * precision, precision)
        # Warm start (post-processing): the product of the 1-way marginals,
        # each projected onto the simplex, plus a floor that keeps every
        # cell possible.
        estimate = project_to_simplex(noisy) + START_FLOOR / noisy.size
        model.update(workload.marginals[j], np.log(estimate / estimate.sum()))
    result = release_workload(
        workload, real, n_samples,
        n_rounds=plan.n_rounds,
        selection_epsilon=plan.selection_epsilon,
        noise_std=plan.round_noise_std,
        rng=rng,
        model=model,
        initial_measurements=measurements,
        max_model_cells=problem.max_model_cells,
        verbose=verbose,
    )
    if isinstance(workload, MarginalWorkload) and np.isfinite(plan.selection_epsilon):
        # Final estimation pass: the rounds' proportional fitting leans
        # towards the last measurements; a joint fit weighs them all.
        joint_estimate(workload, result.model, result.measurements,
                       n_iter=ESTIMATION_ITERS)
    return SyntheticResult(result.model, result.selected)


def joint_estimate(workload, model, measurements, n_iter=100):
    """Fit every measured marginal jointly (post-processing): mirror
    descent on the clique potentials for the precision-weighted squared
    loss ``sum_j w_j ||mu_j - y_j||^2 / 2`` (McKenna, Sheldon and Miklau
    2019), with weights relative to the most precise measurement and a
    step that halves whenever it would raise the loss (and grows by a
    quarter after a success).

    Parameters
    ----------
    workload : MarginalWorkload
    model : GraphicalModel
        Updated in place (warm start).
    measurements : dict
        As in :attr:`ReleaseResult.measurements`.
    n_iter : int, default=100
        Accepted steps at most.

    Returns
    -------
    float
        The final loss.
    """
    keys = list(measurements)
    top = max(measurements[k][1] for k in keys)
    weights = [measurements[k][1] / top for k in keys]
    targets = [measurements[k][0] / measurements[k][1] for k in keys]

    def loss_and_gradients():
        gaps = [workload.answer(model, k) - y
                for k, y in zip(keys, targets, strict=True)]
        loss = 0.5 * sum(w * float(g @ g) for w, g in zip(weights, gaps, strict=True))
        return loss, [w * g for w, g in zip(weights, gaps, strict=True)]

    loss, grads = loss_and_gradients()
    step = 1.0
    for _ in range(n_iter):
        saved = model.potentials_copy()
        for k, grad in zip(keys, grads, strict=True):
            model.update(workload.clique(k), -step * grad)
        new_loss, new_grads = loss_and_gradients()
        if new_loss <= loss:
            loss, grads = new_loss, new_grads
            step *= 1.25
        else:
            model.set_potentials(saved)
            step *= 0.5
            if step < 1e-6:
                break
    return loss
