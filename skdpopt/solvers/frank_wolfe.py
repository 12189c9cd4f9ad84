"""Private Frank-Wolfe over the l1 ball or the scaled simplex.

Talwar, Thakurta and Zhang (2015): at step t the linear minimisation over
the polytope's vertices ``v`` of ``<v, grad F(w_t)>`` is replaced by a
private selection, here the exponential mechanism drawing vertex v with
probability proportional to ``exp(-score_scale * <v, grad F(w_t)>)``, and
the iterate moves towards it with step ``2 / (t + 2)``.  Iterates stay
inside the polytope and have at most t non-zeros after t steps.

The solver does not decide ``score_scale``: with per-example gradients whose
coordinates change by at most ``G`` between neighbouring datasets (so
``<v, grad F>`` changes by at most ``R G / n``), each draw is an
exponential mechanism with score sensitivity ``score_scale * R G / n``,
which the estimator calibrates with the accountant.
"""

from dataclasses import dataclass

import numpy as np

from ..geometry import vertex_coordinates
from ..mechanisms import exponential_mechanism


@dataclass
class FrankWolfeResult:
    """Output of :func:`private_frank_wolfe`.

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
        Final iterate.
    n_steps : int
        Number of private selections made.
    selected : ndarray of int
        Vertex chosen at each step.
    """

    coef: np.ndarray
    n_steps: int
    selected: np.ndarray


def private_frank_wolfe(gradient, n_features, *, radius, n_steps, score_scale, rng,
                        constraint="l1_ball", coef_init=None):
    """Minimise a smooth objective over a polytope by private Frank-Wolfe.

    Parameters
    ----------
    gradient : callable
        ``gradient(coef)`` returns the objective's gradient, shape
        (n_features,), at ``coef``.
    n_features : int
    radius : float
        Radius R of the l1 ball (or total mass of the simplex).
    n_steps : int
    score_scale : float
        Inverse temperature of the exponential mechanism; ``inf`` selects
        the exact minimising vertex (no privacy).
    rng : numpy.random.Generator
    constraint : {"l1_ball", "simplex"}, default="l1_ball"
    coef_init : ndarray of shape (n_features,), default=None
        Starting point inside the polytope (default: 0 for the ball, the
        first vertex for the simplex).

    Returns
    -------
    FrankWolfeResult
    """
    if coef_init is not None:
        coef = np.array(coef_init, dtype=float)
    else:
        coef = np.zeros(n_features)
        if constraint == "simplex":
            coef[0] = radius
    selected = np.empty(n_steps, dtype=np.int64)
    for t in range(n_steps):
        grad = gradient(coef)
        # <v, grad> for each vertex: +R g_j, then -R g_j for the ball.
        linear = radius * (grad if constraint == "simplex"
                           else np.concatenate([grad, -grad]))
        if np.isinf(score_scale):
            choice = int(np.argmin(linear))
        else:
            choice = exponential_mechanism(rng, -linear, scale=1.0 / score_scale)
        selected[t] = choice
        feature, value = vertex_coordinates(choice, n_features, radius, constraint)
        step = 2.0 / (t + 2.0)
        coef *= 1.0 - step
        coef[feature] += step * value
    return FrankWolfeResult(coef=coef, n_steps=n_steps, selected=selected)
