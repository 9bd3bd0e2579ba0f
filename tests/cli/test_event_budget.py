"""``predict``'s default event limit follows the model's own loop counts, and a run it
stops says the figure to pass (issue 29: the heat example's 1,024-rank prediction at
2,000 iterations used to stop at 51.2 million events)."""

from pathlib import Path

from pevpm.cli import main
from pevpm.cli.event_budget import EventBudget
from pevpm.errors import EventLimitError
from pevpm.model.builder import ModelBuilder
from pevpm.model.event_estimate import CEILING, estimated_events
from pevpm.model.loader import load_model

ROOT = Path(__file__).resolve().parents[2]
#: The limit every 1,024-rank run had before (50,000 events a rank).
OLD_LIMIT_AT_1024 = 51_200_000


def test_the_heat_models_limit_at_1024_ranks_follows_its_iterations():
    heat = load_model(ROOT / "examples/heat/model.py")
    short = EventBudget.of(heat, 1024, {"iterations": 300})
    long = EventBudget.of(heat, 1024, {"iterations": 2000})
    assert short.limit == OLD_LIMIT_AT_1024           # the floor: as before
    assert long.limit == 2 * long.estimate > 3 * OLD_LIMIT_AT_1024
    # a rank: the Barrier (1 + 4 x 10 steps) and the loop, then per iteration its
    # end, two Sendrecvs (3 each), two Serials and the Allreduce (41)
    assert (short.estimate, long.estimate) == (1024 * (42 + 300 * 50), 1024 * (42 + 2000 * 50))


def test_the_estimate_counts_loops_branches_and_collectives():
    b = ModelBuilder(parameters={"n": 10})
    with b.loop("parameter n", index="i"), b.loop("i"):     # triangular: 45 passes
        b.serial("1e-6")
    with b.runon() as ranks, ranks.case("procnum == 0"), b.loop(1000):
        b.send(8, dest=1)
    b.collective("MPI_Alltoall", 8)
    # per rank: the loops 1 + 10 * (1 + 1 + 5 * 2) = 121 (judged at i = 5), the Runon
    # 1 (rank 0: 1 + 1 + 1000 * (1 + 3)), the Alltoall on 4 ranks 1 + 4 * 3
    assert estimated_events(b.build(), 4) == 3 * (121 + 1 + 13) + (121 + 4002 + 13)


def test_a_long_model_runs_to_its_end_under_the_default_limit(tmp_path, capsys):
    model = tmp_path / "long.c"      # 6 million events, more than the old 5 million
    model.write_text("// PEVPM Loop iterations = 3e6\n// PEVPM {\n"
                     "// PEVPM Serial time = 1e-9\n// PEVPM }\n")
    assert main(["predict", str(model), "-n", "1", "--runs", "1", "--no-bounds",
                 "--exact", "--machine", "constant:latency=0", "--workers", "1"]) == 0
    assert "0.003" in capsys.readouterr().out


def test_a_run_that_never_ends_stops_saying_the_limit_and_what_to_pass(tmp_path, capsys):
    model = tmp_path / "forever.c"   # a Repeat's passes cannot be known: counted once
    model.write_text("// PEVPM Loop iterations = 1000\n// PEVPM {\n"
                     "// PEVPM Repeat until = 0\n// PEVPM &  max = 1e8\n// PEVPM {\n"
                     "// PEVPM Serial time = 1e-9\n// PEVPM }\n// PEVPM }\n")
    assert main(["predict", str(model), "-n", "1", "--runs", "1", "--no-bounds",
                 "--machine", "constant:latency=0", "--workers", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("pevpm: error: simulation stopped after "
                                                   "5000000 events")
    assert err.endswith("; the default limit at 1 rank is 5,000,000 (the model's loop "
                        "counts imply about 4,001 events a run, a Repeat's passes and a count "
                        "the run decides counted once): --max-events 50000000 allows ten "
                        "times as many (0: no limit)")


def test_past_the_ceiling_the_message_gives_the_figure_the_loop_counts_need():
    budget = EventBudget(64, 10**10)
    assert budget.limit == CEILING
    stopped = budget.stopped(EventLimitError("simulation stopped after 500000000 events",
                                             "m.c:3:1"))
    assert str(stopped) == (
        "m.c:3:1: simulation stopped after 500000000 events; the default limit at 64 "
        "ranks is 500,000,000, its most (the model's loop counts imply about "
        "10,000,000,000 events a run): --max-events 20000000000 allows them "
        "(0: no limit)")


def test_absurd_loop_counts_get_the_least_limit_and_are_called_into_question():
    typo = EventBudget(1, 2 * 10**12)             # Loop iterations = 1e12
    assert typo.limit == 5_000_000
    assert str(typo.stopped(EventLimitError("simulation stopped"))) == (
        "simulation stopped; the default limit at 1 rank is 5,000,000 (the model's loop "
        "counts imply about 2,000,000,000,000 events a run, a day or more of simulation: "
        "check the counts; --max-events 4000000000000 allows them) (0: no limit)")
    beyond = EventBudget(1, 10**18).stopped(EventLimitError("simulation stopped"))
    assert str(beyond) == (
        "simulation stopped; the default limit at 1 rank is 5,000,000 (the model's loop "
        "counts imply about 1,000,000,000,000,000,000 events a run, more than --max-events "
        "can allow: check the counts) (0: no limit)")
