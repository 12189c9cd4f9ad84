"""Warnings and errors that skdpopt raises about privacy and utility."""

import os
import sys
import warnings

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
# Code that calls an estimator's fit for the user: the warning belongs to
# the user's line that called it, not to a line in these libraries.
_CALLERS = ("sklearn", "joblib")


class PrivacyLeakWarning(UserWarning):
    """Something about the fit is read from the private data without noise.

    For example a label set taken from ``y`` when ``classes=`` was not
    given: the released model then reveals which labels occur.  Declare the
    quantity public (``classes=``, ``groups=``, ``domain=``) to silence it.
    """


class PrivacyLeakError(ValueError):
    """A step would learn from the private data without differential privacy.

    Raised, for example, by a private pipeline that holds a non-private
    transformer such as :class:`sklearn.preprocessing.StandardScaler`.
    """


class BudgetExceededError(RuntimeError):
    """A fit would take a :class:`~skdpopt.PrivacyLedger` past its budget.

    Raised before the fit releases anything, so nothing was spent.
    """


class LedgerError(RuntimeError):
    """An active :class:`~skdpopt.PrivacyLedger` cannot record a fit.

    Raised instead of running the fit, since a fit the ledger does not see
    would make its total under-report what was spent.
    """


class UtilityWarning(UserWarning):
    """The planned noise is so large that the fit is unlikely to be useful.

    Computed from public quantities only (the number of rows, epsilon, the
    public bounds, the schedule); the message names the lever to pull.
    """


def _is_library(filename):
    path = os.path.abspath(filename)
    if path.startswith(_PACKAGE):
        return True
    for name in _CALLERS:
        module = sys.modules.get(name)
        root = getattr(module, "__file__", None)
        if root and path.startswith(os.path.dirname(os.path.abspath(root)) + os.sep):
            return True
    return False


def _action(message, category, module, lineno):
    """The action of the first filter in :data:`warnings.filters` that
    matches, as :func:`warnings.warn` would choose it."""
    for action, text, kind, where, line in warnings.filters:
        if ((text is None or text.match(message))
                and issubclass(category, kind)
                and (where is None or where.match(module))
                and (line == 0 or line == lineno)):
            return action
    return warnings.defaultaction


# Warnings already shown under a "default", "module" or "once" filter:
# scikit-learn runs every fit of a search inside ``catch_warnings`` (to
# hand the filters to its workers), which clears Python's own registry, so
# without this one a search would repeat a warning once per clone.
_SHOWN = set()


def warn_at_caller(message, category):
    """Warn at the first frame outside skdpopt, scikit-learn and joblib.

    The warning then points at the user's own line (``fit``,
    ``cross_validate`` or ``GridSearchCV.fit``), and under Python's default
    filter it is shown once per line and message: once per search, not once
    per clone.  Filters that show every warning ("always", "error", as in
    ``pytest.warns``) see every one.

    Parameters
    ----------
    message : str
        Must quote no private value.
    category : type of Warning
    """
    frame, level = sys._getframe(1), 2
    while frame is not None and _is_library(frame.f_code.co_filename):
        frame, level = frame.f_back, level + 1
    if frame is not None:
        module = frame.f_globals.get("__name__", "")
        key = (message, category, frame.f_code.co_filename, frame.f_lineno)
        action = _action(message, category, module, frame.f_lineno)
        if action == "module":
            key = key[:3]
        elif action == "once":
            key = key[:2]
        if action in ("default", "module", "once"):
            if key in _SHOWN:
                return
            _SHOWN.add(key)
    warnings.warn(message, category, stacklevel=level)
