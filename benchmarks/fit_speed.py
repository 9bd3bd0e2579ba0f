"""Speed of fitting, sampling and the profile-driven communication model.

Prints, as medians of ``--repeats`` timings (CPU time of this process):

* time to fit each family to 5000 Pearson V samples, and to select the best;
* vectorised sampling rate (``rvs(size=10**6)``) per family;
* ``ProfileCommModel.transfer_time`` per call, at a benchmarked size and
  between two sizes, for empirical and fitted sources (a synthetic profile).

    PYTHONPATH=src python benchmarks/fit_speed.py
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from pevpm.machine.profile_comm import ProfileCommModel
from pevpm.machine.transfer import Transfer
from pevpm.profile.synthetic import HypotheticalMachine, write_profile
from pevpm.stats.distributions import (
    Empirical,
    Exponential,
    Gamma,
    GeneralisedGamma,
    LogNormal,
    PearsonV,
    Weibull,
)
from pevpm.stats.fitting import fit_family, select_family


def cpu_time(action, repeats: int) -> float:
    """Median CPU seconds of ``action()`` over ``repeats`` runs."""
    samples = []
    for _ in range(repeats):
        start = time.process_time()
        action()
        samples.append(time.process_time() - start)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    data = PearsonV(shape=4.0, scale=30e-6, loc=50e-6).rvs(5000, random_state=0)
    print("fit to 5000 Pearson V samples (CPU ms, median):")
    for family in ("pearson5", "weibull", "gamma", "lognormal", "exponential", "gengamma"):
        seconds = cpu_time(lambda f=family: fit_family(f, data, random_state=0), args.repeats)
        print(f"  {family:<12} {seconds * 1e3:8.1f}")
    seconds = cpu_time(lambda: select_family(data, random_state=0), args.repeats)
    print(f"  {'select (5)':<12} {seconds * 1e3:8.1f}")

    print("rvs(size=10**6), million samples per CPU second:")
    families = [
        PearsonV(4.0, 30e-6, 50e-6),
        Weibull(3.6, 20e-6, 50e-6),
        Gamma(2.5, 8e-6, 50e-6),
        LogNormal(-11.0, 0.5, 50e-6),
        Exponential(10e-6, 50e-6),
        GeneralisedGamma(-11.0, 0.4, -0.5, 50e-6),
        Empirical.from_samples(data),
    ]
    rng = np.random.default_rng(1)
    for dist in families:
        seconds = cpu_time(lambda d=dist: d.rvs(size=10**6, random_state=rng), args.repeats)
        print(f"  {dist.family:<12} {1.0 / seconds:8.1f}")

    path = Path(tempfile.mkdtemp()) / "speed.db"
    write_profile(HypotheticalMachine(2e-6, 10e9), path, samples=2000, random_state=0)
    calls = 20000
    print(f"ProfileCommModel.transfer_time, CPU us per call ({calls} calls):")
    for source in ("empirical", "fitted"):
        model = ProfileCommModel.from_profile(path, "full", source=source)
        for label, size in (("benchmarked size", 4096), ("between sizes", 3000)):
            message = Transfer("MPI_Send", size, 0, 1, intra_node=False, contention=2)

            def draw(m=model, t=message):
                for _ in range(calls):
                    m.transfer_time(t, rng)

            seconds = cpu_time(draw, args.repeats)
            print(f"  {source:<10} {label:<17} {seconds / calls * 1e6:6.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
