"""Requests left unmatched or never completed at the end of a run (issue 16)."""

from __future__ import annotations

import pytest

from pevpm.errors import DeadlockError
from pevpm.machine.presets import parse_machine
from pevpm.model.directives import parse_directives
from pevpm.model.expr import ANY_SOURCE
from pevpm.vm.kernel import engine, fastengine
from pevpm.vm.kernel.result import NEVER_COMPLETED, NEVER_MATCHED, Outstanding
from pevpm.vm.strategies.leftovers import LeftoverTally, warning_lines
from pevpm.vm.strategies.montecarlo import predict

MACHINE = parse_machine("hockney:latency=10us,bandwidth=100MB/s")


def message(op: str, src, dst, tag, req: str | None = None, size: int = 8) -> str:
    """The directive lines of one Message statement (7 lines with a req, else 6)."""
    lines = [f"// PEVPM Message type = {op}", f"// PEVPM & size = {size}",
             f"// PEVPM & from = {src}", f"// PEVPM & to = {dst}", f"// PEVPM & tag = {tag}"]
    if req:
        lines.append(f"// PEVPM & req = {req}")
    return "\n".join(lines) + "\n"


def runon(*arms: str) -> str:
    """A Runon whose i-th arm runs on rank i."""
    text = ""
    for i, body in enumerate(arms):
        head = "// PEVPM Runon" if i == 0 else "// PEVPM &"
        text += f"{head} c{i} = procnum == {i}\n// PEVPM {{\n{body}// PEVPM }}\n"
    return text


#: Rank 0: Isend tag 7 nobody receives (line 3), Isend tag 3 received but never
#: waited (line 9); rank 1: Irecv tag 3 never waited (line 18), Irecv from any
#: source tag 9 nobody sends (line 24).
LEAKY = runon(message("MPI_Isend", 0, 1, 7, "a") + message("MPI_Isend", 0, 1, 3, "b"),
              message("MPI_Irecv", 0, 1, 3, "c") + message("MPI_Irecv", "MPI_ANY_SOURCE", 1, 9,
                                                           "d"))
EXPECTED = (
    Outstanding("leak.c:3:10", 0, "MPI_Isend", 1, 7, NEVER_MATCHED),
    Outstanding("leak.c:24:10", 1, "MPI_Irecv", ANY_SOURCE, 9, NEVER_MATCHED),
    Outstanding("leak.c:9:10", 0, "MPI_Isend", 1, 3, NEVER_COMPLETED),
    Outstanding("leak.c:18:10", 1, "MPI_Irecv", 0, 3, NEVER_COMPLETED),
)


@pytest.mark.parametrize("simulate", [engine.simulate, fastengine.simulate])
def test_both_engines_list_what_a_run_left(simulate):
    result = simulate(parse_directives(LEAKY, "leak.c"), 2, MACHINE)
    assert result.outstanding == EXPECTED
    assert [o.describe() for o in result.outstanding] == [
        "MPI_Isend to rank 1 tag 7 never matched",
        "MPI_Irecv from any source tag 9 never matched",
        "MPI_Isend to rank 1 tag 3 never completed by MPI_Wait or MPI_Test",
        "MPI_Irecv from rank 0 tag 3 never completed by MPI_Wait or MPI_Test",
    ]


def test_the_core_hands_such_runs_to_the_reference_with_identical_results():
    model = parse_directives(LEAKY, "leak.c")
    ref, fast = engine.simulate(model, 2, MACHINE), fastengine.simulate(model, 2, MACHINE)
    assert (fast.makespan, fast.ranks, fast.outstanding) == (ref.makespan, ref.ranks,
                                                             ref.outstanding)


def test_a_clean_model_leaves_nothing():
    text = runon(message("MPI_Isend", 0, 1, 3, "a") + "// PEVPM Message type = MPI_Wait\n"
                 "// PEVPM & req = a\n",
                 message("MPI_Irecv", 0, 1, 3, "b") + "// PEVPM Message type = MPI_Waitall\n")
    for simulate in (engine.simulate, fastengine.simulate):
        assert simulate(parse_directives(text, "ok.c"), 2, MACHINE).outstanding == ()


def test_requests_of_one_statement_are_counted_and_tests_complete_them():
    loop = ("// PEVPM Loop iterations = 3\n// PEVPM {\n" + message("MPI_Isend", 0, 1, 5, "s")
            + "// PEVPM }\n")
    tested = message("MPI_Isend", 0, 1, 6, "t") + ("// PEVPM Serial time = 1\n"
                                                    "// PEVPM Message type = MPI_Test\n"
                                                    "// PEVPM & req = t\n")
    receives = ("// PEVPM Loop iterations = 3\n// PEVPM {\n" + message("MPI_Recv", 0, 1, 5)
                + "// PEVPM }\n" + message("MPI_Recv", 0, 1, 6))
    result = engine.simulate(parse_directives(runon(loop + tested, receives), "n.c"), 2,
                             MACHINE)
    assert result.outstanding == (Outstanding("n.c:5:10", 0, "MPI_Isend", 1, 5,
                                              NEVER_COMPLETED, 3),)


def test_an_eager_send_nobody_receives_is_reported_not_a_deadlock():
    text = runon(message("MPI_Send", 0, 1, 4), "// PEVPM Serial time = 1\n")
    result = engine.simulate(parse_directives(text, "e.c"), 2, parse_machine("hockney:latency=10us,bandwidth=100MB/s,eager=1024"))
    assert result.outstanding == (Outstanding("e.c:3:10", 0, "MPI_Send", 1, 4, NEVER_MATCHED),)


def test_a_blocking_receive_nobody_sends_to_stays_a_deadlock():
    text = runon("// PEVPM Serial time = 1\n", message("MPI_Recv", 0, 1, 4))
    with pytest.raises(DeadlockError, match="rank 1 blocked in MPI_Recv from 0"):
        engine.simulate(parse_directives(text, "d.c"), 2, MACHINE)


def test_a_prediction_counts_the_runs_that_left_a_request():
    # rank 0's Isend is posted in about half of the runs only
    text = runon("// PEVPM Condition c1 = 1\n// PEVPM {\n" + message("MPI_Isend", 0, 1, 2, "a")
                 + "// PEVPM }\n// PEVPM & c2 = 1\n// PEVPM {\n// PEVPM }\n")
    p = predict(parse_directives(text, "half.c"), 2, MACHINE, runs=40, seed=3, workers=1,
                executor="inline", bounds=False)
    (left,) = p.outstanding
    assert left.request.key == ("half.c:5:10", 0, "MPI_Isend", 1, 2, NEVER_MATCHED)
    assert 10 < left.runs < 30 and left.most == 1
    assert p.to_dict()["outstanding"] == [{
        "where": "half.c:5:10", "rank": 0, "op": "MPI_Isend", "peer": 1, "tag": 2,
        "state": NEVER_MATCHED, "runs": left.runs, "most_in_a_run": 1}]


def test_warnings_are_capped_per_state():
    tally = LeftoverTally()
    tally.add(tuple(Outstanding(f"w.c:{i}:1", i, "MPI_Irecv", ANY_SOURCE, 1, NEVER_MATCHED)
                    for i in range(7))
              + (Outstanding("w.c:9:1", 0, "MPI_Isend", 1, 1, NEVER_COMPLETED, 4),))
    lines = warning_lines([(8, 1, tally.build())], shown=5)
    assert lines == [
        *(f"w.c:{i}:1: rank {i}: MPI_Irecv from any source tag 1 never matched (in 1 of 1 "
          "runs on 8 ranks)" for i in range(5)),
        "and 2 more kinds of request never matched (--json lists them all)",
        ("w.c:9:1: rank 0: MPI_Isend to rank 1 tag 1 never completed by MPI_Wait or MPI_Test "
         "(4 requests a run, in 1 of 1 runs on 8 ranks)"),
    ]
