"""The problems the solvers take, and what they give back.

Every solver an estimator calls has one signature,
``solve(problem, plan, rng) -> result``:

* ``problem``: one of the small descriptions below, the data (read
  through :mod:`skdpopt._data` where a backend serves it) and the public
  constants of the objective (bounds, penalty, polytope);
* ``plan``: the estimator's plan (:mod:`skdpopt.plans`), from which the
  solver reads the schedule and the calibrated noise scales it documents,
  and nothing else: a solver decides no noise and imports no accounting;
* ``rng``: the fit's one ``numpy.random.Generator``.

The results hold what the estimators store, nothing more.
"""

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LinearProblem:
    """A linear model's data and the public constants of its objective.

    Attributes
    ----------
    X : {ndarray, sparse matrix, dask.array.Array} of shape (n_samples, n_features)
    y : ndarray or dask.array.Array of shape (n_samples,)
        Targets; +-1 labels for classification losses.
    fit_intercept : bool
    loss : object, default=None
        A loss from :mod:`skdpopt.losses` (DP-SGD).
    clip_norm : float, default=None
        Bound on each example's gradient norm (DP-SGD).
    alpha : float, default=0.0
        Penalty strength: L2 for DP-SGD, l1 for the Lasso.
    radius : float, default=None
        Radius of the constraint set (l2 ball for DP-SGD, l1 ball or
        simplex mass otherwise); None: unconstrained.
    constraint : {"l1_ball", "simplex"}, default="l1_ball"
    feature_bound : float, default=None
        Public bound b on every feature (``|x_ij| <= b``).
    residual_bound : float, default=None
        Public clip of the residuals (the Lasso's Huber width).
    coef_init : ndarray of shape (n_features,), default=None
        A warm start (the previous fit's model: released).
    intercept_init : float, default=0.0
    weighting : WeightedProblem, default=None
        A classifier's class totals, class and sample weights
        (:class:`skdpopt.solvers.classes.WeightedProblem`); None: unweighted.
    blocks : ndarray of shape (n_features,), default=None
        The block of each column (contiguous, from 0), each row's part in
        a block within the l2 ball of the block's bound and with disjoint
        columns per row (one-hot blocks, :func:`skdpopt._clipping.clip_blocks`):
        greedy CD moves a block at a time.  None: every column its own.
    """

    X: object
    y: object
    fit_intercept: bool
    loss: object = None
    clip_norm: float = None
    alpha: float = 0.0
    radius: float = None
    constraint: str = "l1_ball"
    feature_bound: float = None
    residual_bound: float = None
    coef_init: np.ndarray = None
    intercept_init: float = 0.0
    weighting: object = None
    blocks: np.ndarray = None


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


@dataclass(frozen=True)
class MarginalProblem:
    """Records over a finite public domain and the queries to preserve.

    Attributes
    ----------
    codes : ndarray of int of shape (n_samples, n_columns) or None
        Each record's code per column; None where the records are not in
        memory (a Dask collection), and ``counts`` holds what the solver
        reads of them.
    workload : MarginalWorkload or MatrixWorkload
        The queries (:mod:`skdpopt.solvers.query_release`).
    max_model_cells : float
        Public limit on the cells of the model's junction tree.
    counts : list of ndarray or None
        With ``codes`` None: the records' counts in the cells of each of
        ``workload.count_cliques`` (flattened, C order), counted where the
        records are.
    n_samples : int or None
        With ``codes`` None: the number of records (public).
    """

    codes: np.ndarray
    workload: object
    max_model_cells: float = np.inf
    counts: list = None
    n_samples: int = None

    def answers(self):
        """Each query's normalised answer on the records, and their number:
        all the solver reads of the data."""
        if self.codes is None:
            return self.workload.answers_of(self.counts, self.n_samples), self.n_samples
        return ([self.workload.answer_records(self.codes, j)
                 for j in range(len(self.workload))], self.codes.shape[0])


@dataclass
class LinearResult:
    """A fitted linear model.

    Attributes
    ----------
    coef : ndarray of shape (n_features,)
    intercept : float
    selected : ndarray of int or None
        The coordinate (or vertex) each private selection chose, where the
        solver selects.
    """

    coef: np.ndarray
    intercept: float
    selected: np.ndarray = None


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


@dataclass
class SyntheticResult:
    """A fitted synthetic distribution.

    Attributes
    ----------
    model : GraphicalModel
    selected : list of int
        The query (group) each round selected.
    """

    model: object
    selected: list
