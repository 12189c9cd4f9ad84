"""Newton steps on noisy statistics for a logistic model with few parameters.

DPLogisticSimplex fits, after mirror descent has released a sparse
direction, the scale of that direction and the intercept: a logistic
regression with one or two parameters, over features bounded by a public
constant.  With so few parameters a Newton step is cheap, and releasing
the gradient and the Hessian with noise costs a small, fixed share of the
budget; plain noisy gradient descent would need many steps when the
released direction is active on few rows (its curvature is then tiny).

At each step the solver releases, at the current point,

* the mean gradient ``(1/n) sum_i dloss_i z_i`` plus noise of scale
  ``gradient_noise`` per coordinate, and
* the upper triangle of the mean Hessian ``(1/n) sum_i w_i z_i z_i^T``
  (``w_i = sigma (1 - sigma) <= 1/4``) plus noise of scale
  ``hessian_noise`` per entry,

then minimises that Newton model over the l1 ball with the noisy
Hessian's eigenvalues floored at three standard deviations of its noise
(a public ridge that keeps the step finite), and moves towards the
minimiser by at most ``MAX_STEP`` per parameter (a trust region: logistic
Newton overshoots from overconfident starts, and noise can point far).
The solver does not decide the noise: with ``|z_ij| <= c``, each
gradient coordinate moves by at most ``2 c / n`` and each Hessian entry by
at most ``c^2 / (4 n)`` (diagonal) or ``c^2 / (2 n)`` (off-diagonal) when
one record is replaced, and the plan calibrates the scales from these
sensitivities (:func:`skdpopt.plans.logistic_simplex.refit_sensitivities`,
docs/privacy/dplogisticsimplex.md).
"""

import numpy as np
from scipy.special import expit

from .._sums import column_sums, gram
from ..geometry import project_l1_ball
from ..mechanisms import gaussian_noise, laplace_noise

# Eigenvalues of the noisy Hessian are floored at this many of its noise
# standard deviations (so that noise cannot make it singular or negative)
_HESSIAN_SPREADS = 3.0
# ... and never below this, so that statistics without noise (no privacy)
# and a score that is zero on every row still give a finite step.
_MIN_CURVATURE = 1e-8
# Largest move of a parameter in one step: logistic Newton can overshoot
# far from the optimum (an overconfident start), so steps are clipped to
# this trust region (chosen on design data).
MAX_STEP = 2.0


def logistic_statistics(Z, y, theta, sample_weight=None):
    """What one step releases, before noise: the mean gradient and the mean
    Hessian of the logistic loss at ``theta``.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_params)
    y : ndarray of shape (n_samples,)
        Targets in {-1, +1}.
    theta : ndarray of shape (n_params,)
    sample_weight : ndarray of shape (n_samples,) or None, default=None
        Row weights v_i in [0, 1] (None: all 1), multiplying each row's
        terms (the sensitivities stay those of unweighted rows).

    Returns
    -------
    gradient : ndarray of shape (n_params,)
        ``(1/n) sum_i v_i dloss_i z_i``.
    hessian : ndarray of shape (n_params, n_params)
        ``(1/n) sum_i v_i w_i z_i z_i^T``; the solver releases its upper
        triangle.
    """
    n_samples = Z.shape[0]
    row_weight = 1.0 if sample_weight is None else sample_weight
    margin = y * (Z @ theta)
    # Sums over rows in float64 blocks (see skdpopt._sums).
    gradient = column_sums(Z, -y * expit(-margin) * row_weight) / n_samples
    weights = expit(margin) * expit(-margin) * row_weight
    hessian = gram(Z, weights) / n_samples
    return gradient, hessian


def noisy_newton_logistic(Z, y, *, radius, n_steps, gradient_noise,
                          hessian_noise, rng, start=None, nonnegative=None,
                          noise="gaussian", bounded=None, sample_weight=None):
    """Minimise ``mean v_i log(1 + exp(-y_i <theta, z_i>))`` over
    ``||theta_bounded||_1 <= radius``.

    Parameters
    ----------
    Z : ndarray of shape (n_samples, n_params)
        Features, bounded by a public constant (the caller's sensitivity).
    y : ndarray of shape (n_samples,)
        Targets in {-1, +1}.
    radius : float
    n_steps : int
    gradient_noise, hessian_noise : float
        Scale of the noise added to each gradient coordinate and each
        Hessian entry (standard deviation for Gaussian noise, scale for
        Laplace noise); 0 for none.
    rng : numpy.random.Generator
    start : ndarray of shape (n_params,), default=None
        Starting point (zeros by default).  Must not depend on the data
        except through earlier releases.
    nonnegative : ndarray of bool of shape (n_params,), default=None
        Parameters constrained to be >= 0.
    noise : {"gaussian", "laplace"}, default="gaussian"
    bounded : ndarray of bool of shape (n_params,), default=None
        The parameters inside the l1 ball (None: all); the others are
        free (an intercept).
    sample_weight : ndarray of shape (n_samples,), default=None
        Row weights v_i in [0, 1] (None: all 1), which leave the
        sensitivities those of unweighted rows.

    Returns
    -------
    ndarray of shape (n_params,)
        The final point.
    """
    n_params = Z.shape[1]

    inside = (np.ones(n_params, dtype=bool) if bounded is None
              else np.asarray(bounded, dtype=bool))

    def project(point):
        point = point.copy()
        if nonnegative is not None:
            point[nonnegative] = np.maximum(point[nonnegative], 0.0)
        point[inside] = project_l1_ball(point[inside], radius)
        return point

    theta = project(np.zeros(n_params) if start is None
                    else np.array(start, dtype=float))
    sample = gaussian_noise if noise == "gaussian" else laplace_noise
    upper = np.triu_indices(n_params)
    # Standard deviations: Laplace noise of scale s has std sqrt(2) s.
    spread = 1.0 if noise == "gaussian" else np.sqrt(2.0)
    floor = max(_HESSIAN_SPREADS * spread * hessian_noise, _MIN_CURVATURE)
    for _ in range(n_steps):
        gradient, hessian = logistic_statistics(Z, y, theta, sample_weight)
        if gradient_noise > 0:
            gradient = gradient + sample(rng, gradient_noise, n_params)
        if hessian_noise > 0:
            noisy = hessian[upper] + sample(rng, hessian_noise, len(upper[0]))
            hessian = np.zeros((n_params, n_params))
            hessian[upper] = noisy
            hessian = hessian + np.triu(hessian, 1).T
        values, vectors = np.linalg.eigh(hessian)
        values = np.maximum(values, floor)
        target = _model_minimiser(theta, gradient, values, vectors, project)
        step = target - theta
        length = np.abs(step).max()
        if length > MAX_STEP:
            # A shorter step towards a feasible point stays feasible.
            step *= MAX_STEP / length
        theta = theta + step
    return theta


def _model_minimiser(theta, gradient, values, vectors, project, n_iter=500):
    """Minimise the Newton model over the feasible set.

    The model is ``<g, x - theta> + (x - theta)^T H (x - theta) / 2`` with
    ``H = V diag(values) V^T``.  Its unconstrained minimiser is the Newton
    point; when that lies outside the set, projecting it is not the
    constrained minimiser (the metric is H, not the identity), so the model
    is minimised by accelerated projected gradient steps (a problem of a
    few parameters: cheap).
    """
    newton = theta - vectors @ ((vectors.T @ gradient) / values)
    if np.allclose(project(newton), newton, rtol=0.0, atol=1e-12):
        return newton
    hessian = (vectors * values) @ vectors.T
    rate = 1.0 / values.max()
    point = previous = project(newton)
    for k in range(1, n_iter + 1):
        look = point + (k - 1.0) / (k + 2.0) * (point - previous)
        previous = point
        point = project(look - rate * (gradient + hessian @ (look - theta)))
        if np.abs(point - previous).max() <= 1e-12 * (1.0 + np.abs(point).max()):
            break
    return point
