"""Plant known privacy bugs, one at a time, and check that the tests catch each.

Each mutant is a list of textual patches to the package (an exact snippet
of its code and the snippet that replaces it) and the tests that should
catch it: the default suite's files that cover the mechanism, then, where
those are not meant to be enough, the planted-bug audits.  For every
mutant, a copy of the repository's ``skdpopt/``, ``tests/`` and
``pyproject.toml`` is made in a temporary directory, patched, and the
tests run there (``pytest -x``: they stop at the first failure, the
killing test).  A patch whose snippet is not found exactly as often as it
says fails loudly: the code it breaks has moved, and the mutant must be
rewritten rather than silently skipped.

A new mechanism adds its mutant to ``MUTANTS`` (one entry: what breaks,
where, and which tests catch it).

Usage (from the repository root)::

    python tools/mutants.py            # every mutant; exit 1 if one survives
    python tools/mutants.py --list
    python tools/mutants.py --only sgd-solver-half-noise
    python tools/mutants.py --baseline   # the tests first pass unplanted

Prints, for each mutant, the test that killed it (or SURVIVED) and the
seconds it took.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COPIED = ("skdpopt", "tests", "pyproject.toml")


@dataclass(frozen=True)
class Patch:
    """Replace ``old`` by ``new`` in ``path``, which must hold ``old``
    exactly ``count`` times."""

    path: str
    old: str
    new: str
    count: int = 1


@dataclass(frozen=True)
class Mutant:
    """A realistic privacy bug and the tests that must catch it.

    Attributes
    ----------
    name : str
    bug : str
        What the patches break, in words.
    patches : tuple of Patch
    tests : tuple of str
        Test files or node ids, the likeliest (and quickest) killer first.
    """

    name: str
    bug: str
    patches: tuple
    tests: tuple


# The default suite's files on each mechanism, and the planted-bug audits.
NOISE = "tests/privacy/test_noise_scale.py"
RECORDS = "tests/privacy/test_records.py"
AUDITS = "tests/audit/test_audits.py"

MUTANTS = [
    Mutant(
        "sgd-plan-half-noise",
        "DP-SGD plan's noise multiplier halved (event unchanged)",
        (Patch("skdpopt/plans/sgd.py",
               "noise_multiplier=noise_multiplier, lockstep=lockstep,",
               "noise_multiplier=noise_multiplier / 2, lockstep=lockstep,"),),
        (NOISE, "tests/plans/test_sgd_plan.py", "tests/test_sgd.py"),
    ),
    Mutant(
        "sgd-solver-half-noise",
        "DP-SGD solver adds half the plan's noise",
        (Patch("skdpopt/solvers/noisy_sgd.py",
               "noise_std = plan.noise_multiplier * clip_norm\n",
               "noise_std = plan.noise_multiplier * clip_norm / 2\n"),),
        (NOISE, "tests/solvers/test_noisy_sgd.py", "tests/test_sgd.py"),
    ),
    Mutant(
        "sgd-no-clipping",
        "per-example gradients not clipped",
        (Patch("skdpopt/_data/inmemory.py",
               "scaled, scaled_sum = clip_scalars_and_sum(residual, limits)",
               "scaled = np.nan_to_num(residual); scaled_sum = scaled.sum()"),),
        ("tests/solvers/test_noisy_sgd.py", "tests/test_sgd.py",
         f"{AUDITS}::test_audit_within_claim"),
    ),
    Mutant(
        "lockstep-per-problem-clip",
        "classes in lockstep: each class's derivative clipped alone, not the "
        "row's K derivatives together (sqrt(K) times the sensitivity)",
        (Patch("skdpopt/solvers/lockstep_sgd.py",
               "    residuals *= np.minimum(room, 1.0)[:, None]\n",
               "    np.clip(residuals, -bounds[:, None], bounds[:, None], "
               "out=residuals)\n"),),
        ("tests/privacy/test_sensitivity.py", "tests/solvers/test_lockstep_sgd.py",
         f"{AUDITS}::test_audit_within_claim[DPSGDClassifier (64 classes in "
         "lockstep)]"),
    ),
    Mutant(
        "lasso-selection-sensitivity",
        "DPLasso selection sensitivity 2C/n written as C/n",
        (Patch("skdpopt/solvers/greedy_cd.py",
               "score_sensitivity = 2.0 * data.residual_bound / n",
               "score_sensitivity = data.residual_bound / n"),),
        (NOISE, "tests/solvers/test_greedy_cd.py", "tests/test_lasso.py",
         f"{AUDITS}::test_audit_within_claim"),
    ),
    Mutant(
        "full-batch-mu-halved",
        "full-batch accountant mu halved",
        (Patch("skdpopt/accounting/accountant.py",
               "mu_squared += count * (2.0 / mechanism.noise_multiplier) ** 2",
               "mu_squared += count * (1.0 / mechanism.noise_multiplier) ** 2"),),
        ("tests/accounting/test_accountant.py", "tests/test_sgd.py"),
    ),
    Mutant(
        "spent-is-requested",
        "privacy_spent_ reports the requested epsilon",
        (Patch("skdpopt/_base.py",
               "        self.privacy_spent_ = spent\n",
               "        self.privacy_spent_ = type(spent)(plan.epsilon, "
               "plan.delta)\n"),),
        (f"{RECORDS}::test_privacy_spent_is_the_plans", RECORDS),
    ),
    Mutant(
        "no-ledger-record",
        "DPLogisticSimplex, DPMinimaxClassifier and DPSyntheticData never "
        "record in the ledger",
        tuple(Patch(f"skdpopt/{module}.py", "rng = self._begin_release(plan)",
                    "rng = np.random.default_rng(self.random_state)")
              for module in ("logistic_simplex", "minimax", "synthetic")),
        (RECORDS, "tests/test_ledger.py"),
    ),
    Mutant(
        "lasso-block-unclipped",
        "DPLasso steps on a declared block without clipping its rows into "
        "the block's l2 ball (sqrt(size) times one column's sensitivity)",
        (Patch("skdpopt/lasso.py",
               "self.feature_blocks_ = self._blocks(X)\n        if self",
               "self.feature_blocks_ = self._blocks(X)\n        if False and self"),),
        ("tests/privacy/test_sensitivity.py",
         f"{AUDITS}::test_audit_within_claim[DPLasso (one-hot block)]",
         "tests/test_lasso.py"),
    ),
    Mutant(
        "lasso-bound-from-data",
        "DPLasso clips features to max(bound, max |X|), a bound taken from the "
        "data",
        (Patch("skdpopt/lasso.py",
               "X = clip_rows(X, self.feature_bound_)\n        y = clip_values(",
               "X = clip_rows(X, max(self.feature_bound_, float(abs(X).max())))"
               "\n        y = clip_values("),),
        (f"{AUDITS}::test_audit_within_claim[DPLasso]",
         "tests/privacy/test_sensitivity.py", "tests/test_lasso.py"),
    ),
    Mutant(
        "class-totals-sixteenth-noise",
        "the classifiers' class totals get a sixteenth of their plan's noise",
        (Patch("skdpopt/solvers/classes.py",
               "totals = totals + noise(rng, plan.noise_scale, len(totals))",
               "totals = totals + noise(rng, plan.noise_scale / 16, len(totals))"),),
        (f"{AUDITS}::test_audit_within_claim[DPSGDClassifier (class totals)]",
         NOISE, "tests/test_sgd.py"),
    ),
    Mutant(
        "gda-kappa-one-share-doubled",
        "DPMinimaxClassifier's gda stage with kappa = 1 gives the model twice "
        "the adversary's share (its noise below the plan's)",
        (Patch("skdpopt/plans/minimax_gda.py",
               "/ math.hypot(model_noise, loss_noise)",
               "/ math.hypot(model_noise, loss_noise / math.sqrt(2.0))"),),
        ("tests/test_minimax.py::"
         "test_gda_kappa_one_gives_the_adversarys_share_to_the_model",),
    ),
]


def plant(directory, mutant):
    """Apply ``mutant``'s patches to the copy in ``directory``."""
    for patch in mutant.patches:
        path = os.path.join(directory, patch.path)
        with open(path) as f:
            text = f.read()
        found = text.count(patch.old)
        if found != patch.count:
            raise RuntimeError(
                f"mutant {mutant.name}: {patch.path} holds the patched snippet "
                f"{found} times, not {patch.count}; the code moved, rewrite the "
                f"mutant.\nSnippet: {patch.old!r}")
        text = text.replace(patch.old, patch.new)
        compile(text, path, "exec")  # a mutant must be valid Python
        with open(path, "w") as f:
            f.write(text)


def run(mutant, pytest_args=()):
    """Plant ``mutant`` in a fresh copy and run its tests.

    Returns
    -------
    killer : str or None
        The first failing test, None if every test passed.
    output : str
        pytest's output.
    """
    with tempfile.TemporaryDirectory(prefix=f"mutant-{mutant.name}-") as directory:
        for name in COPIED:
            source = os.path.join(ROOT, name)
            target = os.path.join(directory, name)
            if os.path.isdir(source):
                shutil.copytree(source, target, ignore=shutil.ignore_patterns(
                    "__pycache__", "*.pyc", ".pytest_cache"))
            else:
                shutil.copy(source, target)
        plant(directory, mutant)
        for test in mutant.tests:
            if not os.path.exists(os.path.join(directory, test.split("::")[0])):
                raise RuntimeError(f"mutant {mutant.name}: no test file {test}")
        env = dict(os.environ, PYTHONPATH=directory, PYTHONDONTWRITEBYTECODE="1")
        # The tests must import the planted copy, not an installed package.
        where = subprocess.run(
            [sys.executable, "-c", "import skdpopt; print(skdpopt.__file__)"],
            cwd=directory, env=env, capture_output=True, text=True, check=True)
        if not where.stdout.strip().startswith(directory):
            raise RuntimeError(f"mutant {mutant.name}: the tests would import "
                               f"{where.stdout.strip()}, not the planted copy")
        # -m: the planted-bug audits too (the default run leaves them out).
        command = [sys.executable, "-m", "pytest", "-x", "-q", "-rf",
                   "-p", "no:cacheprovider", "-m", "not slow", *pytest_args,
                   *mutant.tests]
        done = subprocess.run(command, cwd=directory, env=env,
                              capture_output=True, text=True)
    output = done.stdout + done.stderr
    killed = re.search(r"^FAILED (\S+)", output, flags=re.MULTILINE)
    if done.returncode not in (0, 1) or (done.returncode == 1 and not killed):
        # 2-5: interrupted, internal or usage error, no tests: not a kill.
        raise RuntimeError(f"mutant {mutant.name}: pytest exited with "
                           f"{done.returncode}, no failing test:\n{output[-3000:]}")
    return (killed.group(1) if killed else None), output


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=None,
                        help="run only this mutant (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the mutants")
    parser.add_argument("--baseline", action="store_true",
                        help="first run every mutant's tests on an unplanted "
                             "copy (they must pass)")
    args = parser.parse_args(argv)
    if args.list:
        for mutant in MUTANTS:
            print(f"{mutant.name}: {mutant.bug}")
        return 0
    names = {m.name for m in MUTANTS}
    unknown = set(args.only or ()) - names
    if unknown:
        parser.error(f"unknown mutants {sorted(unknown)}; known: {sorted(names)}")
    chosen = [m for m in MUTANTS if args.only is None or m.name in args.only]
    survivors = []
    start = time.perf_counter()
    if args.baseline:
        tests = tuple(dict.fromkeys(t for m in chosen for t in m.tests))
        failed, output = run(Mutant("baseline", "nothing planted", (), tests))
        if failed is not None:
            print(output[-3000:])
            print(f"baseline: {failed} fails without a planted bug")
            return 1
        print(f"baseline: the tests pass unplanted "
              f"[{time.perf_counter() - start:.0f} s]", flush=True)
    for mutant in chosen:
        began = time.perf_counter()
        killer, output = run(mutant)
        seconds = time.perf_counter() - began
        if killer is None:
            survivors.append(mutant)
            print(f"SURVIVED  {mutant.name} ({mutant.bug}) [{seconds:.0f} s]",
                  flush=True)
        else:
            print(f"killed    {mutant.name} by {killer} [{seconds:.0f} s]", flush=True)
    print(f"{len(chosen) - len(survivors)} of {len(chosen)} mutants killed in "
          f"{time.perf_counter() - start:.0f} s")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
