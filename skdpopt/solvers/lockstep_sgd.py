"""One-vs-rest DP-SGD with the classes in lockstep, under one clip.

The K binary problems of a multiclass fit read the same rows.  Run one
after another, each pays its own noisy steps, and the K runs compose: each
gets about a K-th of the budget (zCDP units), so its noise is about
``sqrt(K)`` times a binary fit's.  Run together, step t draws one Poisson
batch for all of them, and row i's gradients in the K problems form the
K x (d + 1) matrix ``r_i (x_i, 1)^T``, where ``r_i`` holds its K loss
derivatives (each times the row's weight in that problem).  Its Frobenius
norm is ``||r_i|| ||(x_i, 1)||``; scaling ``r_i`` to norm at most
``B / ||(x_i, 1)||`` clips it to B, with ``B = LOCKSTEP_CLIP * clip_norm``
(:mod:`skdpopt.plans.sgd`).  The summed matrix then moves by at most B
(one row added or removed) in Frobenius norm, and Gaussian noise of
standard deviation ``sigma B`` on each of its entries is one subsampled
Gaussian mechanism per step: the steps of all K problems cost what one
binary fit's steps cost (docs/privacy/dpsgd.md, "Classes in lockstep").

A row's K derivatives share its clip: where one class carries most of
``||r_i||`` (the row's own class, early on), that problem gets nearly all
of B, where one problem run alone gets at most ``clip_norm``.

A derivative that is NaN (``inf - inf`` in an extreme row's prediction)
counts as 0, an infinite one as the largest float, and the row's norm is
computed without overflow; a row of infinite norm has bound 0 and adds
nothing.  Sums
are in float64 whatever X's dtype (:mod:`skdpopt._sums`).
"""

import time
from dataclasses import dataclass
from functools import partial

import numpy as np
import scipy.sparse as sp

from .._clipping import example_norms
from .._sums import column_sums, row_dots, total
from ..geometry import project_polytope
from ..losses import LogLoss
from ..mechanisms import gaussian_noise, poisson_batches
from .noisy_sgd import noisy_sgd
from .problems import LinearProblem, LinearResult

# Poisson batches are drawn this many steps at a time (one vectorised draw).
_BLOCK_STEPS = 256


@dataclass(frozen=True)
class LockstepProblem:
    """One binary problem of a lockstep fit.

    Attributes
    ----------
    target : ndarray of shape (n_samples,)
        The +-1 targets.
    loss : object
        Its loss (class-weighted where its classes weigh differently).
    step_scale : float
        What the plan's step size is multiplied by for this problem.
    weight_scale : float
        What the rows' weights in [0, 1] were divided by (the noisy sum is
        multiplied back by it).
    intercept_init : float
        Its starting intercept.
    """

    target: np.ndarray
    loss: object
    step_scale: float = 1.0
    weight_scale: float = 1.0
    intercept_init: float = 0.0


def row_bounds(X, bound, fit_intercept):
    """Each row's bound on ``||r_i||``: ``B / ||(x_i, 1)||`` in float64,
    without overflow; 0 for a row of infinite norm (it adds nothing) and
    for a row of norm 0 (whose gradient is 0 anyway)."""
    norms = example_norms(X, float(fit_intercept))
    bounds = np.zeros_like(norms)
    np.divide(bound, norms, out=bounds, where=(norms > 0) & np.isfinite(norms))
    np.minimum(bounds, np.finfo(np.float64).max, out=bounds)
    return bounds


def clip_rows(residuals, bounds):
    """Scale each row of ``residuals`` (n x K) to l2 norm at most its
    bound, in place, keeping its direction: NaN entries become 0, infinite
    ones the largest float (the norm is computed from the row over its
    largest entry, so it never overflows).

    Parameters
    ----------
    residuals : ndarray of shape (n_rows, n_problems), float64
    bounds : ndarray of shape (n_rows,)

    Returns
    -------
    ndarray
        ``residuals``, clipped.
    """
    # NaN -> 0 and +-inf -> +-float max, as np.nan_to_num, without its
    # passes over clean rows (a NaN shows in the sum).
    if not np.isfinite(residuals.sum()):
        np.nan_to_num(residuals, copy=False)
    peak = np.max(np.abs(residuals), axis=1)
    peak[peak == 0] = 1.0  # a zero row stays zero
    unit = residuals / peak[:, None]  # entries in [-1, 1]
    length = np.sqrt(np.einsum("ij,ij->i", unit, unit))
    length[length == 0] = 1.0
    with np.errstate(over="ignore"):  # room of inf: nothing to clip
        room = bounds / peak / length
    residuals *= np.minimum(room, 1.0)[:, None]
    return residuals


class LockstepRows:
    """The rows of a lockstep fit, for its clipped gradient sums.

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
    problems : list of LockstepProblem
    bound : float
        B, the bound on each row's K x (d + 1) gradient (Frobenius norm).
    fit_intercept : bool
    sample_weight : ndarray or None
        The rows' weights in [0, 1], shared by the problems.
    """

    def __init__(self, X, problems, bound, fit_intercept, sample_weight=None):
        self.X, self.problems, self.sample_weight = X, problems, sample_weight
        self.n_samples, self.n_features = X.shape
        self.targets = np.column_stack([np.asarray(p.target, dtype=np.float64)
                                        for p in problems])
        self.bounds = row_bounds(X, bound, fit_intercept)

    def gradient_sums(self, coef, intercept, rows=None):
        """Over ``rows`` (None: all): the clipped gradients' sum, a
        ``(K, d)`` array, and their intercept parts' sums, a K-vector, in
        float64."""
        if rows is None:
            X, y, bounds = self.X, self.targets, self.bounds
            weights = self.sample_weight
        else:
            # take: the rows of fancy indexing, several times faster on the
            # small batches of DP-SGD.
            X = (self.X.take(rows, axis=0) if type(self.X) is np.ndarray
                 else self.X[rows])
            y, bounds = self.targets.take(rows, axis=0), self.bounds.take(rows)
            weights = (None if self.sample_weight is None
                       else self.sample_weight.take(rows))
        residuals = np.empty((X.shape[0], len(self.problems)))
        for k, problem in enumerate(self.problems):
            prediction = row_dots(X, coef[k]) + intercept[k]
            residuals[:, k] = np.asarray(
                problem.loss.derivative(prediction, y[:, k]), dtype=np.float64).ravel()
        if weights is not None:
            residuals *= weights[:, None]
        clip_rows(residuals, bounds)
        columns = range(residuals.shape[1])
        return (np.array([column_sums(X, residuals[:, k]) for k in columns]),
                np.array([total(residuals[:, k]) for k in columns]))


def _batches(rng, plan, n_samples):
    """Each step's rows: a Poisson sample (None: every row, full batch);
    with ``single_pass``, only the rows not drawn before."""
    n_steps, rate = plan.n_steps, plan.sampling_rate
    if rate >= 1.0:
        for _ in range(n_steps):
            yield None
        return
    seen = np.zeros(n_samples, dtype=bool) if plan.single_pass else None
    for start in range(0, n_steps, _BLOCK_STEPS):
        rows, offsets = poisson_batches(rng, n_samples, rate,
                                        min(_BLOCK_STEPS, n_steps - start))
        for i in range(len(offsets) - 1):
            batch = rows[offsets[i]:offsets[i + 1]]
            if seen is not None:
                batch = batch[~seen[batch]]
                seen[batch] = True
            yield batch


@np.errstate(over="ignore", invalid="ignore")
def lockstep_sgd(X, problems, plan, rng, *, clip_norm, fit_intercept=True,
                 alpha=0.0, radius=None, projection=None, sample_weight=None,
                 verbose=0):
    """Run the binary problems of a one-vs-rest fit together (see the
    module docstring).

    Parameters
    ----------
    X : ndarray or CSR matrix of shape (n_samples, n_features)
        In memory.
    problems : list of LockstepProblem
    plan : DPSGDPlan
        Reads ``sampling_rate``, ``n_steps``, ``noise_multiplier`` (of the
        joint sums), ``step_size(t)``, ``average_start``, ``single_pass``
        and ``n_epochs``.
    rng : numpy.random.Generator
    clip_norm : float
        Each row's K x (d + 1) gradient is clipped to ``clip_norm *
        plan.clip_scale`` in Frobenius norm, the noise's scale with it.
    fit_intercept : bool, default=True
    alpha : float, default=0.0
        L2 penalty (data-free).
    radius : float or None, default=None
        Project each problem's coefficients onto the l2 ball of this radius.
    projection : callable or None, default=None
        Maps each problem's coefficients back onto a public set after each
        step (DPLogisticSimplex's polytope), instead of ``radius``.
    sample_weight : ndarray or None, default=None
        The rows' weights in [0, 1], shared by the problems.
    verbose : int, default=0

    Returns
    -------
    list of LinearResult
        One per problem, in order.
    """
    n_samples, n_features = X.shape
    n_problems = len(problems)
    bound = clip_norm * plan.clip_scale
    data = LockstepRows(X, problems, bound, fit_intercept, sample_weight)
    steps = np.array([p.step_scale for p in problems])
    # eta / (q n) times the noisy sum, times what the weights were divided by.
    per_sum = steps * np.array([p.weight_scale for p in problems]) / (
        plan.sampling_rate * n_samples)
    coef = np.zeros((n_problems, n_features))
    intercept = np.array([p.intercept_init if fit_intercept else 0.0
                          for p in problems], dtype=np.float64)
    coef_sum, intercept_sum, n_averaged = np.zeros_like(coef), np.zeros(n_problems), 0
    noise_std = plan.noise_multiplier * bound
    dim = n_features + int(fit_intercept)
    start, epochs_done = time.perf_counter(), 0
    for t, rows in enumerate(_batches(rng, plan, n_samples)):
        grad, grad_intercept = data.gradient_sums(coef, intercept, rows)
        noise = gaussian_noise(rng, noise_std, (n_problems, dim))
        eta = plan.step_size(t)
        update = (eta * per_sum)[:, None] * (grad + noise[:, :n_features])
        if alpha:
            update += (eta * alpha * steps)[:, None] * coef
        coef -= update
        if fit_intercept:
            intercept -= eta * per_sum * (grad_intercept + noise[:, n_features])
        if radius is not None:
            norms = np.linalg.norm(coef, axis=1)
            coef *= np.minimum(1.0, radius / np.maximum(norms, 1e-300))[:, None]
        if projection is not None:
            for k in range(n_problems):
                coef[k] = projection(coef[k])
        if plan.average_start is not None and t >= plan.average_start:
            coef_sum += coef
            intercept_sum += intercept
            n_averaged += 1
        epoch = (t + 1) * plan.n_epochs // plan.n_steps
        if verbose and epoch > epochs_done:
            epochs_done = epoch
            print(f"-- Epoch {epoch}\n"
                  f"Norm: {np.linalg.norm(coef):.2f}, "
                  f"Bias: {np.abs(intercept).max():.6f}, T: {t + 1}, "
                  f"Elapsed: {time.perf_counter() - start:.2f} s")
    if n_averaged:
        coef, intercept = coef_sum / n_averaged, intercept_sum / n_averaged
    return [LinearResult(coef=coef[k].copy(), intercept=float(intercept[k]))
            for k in range(n_problems)]


def lockstep_fit(X, targets, loss, weighting, plan, rng, **options):
    """:func:`lockstep_sgd` of a classifier's binary problems, then each
    intercept calibrated (where planned) as a problem run alone is.

    Parameters
    ----------
    X : ndarray or CSR matrix
    targets : list of ndarray
        The +-1 targets of each problem.
    loss : object
        The unweighted loss (used as it is without a weighting).
    weighting : ClassWeighting or None
        Each problem's loss, step scale, weight scale and starting
        intercept (:mod:`skdpopt.solvers.classes`), and the rows' weights.
    plan : DPSGDPlan
    rng : numpy.random.Generator
    **options
        ``clip_norm``, ``fit_intercept``, ``alpha``, ``radius``,
        ``projection``, ``verbose``: as for :func:`lockstep_sgd`.

    Returns
    -------
    list of LinearResult
    """
    if weighting is None:
        return lockstep_sgd(X, [LockstepProblem(t, loss) for t in targets],
                            plan, rng, **options)
    weighted = weighting.problems
    problems = [LockstepProblem(p.target, p.loss, step_scale=p.step_scale,
                                weight_scale=p.weights.scale,
                                intercept_init=p.intercept_init())
                for p in weighted]
    results = lockstep_sgd(X, problems, plan, rng,
                           sample_weight=weighting.sample_weight, **options)
    if not plan.calibration_steps:
        return results
    return [LinearResult(coef=r.coef, intercept=p.calibrated_intercept(
        X, r.coef, r.intercept, plan, rng))
        for r, p in zip(results, weighted, strict=True)]


def polytope_lockstep(X, targets, weighting, plan, rng, *, radius, constraint,
                      clip_norm, fit_intercept, verbose=0):
    """DPLogisticSimplex's ``solver="sgd"`` with the classes in lockstep:
    :func:`lockstep_fit` on the logistic loss, each problem's coefficients
    projected back onto the polytope after every step (as
    :func:`~skdpopt.solvers.noisy_sgd.polytope_sgd_logistic` does for one
    problem), the intercepts outside it.

    Parameters
    ----------
    X : ndarray or CSR matrix
        Rows already clipped to the feature bound.
    targets : list of ndarray
    weighting : ClassWeighting
    plan : DPSGDPlan
    rng : numpy.random.Generator
    radius : float
    constraint : {"l1_ball", "simplex"}
    clip_norm : float
    fit_intercept : bool
    verbose : int, default=0

    Returns
    -------
    list of LinearResult
    """
    projection = partial(project_polytope, radius=radius, constraint=constraint)
    return lockstep_fit(X, targets, LogLoss(), weighting, plan, rng,
                        clip_norm=clip_norm, fit_intercept=fit_intercept,
                        projection=projection, verbose=verbose)


def sgd_problems(X, targets, loss, weighting, plan, rng, *, clip_norm,
                 fit_intercept, alpha, radius, verbose=0):
    """DP-SGD of each problem of a fit: in lockstep where the plan says
    (:func:`lockstep_fit`), else one after another
    (:func:`~skdpopt.solvers.noisy_sgd.noisy_sgd`).

    Parameters
    ----------
    X : ndarray, sparse matrix or dask.array.Array
    targets : list of ndarray or dask.array.Array
    loss : object
    weighting : ClassWeighting or None
    plan : DPSGDPlan
    rng : numpy.random.Generator
    clip_norm, fit_intercept, alpha, radius, verbose
        As for :func:`lockstep_sgd`.

    Returns
    -------
    list of LinearResult
        One per problem.
    """
    options = {"clip_norm": clip_norm, "fit_intercept": fit_intercept,
               "alpha": alpha, "radius": radius, "verbose": verbose}
    if plan.lockstep:
        return lockstep_fit(X, targets, loss, weighting, plan, rng, **options)
    problems = weighting.problems if weighting is not None else [None] * len(targets)
    return [noisy_sgd(LinearProblem(X, target, fit_intercept, loss=loss,
                                    clip_norm=clip_norm, alpha=alpha,
                                    radius=radius, weighting=problem),
                      plan, rng, verbose=verbose)
            for target, problem in zip(targets, problems, strict=True)]


def lockstep_is_possible(X, n_problems):
    """Whether a fit's problems can run in lockstep: several of them, on
    rows in memory (public: the data's type and the label set's size)."""
    return n_problems > 1 and (isinstance(X, np.ndarray) or sp.issparse(X))
