"""Fit one peer synthesizer and write its samples (run by bench_synthetic.py
in the environment that has the peer).

Usage: python synthetic_peers.py NAME EPSILON SEED IN.csv OUT.npz SIZES

NAME is ``mst``, ``aim`` or ``mwem`` (smartnoise-synth) or ``mbi-mst``,
``mbi-aim`` (Private-PGM's mechanisms on the ``mbi`` package; the folder
holding their ``mst.py`` and ``aim.py``, from Private-PGM's repository, is
given by the environment variable ``MBI_MECHANISMS``).  IN.csv holds
integer codes (one column per attribute); SIZES is the comma-separated
public cardinality of each column.  OUT.npz gets the samples as integer
codes (the two environments exchange no pickles), the fit and sample
seconds, and the process's peak resident memory.

Besides the synthesizer's own sample, MST and AIM also get an i.i.d.
re-sample of their fitted graphical model (free post-processing: their
default samplers round counts, which inflates their error).
"""

import os
import resource
import sys
import time

import numpy as np
import pandas as pd


def peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main():
    name, epsilon, seed, path_in, path_out, sizes = sys.argv[1:7]
    epsilon, seed = float(epsilon), int(seed)
    sizes = [int(s) for s in sizes.split(",")]
    data = pd.read_csv(path_in)
    # The peers draw from numpy's global generator.
    np.random.seed(seed)  # noqa: NPY002
    if name.startswith("mbi-"):
        out = run_mbi(name[4:], data, sizes, epsilon)
    else:
        out = run_smartnoise(name, data, epsilon)
    out["peak_mib"] = peak_mib()
    np.savez(path_out, **out)


def run_mbi(name, data, sizes, epsilon):
    sys.path.insert(0, os.environ["MBI_MECHANISMS"])
    import itertools

    from mbi import Dataset, Domain
    from mbi.markov_random_field import MarkovRandomField

    # The mechanisms hand Dataset frames whose recoded columns pandas may
    # hold as objects; mbi wants integer arrays.
    original_init = Dataset.__init__

    def integer_init(self, frame, domain, *rest, **kwargs):
        if hasattr(frame, "columns"):
            frame = {c: frame[c].to_numpy().astype(np.int64) for c in domain.attrs}
        original_init(self, frame, domain, *rest, **kwargs)

    Dataset.__init__ = integer_init
    columns = list(data.columns)
    dataset = Dataset(data, Domain(columns, sizes))
    iid = {}
    rounding = MarkovRandomField.synthetic_data

    def both(self, rows=None, method="round"):
        # Keep an i.i.d. sample of the final model next to the rounded one.
        iid["sample"] = rounding(self, rows=len(data), method="sample")
        return rounding(self, rows=rows, method=method)

    MarkovRandomField.synthetic_data = both
    start = time.perf_counter()
    if name == "mst":
        import mst

        # MST fits its model on a domain with rare 1-way cells merged: map
        # the i.i.d. sample back with the mechanism's own inverse.
        compress = mst.compress_domain
        undo = {}

        def keep_undo(*args, **kwargs):
            data, log, undo_fn = compress(*args, **kwargs)
            undo["fn"] = undo_fn
            return data, log, undo_fn

        mst.compress_domain = keep_undo
        synth = mst.MST(dataset, epsilon, 1e-9)
        iid["sample"] = undo["fn"](iid["sample"])
    else:
        from aim import AIM

        workload = [(cl, 1.0) for cl in itertools.combinations(columns, 3)]
        _, synth = AIM(epsilon, 1e-9).run(dataset, workload)
    fit_seconds = time.perf_counter() - start
    return {"fit": fit_seconds, "sample_time": np.nan,
            "sample": synth.df[columns].to_numpy(dtype=int),
            "iid": iid["sample"].df[columns].to_numpy(dtype=int)}


def run_smartnoise(name, data, epsilon):
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
        out["iid"] = np.asarray(
            iid_resample(synth, len(data))[list(data.columns)], dtype=int)
    return out


def iid_resample(synth, n):
    """smartnoise-synth's sample() with its graphical model asked for
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
