"""Labels and groups: which are public, and each row's index into them.

A label set or a group set is public only when the user declares it
(``classes=``, ``groups=``); read from the data it reveals which labels or
groups occur, so it warns with :class:`~skdpopt.exceptions.PrivacyLeakWarning`.
Messages about rows never name a value from the data, nor say how many
rows are at fault; a group read from the data is named only once the fit
releases it.
"""

import math

import numpy as np
from sklearn.utils.multiclass import type_of_target

from .exceptions import PrivacyLeakWarning, warn_at_caller


def resolve_classes(estimator, y, declared, *, parameter="classes", what="label"):
    """The label set and the labels encoded as indices into it.

    Parameters
    ----------
    estimator : estimator
        For the warning's message.
    y : ndarray of shape (n_samples,)
    declared : array-like or None
        The public label set, if the user declared one.
    parameter : str, default="classes"
        The constructor parameter that declares it (named in messages).
    what : str, default="label"
        What the values are, for messages ("label", "group").

    Returns
    -------
    classes : ndarray
        Sorted label set: the declared one, or the values seen in ``y``.
    encoded : ndarray of int
        Index of each row's label in ``classes``.
    """
    if declared is None:
        warn_at_caller(
            f"{type(estimator).__name__}: the {what} set is read from the "
            f"training data, so the fitted model reveals which {what}s occur "
            f"(a {what} held by one record included). Pass {parameter}=... "
            f"to declare the {what} set public.",
            PrivacyLeakWarning,
        )
        classes, encoded = np.unique(y, return_inverse=True)
        return classes, encoded.ravel()
    classes = np.asarray(declared)
    if classes.ndim != 1 or len(classes) == 0:
        raise ValueError(
            f"{parameter} must be a non-empty 1-d array-like of {what}s, got "
            f"shape {classes.shape}."
        )
    try:
        classes = np.unique(classes)
        encoded = np.searchsorted(classes, y)
        encoded = np.clip(encoded, 0, len(classes) - 1)
        outside = classes[encoded] != y
    except TypeError as exc:
        raise ValueError(
            f"the {what}s in the data cannot be compared with {parameter}="
            f"{list(np.asarray(declared))!r}: {exc}"
        ) from exc
    if np.any(outside):
        # Which value is outside, and in how many rows, is private.
        raise ValueError(
            f"some rows have a {what} outside {parameter}={list(classes)!r}; "
            f"the declared {what} set must cover every row."
        )
    return classes, encoded


def resolve_binary_classes(estimator, y, declared):
    """:func:`resolve_classes` for a classifier of two classes only.

    Raises ``ValueError`` (scikit-learn's wording) for a target that is not
    binary, or a declared label set that is not two labels.
    """
    if declared is not None and len(np.unique(np.asarray(declared))) != 2:
        raise ValueError(
            "classes must list exactly two labels (binary classification); "
            f"got {len(np.unique(np.asarray(declared)))}.")
    classes, encoded = resolve_classes(estimator, y, declared)
    if declared is None:
        y_type = type_of_target(y, input_name="y")
        if y_type != "binary":
            raise ValueError(
                "Only binary classification is supported. The type of the "
                f"target is {y_type}. For more classes, fit one "
                f"{type(estimator).__name__} per class against the rest (each "
                "spends its own budget).")
        if len(classes) != 2:
            raise ValueError(
                f"The number of classes has to be two; got {len(classes)} class.")
    return classes, encoded


def encode_groups(sensitive_features, n_samples):
    """Group labels and integer codes from one or several columns.

    Parameters
    ----------
    sensitive_features : array-like of shape (n_samples,) or (n_samples, k)
        One label per row, or k columns (a DataFrame, say) whose
        combinations form intersectional groups.
    n_samples : int

    Returns
    -------
    labels : ndarray of object of shape (n_groups,)
        Distinct groups, sorted; tuples for several columns.
    codes : ndarray of int of shape (n_samples,)
    """
    if hasattr(sensitive_features, "to_numpy"):  # pandas Series / DataFrame
        values = sensitive_features.to_numpy()
    else:
        values = np.asarray(sensitive_features, dtype=object)
    if values.ndim == 0 or values.shape[0] != n_samples:
        raise ValueError(
            f"sensitive_features has {values.shape[0] if values.ndim else 0} "
            f"rows but X has {n_samples}; pass one group label per row."
        )
    if values.ndim > 2:
        raise ValueError("sensitive_features must be 1-D or 2-D.")
    columns = values.reshape(n_samples, -1)
    if columns.shape[1] == 0:
        raise ValueError("sensitive_features has no columns.")
    column_codes, column_labels = [], []
    for j in range(columns.shape[1]):  # a few group columns, never rows
        column = columns[:, j]
        missing = np.array(
            [v is None or (isinstance(v, float) and math.isnan(v)) for v in column],
            dtype=bool,
        )
        if missing.any():
            raise ValueError(
                "sensitive_features has missing values; every row needs a group."
            )
        try:
            labels, codes = np.unique(column, return_inverse=True)
        except TypeError:  # mixed types: order by their text
            text = column.astype(str)
            _, first, codes = np.unique(text, return_index=True, return_inverse=True)
            labels = column[first]
        column_codes.append(codes.ravel())
        column_labels.append(labels)
    if len(column_codes) == 1:
        labels = np.empty(len(column_labels[0]), dtype=object)
        labels[:] = list(column_labels[0])
        return labels, column_codes[0]
    combos, codes = np.unique(
        np.column_stack(column_codes), axis=0, return_inverse=True
    )
    labels = np.empty(len(combos), dtype=object)
    labels[:] = [
        tuple(column_labels[j][c] for j, c in enumerate(row)) for row in combos
    ]
    return labels, codes.ravel()


def resolve_groups(estimator, sensitive_features, n_samples, declared):
    """The group set and each row's group index.

    Parameters
    ----------
    estimator : estimator
        For the warning's message.
    sensitive_features : array-like or None
        One label per row, or several columns (:func:`encode_groups`);
        ``None``: one group, ``"all"``.
    n_samples : int
    declared : array-like or None
        The public group set (``groups=``), tuples for several columns; its
        order is kept.  ``None`` reads the groups from the data and warns.

    Returns
    -------
    groups : ndarray of object of shape (n_groups,)
    codes : ndarray of int of shape (n_samples,)
    """
    if sensitive_features is None:
        return np.array(["all"], dtype=object), np.zeros(n_samples, dtype=np.int64)
    labels, codes = encode_groups(sensitive_features, n_samples)
    if declared is None:
        warn_at_caller(
            f"{type(estimator).__name__}: the group set is read from the "
            "training data, so the fitted model reveals which groups occur. "
            "Pass groups=... to declare it public.",
            PrivacyLeakWarning)
        return labels, codes
    declared = list(declared)
    if not declared:
        raise ValueError("groups must list at least one group.")
    index = {}
    for position, group in enumerate(declared):
        key = tuple(group) if isinstance(group, (list, np.ndarray)) else group
        index.setdefault(key, position)
    mapping = np.array([index.get(label, -1) for label in labels])
    outside = mapping[codes] < 0
    if np.any(outside):
        # Which group is outside, and in how many rows, is private.
        raise ValueError(
            "some rows of sensitive_features have a group outside "
            f"groups={declared!r}.")
    public = np.empty(len(declared), dtype=object)
    public[:] = [tuple(g) if isinstance(g, (list, np.ndarray)) else g
                 for g in declared]
    return public, mapping[codes]


def prior_proportions(priors, groups, named=True):
    """Public group proportions from ``group_priors``, in the order of ``groups``.

    Parameters
    ----------
    priors : dict or array-like
        A mapping from group to proportion, or one proportion per group.
    groups : ndarray of shape (n_groups,)
    named : bool, default=True
        Whether messages may name the groups: False for groups read from
        the data, which a failed fit does not release.

    Returns
    -------
    ndarray of shape (n_groups,)
        Positive, summing to one.
    """
    if isinstance(priors, dict):
        missing = [g for g in groups if g not in priors]
        if missing:
            which = (f"group {missing[0]!r}" if named else
                     "a group of the data (declare groups=... to name them)")
            raise ValueError(f"group_priors has no entry for {which}.")
        values = np.array([priors[g] for g in groups], dtype=float)
    else:
        values = np.asarray(priors, dtype=float).ravel()
        if len(values) != len(groups):
            found = (f"groups={list(groups)}" if named else
                     "the groups of the data (declare groups=...)")
            raise ValueError(
                f"group_priors has {len(values)} entries, not one per group "
                f"of {found}.")
    if np.any(~np.isfinite(values)) or np.any(values <= 0):
        raise ValueError("group_priors must be positive and finite.")
    return values / values.sum()


def check_group_sizes(sizes, groups, what, min_group_size, named=True):
    """Raise ``ValueError`` naming the smallest group below ``min_group_size``.

    ``sizes`` are public or released (noisy counts, prior-implied sizes),
    never raw counts of several groups; ``what`` names them in the message.
    One group (all n rows, public) is never checked.  ``named=False`` (groups
    read from the data) keeps the group's label out of the message: a fit
    that fails here does not release the group set.
    """
    if len(sizes) == 1:
        return
    small = np.flatnonzero(sizes < min_group_size)
    if len(small):
        g = small[np.argmin(sizes[small])]
        # named=False: groups read from the data, not released by a fit
        # that fails here.
        name = f"group {groups[g]!r}" if named else "a group read from the data"
        raise ValueError(
            f"{name} is too small: its {what} is "
            f"{sizes[g]:.1f} < min_group_size={min_group_size}. "
            "Merge it with another group or lower min_group_size."
        )


def public_group_sizes(groups, group_priors, n_samples, min_group_size, *,
                       named):
    """The group sizes when they are public (one group, or priors), checked
    against ``min_group_size`` before anything is released; None when the
    fit counts the groups.

    Parameters
    ----------
    groups : ndarray of shape (n_groups,)
    group_priors : dict, array-like or None
    n_samples : int
    min_group_size : float
    named : bool
        Whether messages may name the groups (see :func:`check_group_sizes`).

    Returns
    -------
    ndarray of shape (n_groups,) or None
    """
    if len(groups) == 1:
        return np.array([float(n_samples)])
    if group_priors is None:
        return None
    sizes = prior_proportions(group_priors, groups, named=named) * n_samples
    check_group_sizes(sizes, groups, "prior-implied size", min_group_size,
                      named=named)
    return sizes
