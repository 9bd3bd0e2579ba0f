"""Steady-state loops: which loops qualify, and extrapolated predictions that
agree with simulating every iteration (the three examples, a deterministic
and a measured-profile machine)."""

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

from pevpm.cli import main
from pevpm.errors import EventLimitError
from pevpm.machine.presets import parse_machine
from pevpm.model.builder import ModelBuilder
from pevpm.model.loader import load_model
from pevpm.vm.kernel import engine, fastengine
from pevpm.vm.kernel.program import compile_model
from pevpm.vm.strategies import steady
from pevpm.vm.strategies.montecarlo import predict

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
RING = {"dest": "(procnum + 1) % numprocs", "source": "(procnum + numprocs - 1) % numprocs"}


def example(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / name / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.model().build()


def loop_of(build, numprocs=4, params=None):
    b = ModelBuilder(parameters={"iterations": 1000})
    build(b)
    model = b.build()
    return steady.find_loop(compile_model(model, params), model, numprocs, params)


def test_a_regular_outer_loop_qualifies():
    def build(b):
        b.serial(1.0)
        with b.loop("parameter iterations"):
            b.sendrecv(8, **RING)
            b.serial("gamma(0.001 * (procnum + 1), 0.0001)")
    loop = loop_of(build)
    assert (loop.loop_pc, loop.count) == (1, 1000)


@pytest.mark.parametrize("body, reason", [
    (lambda b: b.message("MPI_Recv", 8, source="MPI_ANY_SOURCE"), "MPI_ANY_SOURCE"),
    (lambda b: b.serial("0.001 * i"), "changes from iteration to iteration"),
    (lambda b: b.message("MPI_Recv", 8, source=0, request="s") or b.serial("s.MPI_TAG + 1"),
     "changes from iteration to iteration"),
])
def test_loops_whose_iterations_differ_do_not_qualify(body, reason):
    def build(b):
        with b.loop("parameter iterations", index="i"):
            body(b)
    assert reason in loop_of(build)


def test_conditions_short_loops_and_rank_dependent_counts_do_not_qualify():
    def condition(b):
        with b.loop("parameter iterations"), b.condition() as arms:
            with arms.case(0.5):
                b.serial(1.0)
            with arms.case(0.5):
                b.serial(2.0)
    def counted(count):
        def build(b):
            with b.loop(count):
                b.serial(1.0)
        return build
    assert "holds a condition" in loop_of(condition)
    assert "fewer than 256" in loop_of(counted(100))
    assert "different count on different ranks" in loop_of(counted("1000 + procnum"))


def test_both_engines_mark_the_same_iteration_ends():
    model = example("jacobi")
    params = {"iterations": 300}
    program = compile_model(model, params)
    loop = steady.find_loop(program, model, 4, params)
    cut = steady.truncated(program, loop, 20)
    machine = parse_machine("default")
    runs = [simulate(model, 4, machine, params=params, rng=np.random.default_rng(5),
                     program=cut) for simulate in (engine.simulate, fastengine.simulate)]
    assert runs[0].marks == runs[1].marks
    assert [len(rows) for rows in runs[0].marks] == [20] * 4


CASES = [  # example, machine, parameters, runs
    ("jacobi", "perseus", {"iterations": 1000}, 4),
    ("jacobi", "default", {"iterations": 1000, "t_iter": 2e-3}, 40),
    ("fft2d", "perseus", {"iterations": 600, "t_sd": 1e-4}, 10),
    ("fft2d", "default", {"iterations": 600}, 10),
]


@pytest.mark.parametrize("name, machine, params, runs", CASES)
def test_extrapolated_predictions_match_exact_ones(name, machine, params, runs):
    model, machine = example(name), parse_machine(machine)
    fast = predict(model, 4, machine, runs=runs, seed=3, params=params, workers=1)
    exact = predict(model, 4, machine, runs=runs, seed=3, params=params, workers=1, exact=True)
    assert fast.extrapolation["extrapolated"] and exact.extrapolation is None
    assert fast.extrapolation["from_iteration"] < params["iterations"] / 4
    assert abs(fast.mean - exact.mean) <= 0.01 * exact.mean
    assert abs(fast.sd - exact.sd) <= 0.01 * exact.mean
    assert fast.extrapolation["estimated_error"] <= steady.MAX_ERROR
    assert fast.min_bound == pytest.approx(exact.min_bound, rel=0.01)
    assert fast.max_bound == pytest.approx(exact.max_bound, rel=0.01)
    assert fast.breakdown_mean.sum() == pytest.approx(exact.breakdown_mean.sum(), rel=0.01)


def test_the_bag_of_tasks_has_no_steady_loop_and_runs_exactly():
    model, machine = example("bag_of_tasks"), parse_machine("default")
    params = {"jobs": 300}
    fast = predict(model, 4, machine, runs=3, seed=1, params=params, workers=1)
    exact = predict(model, 4, machine, runs=3, seed=1, params=params, workers=1, exact=True)
    assert fast.extrapolation is None
    assert fast.makespans.tolist() == exact.makespans.tolist()


def test_predict_notes_the_extrapolation_and_exact_turns_it_off(tmp_path, capsys):
    path = tmp_path / "ring.py"
    path.write_text(
        "from pevpm.model.builder import ModelBuilder\n"
        "def model():\n"
        "    b = ModelBuilder(parameters={'iterations': 2000})\n"
        "    with b.loop('parameter iterations'):\n"
        "        b.sendrecv(64, dest='(procnum + 1) % numprocs',\n"
        "                   source='(procnum + numprocs - 1) % numprocs')\n"
        "        b.serial(0.001)\n"
        "    return b\n")
    args = ["predict", str(path), "-n", "4", "--machine", "perseus", "--runs", "2"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert ("note: 4 ranks: the loop at" in err and "was simulated for 64 of 2000 iterations "
            "and extrapolated (estimated error of the mean 0.00%" in err)
    assert main(args + ["--exact"]) == 0
    assert "extrapolated" not in capsys.readouterr().err


def test_a_start_up_wave_crossing_256_ranks_is_projected_not_waited_for():
    """The deterministic Jacobi's even/odd exchange settles rank by rank, two
    ranks per iteration: the last of 256 ranks only near iteration 127, past
    the quarter of the loop; the front is projected from iteration 64."""
    model, machine = example("jacobi"), parse_machine("perseus")
    params = {"iterations": 1000}
    fast = predict(model, 256, machine, runs=2, seed=3, params=params, workers=1)
    exact = predict(model, 256, machine, runs=2, seed=3, params=params, workers=1, exact=True)
    extrapolation = fast.extrapolation
    assert extrapolation["extrapolated"] and extrapolation["from_iteration"] == 64
    assert 120 <= extrapolation["wave_settles_by"] <= 135
    assert 0 < extrapolation["estimated_error"] <= steady.MAX_ERROR
    assert abs(fast.mean - exact.mean) <= extrapolation["estimated_error"] * exact.mean
    assert fast.sd == exact.sd == 0
    assert fast.max_bound == pytest.approx(exact.max_bound, rel=extrapolation["estimated_error"])
    assert fast.finish_mean == pytest.approx(exact.finish_mean, rel=0.01)
    assert fast.breakdown_mean.sum() == pytest.approx(exact.breakdown_mean.sum(), rel=0.01)


def test_a_loop_too_long_to_simulate_whole_says_why_it_was_not_extrapolated():
    b = ModelBuilder(parameters={"iterations": 1000})
    with b.loop("parameter iterations"):
        b.serial("0.001 * (procnum + 1)")      # the ranks never move in lockstep
    with pytest.raises(EventLimitError, match=(
            r"simulation stopped after 2000 events .*; the loop at model: statement 1 "
            r"\(Loop\) could not be extrapolated: the ranks do not advance in lockstep "
            r"after 128 of 1000 iterations$")):
        predict(b.build(), 4, parse_machine("perseus"), runs=2, workers=1,
                limits=engine.Limits(max_events=2000))


def test_the_note_names_a_start_up_wave():
    from pevpm.cli.predict import _extrapolation_note

    note = _extrapolation_note({"extrapolated": True, "loop": "jacobi.c:68:10",
                                "iterations": 1000, "from_iteration": 64,
                                "estimated_error": 0.00087, "wave_settles_by": 511})
    assert note == ("the loop at jacobi.c:68:10 was simulated for 64 of 1000 iterations and "
                    "extrapolated through a start-up wave that reaches the last rank near "
                    "iteration 511 (estimated error of the mean 0.09%; --exact simulates all)")


def window_stats(rng, ranks, window, pace, top_pace, noise=0.01):
    """Synthetic statistics of one run: every rank at ``pace`` per iteration
    (with relative noise), the latest clock at ``top_pace``."""
    first, last = (pace * (1 + noise * rng.standard_normal(ranks)) for _ in range(2))
    return steady.WindowStats(first, last, np.ones((ranks, 3)), window * first.mean(),
                              window * last.mean(), window * top_pace, window * top_pace,
                              2.0)


@pytest.mark.parametrize("top, converged", [(1.05e-3, False), (1.0e-3, True)])
def test_the_latest_clock_must_keep_the_mean_clocks_pace(top, converged):
    rng = np.random.default_rng(4)
    stats = [window_stats(rng, 64, 16, 1.0e-3, top * (1 + 0.001 * rng.standard_normal()))
             for _ in range(50)]
    answer = steady.assess(stats, 16, 936, 0.064)
    assert answer.converged == converged
    if not converged:
        assert answer.reason == ("the latest rank's clock still moves 5.0% per iteration faster "
                                 "than the ranks' mean clock (their spread still changes)")
    else:
        assert answer.pace == pytest.approx(1.0e-3, rel=0.002)


def never_settling_model():
    b = ModelBuilder(parameters={"iterations": 512})
    with b.loop("parameter iterations"):
        b.serial("0.001 * (procnum + 1) * uniform(0.9, 1.1)")   # never in lockstep
    return b.build()


def test_a_loop_that_never_settles_is_corrected_by_the_first_runs_simulated_whole(monkeypatch):
    """The trials are judged on the first PILOT_RUNS runs; when they refuse,
    those runs are simulated whole, the others cut at the first trial's length
    and extrapolated, corrected by what the whole runs added."""
    from pevpm.vm.strategies import montecarlo

    model, machine, runs = never_settling_model(), parse_machine("perseus"), \
        montecarlo.PILOT_RUNS + 10
    cut = []
    real = montecarlo._simulate_truncated_runs
    monkeypatch.setattr(montecarlo, "_simulate_truncated_runs",
                        lambda *a: cut.extend((a[9], i) for i in range(a[5], a[6])) or real(*a))
    fast = predict(model, 4, machine, runs=runs, seed=2, workers=1, bounds=False)
    exact = predict(model, 4, machine, runs=runs, seed=2, workers=1, bounds=False, exact=True)
    pilots = list(range(montecarlo.PILOT_RUNS))
    assert sorted(cut) == sorted([(64, i) for i in range(runs)] + [(128, i) for i in pilots])
    # the first runs are the exact ones, to the bit; the others close to them
    assert fast.makespans[:len(pilots)].tolist() == exact.makespans[:len(pilots)].tolist()
    assert fast.makespans[len(pilots):] == pytest.approx(exact.makespans[len(pilots):],
                                                         rel=0.01)
    extrapolation = fast.extrapolation
    assert extrapolation["extrapolated"] and extrapolation["corrected_by"] == len(pilots)
    assert extrapolation["from_iteration"] == 64
    assert extrapolation["why_corrected"].endswith(
        f"after 128 of 512 iterations (judged on runs 0-19 of {runs})")
    assert abs(fast.mean - exact.mean) <= extrapolation["estimated_error"] * exact.mean


def test_a_correction_too_uncertain_simulates_the_other_runs_whole(monkeypatch):
    from pevpm.vm.strategies import montecarlo

    monkeypatch.setattr(steady, "MAX_ERROR", 0.0)
    model, machine, runs = never_settling_model(), parse_machine("perseus"), \
        montecarlo.PILOT_RUNS + 5
    fast = predict(model, 4, machine, runs=runs, seed=2, workers=1)
    exact = predict(model, 4, machine, runs=runs, seed=2, workers=1, exact=True)
    assert fast.makespans.tolist() == exact.makespans.tolist()
    assert (fast.min_bound, fast.max_bound) == (exact.min_bound, exact.max_bound)
    assert not fast.extrapolation["extrapolated"]
    assert re.search(r"after 128 of 512 iterations \(judged on runs 0-19 of 25\); corrected "
                     r"by 20 whole runs it would be uncertain by \d+\.\d%$",
                     fast.extrapolation["reason"])


def test_a_noisy_1d_stencil_at_64_ranks_is_corrected_within_one_percent():
    """The thesis's Jacobi on the shipped measured profile: at 64 ranks the
    ranks' spread keeps growing, so the loop never settles; the corrected
    prediction's mean and sd agree with simulating every run whole."""
    model = load_model(EXAMPLES / "jacobi" / "jacobi.c")
    machine, params, runs = parse_machine("default", ppn=1), {"iterations": 1000}, 40
    fast = predict(model, 64, machine, runs=runs, seed=0, params=params, workers=1,
                   bounds=False)
    exact = predict(model, 64, machine, runs=runs, seed=0, params=params, workers=1,
                    bounds=False, exact=True)
    assert fast.extrapolation["corrected_by"] == 20
    assert fast.extrapolation["estimated_error"] <= steady.MAX_ERROR
    assert abs(fast.mean - exact.mean) <= 0.01 * exact.mean
    assert abs(fast.sd - exact.sd) <= 0.01 * exact.mean


def test_the_note_says_a_loop_was_corrected_by_whole_runs():
    from pevpm.cli.predict import _extrapolation_note

    note = _extrapolation_note({
        "extrapolated": True, "loop": "jacobi.c:68:10", "iterations": 1000,
        "from_iteration": 64, "estimated_error": 0.004, "wave_settles_by": None,
        "corrected_by": 20, "why_corrected": "rank 3's advance per iteration still changes"})
    assert note == ("the loop at jacobi.c:68:10 did not settle (rank 3's advance per iteration "
                    "still changes): the first 20 runs were simulated whole, the others for 64 "
                    "of 1000 iterations, extrapolated and corrected by what the whole runs "
                    "added (estimated error of the mean 0.40%; --exact simulates all)")
