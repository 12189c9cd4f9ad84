"""What the worst-group solvers share: the problem, and the group sizes
they weigh the groups by.

The sizes are public when the proportions are (priors, or one group), or
the group counts released with noise of the plan's scale
(:func:`release_group_sizes`); without privacy, the true counts.
"""

from dataclasses import dataclass

import numpy as np

from ..mechanisms import gaussian_noise, laplace_noise


@dataclass(frozen=True)
class GroupProblem:
    """A worst-group binary classification problem for a linear model.

    Attributes
    ----------
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        Features, already clipped to the public bound b.
    target : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    codes : ndarray of int of shape (n_samples,)
        Group of each row, in ``range(n_groups)``.
    n_groups : int
    intercept_value : float or None
        b, the constant feature of the intercept; None: no intercept.
    """

    X: object
    target: np.ndarray
    codes: np.ndarray
    n_groups: int
    intercept_value: float = None


def release_group_sizes(problem, plan, rng):
    """The group sizes the second stage uses, and what they are.

    Parameters
    ----------
    problem : GroupProblem
    plan : MinimaxGDAPlan or MinimaxVertexPlan
        Reads ``counts_released``, ``count_noise`` ("gaussian" or
        "laplace") and ``count_noise_scale``.
    rng : numpy.random.Generator

    Returns
    -------
    sizes : ndarray of shape (n_groups,)
    what : str
        "noisy count" when released with noise, "count" otherwise (one
        group, whose size n is public, or no privacy).
    """
    counts = np.bincount(problem.codes, minlength=problem.n_groups).astype(float)
    if not plan.counts_released:
        return counts, "count"
    noise = gaussian_noise if plan.count_noise == "gaussian" else laplace_noise
    return counts + noise(rng, plan.count_noise_scale, problem.n_groups), "noisy count"


@dataclass
class WorstGroupResult:
    """Output of the worst-group solvers.

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
    intercept : float
        In units of the prediction (the intercept coordinate times b).
    group_weights : ndarray of shape (n_groups,)
        The adversary's weights.
    x_step_sizes : ndarray of shape (n_steps,) or None
        The model's step size at each step, where it varies (vertex
        sampling).
    """

    coef: np.ndarray
    intercept: float
    group_weights: np.ndarray
    x_step_sizes: np.ndarray = None
