"""A search's candidates: configured clones, their plans, their runs.

Each candidate is a clone of the user's estimator with the candidate's
parameters and the budget the search's plan gives it (the user's object
is never modified).  Its fit's event is learnt before anything is released
by a fit stopped at its release (:func:`planned_event`): a plan is made
from public quantities only, so stopping there releases nothing; the
candidate's real fit must then plan exactly that event
(:func:`run_candidate` checks), and records nothing itself, since the
search's own event covers it.
"""

import warnings

import numpy as np
from sklearn.base import clone
from sklearn.utils import _safe_indexing

from .. import ledger
from .._base import DPEstimatorMixin
from ..accounting import compose
from ..exceptions import PrivacyLeakError
from ..pipeline import PrivatePipeline


class _Planned(BaseException):
    """Stops a fit at its release (a BaseException: nothing in between may
    swallow it)."""


def check_private(estimator):
    """Refuse an estimator whose fit is not differentially private.

    Raises
    ------
    PrivacyLeakError
    """
    if isinstance(estimator, PrivatePipeline):
        estimator.check_privacy()
        return
    if not isinstance(estimator, DPEstimatorMixin):
        raise PrivacyLeakError(
            f"the estimator ({type(estimator).__name__}) is not a private "
            "skdpopt estimator: its fits would read the training rows without "
            "differential privacy, and the search would release them. Search "
            "a skdpopt estimator or a PrivatePipeline (make_private_pipeline).")


def random_state_names(estimator):
    """The ``random_state`` parameters of an estimator, nested ones included."""
    return [name for name in estimator.get_params(deep=True)
            if name == "random_state" or name.endswith("__random_state")]


def configured(estimator, params, epsilon, delta, seed=None, state_names=None):
    """The candidate: a clone with ``params``, the budget, and every
    ``random_state`` (nested ones included) set to ``seed``, so that no two
    runs share noise (``None``: fresh entropy for each).

    ``state_names``: the template's :func:`random_state_names`, when
    ``params`` replace no sub-estimator (computed here otherwise).
    """
    candidate = clone(estimator)
    if state_names is None or any(hasattr(v, "get_params") for v in params.values()):
        state_names = random_state_names(candidate.set_params(**params))
    states = dict.fromkeys(state_names, seed)
    if hasattr(candidate, "with_budget"):
        return candidate.set_params(**params).with_budget(epsilon, delta) \
            .set_params(**states)
    return candidate.set_params(**params, epsilon=epsilon, delta=delta, **states)


def _is_final(estimator):
    # The model ends a fit's releases; the private transformers before it
    # (scalers of a pipeline) release first.
    return not hasattr(estimator, "transform")


def planned_event(candidate, X, y, fit_params):
    """The event a candidate's fit on (X, y) would release, and the warnings
    its planning raised.

    The fit runs in a :func:`skdpopt.ledger.release_hook` that collects each
    plan and stops the fit at the model's release (private transformers
    before it fit, as they would, and their output is discarded).

    Returns
    -------
    event : event
    caught : list of warnings.WarningMessage
    """
    events = []

    def hook(estimator, plan):
        events.append(plan.event)
        if _is_final(estimator):
            raise _Planned

    with warnings.catch_warnings(record=True) as caught, ledger.release_hook(hook):
        warnings.simplefilter("always")
        try:
            candidate.fit(X, y, **fit_params)
        except _Planned:
            pass
    if not events:
        raise PrivacyLeakError(
            f"the estimator ({type(candidate).__name__}) released nothing "
            "through the accountant, so the search cannot account it.")
    return compose(*events), list(caught)


def run_candidate(candidate, expected_event, X_train, y_train, X_val, y_val,
                  fit_params, score, bound, value_range):
    """Fit a candidate on the training rows and score it on the validation
    rows, without noise (the search adds it).

    Runs in a worker; records nothing (the search's plan covers the run).

    Returns
    -------
    candidate : fitted estimator
    value : float
        The exact mean score: private, never released as is.
    caught : list of (category, message)
    """
    events = []

    def hook(estimator, plan):
        events.append(plan.event)
        if _is_final(estimator) and compose(*events) != expected_event:
            # A bug, never a user error: the search accounted another release.
            raise RuntimeError(
                "a candidate's fit planned a release that the search's plan "
                "did not account; nothing was released.")

    with warnings.catch_warnings(record=True) as caught, ledger.release_hook(hook):
        warnings.simplefilter("always")
        candidate.fit(X_train, y_train, **fit_params)
        if compose(*events) != expected_event:
            raise RuntimeError(
                "a candidate's fit released other than the search's plan "
                "accounted; nothing was released.")
        value = score.mean(score.per_row(candidate, X_val, y_val, bound,
                                         value_range))
    return candidate, value, [(w.category, str(w.message)) for w in caught]


def split_params(params, n_samples, rows):
    """Fit parameters for a subset of rows: per-row arrays indexed, the
    rest passed as they are."""
    out = {}
    for key, value in params.items():
        if hasattr(value, "__len__") and not isinstance(value, str) \
                and len(value) == n_samples:
            out[key] = _safe_indexing(value, rows)
        else:
            out[key] = value
    return out


def rows(data, index):
    """``data`` restricted to rows ``index`` (None stays None)."""
    return None if data is None else _safe_indexing(data, np.asarray(index))
