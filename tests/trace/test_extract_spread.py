"""The spread an extracted computation is drawn with comes from the faster half
of its samples (pevpm.trace.extract.computations.lower_sd): a loaded host's
interruptions lengthen some repetitions, and a model that drew them on every
rank would make 64 ranks wait for the slowest at each collective (HPCCG's
sweep, docs/apps.md); or, where smaller, from one pass to the next
(``step_sd``): ranks that differ in level are not each pass's randomness."""

from pevpm.trace.extract.computations import lower_sd, robust_sd, seconds_source


def test_interruptions_in_the_slower_half_do_not_widen_the_draw():
    quiet = [1.0, 1.02, 0.98, 1.01, 0.99, 1.0, 1.03, 0.97, 1.0]
    loaded = quiet + [1.6, 1.9, 1.4, 1.8, 1.5]     # the same code, preempted five times
    assert (round(lower_sd(quiet), 4), round(lower_sd(loaded), 4)) == (0.0297, 0.0222)
    assert (round(robust_sd(quiet), 4), round(robust_sd(loaded), 4)) == (0.0148, 0.0445)
    # the mean keeps the interruptions (they took that time); the draw's sd does not
    assert seconds_source({1: tuple(loaded)}, [], "in loop 1") == "'gamma(1.22857, 0.0222)'"


def test_a_spread_only_above_the_median_falls_back_to_the_robust_one():
    assert lower_sd([1.0, 1.0, 1.0, 2.0]) == robust_sd([1.0, 1.0, 1.0, 2.0])
    assert lower_sd([0.5]) == 0.0


def test_ranks_at_different_levels_are_not_drawn_as_each_pass_randomness():
    """Two ranks' passes, rank after rank, the second rank 20% slower throughout
    (HPCCG's sweep at 2 ranks on a loaded host: 4.29 and 5.11 ms): the draw's
    sd is the pass-to-pass spread (2%), not the faster half's over both (13%)."""
    from pevpm.trace.extract.computations import step_sd

    first = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01]
    second = [1.2, 1.21, 1.19, 1.2, 1.22, 1.18, 1.2, 1.21]
    both = tuple(first + second)
    assert round(step_sd(both), 4) == 0.021
    assert round(lower_sd(both), 3) == 0.148
    assert seconds_source({2: both}, [], "in loop 1") == "'gamma(1.10125, 0.021)'"
    # fewer than three samples: the spread of them all
    assert step_sd([1.0, 2.0]) == robust_sd([1.0, 2.0])
