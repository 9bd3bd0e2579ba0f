"""The tracer's CPU time and sleeps per gap (Call.cpu, Call.slept) and what
replay and extract make of them; extract --section; computations fitted
within their noise."""

import os
import subprocess
import sys

import pytest
from conftest import MPIEXEC, SRC

from pevpm.cli import main
from pevpm.trace.events import Call, Collective, Recv, Send, Trace
from pevpm.trace.extract.extract import extract, trial_run
from pevpm.trace.extract.tokens import SERIAL, rank_tokens
from pevpm.trace.otf2.read import read_archive
from pevpm.trace.replay.replay import rank_statements

SLEEPER = """
import time
from mpi4py import MPI
comm = MPI.COMM_WORLD
comm.Barrier()
time.sleep(0.3)                     # waits: no CPU
comm.Barrier()
end = time.thread_time() + 0.1      # computes: 0.1 s of CPU
while time.thread_time() < end:
    pass
comm.Barrier()
"""


def test_the_tracer_records_the_cpu_seconds_and_the_sleeps_of_each_gap(tmp_path, cache_home):
    """Forced on (2 ranks on this machine's 2 cores would not read the clock)."""
    program = tmp_path / "sleeper.py"
    program.write_text(SLEEPER)
    env = {**os.environ, "PYTHONPATH": str(SRC), "PEVPM_TRACE_CPU": "1"}
    done = subprocess.run([sys.executable, "-m", "pevpm", "trace", "-o", str(tmp_path / "t"),
                           "--", MPIEXEC, "-n", "2", sys.executable, str(program)],
                          capture_output=True, text=True, timeout=300, env=env, check=False)
    assert done.returncode == 0, done.stderr
    trace = read_archive(tmp_path / "t")
    assert trace.has_cpu
    for calls in trace.ranks:
        barriers = [c for c in calls if c.name == "MPI_Barrier"]
        slept, computed = barriers[1], barriers[2]
        assert slept.start - barriers[0].end >= 0.3 and slept.cpu < 0.05
        assert 0.3 <= slept.slept < 0.3 + 0.05              # time.sleep: clock_nanosleep
        assert 0.1 <= computed.cpu < 0.1 + 0.05 and computed.slept == 0


def sleeper_rank(cores: int, slept: float = 2.0) -> Trace:
    """One rank: a gap of 3 s wall in which it computed 1 s of CPU and slept ``slept``."""
    calls = (Call("MPI_Init", 0, 0, cpu=0.0), Call("MPI_Barrier", 3, 3, (Collective(
        "BARRIER", (0,), None, 0, 0),), cpu=1.0, slept=slept), Call("MPI_Finalize", 3, 3,
                                                                     cpu=0.0))
    return Trace((calls,), cores=cores)


def test_a_sleep_is_a_sleeping_serial_of_its_own_not_scaled_by_speed():
    def serials(trace, **how):
        return [(float(s.time.evaluate({})), s.sleep) for s in rank_statements(trace, 0, **how)
                if hasattr(s, "time")]
    assert serials(sleeper_rank(2)) == [(1.0, False), (2.0, True)]       # wall - slept, slept
    assert serials(sleeper_rank(2), speed=2.0) == [(0.5, False), (2.0, True)]
    assert serials(sleeper_rank(2), cpu=True) == [(1.0, False), (2.0, True)]


def test_extract_writes_a_gap_mostly_slept_as_a_sleep():
    cpu = extract(Trace(sleeper_rank(1).ranks * 2, cores=1))     # 2 ranks on 1 core: CPU time
    assert "b.serial(3, sleep=True)" in cpu.text                 # 1 s computed + 2 s slept
    assert "what it slept (sleep, nanosleep) is written as sleeps" in cpu.text
    assert "b.serial(3, sleep=True)" in extract(sleeper_rank(2)).text
    mostly_computed = extract(sleeper_rank(2, slept=0.5)).text   # 2.5 s computed, 0.5 slept
    assert "b.serial(3)" in mostly_computed and "sleep=True" not in mostly_computed


def test_a_gap_is_one_token_whether_or_not_it_held_a_sleep():
    """A rank that left MPI_Init later at one count (a sleep before its start-up
    computation) has the same tokens as at a count where it did not."""
    def rank(lead: float) -> Trace:
        start = Call("MPI_Init", 0, lead)
        barrier = Call("MPI_Barrier", 1, 1, (Collective("BARRIER", (0, 1), None, 0, 0),))
        return Trace(((Call("MPI_Init", 0, 0), barrier, Call("MPI_Finalize", 1, 1)),
                      (start, barrier, Call("MPI_Finalize", 1, 1))), cores=2)
    late, prompt = rank_tokens(rank(1e-7), 1), rank_tokens(rank(0.0), 1)
    assert [t.key for t in late] == [t.key for t in prompt]
    assert late[0].key == SERIAL and late[0].values[0] == pytest.approx(1.0)


def test_extract_takes_the_cpu_seconds_and_replay_the_wall_time():
    """Two ranks sharing one core: each gap lasts 2 s but holds 1 s of computation;
    with as many cores as ranks, extract takes the wall time (sleeps included)."""
    def rank(peer, first):
        events = (Send(peer, 0, 8),) if first else (Recv(peer, 0, 8),)
        return (Call("MPI_Init", 0, 0, cpu=0.0), Call("MPI_Send" if first else "MPI_Recv",
                                                      2, 2, events, cpu=1.0),
                Call("MPI_Finalize", 4, 4, cpu=1.0))
    trace = Trace((rank(1, True), rank(0, False)), cores=1)
    wall = [s.time.evaluate({}) for s in rank_statements(trace, 0) if hasattr(s, "time")]
    cpu = [s.time.evaluate({}) for s in rank_statements(trace, 0, cpu=True)
           if hasattr(s, "time")]
    assert (wall, cpu) == ([2, 2], [1.0, 1.0])
    assert "b.serial(1)" in extract(trace).text and "b.serial(2)" not in extract(trace).text
    alone = Trace(trace.ranks, cores=2)
    assert "b.serial(2)" in extract(alone).text and "b.serial(1)" not in extract(alone).text


def test_polls_count_the_cpu_before_the_first_poll_only():
    calls = (Call("MPI_Init", 0, 0, cpu=0.0),
             Call("MPI_Iprobe", 1, 1.1, cpu=0.5), Call("MPI_Iprobe", 2, 2.1, cpu=0.25),
             Call("MPI_Recv", 3, 3, (Recv(0, 0, 8),), cpu=0.125),
             Call("MPI_Finalize", 4, 4, cpu=0.0))
    times = [s.time.evaluate({}) for s in rank_statements(Trace((calls,)), 0, cpu=True)
             if hasattr(s, "time")]
    assert times == [0.5]


def noisy(numprocs: int, startup: float, spread: float) -> Trace:
    """Each rank: a start-up computation of ``startup`` s (+-spread across ranks)
    and a barrier, then 10 iterations of 0.001/p s and a ring message of 4096/p
    bytes."""
    def rank(r):
        first = startup * (1 + spread * (1 if r % 2 else -1))
        barrier = Collective("BARRIER", tuple(range(numprocs)), None, 0, 0)
        calls = [Call("MPI_Init", 0, 0, cpu=0.0),
                 Call("MPI_Barrier", first, first, (barrier,), cpu=first)]
        t = first
        for _ in range(10):
            t += 0.001 / numprocs
            right, left = (r + 1) % numprocs, (r - 1) % numprocs
            calls.append(Call("MPI_Sendrecv", t, t, (Send(right, 1, 4096 // numprocs),
                                                     Recv(left, 1, 4096 // numprocs)),
                              cpu=0.001 / numprocs))
        return tuple(calls + [Call("MPI_Finalize", t, t, cpu=0.0)])
    return Trace(tuple(rank(r) for r in range(numprocs)))


def test_a_start_up_that_grows_within_its_noise_stays_constant():
    """15% more at 4 ranks than at 2, with ranks spread by +-20%: not a law."""
    x = extract([noisy(2, 0.026, 0.2), noisy(4, 0.030, 0.2)])
    line = next(ln for ln in x.text.splitlines() if "before the first loop" in ln)
    assert "computation mean = 0.028" in line and "(c: within the traced noise" in line
    assert "in loop 1: computation mean = 0.001 / numprocs" in x.text


def test_a_start_up_that_grows_beyond_its_noise_gets_a_law():
    x = extract([noisy(2, 0.026, 0.01), noisy(4, 0.052, 0.01)])
    assert "before the first loop: computation mean = 0.013 * numprocs (c*p: within the " \
        "traced noise" in x.text


def test_extract_section_models_the_part_between_two_calls(py_trace, tmp_path, capsys):
    trace_dir, _ = py_trace
    out = tmp_path / "m.py"
    assert main(["extract", str(trace_dir), "-o", str(out), "--section", "nope"]) == 2
    assert "pevpm: error: --section: expected START:STOP" in capsys.readouterr().err
    assert main(["extract", str(trace_dir), "-o", str(out), "--section",
                 "MPI_Init:MPI_Nothing"]) == 2
    assert "makes no MPI_Nothing call after its first MPI_Init" in capsys.readouterr().err


@pytest.mark.parametrize("start,stop", [("MPI_Barrier", "MPI_Gather")])
def test_a_section_starts_after_its_first_call_and_ends_before_its_last(start, stop):
    calls = (Call("MPI_Init", 0, 1), Call("MPI_Barrier", 2, 3, cpu=2.0),
             Call("MPI_Send", 4, 4, (Send(0, 0, 8),), cpu=1.0),
             Call("MPI_Gather", 5, 6, cpu=0.5), Call("MPI_Finalize", 9, 9))
    part = Trace((calls,)).section(start, stop)
    assert [c.name for c in part.ranks[0]] == ["MPI_Init", "MPI_Send", "MPI_Finalize"]
    assert (part.elapsed, part.ranks[0][-1].cpu) == (2, 0.5)


def test_a_count_with_more_ranks_than_cores_does_not_make_a_computation_grow():
    """A computation 40% slower at 4 ranks on 2 cores, exact at both: constant."""
    def disturbed(numprocs, cores):
        trace = noisy(numprocs, 0.026 * (1.4 if numprocs == 4 else 1.0), 0.0)
        return Trace(trace.ranks, cores)
    assert "(c*sqrt(p): within the traced noise" in extract([disturbed(2, None),
                                                           disturbed(4, None)]).text
    line = next(ln for ln in extract([disturbed(2, 2), disturbed(4, 2)]).text.splitlines()
                if "before the first loop" in ln)
    assert "computation mean = 0.026" in line and "(c: within the traced noise" in line
    assert "only 2 ranks were traced with no more ranks than cores" in line
    line = next(ln for ln in extract([noisy(2, 0.026, 0.2), noisy(4, 0.030, 0.2)])
                .text.splitlines() if "before the first loop" in ln)
    assert "not confirmed" not in line


def bag(jobs: int = 60) -> Trace:
    """A master sends a worker jobs of a different size each time (24-byte
    order, then the job), the worker computes and answers, then a stop order."""
    sizes = [1000 + (7919 * k) % 50000 for k in range(jobs)]
    master, worker = [Call("MPI_Init", 0, 0)], [Call("MPI_Init", 0, 0)]
    t = 0.0
    for size in sizes:
        master += [Call("MPI_Send", t, t, (Send(1, 1, 24),)), Call("MPI_Send", t, t,
                                                               (Send(1, 2, size),)),
                   Call("MPI_Recv", t + 0.002, t + 0.002, (Recv(1, 1, 24),))]
        worker += [Call("MPI_Recv", t, t, (Recv(0, 1, 24),)), Call("MPI_Recv", t, t,
                                                               (Recv(0, 2, size),)),
                   Call("MPI_Send", t + 0.002, t + 0.002, (Send(0, 1, 24),))]
        t += 0.002
    master += [Call("MPI_Send", t, t, (Send(1, 3, 24),)), Call("MPI_Finalize", t, t)]
    worker += [Call("MPI_Recv", t, t, (Recv(0, 3, 24),)), Call("MPI_Finalize", t, t)]
    return Trace((tuple(master), tuple(worker)))


def test_messages_of_a_new_size_each_time_still_make_a_loop_said_to_be_approximate(
        tmp_path):
    x = extract(bag())
    assert x.lines < 40 and "'loop1': 60" in x.text
    assert "APPROXIMATE" in x.text
    assert "sizes vary from repetition to repetition (1000..49436 bytes" in x.text
    assert "MPI_Recv', 49436" in x.text     # a receive: a buffer for the largest
    path = tmp_path / "bag.py"
    path.write_text(x.text)
    from pevpm.model.loader import load_model
    assert trial_run(load_model(str(path)), 2) is None


def test_the_tracer_reads_the_cpu_clock_only_with_more_ranks_than_cores(py_trace):
    trace = read_archive(py_trace[0])       # 2 ranks
    assert trace.cores is not None
    assert trace.has_cpu == trace.oversubscribed
