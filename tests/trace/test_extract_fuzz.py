"""The model extract writes is Python whatever the trace: small random traces
(seeded) whose ranks compute nothing between some calls, make calls the model
does not keep (MPI_Comm_rank), or nothing at all between MPI_Init and
MPI_Finalize, so that some block of the model has no statement of its own."""

import numpy as np
import pytest

from pevpm.errors import PevpmError
from pevpm.model.loader import load_model
from pevpm.trace.events import Call, Collective, Recv, Send, Trace
from pevpm.trace.extract.extract import extract, trial_run


def test_a_rank_with_nothing_between_init_and_finalize_is_a_pass(tmp_path):
    """Rank 1 neither computes nor calls: its arm's block holds ``pass``."""
    trace = Trace(((Call("MPI_Init", 0, 0), Call("MPI_Finalize", 1.0, 1.0)),
                   (Call("MPI_Init", 0, 0), Call("MPI_Finalize", 0, 0))))
    text = extract(trace).text
    assert "        with ranks.case('procnum == numprocs - 1'):\n" \
           "            pass  # no MPI call and no computation here\n" in text
    path = tmp_path / "model.py"
    path.write_text(text)
    assert trial_run(load_model(path), 2) is None


def random_trace(rng: np.random.Generator) -> Trace:
    """1-4 ranks, 1-12 steps; each step a computation on some ranks (none on the
    others), a Barrier, a message between two ranks, or a run of calls the model
    drops, repeated, with no computation between them."""
    n = int(rng.integers(1, 5))
    calls: list[list[Call]] = [[Call("MPI_Init", 0, 0)] for _ in range(n)]
    t = 0.0
    for _ in range(int(rng.integers(1, 13))):
        kind = rng.choice(["compute", "barrier", "message", "dropped"])
        t += 1e-3
        if kind == "compute":
            for r in range(n):
                if rng.random() < 0.5:
                    calls[r].append(Call("MPI_Comm_rank", t + 1e-4 * r, t + 1e-4 * r))
        elif kind == "barrier":
            for r in range(n):
                calls[r].append(Call("MPI_Barrier", t, t, (Collective(
                    "BARRIER", tuple(range(n)), None, 0, 0),)))
        elif kind == "message" and n > 1:
            a, b = (int(x) for x in rng.choice(n, 2, replace=False))
            size = int(rng.choice([8, 64]))
            calls[a].append(Call("MPI_Send", t, t, (Send(b, 0, size),)))
            calls[b].append(Call("MPI_Recv", t, t, (Recv(a, 0, size),)))
        else:
            for r in range(n):
                calls[r] += [Call("MPI_Comm_rank", t, t)] * int(rng.integers(1, 5))
    end = t + 1e-3
    return Trace(tuple(tuple(c + [Call("MPI_Finalize", end, end)]) for c in calls))


@pytest.mark.parametrize("seed", range(40))
def test_every_extracted_model_compiles(seed, tmp_path):
    rng = np.random.default_rng(seed)
    traces = [random_trace(rng) for _ in range(int(rng.integers(1, 3)))]
    try:
        text = extract(traces, f"seed {seed}").text
    except PevpmError:
        return          # refused with a message: what the quality bar asks
    compile(text, f"seed {seed}", "exec")
    for line_no, line in enumerate(text.splitlines()):
        if line.rstrip().endswith(":") and line.lstrip().startswith("with "):
            following = text.splitlines()[line_no + 1]
            assert len(following) - len(following.lstrip()) > len(line) - len(line.lstrip())
    path = tmp_path / "model.py"
    path.write_text(text)
    load_model(path)


def test_a_loop_of_receives_followed_by_a_computation_is_no_repeat():
    """What seed 12 found: the token after the loop, where a stop receive would
    be, is a computation (it has no tag): the loop stays as it is."""
    from pevpm.trace.extract.repeats import receive_until_tag
    from pevpm.trace.extract.tokens import SERIAL, LoopNode, Token

    recv = Token(("MPI_Recv", 8, 0, 1, 3, None, (), None, None), ())
    program = [LoopNode(2, (recv, Token(SERIAL, (0.1, 0.2)))), Token(SERIAL, (0.5,))]
    assert receive_until_tag(program) == program
