"""Fit one smartnoise-synth synthesizer and write its samples (run by
bench_synthetic.py in the environment that has smartnoise-synth).

Usage: python synthetic_peers.py NAME EPSILON SEED IN.csv OUT.npz

IN.csv holds integer codes (one column per attribute); OUT.npz gets the
samples as integer codes, so that the two environments exchange no pickles.

Writes a pickle with the fit and sample seconds and, besides the
synthesizer's own sample, for MST and AIM an i.i.d. re-sample of the fitted
graphical model (free post-processing; smartnoise-synth 1.0.8's own
sampler rounds counts without shuffling, which inflates their error).
"""

import sys
import time

import numpy as np
import pandas as pd


def main():
    name, epsilon, seed, path_in, path_out = sys.argv[1:6]
    epsilon, seed = float(epsilon), int(seed)
    data = pd.read_csv(path_in)
    # smartnoise-synth draws from numpy's global generator.
    np.random.seed(seed)  # noqa: NPY002
    from snsynth import Synthesizer

    kwargs = {"epsilon": epsilon, "delta": 1e-9}
    if name == "mwem":
        kwargs = {"epsilon": epsilon}
    synth = Synthesizer.create(name, **kwargs)
    start = time.perf_counter()
    synth.fit(data, categorical_columns=list(data.columns), preprocessor_eps=0.0)
    fit_seconds = time.perf_counter() - start
    start = time.perf_counter()
    sample = synth.sample(len(data))
    sample_seconds = time.perf_counter() - start
    out = {"fit": fit_seconds, "sample_time": sample_seconds,
           "sample": np.asarray(pd.DataFrame(sample)[list(data.columns)], dtype=int)}
    if name in ("mst", "aim"):
        out["iid"] = np.asarray(iid_resample(synth, len(data))[list(data.columns)],
                                dtype=int)
    np.savez(path_out, **out)


def iid_resample(synth, n):
    """The synthesizer's own sample() with its graphical model asked for
    i.i.d. draws (private-pgm's method="sample") instead of rounding."""
    model_class = type(synth.synthesizer)  # a frozen dataclass: patch its class
    rounding = model_class.synthetic_data

    def iid(self, rows=None, method="round"):
        return rounding(self, rows=rows, method="sample")

    model_class.synthetic_data = iid
    try:
        return pd.DataFrame(synth.sample(n))
    finally:
        model_class.synthetic_data = rounding


if __name__ == "__main__":
    main()
