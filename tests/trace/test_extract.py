"""pevpm extract: loops from repeats, ranks merged by shape, a model file that loads and runs."""

import pytest
from conftest import MPICC, MPIEXEC

from pevpm.cli import main
from pevpm.machine.presets import parse_machine
from pevpm.model.loader import load_model
from pevpm.trace.events import Call, Recv, Send, Trace
from pevpm.trace.extract.compress import compress
from pevpm.trace.extract.extract import extract
from pevpm.trace.extract.tokens import LoopNode, Token
from pevpm.trace.replay.replay import replay
from pevpm.vm.strategies.montecarlo import predict


def tok(name):
    return Token((name,), ())


def test_the_longest_repeat_becomes_a_loop_and_the_rest_is_compressed_around_it():
    a, b, c = tok("a"), tok("b"), tok("c")
    assert compress([c, a, b, a, b, a, b, c, c]) == [c, LoopNode(3, (a, b)), LoopNode(2, (c,))]
    assert compress([a, b, c]) == [a, b, c]


def ping_pong(rounds: int, compute: float = 0.002) -> Trace:
    """Rank 0 sends to 1 and receives back, ``rounds`` times, computing in between."""
    def rank(me):
        calls, t = [Call("MPI_Init", 0, 0)], 0.0
        for _ in range(rounds):
            first, second = ((Send(1, 0, 64), Recv(1, 0, 64)) if me == 0
                             else (Recv(0, 0, 64), Send(0, 0, 64)))
            name = ("MPI_Send", "MPI_Recv") if me == 0 else ("MPI_Recv", "MPI_Send")
            calls += [Call(name[0], t + compute, t + compute + 1e-4, (first,)),
                      Call(name[1], t + compute + 2e-4, t + compute + 3e-4, (second,))]
            t += compute + 3e-4
        return tuple(calls + [Call("MPI_Finalize", t + 0.001, t + 0.002)])
    return Trace((rank(0), rank(1)))


def test_ping_pong_is_one_loop_per_rank_with_relative_peers(tmp_path):
    x = extract(ping_pong(50), "pp")
    assert not x.merged          # rank 0 sends first, rank 1 receives first
    assert x.events == 2 * 102
    assert x.text.count("with b.loop('parameter loop1'):") == 2
    assert "ModelBuilder(parameters={'loop1': 50}, lines=True)" in x.text
    assert "b.message('MPI_Send', 64, source='procnum', dest='(procnum + 1) % numprocs', " \
           "tag=0)" in x.text
    assert x.lines < 25


def test_the_model_file_predicts_what_the_replay_predicts(tmp_path):
    trace = ping_pong(30)
    path = tmp_path / "model.py"
    path.write_text(extract(trace).text)
    machine = parse_machine("constant:latency=5e-5")
    from_file = predict(load_model(str(path)), 2, machine, runs=2, seed=1, workers=1,
                        bounds=False)
    replayed = replay(trace, machine, runs=2, seed=1)
    # constant gaps give constant computations, so both are deterministic and equal
    assert from_file.mean == pytest.approx(replayed.prediction.mean, rel=1e-9)


needs_mpi = pytest.mark.skipif(not (MPIEXEC and MPICC), reason="needs mpiexec and mpicc")


@pytest.mark.mpi
@needs_mpi
def test_extract_command_writes_a_loadable_model_from_a_real_trace(py_trace, tmp_path, capsys):
    directory, _ = py_trace
    out = tmp_path / "ring_model.py"
    assert main(["extract", str(directory), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "MPI calls ->" in err and "lines of model" in err
    model = load_model(str(out))
    p = predict(model, 2, parse_machine("constant:latency=1e-5"), runs=2, seed=0, workers=1,
                bounds=False)
    assert p.mean > 0


@pytest.mark.mpi
@needs_mpi
def test_extract_to_an_unwritable_place_is_one_error(py_trace, tmp_path, capsys):
    directory, _ = py_trace
    assert main(["extract", str(directory), "-o", str(tmp_path / "no" / "such" / "m.py")]) == 2
    assert capsys.readouterr().err == (      # checked before the trace is read
        f"pevpm: error: argument -o/--output: folder {tmp_path / 'no' / 'such'} does not "
        "exist (see pevpm extract --help)\n")
