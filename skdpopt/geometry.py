"""Geometry of the l1 ball and the simplex: projections and proximal maps.

The l1 ball of radius R is the convex hull of the 2d vertices ``+-R e_j``
and the scaled simplex that of the d vertices ``R e_j``; vertex k of the
ball is ``+R e_k`` for k < d and ``-R e_(k-d)`` otherwise.
"""

import numpy as np


def soft_threshold(x, threshold):
    """Proximal map of ``threshold * ||.||_1``: shrink towards zero."""
    return np.sign(x) * np.maximum(np.abs(x) - threshold, 0.0)


def project_simplex(v, radius=1.0):
    """Euclidean projection onto ``{w >= 0, sum(w) = radius}``.

    Sort-based algorithm of Held, Wolfe and Crowder (1974), O(d log d).
    """
    v = np.asarray(v, dtype=float)
    u = np.sort(v)[::-1]
    cumulative = np.cumsum(u) - radius
    index = np.arange(1, len(v) + 1)
    rho = np.nonzero(u - cumulative / index > 0)[0][-1]
    theta = cumulative[rho] / (rho + 1.0)
    return np.maximum(v - theta, 0.0)


def project_l1_ball(v, radius=1.0):
    """Euclidean projection onto ``{||w||_1 <= radius}``."""
    v = np.asarray(v, dtype=float)
    if np.abs(v).sum() <= radius:
        return v.copy()
    return np.sign(v) * project_simplex(np.abs(v), radius)


def vertex_coordinates(indices, n_features, radius, constraint="l1_ball"):
    """Feature index and sign of the vertices with the given indices.

    Parameters
    ----------
    indices : ndarray of int
        Vertex indices: in ``range(2 d)`` for the l1 ball, ``range(d)`` for
        the simplex.
    n_features : int
    radius : float
    constraint : {"l1_ball", "simplex"}

    Returns
    -------
    features : ndarray of int
    values : ndarray of float
        The vertex is ``values[k] * e_(features[k])``.
    """
    indices = np.asarray(indices)
    if constraint == "simplex":
        return indices, np.full(indices.shape, float(radius))
    features = indices % n_features
    values = np.where(indices < n_features, radius, -radius).astype(float)
    return features, values


def project_polytope(v, radius, constraint="l1_ball"):
    """Euclidean projection onto the l1 ball ``{||w||_1 <= radius}`` or,
    for ``constraint="simplex"``, onto ``{w >= 0, sum(w) <= radius}``."""
    if constraint == "l1_ball":
        return project_l1_ball(v, radius)
    v = np.maximum(np.asarray(v, dtype=float), 0.0)
    return v if v.sum() <= radius else project_simplex(v, radius)
