"""Monte Carlo driver: reproducibility across executors, bounds, aggregation."""

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from mc_models import noisy_machine, random_model

from pevpm.errors import ModelError
from pevpm.machine.comm_models import Constant
from pevpm.machine.machine import Machine
from pevpm.model.builder import ModelBuilder
from pevpm.vm.strategies.montecarlo import predict, run_generator

HERE = Path(__file__).resolve().parent
SRC = HERE.parents[1] / "src"
RUNS, SEED, NUMPROCS = 12, 2026, 4


def reference():
    return predict(random_model(), NUMPROCS, noisy_machine(), runs=RUNS, seed=SEED, workers=1)


def same(a, b):
    assert a.to_dict() == b.to_dict()
    assert np.array_equal(a.makespans, b.makespans)


def test_run_generator_is_the_spawned_child():
    child = np.random.SeedSequence(SEED).spawn(RUNS)[7]
    assert run_generator(SEED, 7).random() == np.random.default_rng(child).random()


@pytest.mark.parametrize("workers", [2, 4])
def test_same_seed_same_numbers_whatever_the_worker_count(workers):
    ref = reference()
    assert len(set(ref.makespans.tolist())) > 1  # the runs really are random
    same(ref, predict(random_model(), NUMPROCS, noisy_machine(), runs=RUNS, seed=SEED,
                      workers=workers, executor="local"))


def test_same_numbers_on_a_dask_executor():
    from distributed import Client

    with Client(processes=False, n_workers=1, threads_per_worker=2,
                dashboard_address=":0") as client:
        same(reference(), predict(random_model(), NUMPROCS, noisy_machine(), runs=RUNS,
                                  seed=SEED, workers=2, executor=client.get_executor()))


@pytest.mark.slow
def test_same_numbers_on_a_local_dask_cluster_by_name():
    same(reference(), predict(random_model(), NUMPROCS, noisy_machine(), runs=RUNS,
                              seed=SEED, workers=1, executor="dask"))


@pytest.mark.mpi
def test_same_numbers_on_mpi4py_futures(tmp_path):
    script = tmp_path / "mc_mpi.py"
    script.write_text(
        "import json, sys\n"
        f"sys.path.insert(0, {str(HERE)!r})\n"
        "from mc_models import noisy_machine, random_model\n"
        "from pevpm.vm.strategies.montecarlo import predict\n"
        "if __name__ == '__main__':\n"
        f"    p = predict(random_model(), {NUMPROCS}, noisy_machine(), runs={RUNS}, "
        f"seed={SEED}, executor='mpi', workers=1)\n"
        "    print(json.dumps(p.to_dict()))\n")
    mpiexec = Path(sys.executable).parent / "mpiexec"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run([str(mpiexec), "-n", "2", sys.executable, "-m", "mpi4py.futures",
                          str(script)], check=False, capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == \
        json.loads(json.dumps(reference().to_dict()))


class LastFirstExecutor(ThreadPoolExecutor):
    """Finishes later submissions first, to show results are folded in run order."""

    def __init__(self):
        super().__init__(max_workers=16)
        self.submitted = 0

    def submit(self, fn, /, *args, **kwargs):
        delay = max(0.0, 0.2 - 0.02 * self.submitted)
        self.submitted += 1
        return super().submit(lambda: (time.sleep(delay), fn(*args, **kwargs))[1])


def test_chunks_finishing_out_of_order_change_nothing():
    seen = []
    with LastFirstExecutor() as executor:
        p = predict(random_model(), NUMPROCS, noisy_machine(), runs=RUNS, seed=SEED,
                    workers=3, executor=executor, progress=seen.append)
    same(reference(), p)
    assert sum(seen) == RUNS


def test_different_seeds_give_different_runs():
    other = predict(random_model(), NUMPROCS, noisy_machine(), runs=RUNS, seed=SEED + 1,
                    workers=1)
    assert not np.array_equal(other.makespans, reference().makespans)


def test_bounds_enclose_every_run_of_a_model_without_branches():
    p = predict(random_model(branches=False), NUMPROCS, noisy_machine(), runs=RUNS, seed=SEED,
                workers=1)
    assert p.min_bound < p.makespans.min() and p.makespans.max() < p.max_bound


def test_deterministic_model_gives_exact_times():
    b = ModelBuilder()
    b.serial("0.001 * (procnum + 1)")
    p = predict(b.build(), 3, Machine(Constant(1e-5)), runs=4, seed=0, workers=1)
    assert p.makespans.tolist() == [0.003] * 4
    assert p.min_bound == p.max_bound == 0.003
    assert p.breakdown()["compute"].tolist() == [0.001, 0.002, 0.003]
    assert p.breakdown()["communication"].tolist() == [0.0] * 3
    assert p.critical_path_shares["compute"] == 1.0


def test_progress_reports_every_run_once():
    seen = []
    predict(random_model(1), 2, noisy_machine(), runs=7, seed=0, workers=1,
            progress=seen.append, bounds=False)
    assert sum(seen) == 7


def test_model_errors_come_back_from_workers_with_their_place():
    b = ModelBuilder()
    b.send("-4", dest="(procnum + 1) % numprocs")
    b.recv(8, source="(procnum + numprocs - 1) % numprocs")
    with pytest.raises(ModelError, match="-4") as info:
        predict(b.build(), 2, Machine(Constant(1e-5)), runs=4, seed=0, workers=2,
                executor="local")
    assert "\n" not in str(info.value)


def test_bad_run_count_is_refused():
    with pytest.raises(Exception, match="at least 1"):
        predict(random_model(), 2, noisy_machine(), runs=0)


def test_collective_completions_are_summarised_per_call():
    b = ModelBuilder()
    with b.loop(2):
        b.serial("0.001 * (procnum + 1)")
        b.collective("MPI_Barrier")
    p = predict(b.build(), 4, Machine(Constant(1e-4)), runs=3, seed=0, workers=1)
    first, second = p.collectives
    assert (first.op, first.occurrence, first.runs) == ("MPI_Barrier", 0, 3)
    assert (second.op, second.occurrence, second.runs) == ("MPI_Barrier", 1, 3)
    # nobody leaves a barrier before the slowest rank (4 ms per iteration) arrives
    assert first.mean_completion.min() >= 0.004
    assert second.mean_completion.min() >= first.mean_completion.max() + 0.004
    assert p.mean == pytest.approx(second.mean_completion.max())


def _never_ending_model():
    """A Repeat whose condition never holds: its passes cannot be counted before the run."""
    b = ModelBuilder()
    with b.loop(1000), b.repeat("0", max=10**8):
        b.serial("1e-9")
    return b.build()


def test_the_api_stops_a_never_ending_model_at_the_default_limit_and_says_what_to_pass():
    from pevpm.errors import EventLimitError

    machine = Machine(Constant(0.0))
    with pytest.raises(EventLimitError) as stopped:
        predict(_never_ending_model(), 1, machine, runs=1, workers=1, bounds=False,
                exact=True)
    message = str(stopped.value)
    assert message.startswith("simulation stopped after 5000000 events while rank 0 ran at")
    assert message.endswith("; predict()'s default limit at 1 rank is 5,000,000 (the "
                            "model's loop counts imply about 4,001 events a run): pass "
                            "limits=Limits(max_events=...) for another, or Limits() for none")


def test_the_api_s_own_limits_replace_the_default():
    from pevpm.errors import EventLimitError
    from pevpm.vm.kernel.engine import Limits

    machine = Machine(Constant(0.0))
    with pytest.raises(EventLimitError) as stopped:
        predict(_never_ending_model(), 1, machine, runs=1, workers=1, bounds=False,
                exact=True, limits=Limits(max_events=1000))
    message = str(stopped.value)
    assert message.startswith("simulation stopped after 1000 events while rank 0 ran at")
    assert "default limit" not in message
