"""The class totals, and the calibration of a fitted intercept.

:func:`release_class_totals` releases the total weight of each class with
the noise of its plan (:func:`skdpopt.plans.classes.plan_class_totals`).

:func:`calibrate_intercept` refits the intercept of a released linear model
so that its weighted mean predicted probability on the training rows
matches the weighted share of positives from the released totals: the
condition at which the logistic loss is minimal in the intercept.  Each
step releases ``F(c) = sum_i v_i p(s_i + c)``, the rows' weights ``v_i``
in [0, 1] times the model's probability at the row's score ``s_i = <coef,
x_i>`` (released coefficients) and the current intercept c, plus noise of
the plan's scale; every term lies in [0, 1], so replacing one record moves
F by at most 1 (``docs/privacy/classes.md``).  The intercept then moves by
the difference of the two constant scores, ``constant(share) -
constant(F / total)`` (for the log loss, of the log-odds): a Newton step
when every row has the same score, and a monotone fixed-point iteration
otherwise.

DP-SGD needs it because its intercept comes out biased: clipping cuts the
large residuals of the rare class more than the small ones of the common
one, and the averaged iterate's intercept was fitted to noisier
coefficients than the average's (wider scores need a lower intercept for
the same mean probability), so the model's mean probability ends up below
the base rate.
"""

from dataclasses import dataclass
from functools import partial

import numpy as np

from .._data import map_rows, vector_total
from .._sums import row_dots
from ..losses import ClassWeighted
from ..mechanisms import gaussian_noise, laplace_noise


def class_totals(targets, sample_weight=None):
    """The exact class totals (before noise).

    Parameters
    ----------
    targets : list of ndarray or dask.array.Array
        The +-1 targets of each binary problem: one for two classes (+1 for
        the second class), one per class otherwise.
    sample_weight : ndarray or None
        The rows' sample weights (in memory only).

    Returns
    -------
    ndarray of shape (n_classes,)
    """
    def weighted(mask):
        return vector_total(mask if sample_weight is None else mask * sample_weight)

    if len(targets) == 1:
        positive = targets[0] > 0
        return np.array([weighted(~positive), weighted(positive)])
    return np.array([weighted(target > 0) for target in targets])


def release_class_totals(targets, sample_weight, plan, rng):
    """The class totals plus the plan's noise, floored at its floor.

    Parameters
    ----------
    targets, sample_weight
        As :func:`class_totals`.
    plan : ClassTotalsPlan
        Reads ``noise``, ``noise_scale`` and ``floor``.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of shape (n_classes,)
    """
    totals = class_totals(targets, sample_weight)
    if plan.noise is not None:
        noise = gaussian_noise if plan.noise == "gaussian" else laplace_noise
        totals = totals + noise(rng, plan.noise_scale, len(totals))
    return np.maximum(totals, plan.floor)


def probability_sum(scores, intercept, loss, weights=None):
    """``sum_i v_i p(s_i + c)``, each term in [0, 1] (NaN counts as 0).

    Parameters
    ----------
    scores : ndarray or dask.array.Array of shape (n_samples,)
    intercept : float
    loss : object
        A loss with a ``probability`` link.
    weights : ndarray, dask.array.Array or None
        The rows' weights v_i, in [0, 1].
    """
    with np.errstate(over="ignore", invalid="ignore"):
        values = loss.probability(scores + intercept)
    values = np.where(np.isnan(values), 0.0, values)
    return vector_total(values if weights is None else values * weights)


def _scores(rows, coef):
    # An extreme row may overflow its score; the sum maps it into [0, 1].
    with np.errstate(over="ignore", invalid="ignore"):
        return row_dots(rows, coef)


def calibrate_intercept(X, coef, intercept, loss, weights, share, total,
                        n_steps, noise_std, rng, noise="gaussian"):
    """Refit the intercept of a released linear model to the class share.

    Parameters
    ----------
    X : ndarray, sparse matrix or dask.array.Array of shape (n_samples, n_features)
    coef : ndarray of shape (n_features,)
        Released coefficients.
    intercept : float
        Released starting intercept.
    loss : object
        A loss with ``probability`` and ``constant``.
    weights : ndarray, dask.array.Array or None
        The rows' weights in [0, 1] (None: all 1).
    share : float
        The released weighted share of positives, in (0, 1).
    total : float
        The released total weight ``sum_i v_i`` (n without weights).
    n_steps : int
    noise_std : float
        Standard deviation of the Gaussian noise on each F (0: none).
    rng : numpy.random.Generator

    Returns
    -------
    float
    """
    scores = map_rows(partial(_scores, coef=coef), X)
    target = loss.constant(share)
    low = min(0.5 / total, 0.5)
    draw = laplace_noise if noise == "laplace" else gaussian_noise
    for _ in range(n_steps):
        released = (probability_sum(scores, intercept, loss, weights)
                    + draw(rng, noise_std, 1)[0])
        mean = float(np.clip(released / total, low, 1.0 - low))
        intercept += target - loss.constant(mean)
    return float(intercept)


@dataclass(frozen=True)
class WeightedProblem:
    """One binary problem of a weighted classifier fit, ready for a solver.

    Attributes
    ----------
    target : ndarray or dask.array.Array
        The +-1 targets.
    base_loss : object
        The unweighted loss (its probability link calibrates the intercept).
    weights : ProblemWeights
        Class weights (in [0, 1]), scale and released share
        (:func:`skdpopt.plans.classes.problem_weights`).
    sample_weight : ndarray or None
        The rows' sample weights divided by their public bound, in [0, 1].
    fit_intercept : bool
    step_scale : float
        What the solver multiplies the plan's step size by (1 unless the
        step is set from the released totals,
        :func:`skdpopt.plans.classes.auto_step_scales`).
    """

    target: object
    base_loss: object
    weights: object
    sample_weight: np.ndarray = None
    fit_intercept: bool = True
    step_scale: float = 1.0

    @property
    def class_weighted(self):
        return self.weights.positive != 1.0 or self.weights.negative != 1.0

    @property
    def loss(self):
        """The loss the solver fits: class-weighted where the classes weigh
        differently."""
        if not self.class_weighted:
            return self.base_loss
        return ClassWeighted(self.base_loss, self.weights.positive,
                             self.weights.negative)

    def intercept_init(self):
        """The best constant score at the released share (0 without it)."""
        if not self.fit_intercept or self.weights.share is None:
            return 0.0
        return self.base_loss.constant(self.weights.share)

    def row_weights(self):
        """Each row's weight in [0, 1]: class weight times sample weight."""
        weights = None
        if self.class_weighted:
            weights = np.where(self.target > 0, self.weights.positive,
                               self.weights.negative)
        if self.sample_weight is not None:
            weights = (self.sample_weight if weights is None
                       else weights * self.sample_weight)
        return weights

    def solver_args(self):
        """The DP-SGD solver's arguments for this problem's weights."""
        return {"intercept_init": self.intercept_init(),
                "sample_weight": self.sample_weight,
                "weight_scale": self.weights.scale}

    def calibrated_intercept(self, X, coef, intercept, plan, rng):
        """The intercept calibrated to the released share (see
        :func:`calibrate_intercept`); reads the plan's
        ``calibration_steps`` and ``calibration_noise``."""
        return calibrate_intercept(
            X, coef, intercept, self.base_loss, self.row_weights(),
            self.weights.share, self.weights.total, plan.calibration_steps,
            plan.calibration_noise, rng)


def _per_class(targets, values):
    """Each row's class's entry of ``values`` (one per class), from the
    +-1 targets of the binary problems."""
    if len(targets) == 1:
        return np.where(targets[0] > 0, values[1], values[0])
    return sum(np.where(target > 0, values[k], 0.0)
               for k, target in enumerate(targets))


@dataclass(frozen=True)
class ClassWeighting:
    """A classifier fit's weighting, from public and released values.

    Attributes
    ----------
    problems : list of WeightedProblem
        One per binary problem.
    totals : ndarray of shape (n_classes,) or None
        The released (floored) class totals; None when not released.
    class_weights : ndarray of shape (n_classes,)
        The weight of each class (public, or "balanced" from the totals).
    sample_weight : ndarray or None
        The rows' sample weights over their bound, in [0, 1].
    """

    problems: list
    totals: np.ndarray
    class_weights: np.ndarray
    sample_weight: np.ndarray = None

    def log_prior(self):
        """Log of the classes' weighted shares in the released totals."""
        mass = self.class_weights * self.totals
        return np.log(mass / mass.sum())

    def row_weights(self, targets):
        """Each row's weight in [0, 1]: its class's weight over the largest
        class weight, times its sample weight over the bound."""
        scaled = self.class_weights / self.class_weights.max()
        return self._times_sample_weight(
            None if np.all(scaled == 1.0) else _per_class(targets, scaled))

    def _times_sample_weight(self, weights):
        if self.sample_weight is None:
            return weights
        return self.sample_weight if weights is None else weights * self.sample_weight

    def check_weights(self, targets):
        """Each row's weight in the fit check, in [0, 1]: one over its
        class's released total, times the smallest total (every class then
        weighs as much as the smallest), times its sample weight over the
        bound.

        Each class's mean gain in log-likelihood over the prior is
        non-negative for a calibrated model (it is the divergence of the
        class's rows from all rows), so the balanced sum is too.  An
        unbalanced sum of clipped gains is not: with 8% negatives, a model
        that predicts 0.96 where the prior says 0.92 gains log(0.96 / 0.92)
        on each common row and loses log(0.04 / 0.08) on each rare one,
        which the clipping cuts to its bound, so the sum came out positive
        for a model worse than the prior.
        """
        return self._times_sample_weight(
            _per_class(targets, self.totals.min() / self.totals))


def weigh_problems(targets, loss, stage, *, sample_weight, fit_intercept,
                   step_scales=None):
    """The weighting of a classifier fit and of each of its binary problems.

    Parameters
    ----------
    targets : list of ndarray or dask.array.Array
        The +-1 targets of each problem.
    loss : object
        The unweighted loss.
    stage : ClassStage
        Each problem's class weights, scale and share, and the classes'
        weights, from the public ``class_weight`` and the released totals
        (:func:`skdpopt.plans.classes.class_stage`).
    sample_weight : ndarray or None
        The rows' sample weights over their public bound, in [0, 1].
    fit_intercept : bool
    step_scales : list of float or None, default=None
        Each problem's step scale (None: all 1).

    Returns
    -------
    ClassWeighting
    """
    if step_scales is None:
        step_scales = [1.0] * len(targets)
    problems = [WeightedProblem(target, loss, weights, sample_weight, fit_intercept,
                                scale)
                for target, weights, scale in zip(targets, stage.problems,
                                                  step_scales, strict=True)]
    return ClassWeighting(problems, stage.totals, stage.class_weights, sample_weight)
