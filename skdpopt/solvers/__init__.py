"""Optimisation algorithms as plain functions over numpy/scipy arrays.

Solvers validate nothing and decide no noise scale: the estimator passes
the calibrated scales and a Generator, and gets back the iterates and a
record of the mechanisms that ran.
"""
