"""Optimisation algorithms as plain functions over numpy/scipy arrays.

Every solver an estimator calls has one signature, ``solve(problem, plan,
rng) -> result`` (:mod:`skdpopt.solvers.problems`): the problem's data and
public constants, the plan whose schedule and calibrated noise scales it
reads, the fit's Generator.  Solvers validate nothing, decide no noise
scale and import no accounting; their results hold what the estimators
store.
"""
