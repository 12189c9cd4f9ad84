"""DPSyntheticData: a private synthetic dataset for a workload of marginals."""

from functools import partial
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from . import _domain
from ._base import (
    PRIVACY_PARAMETER_CONSTRAINTS,
    DPEstimatorMixin,
    keep_fit_on_error,
    sampling_generator,
    withhold_values,
)
from ._bounds import private_bounds
from ._data import dask_records, is_dask_collection
from ._diagnostics import warn_if_coarse
from .plans.synthetic import plan_synthetic
from .solvers.problems import MarginalProblem
from .solvers.query_release import fit_synthetic, workload_queries

# Default public limit on the model: cells of its junction tree's tables
# (1.6 MB of float64 each copy); each round scores every candidate
# marginal on the model, so time grows with it (docs/design/dpsynthetic.md).
DEFAULT_MAX_MODEL_SIZE = 200_000


class DPSyntheticData(DPEstimatorMixin, BaseEstimator):
    """Private synthetic data that answers a workload of marginal queries.

    Learns, under (epsilon, delta)-differential privacy, a distribution
    over a finite, public domain of records such that a workload of
    marginals (by default every 1-, 2- and 3-way marginal) has nearly the
    same answers on it as on the training data; :meth:`sample` draws
    synthetic records from it.  The fit is a game between a query player,
    which picks the marginal the synthetic distribution answers worst (an
    exponential mechanism, the only step besides measurements that reads
    the data) and measures it with Gaussian noise, and a data player, which
    reweights the distribution multiplicatively to agree with every
    measurement so far (Hardt, Ligett and McSherry 2012; AIM, McKenna et
    al. 2022).  Multiplicative updates by marginals keep the distribution
    a product of one potential table per measured marginal, so it is held
    as a graphical model: marginals come from message passing on a
    junction tree and records from forward sampling, at a cost set
    by the tree's tables (at most ``max_model_size`` cells), not by the
    domain, which may have 1e14 cells or more.  See
    :doc:`/privacy/dpsynthetic` for the privacy argument.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget of the whole fit, in (0, 1e6], or ``np.inf`` for no
        privacy.
    delta : float, default=1e-9
        Privacy parameter; must be > 0 for a finite epsilon (the
        measurements are Gaussian).
    workload : int, list of tuple, or ndarray, default=3
        The queries to preserve.  An int ``k``: every marginal on up to
        ``k`` columns.  A list of column tuples (names for a DataFrame,
        positions otherwise): those marginals.  A 2-D array of shape
        ``(n_queries, n_cells)``: explicit linear queries over the
        flattened domain (C order of the columns' codes), coefficients in
        [-1, 1]; they address single cells, so the model is then the whole
        histogram and the domain must have at most ``max_model_size``
        cells (refused above).
    domain : dict or list, default=None
        Public domain of the categorical columns: for each column (key:
        name for a DataFrame, position for an array; or a list with one
        entry per column, ``None`` for numeric ones), either its list of
        categories (include ``np.nan`` to allow missing values) or a
        cardinality ``k`` for integer codes ``0 .. k - 1``.  Columns not
        listed are numeric.  Categories can never be learnt from the data.
    bounds : dict or list, default=None
        Public ``(low, high)`` of numeric columns (same keys as
        ``domain``).  Values outside are clipped into the end bins.  A
        numeric column without bounds gets them privately (see
        ``preprocessor_epsilon``).
    n_bins : int, default=8
        Equal-width bins per numeric column.
    max_iter : int, default=None
        Number of select-and-measure rounds.  ``None``: twice the number
        of columns times ``2 ** log10(epsilon)`` (so 2x at epsilon = 1, 4x
        at 10), at least 2 and at most the number of queries; every query
        without privacy.
    preprocessor_epsilon : float, default=None
        Part of ``epsilon`` spent on the bounds of numeric columns without
        declared bounds (three exponential-mechanism draws per column over
        a public grid, as the private scalers draw theirs).  ``None``: the
        share of the budget (zCDP units) at which the draws find the data
        for the rows at hand, between 5% and 25% of it.  Unused when every
        numeric column has bounds.
    max_model_size : float, default=2e5
        Public limit on the model: the cells of its junction tree's tables
        (8 bytes each).  A marginal whose measurement would grow the tree
        past it is not a candidate for selection (as in AIM); every
        column's 1-way table must fit.  Memory and time grow with it.
    random_state : int, RandomState instance or None, default=None
        Seeds the fit's noise.  Leave it ``None`` for a real release.  An
        int reproduces the fit (for tests and documentation); ``None`` and
        a RandomState draw fresh entropy from the operating system at
        every fit, so clones never share noise.
    verbose : int, default=0
        Print one line per round: the columns measured, the model's size
        and the time so far (selections are released values; no error
        or count of the data is printed).

    Attributes
    ----------
    domain_ : list of Column
        The domain used: per column its categories or bin edges.
    model_ : GraphicalModel
        The synthetic distribution: potentials of the measured marginals
        on a junction tree (:meth:`marginal` and :meth:`sample` use it).
    histogram_ : ndarray
        The synthetic distribution over the whole domain (sums to 1), of
        shape the number of codes per column; only for domains of at most
        1e7 cells.
    workload_ : list of tuple of int or ndarray
        The workload as column positions (or the query matrix).
    n_iter_ : int
        Number of rounds run.
    noise_std_ : float
        Standard deviation of the Gaussian noise on each measured
        normalised marginal cell (0 without privacy).
    selection_epsilon_ : float
        Pure-DP epsilon of each round's selection.
    selected_ : list of int
        Index in ``workload_`` (plus the added 1-way marginals) of the query
        selected at each round.
    privacy_plan_ : SyntheticPlan
        What the fit released, planned before it read the data: rounds,
        budget shares, calibrated noise and selection scales, and the
        event tree.
    privacy_spent_ : PrivacySpent
        The (epsilon, delta) guarantee of the fit, from the plan's event.
    n_features_in_ : int
        Number of columns seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Column names, when X is a DataFrame with string column names.

    See Also
    --------
    DPLogisticSimplex : the same saddle-point view applied to a model.

    Examples
    --------
    >>> import numpy as np
    >>> from skdpopt import DPSyntheticData
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 3, size=(1000, 4))
    >>> gen = DPSyntheticData(epsilon=1.0, domain=[3, 3, 3, 3], random_state=0)
    >>> gen = gen.fit(X)
    >>> gen.sample(5, random_state=0).shape
    (5, 4)
    >>> bool(gen.privacy_spent_.epsilon <= 1.0)
    True
    """

    _parameter_constraints = {
        **PRIVACY_PARAMETER_CONSTRAINTS,
        "workload": [Interval(Integral, 1, None, closed="left"), list, np.ndarray],
        "domain": [dict, list, None],
        "bounds": [dict, list, None],
        "n_bins": [Interval(Integral, 2, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "preprocessor_epsilon": [Interval(Real, 0, None, closed="neither"), None],
        "max_model_size": [Interval(Real, 1, None, closed="left")],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        epsilon=1.0,
        delta=1e-9,
        workload=3,
        domain=None,
        bounds=None,
        n_bins=8,
        max_iter=None,
        preprocessor_epsilon=None,
        max_model_size=DEFAULT_MAX_MODEL_SIZE,
        random_state=None,
        verbose=0,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.workload = workload
        self.domain = domain
        self.bounds = bounds
        self.n_bins = n_bins
        self.max_iter = max_iter
        self.preprocessor_epsilon = preprocessor_epsilon
        self.max_model_size = max_model_size
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------
    # Fitting

    @keep_fit_on_error
    def fit(self, X, y=None):
        """Learn the synthetic distribution, spending ``epsilon`` and ``delta``.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Training records.  Categorical columns must be declared in
            ``domain``; every value must be a declared category.
        y : None
            Ignored.

        Returns
        -------
        self : DPSyntheticData
            The fitted generator.
        """
        self._validate_params()
        frame = _is_dataframe(X)
        # Dask records are read block by block, where they are: checked,
        # counted in the cells of the workload's marginals, and the
        # unbounded numeric columns' bounds drawn from their grid counts.
        records = dask_records(X) if is_dask_collection(X) else None
        if records is None:
            columns = self._column_values(X)
            names = list(X.columns) if frame else list(range(len(columns)))
        else:
            names = records.names
        # Names and number of columns only: the columns keep their types.
        validate_data(self, X, reset=True, skip_check_array=True)
        if records is not None and all(isinstance(n, str) for n in names):
            self.feature_names_in_ = np.asarray(names, dtype=object)
        if len(names) < 2:
            raise ValueError(
                f"DPSyntheticData needs at least 2 columns; got {len(names)} "
                "feature(s). Marginals of one column are a histogram: release "
                "it with Laplace or Gaussian noise instead."
            )
        # Public quantities first (domain, workload, size limit), then the
        # plan, then the releases: bounds, measurements, selections.
        domain = _domain.declared_domain(names, self.domain, self.bounds, self.n_bins)
        if records is not None:
            # Every input check, before anything is charged (as in memory,
            # below); the blocks' row counts sum to the public n.
            lengths = records.map(_domain.check_columns, names, domain)
            n_samples = int(sum(lengths))
        else:
            n_samples = len(columns[0])
        if n_samples < 2:
            raise ValueError(
                f"DPSyntheticData needs at least 2 samples; got {n_samples} "
                "sample(s)."
            )
        self._warn_if_delta_too_large(n_samples)
        unbounded = [i for i, col in enumerate(domain) if col is None]
        workload = _domain.resolve_workload(self.workload, names, domain, self.n_bins)
        whole = isinstance(workload, np.ndarray)
        bins = np.zeros(self.n_bins + 1)
        shape = _domain.domain_shape(
            [c if c is not None else _domain.Column(n, edges=bins)
             for n, c in zip(names, domain, strict=True)],
            self.max_model_size, whole=whole)
        queries = workload_queries(workload, shape)
        if unbounded:
            values = (records.rows(_domain.numeric_values, lengths, len(unbounded),
                                   names, unbounded) if records is not None
                      else np.column_stack([_domain.finite_numeric(names[i], columns[i])
                                            for i in unbounded]))
        plan = plan_synthetic(
            n_samples=n_samples, n_columns=len(shape), n_queries=len(queries),
            n_one_way=0 if whole else len(shape), n_bounded=len(unbounded),
            l2_sensitivity_times_n=queries.l2_sensitivity_times_n,
            epsilon=self.epsilon, delta=self.delta, max_iter=self.max_iter,
            preprocessor_epsilon=self.preprocessor_epsilon)
        warn_if_coarse(self, plan.bounds, ["bounds"],
                       public="bounds={column: (low, high)} for the numeric columns")
        # Every input check before anything is charged: the columns with a
        # public domain are encoded (a value outside it is refused), and
        # those awaiting private bounds were read as finite numbers above.
        codes = (None if records is not None else
                 [None if col is None else _domain.encode_column(col, values)
                  for col, values in zip(domain, columns, strict=True)])
        rng = self._begin_release(plan)
        if unbounded:
            low, high = private_bounds(values, plan.bounds, rng)
            for k, i in enumerate(unbounded):
                domain[i] = _domain.numeric_column(names[i], low[k], high[k],
                                                   self.n_bins)
                if codes is not None:
                    codes[i] = _domain.encode_column(domain[i], values[:, k])
        if records is None:
            problem = MarginalProblem(np.column_stack(codes), queries,
                                      self.max_model_size)
        else:
            problem = MarginalProblem(
                None, queries, self.max_model_size, n_samples=n_samples,
                counts=records.cell_counts(partial(_domain.encode_columns,
                                                   domain=domain),
                                           shape, queries.count_cliques))
        result = fit_synthetic(problem, plan, rng, verbose=self.verbose)
        self.model_ = result.model
        self.workload_ = workload
        self.selected_ = result.selected
        self.n_iter_ = plan.n_rounds
        self.noise_std_ = plan.round_noise_std
        self.selection_epsilon_ = plan.selection_epsilon
        self._queries = queries
        self.domain_ = domain
        self._output_frame = frame
        self._n_samples_fit = n_samples
        self._finish_release(plan)
        return self

    def _column_values(self, X):
        """The columns of X as 1-D arrays (object for declared categorical
        columns, float otherwise)."""
        if _is_dataframe(X):
            if X.shape[0] == 0:
                raise ValueError(
                    f"Found array with 0 sample(s) (shape={X.shape}) while a "
                    "minimum of 2 is required."
                )
            return [X[c].to_numpy() for c in X.columns]
        if self.domain is None:
            # Converted per column, so that a text column is named and the
            # message points at ``domain``.
            array = _checked_array(X, dtype=None, ensure_min_samples=1,
                                   ensure_all_finite=True)
            return [_domain.finite_numeric(i, array[:, i])
                    for i in range(array.shape[1])]
        array = _checked_array(X, dtype=None, ensure_all_finite=False)
        return [array[:, i] for i in range(array.shape[1])]

    def _encode(self, X):
        check_is_fitted(self)
        if _is_dataframe(X):
            columns = [X[c].to_numpy() for c in X.columns]
        else:
            dtype = np.float64 if all(c.is_numeric for c in self.domain_) else None
            array = _checked_array(X, dtype=dtype,
                                   ensure_all_finite=dtype is not None)
            columns = [array[:, i] for i in range(array.shape[1])]
        validate_data(self, X, reset=False, skip_check_array=True)
        return np.column_stack(
            [_domain.encode_column(c, v)
             for c, v in zip(self.domain_, columns, strict=True)]
        )

    # ------------------------------------------------------------------
    # Using the fit

    def sample(self, n_samples=None, random_state=None, method="systematic"):
        """Draw synthetic records from the learnt distribution.

        Sampling is post-processing: it costs no privacy.

        Parameters
        ----------
        n_samples : int, default=None
            Number of records; ``None`` draws as many as the training data.
        random_state : int, RandomState instance or None, default=None
            Seeds the draw (a RandomState advances); sampling releases
            nothing new, so a seed here is safe.
        method : {"systematic", "iid"}, default="systematic"
            ``"systematic"``: down the model's junction tree, the records
            sharing the values of a node's separator get the node's other
            columns by systematic sampling of their conditional
            distribution (records in random order), so each table of the
            tree is matched up to rounding and the synthetic marginals
            vary less than under independent draws; each record is still
            distributed as the model, but the records are not
            independent.  ``"iid"``: independent draws.

        Returns
        -------
        ndarray or DataFrame of shape (n_samples, n_features)
            A DataFrame (categorical columns with the declared categories)
            if the training data was one, else an array: float if every
            column is numeric, object otherwise.  Numeric values are drawn
            uniformly inside their bin.
        """
        check_is_fitted(self)
        if n_samples is None:
            n_samples = self._n_train
        if not isinstance(n_samples, Integral) or n_samples < 0:
            raise ValueError(
                f"n_samples must be a non-negative int, got {n_samples!r}."
            )
        if method not in ("systematic", "iid"):
            raise ValueError(
                f"method must be 'systematic' or 'iid', got {method!r}."
            )
        rng = sampling_generator(random_state)
        codes = self.model_.sample(int(n_samples), rng, method=method)
        values = [_domain.decode_column(col, codes[:, i], rng)
                  for i, col in enumerate(self.domain_)]
        if self._output_frame:
            import pandas as pd

            data = {}
            for col, v in zip(self.domain_, values, strict=True):
                if col.is_numeric:
                    data[col.name] = v
                else:
                    data[col.name] = pd.Categorical(
                        list(v), categories=[c for c in col.categories
                                             if not _is_nan(c)])
            return pd.DataFrame(data)
        if all(col.is_numeric for col in self.domain_):
            return np.column_stack(values) if values else np.empty((n_samples, 0))
        out = np.empty((int(n_samples), len(values)), dtype=object)
        for i, v in enumerate(values):
            out[:, i] = v
        return out

    def query_errors(self, X):
        """L1 error of each workload query between the synthetic
        distribution and the records X.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Records in the fitted domain (for example held-out data).

        Returns
        -------
        ndarray of shape (n_queries,)
            For marginals, the sum over cells of absolute differences of
            normalised counts; for an explicit query matrix, the absolute
            difference of the answers.
        """
        codes = self._encode(X)
        queries = self._queries
        n_user = len(self.workload_)
        real = [queries.answer_records(codes, j) for j in range(n_user)]
        return np.array([
            np.abs(queries.answer(self.model_, j) - real[j]).sum()
            for j in range(n_user)
        ])

    def score(self, X, y=None):
        """Minus the mean workload error on X (higher is better).

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
            Records in the fitted domain.
        y : None
            Ignored.

        Returns
        -------
        float
        """
        return -float(np.mean(self.query_errors(X)))

    def marginal(self, columns):
        """The synthetic distribution's marginal over some columns.

        Computed exactly from the fitted model (post-processing: it costs
        no privacy), whether or not the marginal was measured.

        Parameters
        ----------
        columns : list
            Column names (DataFrame) or positions.

        Returns
        -------
        ndarray
            Probabilities, one axis per column in the order of ``columns``
            (codes in the order of ``domain_``); sums to 1.
        """
        check_is_fitted(self)
        names = [c.name for c in self.domain_]
        try:
            positions = [names.index(c) for c in columns]
        except ValueError:
            raise ValueError(
                f"columns must name columns of the fit; got {list(columns)!r}."
            ) from None
        if len(set(positions)) != len(positions):
            raise ValueError("columns lists a column twice.")
        ordered = sorted(positions)
        table = self.model_.marginal(tuple(ordered))
        return np.transpose(table, [ordered.index(p) for p in positions])

    @property
    def histogram_(self):
        """The synthetic distribution over the whole domain (sums to 1), of
        shape the number of codes per column; only for domains of at most
        ``1e7`` cells (use :meth:`marginal` or :meth:`sample` otherwise)."""
        check_is_fitted(self)
        cells = float(np.prod([float(c.size) for c in self.domain_]))
        if cells > _domain.MAX_DOMAIN_CELLS:
            raise AttributeError(
                f"histogram_ would have {cells:.3g} cells, above "
                f"{_domain.MAX_DOMAIN_CELLS:.0e}; the model is held as a "
                "graphical model (model_): use marginal() or sample()."
            )
        return self.model_.dense()

    @property
    def _n_train(self):
        return self._n_samples_fit

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.target_tags.required = False
        return tags


def _checked_array(X, **kwargs):
    """``check_array`` whose errors quote no value of X."""
    try:
        return check_array(X, **kwargs)
    except ValueError as exc:
        raise ValueError(withhold_values(str(exc))) from None


def _is_dataframe(X):
    return hasattr(X, "columns") and hasattr(X, "iloc")


def _is_nan(value):
    return isinstance(value, float) and value != value


