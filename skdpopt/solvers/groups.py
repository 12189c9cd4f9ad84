"""The group sizes the worst-group solvers weigh the groups by.

They are public when the proportions are (priors, or one group), or
the group counts released with noise of the plan's scale
(:func:`release_group_sizes`); without privacy, the true counts.
"""

import numpy as np

from ..mechanisms import gaussian_noise, laplace_noise


def release_group_sizes(problem, plan, rng):
    """The group sizes the second stage uses, and what they are.

    Parameters
    ----------
    problem : skdpopt.solvers.problems.GroupProblem
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

