"""Progress on a terminal and in a log (pevpm.progress)."""

import io

from pevpm.progress import LineProgress, progress_bar


class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_lines_come_at_most_once_per_interval_and_close_once():
    clock, log = FakeClock(), io.StringIO()
    bar = LineProgress(100, "predict", "run", stream=log, interval=30, clock=clock)
    bar.update(10)                  # 0 s: too soon
    clock.now = 31
    bar.update(10)                  # 31 s: a line
    clock.now = 40
    bar.update(10)                  # 9 s later: too soon
    bar.close()
    bar.close()
    assert log.getvalue().splitlines() == ["predict: 20/100 runs, about 2m04s left",
                                           "predict: done, 30/100 runs"]


def test_quiet_close_prints_nothing_for_a_short_job():
    log = io.StringIO()
    with progress_bar(5, "bench 1x2", "block", stream=log, quiet_close=True) as bar:
        bar.update(5)
    assert log.getvalue() == ""


def test_a_terminal_gets_a_tqdm_bar_with_carriage_returns():
    term = Terminal()
    with progress_bar(3, "bench 1x2", "block", stream=term) as bar:
        bar.update(3)
    assert type(bar).__name__ == "tqdm"
    assert "\r" in term.getvalue() and "3/3" in term.getvalue()


def test_a_log_never_gets_carriage_returns_or_escape_codes():
    log = io.StringIO()
    with progress_bar(50, "bench 1x4", "block", stream=log, interval=0) as bar:
        for _ in range(50):
            bar.set_postfix_str("isend 1024 B")
            bar.update(1)
    text = log.getvalue()
    assert "\r" not in text and "\x1b" not in text
    assert text.splitlines()[-1] == "bench 1x4: done, 50/50 blocks"


def test_the_benchmark_with_its_progress_stays_light():
    """A bench rank loads neither scipy nor matplotlib, nor tqdm when not on a terminal."""
    import subprocess
    import sys

    code = ("import io, sys; import pevpm.bench.runner; from pevpm.progress import progress_bar; "
            "progress_bar(3, 'bench', 'block', stream=io.StringIO()).update(1); "
            "print(sorted(m for m in ('scipy', 'matplotlib', 'tqdm') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
