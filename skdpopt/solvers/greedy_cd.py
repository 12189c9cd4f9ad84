"""Private greedy coordinate descent for the Lasso (DP-GCD, proximal variant).

Seed 002 (Mangold, Bellet, Salmon and Tommasi): each step privately selects
the coordinate whose proximal-gradient step promises the most, releases a
noisy gradient of that one coordinate, and applies the soft-threshold
proximal map.  Iterates start at 0 and, since T is small, stay sparse.

The objective is scikit-learn's Lasso with the residual clipped, i.e. the
average of ``huber(x_i . w + b - y_i)`` (quadratic within
``residual_bound``, linear beyond) plus ``alpha ||w||_1``.  When every
residual lies within the bound it is exactly ``1/(2n) ||y - Xw - b||^2 +
alpha ||w||_1``.  With features in ``[-B, B]`` (``feature_bound``) and the
clipped residual in ``[-C, C]`` (``residual_bound``), each example's
coordinate gradient ``x_ij clip(r_i)`` lies in ``[-B C, B C]`` and the
coordinate smoothness is at most ``B^2``, whatever the data: these are the
public constants ``L_j = B C`` and ``M_j = B^2``.

The intercept, when fitted, is one more coordinate whose feature is the
constant ``B``: it has the same constants as the features, competes in the
same selection (unpenalised) and costs nothing extra.

The solver decides no noise: it takes the per-step privacy parameters in
units of the sensitivities (a pure epsilon for the selection, noise
multipliers for the releases), computes the sensitivities from the public
bounds, and returns the mechanisms that ran.  Sensitivities under
replace-one (derived in ``docs/privacy/dplasso.md``):

* selection scores ``|g_j + subgradient| / B``: ``2 C / n``;
* coordinate gradient ``g_j``: ``2 B C / n``;
* coordinate curvature ``(1/n) sum_i x_ij^2`` (optional): ``B^2 / n``.
"""

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..accounting import (
    ExponentialMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    PureDPMechanism,
)
from ..geometry import soft_threshold
from ..mechanisms import (
    exponential_mechanism,
    gaussian_noise,
    laplace_noise,
    report_noisy_max,
)

# Index reported in ``selected`` for a step on the intercept.
INTERCEPT = -1


class ClippedLeastSquares:
    """Residuals and gradients of the clipped least-squares loss.

    Holds the data once (dense ndarray or CSC matrix, so that a column costs
    its non-zeros) and the residual ``z = X w + b - y`` of the current
    iterate, updated in O(n) (dense) or O(nnz_j) (sparse) per coordinate
    move; the full gradient is one matrix-vector product, O(nnz).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        Features, already clipped to ``[-feature_bound, feature_bound]``.
    y : ndarray of shape (n_samples,)
        Targets, already clipped to the public target bound.
    feature_bound : float
    residual_bound : float
    """

    def __init__(self, X, y, feature_bound, residual_bound):
        if sp.issparse(X):
            X = sp.csc_matrix(X)
            X.sort_indices()
        self.X = X
        self.y = np.asarray(y, dtype=float)
        self.n_samples, self.n_features = X.shape
        self.feature_bound = float(feature_bound)
        self.residual_bound = float(residual_bound)
        self.residual = -self.y.copy()
        self._column_squares = None

    def reset(self, coef, intercept):
        """Set the residual to that of ``(coef, intercept)``."""
        self.residual = np.asarray(self.X @ coef, dtype=float).ravel()
        self.residual += intercept - self.y

    def clipped_residual(self):
        return np.clip(self.residual, -self.residual_bound, self.residual_bound)

    def gradient(self):
        """Gradient of the average clipped loss: coefficients, intercept.

        The intercept's entry is for the coordinate whose feature is the
        constant ``feature_bound`` (intercept = feature_bound * coordinate).
        """
        r = self.clipped_residual()
        # In the data's precision (float32 stays float32: no upcast copy of X).
        product = self.X.T @ r.astype(self.X.dtype, copy=False)
        grad = np.asarray(product, dtype=float).ravel() / self.n_samples
        return grad, self.feature_bound * r.mean()

    def column(self, j):
        """Row indices (or None for all rows) and values of column j."""
        if sp.issparse(self.X):
            start, end = self.X.indptr[j], self.X.indptr[j + 1]
            return self.X.indices[start:end], self.X.data[start:end]
        return None, self.X[:, j]

    def move(self, j, delta):
        """Add ``delta`` to coefficient j (``INTERCEPT``: to the intercept)."""
        if j == INTERCEPT:
            self.residual += delta
            return
        rows, values = self.column(j)
        if rows is None:
            self.residual += delta * values
        else:
            self.residual[rows] += delta * values

    def curvature(self, j):
        """``(1/n) sum_i x_ij^2``, an upper bound on coordinate j's smoothness."""
        if sp.issparse(self.X):
            values = self.column(j)[1]
            return float(values @ values) / self.n_samples
        if self._column_squares is None:
            # One pass over X beats a strided column read per step.
            self._column_squares = np.einsum("ij,ij->j", self.X, self.X,
                                             dtype=float) / self.n_samples
        return float(self._column_squares[j])


@dataclass
class GreedyCDResult:
    """Output of :func:`private_greedy_cd`.

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
    intercept : float
    n_steps : int
    selected : ndarray of int
        Coordinate chosen at each step (``INTERCEPT`` = -1 for the intercept).
    mechanisms : list of (mechanism, count)
        What the run released, to compose in an Accountant.
    """

    coef: np.ndarray
    intercept: float
    n_steps: int
    selected: np.ndarray
    mechanisms: list = field(default_factory=list)


def selection_scores(grad, coef, alpha, feature_bound):
    """Greedy scores: distance from 0 to the subdifferential, over ``sqrt(M_j)``.

    ``min over xi in alpha d|w_j| of |g_j + xi|``, i.e. ``|g_j + alpha
    sign(w_j)|`` off zero and ``max(|g_j| - alpha, 0)`` at zero: a
    1-Lipschitz function of ``g_j``, so the score's sensitivity is that of
    ``g_j`` over ``feature_bound``.
    """
    at_zero = np.maximum(np.abs(grad) - alpha, 0.0)
    off_zero = np.abs(grad + alpha * np.sign(coef))
    return np.where(coef == 0, at_zero, off_zero) / feature_bound


def private_greedy_cd(
    problem,
    *,
    alpha,
    n_steps,
    fit_intercept,
    selection,
    selection_epsilon,
    gradient_noise,
    gradient_noise_multiplier,
    curvature_noise_multiplier,
    rng,
    coef_init=None,
    intercept_init=0.0,
    verbose=0,
):
    """Minimise the clipped Lasso objective by private greedy coordinate descent.

    Parameters
    ----------
    problem : ClippedLeastSquares
    alpha : float
        l1 penalty strength.
    n_steps : int
        Number of steps T.
    fit_intercept : bool
        Whether the intercept is a candidate coordinate.
    selection : {"exponential", "laplace"}
        Exponential mechanism (Gumbel-max) or report-noisy-max with Laplace
        noise.
    selection_epsilon : float
        Pure epsilon of one selection (``inf``: exact argmax).  The
        exponential mechanism then has score sensitivity
        ``selection_epsilon / 2`` in log-weight units; report-noisy-max
        uses Laplace scale ``2 * sensitivity / selection_epsilon``.
    gradient_noise : {"gaussian", "laplace"}
    gradient_noise_multiplier : float
        Noise std (Gaussian) or scale (Laplace) over the coordinate
        gradient's sensitivity; 0 adds none.
    curvature_noise_multiplier : float or None
        ``None`` steps with the public bound ``M_j = feature_bound^2``.
        Otherwise each feature step also releases the chosen column's
        ``(1/n) sum_i x_ij^2`` with Gaussian noise of this many
        sensitivities, and steps with an upper confidence bound on it.
    rng : numpy.random.Generator
    coef_init : ndarray of shape (n_features,), default=None
    intercept_init : float, default=0.0
    verbose : int, default=0

    Returns
    -------
    GreedyCDResult
    """
    n, p = problem.n_samples, problem.n_features
    bound = problem.feature_bound
    smoothness = bound * bound
    score_sensitivity = 2.0 * problem.residual_bound / n
    gradient_sensitivity = bound * score_sensitivity
    curvature_sensitivity = smoothness / n
    gradient_std = gradient_noise_multiplier * gradient_sensitivity

    coef = np.zeros(p) if coef_init is None else np.array(coef_init, dtype=float)
    intercept = float(intercept_init)
    problem.reset(coef, intercept)
    selected = np.empty(n_steps, dtype=np.int64)
    # Running sums of the released curvatures of each visited column.
    curvature_sums, curvature_counts = {}, {}
    curvature_std = (None if curvature_noise_multiplier is None
                     else curvature_noise_multiplier * curvature_sensitivity)
    start = time.perf_counter()

    for t in range(n_steps):
        grad, grad_intercept = problem.gradient()
        scores = selection_scores(grad, coef, alpha, bound)
        if fit_intercept:
            scores = np.append(scores, abs(grad_intercept) / bound)
        if np.isinf(selection_epsilon):
            choice = int(np.argmax(scores))
        elif selection == "exponential":
            weight = 0.5 * selection_epsilon / score_sensitivity
            choice = exponential_mechanism(rng, weight * scores)
        else:
            scale = 2.0 * score_sensitivity / selection_epsilon
            choice = report_noisy_max(rng, scores, scale)
        j = INTERCEPT if choice == p else choice
        selected[t] = j

        exact = grad_intercept if j == INTERCEPT else grad[j]
        if gradient_noise == "gaussian":
            noisy = exact + gaussian_noise(rng, gradient_std, 1)[0]
        else:
            noisy = exact + laplace_noise(rng, gradient_std, 1)[0]

        if j == INTERCEPT:
            # The constant feature's curvature is exactly bound^2.
            delta = -noisy / smoothness
            intercept += bound * delta
            problem.move(INTERCEPT, bound * delta)
        else:
            step_curvature = smoothness
            if curvature_std is not None:
                released = problem.curvature(j) + gaussian_noise(
                    rng, curvature_std, 1)[0]
                curvature_sums[j] = curvature_sums.get(j, 0.0) + released
                curvature_counts[j] = curvature_counts.get(j, 0) + 1
                step_curvature = _curvature_upper_bound(
                    curvature_sums[j], curvature_counts[j], curvature_std,
                    smoothness)
            new = soft_threshold(coef[j] - noisy / step_curvature,
                                 alpha / step_curvature)
            problem.move(j, new - coef[j])
            coef[j] = new
        if verbose and ((t + 1) % max(1, n_steps // 10) == 0 or t + 1 == n_steps):
            print(f"-- Step {t + 1}/{n_steps}: non-zeros {np.count_nonzero(coef)}, "
                  f"intercept {intercept:.6f}, "
                  f"elapsed {time.perf_counter() - start:.2f} s")

    n_intercept_steps = int(np.sum(selected == INTERCEPT))
    return GreedyCDResult(
        coef=coef, intercept=intercept, n_steps=n_steps, selected=selected,
        mechanisms=_mechanisms(selection, selection_epsilon, gradient_noise,
                               gradient_noise_multiplier,
                               curvature_noise_multiplier, n_steps,
                               n_steps - n_intercept_steps))


def _curvature_upper_bound(total, count, std, ceiling):
    """Mean of a column's released curvatures plus two standard errors.

    An over-estimate only shortens the step; the public bound caps it, and
    a floor of ``ceiling / 100`` keeps a pure-noise estimate from asking
    for an enormous step.
    """
    estimate = total / count + 2.0 * std / np.sqrt(count)
    return float(np.clip(estimate, 0.01 * ceiling, ceiling))


def _mechanisms(selection, selection_epsilon, gradient_noise, noise_multiplier,
                curvature_noise_multiplier, n_steps, n_feature_steps):
    """The events of a run: one selection and one release per step, and one
    curvature release per feature step when curvatures are estimated."""
    if selection == "exponential":
        chooser = ExponentialMechanism(0.5 * selection_epsilon)
    else:
        chooser = PureDPMechanism(selection_epsilon)
    if noise_multiplier == 0:
        release = GaussianMechanism(0.0)
    elif gradient_noise == "gaussian":
        release = GaussianMechanism(noise_multiplier)
    else:
        release = LaplaceMechanism(1.0 / noise_multiplier)
    events = [(chooser, n_steps), (release, n_steps)]
    if curvature_noise_multiplier is not None:
        events.append((GaussianMechanism(curvature_noise_multiplier),
                       n_feature_steps))
    return events
