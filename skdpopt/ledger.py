"""A ledger of every private fit a user runs, composed by the accountant.

Inside ``with PrivacyLedger() as ledger:``, every skdpopt fit records its
plan's event before it releases anything, including the clones that
:class:`~sklearn.model_selection.GridSearchCV`, ``cross_validate`` and
:class:`~sklearn.pipeline.Pipeline` fit, in this process or in joblib's
worker processes.  ``ledger.spent()`` composes them all.

How fits in other processes are seen: while a ledger is active, pickling an
skdpopt estimator (which is how joblib's process backends ship it to a
worker) attaches the ledger's channel, a private directory on this machine;
the worker's fit records into it, under a file lock that also serialises
budget checks.  A fit that carries a channel it cannot reach (a worker on
another machine) refuses to run with :class:`~skdpopt.exceptions.LedgerError`
rather than go unrecorded.
"""

import contextlib
import contextvars
import os
import pickle
import shutil
import socket
import tempfile
import threading
import uuid
from dataclasses import dataclass
from numbers import Integral

from .accounting import Accountant, PrivacySpent, compose
from .exceptions import (
    BudgetExceededError,
    LedgerError,
    PrivacyLeakWarning,
    warn_at_caller,
)

try:  # POSIX; elsewhere the ledger only serialises within the process
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None

# The ledgers active in this process, innermost last (``with`` blocks).
_ACTIVE = []
_THREAD_LOCK = threading.Lock()
# Where fits hand their plan instead of the ledgers (see ``release_hook``).
_HOOK = contextvars.ContextVar("skdpopt_release_hook", default=None)


@dataclass(frozen=True)
class LedgerRecord:
    """One fit seen by a ledger.

    Attributes
    ----------
    estimator : str
        The estimator's class name.
    event : event
        Its plan's event tree (see :mod:`skdpopt.accounting.events`).
    delta : float
        The delta the fit was planned for.
    spent : PrivacySpent
        The fit's own guarantee.
    fixed_seed : bool
        Whether the fit's ``random_state`` was an int: its noise is then
        the same as that of every other fit with the same seed.
    """

    estimator: str
    event: object
    delta: float
    spent: PrivacySpent
    fixed_seed: bool = False


@dataclass(frozen=True)
class _Channel:
    """Where a ledger's records go: a directory on one host."""

    path: str
    host: str
    budget: tuple = None

    def reachable(self):
        return os.path.isdir(self.path)

    def on_this_host(self):
        return self.host == socket.gethostname()


def _total(events, delta):
    """Composed guarantee of a list of events at ``delta``."""
    if not events:
        return PrivacySpent(0.0, 0.0)
    accountant = Accountant().compose(compose(*events))
    return accountant.spent(delta)


class _Lock:
    """The channel's file lock (and a thread lock, for threads of one process)."""

    def __init__(self, path):
        self.path = os.path.join(path, "lock")

    def __enter__(self):
        _THREAD_LOCK.acquire()
        self.handle = open(self.path, "a")  # noqa: SIM115 (closed in __exit__)
        if fcntl is not None:
            fcntl.flock(self.handle, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        if fcntl is not None:
            fcntl.flock(self.handle, fcntl.LOCK_UN)
        self.handle.close()
        _THREAD_LOCK.release()


def _read_records(path):
    records = []
    for name in sorted(os.listdir(path)):
        if name.startswith("record-") and name.endswith(".pkl"):
            with open(os.path.join(path, name), "rb") as f:
                records.append(pickle.load(f))
    records.sort(key=lambda r: r[0])
    return [record for _, record in records]


def _write_record(path, record):
    count = len([n for n in os.listdir(path) if n.startswith("record-")])
    name = f"record-{count:08d}-{uuid.uuid4().hex}.pkl"
    temporary = os.path.join(path, "tmp-" + name)
    with open(temporary, "wb") as f:
        pickle.dump((count, record), f)
    os.replace(temporary, os.path.join(path, name))  # atomic: never half-read
    return name


def _budget_delta(budget, records):
    if budget is not None:
        return budget[1]
    return min(sum(r.delta for r in records), 1.0 - 1e-12)


def _record_into(channel, record):
    """Write the record (under the budget check); return its file's name."""
    with _Lock(channel.path):
        if channel.budget is not None:
            epsilon, delta = channel.budget
            events = [r.event for r in _read_records(channel.path)] + [record.event]
            total = _total(events, delta)
            if total.epsilon > epsilon:
                raise BudgetExceededError(
                    f"this {record.estimator} fit would take the ledger's total to "
                    f"epsilon={total.epsilon:.4g} at delta={delta:g}, above its "
                    f"budget of epsilon={epsilon:g}; nothing was released. Lower "
                    "the fit's epsilon or raise the budget."
                )
        return _write_record(channel.path, record)


def active_channels():
    """The channels of the ledgers active in this process (for pickling)."""
    return tuple(ledger._channel for ledger in _ACTIVE)


@contextlib.contextmanager
def release_hook(hook):
    """Fits in this block hand their plan to ``hook`` instead of the ledgers.

    For a release made of inner fits that records itself once, with an
    event covering them all (the private search of
    :mod:`skdpopt.model_selection`): its inner fits call
    ``hook(estimator, plan)`` where they would record, and record nothing.
    The hook may raise to stop a fit before it releases anything.  The
    block holds in the current thread (a context variable), so the search
    enters it in every worker that fits.

    Parameters
    ----------
    hook : callable
        ``hook(estimator, plan)``.
    """
    token = _HOOK.set(hook)
    try:
        yield
    finally:
        _HOOK.reset(token)


def record_release(estimator, plan):
    """Record a fit's plan in every ledger that must see it.

    Called by every skdpopt fit after it has made its plan and before it
    releases anything.  Raises :class:`BudgetExceededError` if a ledger's
    budget would be exceeded, and :class:`LedgerError` if the estimator was
    sent from a ledger this process cannot reach.  Returns where the record
    went, for :func:`withdraw`.  Inside :func:`release_hook`, only the hook
    is called (and nothing is recorded).
    """
    hook = _HOOK.get()
    if hook is not None:
        hook(estimator, plan)
        return []
    channels = list(active_channels())
    for channel in getattr(estimator, "_ledger_channels", ()):
        if channel in channels:
            continue
        if channel.reachable():
            channels.append(channel)
        elif not channel.on_this_host():
            raise LedgerError(
                f"this {type(estimator).__name__} was sent from a PrivacyLedger on "
                f"host {channel.host!r}, which this process cannot reach, so the "
                "fit could not be recorded; it was refused. Fit it on that "
                "machine (joblib's process or thread backends), or outside the "
                "ledger's with-block."
            )
        # On this host, a channel that is gone belongs to a ledger that has
        # closed: there is nothing left to record into.
    if not channels:
        return []
    seed = getattr(estimator, "random_state", None)
    fixed_seed = isinstance(seed, Integral) and not isinstance(seed, bool)
    record = LedgerRecord(type(estimator).__name__, plan.event, plan.delta,
                          plan.spent(), fixed_seed)
    written = []
    try:
        for channel in channels:
            written.append((channel, _record_into(channel, record)))
    except BaseException:
        withdraw(written)  # refused by one ledger: recorded in none
        raise
    if fixed_seed:
        for ledger in list(_ACTIVE):
            if ledger._channel in channels:
                ledger._warn_fixed_seed(record.estimator)
    return written


def withdraw(written):
    """Remove the records :func:`record_release` wrote, for a fit that
    failed having released nothing (see ``_base.keep_fit_on_error``)."""
    for channel, name in written:
        if not channel.reachable():
            continue  # the ledger has closed
        with _Lock(channel.path):
            try:
                os.remove(os.path.join(channel.path, name))
            except FileNotFoundError:
                pass


class PrivacyLedger:
    """Records every private fit in a ``with`` block and composes them.

    Every skdpopt estimator fitted inside the block records its plan's
    event before releasing anything: direct fits, the clones that
    ``GridSearchCV``, ``cross_validate`` and ``Pipeline`` fit, with
    ``n_jobs=1`` or with joblib's process and thread backends.  The total
    is computed by the library's accountant from all recorded events
    (privacy loss distributions and Renyi DP), so it is far below the sum
    of the fits' epsilons when there are many.

    Only fits are covered.  Scores that ``GridSearchCV`` computes on
    held-out folds (``cv_results_``, ``best_score_``, the choice of
    ``best_params_``) are computed on the private data without noise and
    are not protected by any guarantee.

    Parameters
    ----------
    budget : (float, float) or None, default=None
        ``(epsilon, delta)``: refuse (with :class:`BudgetExceededError`,
        before anything is released) a fit that would take the total past
        ``epsilon`` at ``delta``.

    Attributes
    ----------
    records : list of LedgerRecord
        One per fit, in the order they were recorded.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.model_selection import GridSearchCV
    >>> from skdpopt import DPSGDRegressor, PrivacyLedger
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(3000, 3))
    >>> y = X @ [0.5, -0.2, 0.1] + 0.1 * rng.normal(size=3000)
    >>> with PrivacyLedger() as ledger:
    ...     search = GridSearchCV(DPSGDRegressor(epsilon=0.5, delta=1e-7),
    ...                           {"alpha": [1e-4, 1e-2]}, cv=3).fit(X, y)
    >>> len(ledger)
    7
    >>> bool(ledger.spent().epsilon < 7 * 0.5)
    True
    """

    def __init__(self, budget=None):
        if budget is not None:
            epsilon, delta = budget
            if not (epsilon > 0 and 0 <= delta < 1):
                raise ValueError(
                    "budget must be (epsilon, delta) with epsilon > 0 and delta "
                    f"in [0, 1), got {budget!r}"
                )
            budget = (float(epsilon), float(delta))
        self.budget = budget
        self._channel = None
        self._closed_records = []
        self._warned = False

    def __enter__(self):
        if self._channel is not None:
            raise RuntimeError("this PrivacyLedger is already active")
        path = tempfile.mkdtemp(prefix="skdpopt-ledger-")
        self._channel = _Channel(path, socket.gethostname(), self.budget)
        _ACTIVE.append(self)
        return self

    def __exit__(self, *exc):
        self._closed_records = self.records
        # Fits in other processes record here but warn nowhere the user sees.
        seeded = [r.estimator for r in self._closed_records if r.fixed_seed]
        if seeded:
            self._warn_fixed_seed(seeded[0])
        _ACTIVE.remove(self)
        shutil.rmtree(self._channel.path, ignore_errors=True)
        self._channel = None
        return False

    def _warn_fixed_seed(self, estimator):
        """Warn, once per ledger, that a recorded fit had a fixed seed."""
        if self._warned:
            return
        self._warned = True
        warn_at_caller(
            f"a {estimator} fit recorded by this PrivacyLedger has an int "
            "random_state. Fits that share a seed share their noise: two of "
            "them on overlapping data (the folds of a cross-validation, the "
            "candidates of a grid search) reveal the exact difference of "
            "their statistics, which the ledger's composition does not "
            "account for. Fixed seeds are for tests and documentation; "
            "leave random_state=None for a release.",
            PrivacyLeakWarning)

    @property
    def records(self):
        if self._channel is None:
            return list(self._closed_records)
        with _Lock(self._channel.path):
            return _read_records(self._channel.path)

    def __len__(self):
        return len(self.records)

    def spent(self, delta=None):
        """The composed guarantee of every recorded fit.

        Parameters
        ----------
        delta : float, default=None
            Delta of the total; ``None``: the budget's delta if there is a
            budget, else the sum of the fits' deltas.

        Returns
        -------
        PrivacySpent
        """
        records = self.records
        if delta is None:
            delta = _budget_delta(self.budget, records)
        return _total([r.event for r in records], delta)

    def __repr__(self):
        records = self.records
        if not records:
            return "PrivacyLedger(no fits)"
        spent = self.spent()
        counts = {}
        for r in records:
            counts[r.estimator] = counts.get(r.estimator, 0) + 1
        fits = ", ".join(f"{k} x{v}" for k, v in counts.items())
        return (f"PrivacyLedger({len(records)} fits: {fits}; total "
                f"epsilon={spent.epsilon:.4g}, delta={spent.delta:.3g})")
