import subprocess
import sys

import numpy as np

from pevpm.bench.operations import derive_times


def test_end_to_end_uses_partner_send_start():
    stamps = {"send_start": np.array([[100], [400]]), "recv_done": np.array([[900], [350]]),
              "send_return": np.array([[110], [420]])}
    times = derive_times("end_to_end", stamps, partners=[1, 0])
    assert np.allclose(times, [[500e-9], [250e-9]])
    assert np.allclose(derive_times("local_send", stamps, None), [[10e-9], [20e-9]])


def test_from_start_measures_from_earliest_start():
    stamps = {"start": np.array([[10, 0], [20, 5]]), "end": np.array([[30, 9], [25, 6]])}
    assert np.allclose(derive_times("from_start", stamps, None), [[20e-9, 9e-9], [15e-9, 6e-9]])


def test_the_lead_runs_in_the_same_loop_and_is_dropped():
    """``_timed_run`` asks the loop for lead + reps repetitions at once (no call, and so
    no collective, between them) and keeps the last ``reps``."""
    from pevpm.bench.runner import _timed_run

    class Loop:
        calls = []

        def run(self, reps, start, now):
            self.calls.append(reps)
            return {"send_start": np.arange(reps, dtype=np.int64) * 10,
                    "recv_done": np.arange(reps, dtype=np.int64) * 10 + 3}

    loop = Loop()
    stamps = _timed_run(loop, reps=3, lead=2, start=None, now=None)
    assert loop.calls == [5]
    assert stamps["send_start"].tolist() == [20, 30, 40]
    assert stamps["recv_done"].tolist() == [23, 33, 43]
    assert _timed_run(loop, reps=2, lead=0, start=None, now=None)["send_start"].tolist() == [0, 10]


def test_mpibench_runs_mpi_without_thread_multiple_locks():
    """In a fresh process (this one may have initialised MPI already): the level
    mpi4py would ask for by default, MULTIPLE, is not the one MPIBench gets."""
    code = "from pevpm.bench.mpi import thread_level; print(thread_level())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    assert done.stdout.strip() == "MPI_THREAD_FUNNELED"
