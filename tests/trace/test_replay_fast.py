"""A trace replayed in arrays (``pevpm.trace.replay.fast``) is the reference's replay.

The reference turns a trace into model statements, compiles and runs them
(``pevpm.trace.replay.replay``); the array path converts the reader's
columns straight to per-rank instruction arrays.  Both must give the same
runs -- every rank's times, the critical path, every message's send and
arrival time -- and the same per-rank summaries, on seeded synthetic traces
(rings of one tag and of two, non-blocking rings, blocking pairs,
collectives, calls that move nothing; shared cores; speed-ups), on traced C
and Python programs, and with and without the traced delays.  What the
arrays do not take is named, and ``pevpm replay`` says so in a ``note:``.
"""

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import test_replay_equivalence as synthetic
from conftest import MPICC, compiled, pevpm_command, trace_command

from pevpm.machine.comm_models import Hockney
from pevpm.machine.machine import Machine
from pevpm.machine.presets import parse_machine
from pevpm.machine.topology import Topology
from pevpm.trace.events import Call, Collective, Posted, Recv, Send, Trace
from pevpm.trace.otf2.read import read_archive, read_table
from pevpm.trace.replay import fast
from pevpm.trace.replay.delays import ready_array, ready_times
from pevpm.trace.replay.replay import (
    rank_summaries,
    replay,
    replay_machine,
    replay_table,
    trace_model,
)
from pevpm.vm.kernel import arrays, fastengine
from pevpm.vm.strategies.montecarlo import run_generator

BENCHMARK_PROGRAMS = Path(__file__).resolve().parents[2] / "benchmarks" / "programs"

MACHINES = {
    "hockney": Machine(Hockney(2e-5, 1e8, share_bandwidth=True)),
    "shared-cores": Machine(Hockney(2e-5, 1e8), topology=Topology(cores=1)),
    "profile": parse_machine("default"),
}


def without_polls(monkeypatch, seed: int, numprocs: int, cores=None) -> Trace:
    """A synthetic trace of every step but the polled ring."""
    monkeypatch.setattr(synthetic, "STEPS", tuple(s for s in synthetic.STEPS if s != "polled"))
    return synthetic.synthetic_trace(seed, numprocs, steps=60, cores=cores)


def assert_same_replay(trace: Trace, table, machine, speed: float = 1.0,
                       delays: bool = True) -> None:
    """The reference's run 0 and the array path's agree exactly, and so do the summaries."""
    quiet = replay_machine(machine, delays)
    reference = fastengine.simulate(trace_model(trace, speed, delays=delays), trace.numprocs,
                                    quiet, rng=run_generator(3, 0), records=True)
    checked = fast.check(table)
    assert checked.why is None and fast.check(table).why is None
    # the compiled passes convert it, reusing the request links the checks found
    assert fast.fastconvert is None or (checked.slower is None and checked.links is not None)
    converted = fast.convert(checked, speed, delays, trace.oversubscribed)
    assert_same_arrays(converted, fast.convert_reference(table, speed, delays,
                                                         trace.oversubscribed))
    assert_same_arrays(converted, fast.convert(table, speed, delays, trace.oversubscribed))
    program = arrays.ArrayProgram(converted.codes, converted.requests, converted.names, "t")
    run = arrays.simulate(program, quiet, rng=run_generator(3, 0), records=True)
    assert run.engine_note == reference.engine_note
    assert run.ranks == reference.ranks
    assert run.critical_path == reference.critical_path
    assert run.messages == reference.messages
    assert run.messages_simulated == reference.messages_simulated
    summaries = rank_summaries(trace, delays) if speed == 1.0 else None
    if summaries is not None:
        assert [(s.elapsed, s.compute, s.delay) for s in summaries] == list(zip(
            converted.elapsed.tolist(), converted.computed.tolist(), converted.delayed.tolist()))
    assert converted.traced == trace.elapsed


def assert_same_arrays(got: fast.Converted, expected: fast.Converted) -> None:
    """The compiled passes' instruction arrays are the numpy converter's, bit for bit."""
    assert got.names == expected.names
    assert got.requests.tolist() == expected.requests.tolist()
    for field in ("elapsed", "computed", "delayed"):
        assert getattr(got, field).tolist() == getattr(expected, field).tolist(), field
    assert got.traced == expected.traced
    assert len(got.codes) == len(expected.codes)
    for mine, theirs in zip(got.codes, expected.codes):
        assert sorted(mine) == sorted(theirs)
        for field, column in theirs.items():
            assert mine[field].dtype == column.dtype, field
            assert mine[field].tolist() == column.tolist(), field


@pytest.mark.parametrize("machine", sorted(MACHINES))
@pytest.mark.parametrize(("seed", "numprocs"), [(0, 2), (1, 3), (2, 4)])
@pytest.mark.parametrize("delays", [True, False])
def test_synthetic_traces_replay_alike(machine, seed, numprocs, delays, monkeypatch):
    trace = without_polls(monkeypatch, seed, numprocs)
    assert_same_replay(trace, fast.table_of(trace), MACHINES[machine], delays=delays)


@pytest.mark.parametrize("seed", range(3))
def test_shared_cores_and_speed_replay_alike(seed, monkeypatch):
    trace = without_polls(monkeypatch, seed, 4, cores=2)
    assert trace.oversubscribed
    assert_same_replay(trace, fast.table_of(trace), MACHINES["hockney"], speed=1.5)


@pytest.mark.parametrize(("seed", "numprocs"), [(0, 2), (1, 3), (4, 4)])
def test_ready_times_in_arrays_are_the_reference_s(seed, numprocs):
    trace = synthetic.synthetic_trace(seed, numprocs, steps=60)     # polls too
    table = fast.table_of(trace)
    got = ready_array(table)
    expected = np.full(table.calls, np.nan)
    for rank, ready in enumerate(ready_times(trace)):
        for index, moment in ready.items():
            expected[table.rank_starts[rank] + index] = moment
    assert np.array_equal(got, expected, equal_nan=True)
    assert np.isfinite(got).sum() > numprocs * 10


def test_late_starts_sleeps_and_one_rank_collectives_replay_alike():
    world = (0, 1)
    trace = Trace((
        (Call("MPI_Init", 0, 0.5), Call("MPI_Comm_rank", 0.6, 0.7, slept=0.05),
         Call("MPI_Send", 1.0, 1.1, (Send(1, 3, 64),), slept=0.2),
         Call("MPI_Barrier", 1.2, 1.6, (Collective("BARRIER", (0,), None, 0, 0),)),
         Call("MPI_Bcast", 1.7, 1.9, (Collective("BCAST", world, 0, 8, 0),)),
         Call("MPI_Finalize", 2.5, 2.6, slept=0.1)),
        (Call("MPI_Init", 0, 0.9), Call("MPI_Recv", 0.95, 1.3, (Recv(0, 3, 64),)),
         Call("MPI_Bcast", 1.4, 1.95, (Collective("BCAST", world, 0, 0, 8),)),
         Call("MPI_Send", 2.0, 2.1, (Send(0, 4, 8),)), Call("MPI_Finalize", 2.2, 2.3)),
    ))
    trace = Trace(trace.ranks[:1] + (trace.ranks[1][:3] + trace.ranks[1][4:],))
    for delays in (True, False):
        assert_same_replay(trace, fast.table_of(trace), MACHINES["hockney"], delays=delays)


@pytest.mark.parametrize("seed", range(2))
def test_sleeps_in_the_gaps_replay_alike(seed, monkeypatch):
    """Every call records a sleep before it, and runs of a dozen calls that move
    nothing sum theirs: the same seconds to the last bit."""
    trace = without_polls(monkeypatch, seed, 3)
    rng = np.random.default_rng(seed)
    ranks = []
    for calls in trace.ranks:
        out = []
        for call in calls:
            if call.name == "MPI_Comm_rank":
                out.extend(replace(call, slept=float(rng.uniform(0, 1e-6))) for _ in range(12))
            else:
                out.append(replace(call, slept=float(rng.uniform(0, 1e-6))))
        ranks.append(tuple(out))
    slept = Trace(tuple(ranks))
    for delays in (True, False):
        assert_same_replay(slept, fast.table_of(slept), MACHINES["hockney"], delays=delays)


def test_the_compiled_passes_are_built_and_key_sets_of_peers_exactly():
    """Waitalls on three and four peers, in either order, are one kind of call each
    (their delays are measured against the fastest of that kind); one on other
    peers is another kind."""
    if fast.fastconvert is None:
        pytest.skip("pevpm.trace.replay.fastconvert is not built")
    world = (0, 1, 2, 3, 4)
    rows = [[Call("MPI_Init", 0, 1)] for _ in world]
    now = 1.0
    for peers, slow in (((1, 2, 3), 0.3), ((3, 1, 2), 0.1), ((1, 2, 3, 4), 0.2),
                        ((4, 2, 3), 0.4)):
        rows[0].append(Call("MPI_Waitall", now, now + slow,
                            tuple(Recv(p, 7, 8, request=p) for p in peers)))
        for k, p in enumerate(peers):
            rows[0].insert(-1, Call("MPI_Irecv", now - 0.5 + k * 0.01, now - 0.49 + k * 0.01,
                                    (Posted(p),)))
            rows[p].append(Call("MPI_Send", now - 0.2, now - 0.19, (Send(0, 7, 8),)))
        now += 1.0
    trace = Trace(tuple(tuple(r) for r in rows))
    table = fast.table_of(trace)
    assert fast.numpy_conversion(table) is None
    got = fast.convert(table, 1.0, True, False)
    assert_same_arrays(got, fast.convert_reference(table, 1.0, True, False))
    # only the first Waitall on (1, 2, 3) took longer (0.2 s) than the fastest of its kind
    assert got.delayed[0] == pytest.approx(0.2, abs=1e-9)


@pytest.mark.parametrize("seed", range(10, 22))
def test_the_compiled_passes_make_the_numpy_arrays(seed, monkeypatch):
    """More seeded synthetic traces (2 to 5 ranks, some on shared cores), arrays only."""
    numprocs = 2 + seed % 4
    trace = without_polls(monkeypatch, seed, numprocs, cores=2 if seed % 3 == 0 else None)
    table = fast.table_of(trace)
    assert fast.numpy_conversion(table) is None
    checked = fast.check(table)     # its links serve both conversions
    for delays in (True, False):
        reference = fast.convert_reference(table, 1.25, delays, trace.oversubscribed)
        assert_same_arrays(fast.convert(table, 1.25, delays, trace.oversubscribed), reference)
        assert_same_arrays(fast.convert(checked, 1.25, delays, trace.oversubscribed), reference)


def test_tags_past_the_compiled_keys_convert_in_numpy():
    trace = Trace(((Call("MPI_Init", 0, 1), Call("MPI_Send", 1, 2, (Send(1, 2**32, 8),))),
                   (Call("MPI_Init", 0, 1), Call("MPI_Recv", 1, 3, (Recv(0, 2**32, 8),)))))
    table = fast.table_of(trace)
    assert fast.numpy_conversion(table) == "a tag does not fit 32 bits"
    checked = fast.check(table)
    assert (checked.why, checked.slower, checked.links) == (
        None, "a tag does not fit 32 bits", None)
    assert_same_arrays(fast.convert(table), fast.convert_reference(table))
    assert_same_arrays(fast.convert(checked), fast.convert_reference(table))


@pytest.mark.parametrize("compiled", [True, False])
def test_what_the_arrays_do_not_take_is_named(compiled, monkeypatch):
    if not compiled:
        monkeypatch.setattr(fast, "fastconvert", None)
    twice = Trace(((Call("MPI_Init", 0, 1), Call("MPI_Irecv", 1, 2, (Posted(5),)),
                    Call("MPI_Irecv", 2, 3, (Posted(5),)), Call("MPI_Wait", 3, 4, (
                        Recv(1, 0, 8, request=5),))),
                   (Call("MPI_Init", 0, 1), Call("MPI_Send", 1, 2, (Send(0, 0, 8),)))))
    assert (fast.check(fast.table_of(twice)).why
            == "a receive request posted again before it completed")
    unposted = Trace(((Call("MPI_Init", 0, 1), Call("MPI_Wait", 3, 4, (
        Recv(1, 0, 8, request=5),))), twice.ranks[1]))
    assert (fast.check(fast.table_of(unposted)).why
            == "a receive request posted again before it completed")
    reposted = Trace(((twice.ranks[0][:2] + twice.ranks[0][3:] + twice.ranks[0][1:2]
                       + twice.ranks[0][3:]), twice.ranks[1] + twice.ranks[1][1:]))
    assert fast.check(fast.table_of(reposted)).why is None
    world = (0, 1, 2)
    polled = Trace(((Call("MPI_Init", 0, 1), Call("MPI_Iprobe", 1, 2)),) * 3)
    assert fast.check(fast.table_of(polled)).why == "it polls (MPI_Iprobe)"
    part = Trace(tuple((Call("MPI_Init", 0, 1), Call("MPI_Allreduce", 1, 2, (
        Collective("ALLREDUCE", (0, 1), None, 8, 8),))) for _ in world))
    assert fast.check(fast.table_of(part)).why == "a collective on a communicator of some ranks"
    mixed = Trace(tuple((Call("MPI_Init", 0, 1), Call("MPI_Sendrecv", 1, 2, (
        Send(1, 0, 8), Send(2, 0, 8), Recv(1, 0, 8)))) for _ in world))
    assert fast.check(fast.table_of(mixed)).why == "a MPI_Sendrecv holds several kinds of MPI records"
    empty = Trace(((Call("MPI_Init", 0, 1),), ()))
    assert fast.check(fast.table_of(empty)).why == "rank 1 made no MPI calls"


def test_a_replay_in_arrays_is_the_reference_prediction(monkeypatch):
    trace = without_polls(monkeypatch, 5, 3)
    machine = MACHINES["profile"]
    for delays, runs in ((True, 1), (False, 4)):
        expected = replay(trace, machine, runs=runs, seed=2, delays=delays)
        got = replay_table(fast.table_of(trace), machine, runs=runs, seed=2, delays=delays)
        assert got.prediction.mean == expected.prediction.mean
        assert got.prediction.sd == expected.prediction.sd
        assert got.prediction.finish_mean.tolist() == expected.prediction.finish_mean.tolist()
        assert got.ranks == expected.ranks
        assert got.traced == expected.traced and got.note is None


@pytest.fixture(scope="module")
def traced_programs(tmp_path_factory, cache_home):
    """benchmarks/programs/long_halo.c traced at 3 ranks (non-blocking halos,
    Sendrecv rings, Allreduces), and tests/trace/programs/subcomm.c at 4."""
    if MPICC is None:
        pytest.skip("no mpicc")
    work = tmp_path_factory.mktemp("replay_fast")
    halo = work / "long_halo"
    subprocess.run([MPICC, "-O2", "-o", str(halo), str(BENCHMARK_PROGRAMS / "long_halo.c")],
                   check=True, capture_output=True, timeout=120)
    done = trace_command(work / "halo", str(halo), "200", ranks=3)
    assert done.returncode == 0, done.stderr
    done = trace_command(work / "subcomm4", str(compiled(work, "subcomm")), ranks=4)
    assert done.returncode == 0, done.stderr
    return {"halo": work / "halo", "subcomm": work / "subcomm4"}


def test_a_traced_program_replays_alike(traced_programs):
    path = traced_programs["halo"]
    trace = read_archive(path)
    assert trace.call_count() > 3 * 5 * 200
    for delays in (True, False):
        assert_same_replay(trace, read_table(path), MACHINES["profile"], delays=delays)


def test_replay_says_which_way_it_replayed(traced_programs):
    quick = pevpm_command("replay", str(traced_programs["halo"]), "--machine", "default",
                          "--json")
    assert quick.returncode == 0, quick.stderr
    assert "note:" not in quick.stderr
    expected = replay(read_archive(traced_programs["halo"]), parse_machine("default"))
    assert json.loads(quick.stdout)["mean"] == expected.prediction.mean
    slow = pevpm_command("replay", str(traced_programs["subcomm"]), "--machine", "default")
    assert slow.returncode == 0, slow.stderr
    assert ("pevpm replay: note: replayed through model statements, not in arrays (slower, "
            "at most about 330,000 calls): a collective on a communicator of some ranks"
            in slow.stderr)


def test_replay_says_when_numpy_made_the_arrays(traced_programs, monkeypatch):
    """Without the compiled passes the replay is the same and a note says it was slower."""
    from argparse import Namespace

    from pevpm.cli.replay import replay_archive

    args = Namespace(speed=1.0, runs=1, seed=0, trace=traced_programs["halo"], delays=True,
                     workers=1)
    machine = parse_machine("default")
    compiled_result, _ = replay_archive(traced_programs["halo"], machine, args)
    monkeypatch.setattr(fast, "fastconvert", None)
    numpy_result, _ = replay_archive(traced_programs["halo"], machine, args)
    assert numpy_result.prediction.mean == compiled_result.prediction.mean
    assert numpy_result.note == (
        "the replay's arrays were made in numpy, not in the compiled passes (slower, the same "
        "replay): the compiled conversion module (pevpm.trace.replay.fastconvert) is not built")
    assert not compiled_result.note
