"""Each planted-bug audit's fixed test and run count, derived from a pilot.

The numbers are printed by ``python tests/audit/power.py --runs 10000``
(see its docstring): for each case, the test (threshold and direction)
chosen on half of a pilot of fits with the bug planted, the test's rates
on the other half at their pessimistic Clopper-Pearson ends (rate on D
low, on D' high, each at 1 - 1e-4), and the fewest fits per dataset at
which the test catches the bug with probability ``audit_core.POWER`` at
those rates.  ``test_audits.test_planted_runs_have_the_power`` recomputes
that probability from the stored rates.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Planted:
    """A planted-bug audit's fixed test, its rates with the bug, its runs.

    Attributes
    ----------
    threshold : float
    direction : int
        +1: "statistic > threshold" signals the dataset D (in), -1: "<".
    rates : (float, float)
        Pessimistic probabilities that a fit on D, and on D', lands in
        the test's rejection region with the bug planted.
    runs : int
        Fits per dataset.
    """

    threshold: float
    direction: int
    rates: tuple
    runs: int


PLANTED = {
    "DPSGDRegressor": Planted(  # claim 1.000
        threshold=0.06826974676328687, direction=1,
        rates=(0.0835, 0.015), runs=4544),
    "DPSGDRegressor (Poisson, rate 1/2)": Planted(  # claim 1.000
        threshold=-0.1432884460456524, direction=1,
        rates=(0.9835, 0.9181), runs=6208),
    "DPSGDRegressor (extreme canary)": Planted(  # claim 4.000
        threshold=0.11037142300010681, direction=-1,
        rates=(0.991, 0.0012), runs=632),
    "DPSGDClassifier (64 classes in lockstep)": Planted(  # claim 0.990
        threshold=-0.3885729099138309, direction=-1,
        rates=(0.2196, 0.0049), runs=270),
    "DPLasso": Planted(  # claim 1.000
        threshold=0.04836256285728979, direction=1,
        rates=(0.128, 0.0104), runs=960),
    "DPLasso (one-hot block)": Planted(  # claim 1.000
        threshold=2.8192900357635544, direction=1,
        rates=(0.0934, 0.0069), runs=1232),
    "DPLogisticSimplex (frank_wolfe)": Planted(  # claim 1.000
        threshold=0.0, direction=1,
        rates=(0.2339, 0.0378), runs=1208),
    "DPLogisticSimplex (mirror_descent)": Planted(  # claim 1.000
        threshold=0.09999999999999998, direction=1,
        rates=(0.2567, 0.0149), runs=352),
    "DPMinimaxClassifier": Planted(  # claim 0.500
        threshold=0.49833442236564346, direction=1,
        rates=(0.94, 0.8015), runs=1352),
    "DPMinimaxClassifier (gda)": Planted(  # claim 0.684
        threshold=0.2572519183029444, direction=1,
        rates=(0.1405, 0.0104), runs=528),
    "DPSyntheticData": Planted(  # claim 1.000
        threshold=1.0639758917697189, direction=1,
        rates=(0.0895, 0.0129), runs=2768),
    "DPSyntheticData (private bounds)": Planted(  # claim 1.000
        threshold=1.0, direction=-1,
        rates=(0.9766, 0.9024), runs=9344),
    "DPMinMaxScaler (private bounds)": Planted(  # claim 0.750
        threshold=1.1767997918682926, direction=-1,
        rates=(0.9786, 0.9161), runs=4928),
    "DPStandardScaler (private location and scale)": Planted(  # claim 0.594
        threshold=1.0005430967430504, direction=-1,
        rates=(0.8181, 0.5226), runs=1408),
    "DPStandardScaler (clipped moments)": Planted(  # claim 0.854
        threshold=-0.02969955882028949, direction=1,
        rates=(0.959, 0.831), runs=2928),
    "DPLasso (auto feature_bound)": Planted(  # claim 0.860
        threshold=1.189207115002721, direction=1,
        rates=(0.509, 0.0529), runs=198),
    "DPLasso (auto target location)": Planted(  # claim 0.581
        threshold=0.9999988390461861, direction=1,
        rates=(0.9984, 0.1847), runs=33),
    "DPLasso (clip check of a public feature_bound)": Planted(  # claim 0.237
        threshold=-0.00903138685716954, direction=1,
        rates=(0.9766, 0.858), runs=508),
    "DPSGDRegressor (auto clip_norm)": Planted(  # claim 0.373
        threshold=1.189207115002721, direction=-1,
        rates=(0.7846, 0.4695), runs=544),
    "DPSGDRegressor (auto target_scale)": Planted(  # claim 0.833
        threshold=1.189207115002721, direction=-1,
        rates=(0.9547, 0.4694), runs=153),
    "DPMinimaxClassifier (auto clip_norm)": Planted(  # claim 0.373
        threshold=0.8324449805019046, direction=-1,
        rates=(0.7846, 0.4695), runs=544),
    "DPSGDClassifier (class totals)": Planted(  # claim 0.930
        threshold=-1.0, direction=1,
        rates=(0.9706, 0.0313), runs=33),
    "DPMinimaxClassifier (fit check)": Planted(  # claim 1.436
        threshold=-0.029720944498123642, direction=1,
        rates=(0.9817, 0.0351), runs=57),  # pilot of 1,000 fits (--choose 500)
}
