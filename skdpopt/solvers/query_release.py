"""Private release of a workload of linear queries through a histogram
(seed 001, Section 1.4, "DP Synthetic Data Generation").

The game: a query player picks the query the current synthetic histogram
answers worst, a data player reweights the histogram to answer it better.
Only the query player sees the data, through

* an exponential-mechanism selection of one query (group) by its error,
* a Gaussian measurement of the selected query's answer on the data,

and the data player is multiplicative weights over the full-domain
histogram, fed with every measurement so far (as in MWEM).  Everything the
histogram becomes is post-processing of those releases; their privacy is
the estimator's to account (:class:`skdpopt.DPSyntheticData`).

Two workloads share the loop: marginals (query groups answered by summing
the histogram over axes, updated by noise-damped proportional fitting) and
an explicit query matrix (single queries, updated by MWEM's exponential
step).
"""

from dataclasses import dataclass, field

import numpy as np

from ..mechanisms import exponential_mechanism, gaussian_noise


class MarginalWorkload:
    """All cells of a list of marginals of a histogram.

    A marginal's error is the L1 distance between two normalised marginal
    tables, the largest signed sum over its cells; replacing one record
    moves two cells by ``1/n``, so the error moves by at most ``2/n`` and
    the table by ``sqrt(2)/n`` in L2.

    Parameters
    ----------
    marginals : list of tuple of int
        Axes of each marginal.
    shape : tuple of int
        Histogram shape (codes per column).
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

    def answer(self, hist, j):
        """Marginal j of ``hist`` (a normalised histogram), flattened."""
        keep = self.marginals[j]
        drop = tuple(a for a in range(len(self.shape)) if a not in keep)
        return hist.sum(axis=drop).ravel()

    def answer_records(self, codes, j):
        """Marginal j of the records with integer codes ``codes``
        (n_samples, n_columns), normalised."""
        keep = self.marginals[j]
        flat = np.ravel_multi_index(codes[:, keep].T, [self.shape[a] for a in keep])
        return np.bincount(flat, minlength=self.sizes[j]) / codes.shape[0]

    def errors(self, hist, real):
        """L1 error of every marginal of ``hist`` against ``real``."""
        return np.array(
            [np.abs(self.answer(hist, j) - real[j]).sum() for j in range(len(self))]
        )

    def update(self, hist, j, estimate, noise_std):
        """Proportional fitting towards a noisy marginal, damped by noise.

        Each cell of marginal j is rescaled by
        ``(max(estimate, 0) + s) / (current + s)`` with ``s`` the noise
        standard deviation: cells whose difference is within the noise are
        left almost alone, and no cell is ever set to zero for good.
        """
        keep = self.marginals[j]
        drop = tuple(a for a in range(len(self.shape)) if a not in keep)
        current = hist.sum(axis=drop, keepdims=True)
        target = np.maximum(estimate, 0.0).reshape(current.shape)
        damping = max(noise_std, 1e-15)
        hist *= (target + damping) / (current + damping)
        hist /= hist.sum()


class MatrixWorkload:
    """Explicit linear queries: rows of a matrix over the flattened domain,
    with coefficients in [-1, 1] (checked by the estimator).

    A query's error is ``|<q, real - hist>|``; replacing one record moves
    one cell's mass to another, so the answer moves by at most
    ``2 max|q| / n``.
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

    def answer(self, hist, j):
        return np.array([self.matrix[j] @ hist.ravel()])

    def answer_records(self, codes, j):
        flat = np.ravel_multi_index(codes.T, self.shape)
        return np.array([self.matrix[j][flat].mean()])

    def errors(self, hist, real):
        answers = self.matrix @ hist.ravel()
        return np.abs(answers - np.concatenate(real))

    def update(self, hist, j, estimate, noise_std):
        """MWEM's multiplicative step for one query."""
        flat = hist.reshape(-1)
        gap = float(estimate[0] - self.matrix[j] @ flat)
        flat *= np.exp(0.5 * self.matrix[j] * gap)
        flat /= flat.sum()


@dataclass
class ReleaseResult:
    """What :func:`release_workload` produced.

    Attributes
    ----------
    histogram : ndarray
        The synthetic distribution over the domain (sums to 1).
    selected : list of int
        The query (group) chosen at each round.
    measurements : dict
        Per measured query (group): (sum of estimate / variance,
        sum of 1 / variance), the inverse-variance combination.
    """

    histogram: np.ndarray
    selected: list = field(default_factory=list)
    measurements: dict = field(default_factory=dict)


def release_workload(
    workload,
    real_answers,
    n_samples,
    *,
    n_rounds,
    selection_epsilon,
    noise_std,
    rng,
    initial=None,
    initial_measurements=None,
    n_sweeps=1,
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
    initial : ndarray, default=None
        Starting histogram (uniform if None); must be data-independent or
        a function of released measurements.
    initial_measurements : dict, default=None
        Released measurements to reuse, as in ``ReleaseResult.measurements``.
    n_sweeps : int, default=1
        Passes over all measurements after each round.

    Returns
    -------
    ReleaseResult
    """
    if initial is None:
        hist = np.full(workload.shape, 1.0 / np.prod(workload.shape))
    else:
        hist = np.array(initial, dtype=np.float64).reshape(workload.shape)
    result = ReleaseResult(hist, measurements=dict(initial_measurements or {}))
    # Score = epsilon * utility / (2 * sensitivity): the exponential
    # mechanism's weights.  The expected L1 size of the measurement noise is
    # subtracted (a public, data-independent shift) so that large tables
    # are picked only when their error beats their noise.
    sensitivity_times_n = workload.l1_sensitivity_times_n
    score_scale = selection_epsilon * n_samples / (2.0 * sensitivity_times_n)
    noise_l1 = np.sqrt(2.0 / np.pi) * noise_std * workload.sizes
    for _ in range(n_rounds):
        errors = workload.errors(hist, real_answers) - noise_l1
        if np.isfinite(score_scale):
            j = int(exponential_mechanism(rng, score_scale * errors))
        else:  # no privacy asked: the worst query
            j = int(np.argmax(errors))
        result.selected.append(j)
        noisy = real_answers[j] + gaussian_noise(rng, noise_std, real_answers[j].shape)
        weighted, precision = result.measurements.get(j, (0.0, 0.0))
        variance = max(noise_std, 1e-12) ** 2  # no privacy: exact answers
        result.measurements[j] = (
            weighted + noisy / variance,
            precision + 1.0 / variance,
        )
        _fit_measurements(workload, hist, result.measurements, [j], n_sweeps)
    return result


def _fit_measurements(workload, hist, measurements, first, n_sweeps):
    """Update the histogram with the queries in ``first``, then sweep over
    every measurement ``n_sweeps`` times."""
    order = list(first) + [k for _ in range(n_sweeps) for k in measurements]
    for k in order:
        weighted, precision = measurements[k]
        workload.update(hist, k, weighted / precision, 1.0 / np.sqrt(precision))


def fit_measurements(workload, hist, measurements, n_sweeps=1):
    """Sweep ``n_sweeps`` times over released measurements (post-processing).

    Parameters
    ----------
    workload : MarginalWorkload or MatrixWorkload
    hist : ndarray
        Histogram, updated in place.
    measurements : dict
        As in :attr:`ReleaseResult.measurements`.
    n_sweeps : int, default=1
    """
    _fit_measurements(workload, hist, measurements, [], n_sweeps)
