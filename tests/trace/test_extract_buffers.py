"""Receives written as buffers for the sizes the model sends
(pevpm.trace.extract.buffers): a send whose size varies from step to step is
written as its mean, which a partner's receive that kept its own traced size
could not take (CoMD's MPI_ERR_TRUNCATE at 4 ranks).  The rule on tokens, and
tests/trace/programs/buffers.c (even ranks send to the right a size of the
step's own, odd ranks a fixed one) traced at 1, 2 and 4 ranks."""

import re

import pytest
from conftest import MPICC, MPIEXEC, extracted_model, traced_at_counts

from pevpm.trace.extract.buffers import raised, send_bounds
from pevpm.trace.extract.tokens import SERIAL, Token

needs_mpi = pytest.mark.skipif(MPICC is None or MPIEXEC is None, reason="no mpicc/mpiexec")

def varying_sizes(steps: int = 40) -> list[int]:
    """The sizes buffers.c's even ranks send to the right, step by step (its
    pseudo-random sequence)."""
    state, out = 12345, []
    for _ in range(steps):
        state = (state * 1103515245 + 12345) % 2**32
        out.append(8000 + 8 * ((state >> 16) % 64))
    return out


def sendrecv(size, tag: int, recv_size=None, values=()) -> Token:
    return Token(("MPI_Sendrecv", size, 0, 1, tag, None, (), None, recv_size), values)


def test_only_tags_with_a_loose_send_get_a_bound():
    tokens = [sendrecv(None, 1, values=(16, 48)), sendrecv(64, 1), sendrecv(96, 2),
              Token(("MPI_Recv", 200, 1, 0, 1, None, (), None, None), ()), Token(SERIAL, (1.0,))]
    # the largest sent with tag 1, a fixed send's included; no receive counts
    assert send_bounds(tokens) == {1: 64}
    assert send_bounds(tokens[1:]) == {}
    # a loose send left with no sizes of its own (its repetitions taken elsewhere)
    assert send_bounds([sendrecv(None, 3)]) == {3: 0}


def test_a_receive_is_raised_to_its_tags_bound_and_never_lowered():
    bounds = {1: 64, 2: 100}
    assert [raised(s, 1, bounds) for s in ("16", "64", "80")] == ["64", "64", "80"]
    assert raised("16", 3, bounds) == "16"
    assert raised("16", "MPI_ANY_TAG", bounds) == "100"
    assert raised("4 * numprocs", 1, bounds) == "max(4 * numprocs, 64)"
    assert raised("16", 1, {}) == "16"


@needs_mpi
def test_a_fixed_receive_takes_its_partners_varying_sends(tmp_path, cache_home):
    runs = traced_at_counts(tmp_path, "buffers", counts=(1, 2, 4))
    text, stderr = extracted_model(runs, tmp_path / "model.py")
    assert "the model runs at 1, 2, 4, 8, 64, 1024 ranks" in stderr
    sizes = varying_sizes()
    largest, mean = max(sizes), round(sum(sizes) / len(sizes))
    assert (largest, mean) == (8504, 8287)
    even = text[text.index("ranks.case('procnum % 2 == 0')"):
                text.index("ranks.case('procnum % 2 == 1')")]
    odd = text[text.index("ranks.case('procnum % 2 == 1')"):]
    right = ("source='(procnum + numprocs - 1) % numprocs', dest='(procnum + 1) % numprocs', "
             "tag=1")
    left = ("source='(procnum + 1) % numprocs', dest='(procnum + numprocs - 1) % numprocs', "
            "tag=2")
    # the even ranks' right-going send: one statement, the mean of their sizes
    assert re.findall(r"b\.message\('MPI_Sendrecv', (\d+), " + re.escape(right), even) == [
        str(mean)]
    # every odd rank's receive of it (38 statements: two pairs of steps are loops of 2),
    # traced at 8,016 B and up, takes the largest
    odd_right = re.findall(r"b\.message\('MPI_Sendrecv', (\d+), " + re.escape(right)
                           + r", recv_size=(\d+)\)", odd)
    assert len(odd_right) == 38 and set(odd_right) == {("4096", str(largest))}
    # the left-going messages never vary: the odd ranks' receives keep 4,096 B
    odd_left = re.findall(r"b\.message\('MPI_Sendrecv', (\d+), " + re.escape(left)
                          + r", recv_size=(\d+)\)", odd)
    assert len(odd_left) == 38 and set(odd_left) == {("4096", "4096")}
    first = (f"its receive takes {largest} bytes, not {sizes[0]}: sends with tag 1 vary "
             "in size and are written as their mean, so every receive with that tag takes at "
             f"least the largest message sent with it in the traces, {largest} bytes (a buffer: "
             "the time follows the size sent)")
    assert first in " ".join(stderr.split())
    assert "(a buffer for tag 1's largest message)" in stderr
