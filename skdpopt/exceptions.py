"""Warnings and errors that skdpopt raises about privacy and utility."""


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
