"""benchmarks/apps/node_corpus.py: the order of the node's runs and what the
deadline leaves out (the runs themselves are faked: a fixed time each)."""

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "apps" / "node_corpus.py"


@pytest.fixture()
def corpus():
    spec = importlib.util.spec_from_file_location("node_corpus", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_traces_at_the_extracted_counts_come_first_then_the_larger_then_untraced(corpus):
    programs = {"a": ([], [1, 2, 4, 8, 16]), "cubes": ([], [1, 8])}
    assert corpus.steps(programs, max_ranks=8, repeats=2) == [
        ("a", 1, 0, True), ("a", 2, 0, True), ("a", 4, 0, True),
        ("cubes", 1, 0, True), ("cubes", 8, 0, True),
        ("a", 8, 0, True),
        ("a", 1, 0, False), ("a", 2, 0, False), ("a", 4, 0, False), ("a", 8, 0, False),
        ("cubes", 1, 0, False), ("cubes", 8, 0, False),
        ("a", 1, 1, True), ("a", 2, 1, True), ("a", 4, 1, True),
        ("cubes", 1, 1, True), ("cubes", 8, 1, True),
        ("a", 8, 1, True),
        ("a", 1, 1, False), ("a", 2, 1, False), ("a", 4, 1, False), ("a", 8, 1, False),
        ("cubes", 1, 1, False), ("cubes", 8, 1, False)]


def test_a_step_that_would_end_past_the_deadline_is_skipped_and_named(corpus, tmp_path,
                                                                       monkeypatch):
    clock = [0.0]
    ran = []

    def fake_run(step, apps, out, scratch, timeout):
        ran.append(step)
        clock[0] += 3.0 if step[3] else 1.0          # a traced run 3 s, an untraced 1 s
        return {"program": step[0], "ranks": step[1], "traced": step[3],
                "wall_s": 3.0 if step[3] else 1.0, "rc": 0}

    monkeypatch.setattr(corpus, "run_step", fake_run)
    monkeypatch.setattr(corpus.time, "perf_counter", lambda: clock[0])
    monkeypatch.setattr(corpus, "PROGRAMS", {"a": (["a"], [1, 2, 4])})
    monkeypatch.setattr(corpus.subprocess, "run", lambda *a, **k: type("R", (), {"stdout": ""}))
    assert corpus.main([str(tmp_path), str(tmp_path / "out"), "--deadline", "14",
                        "--pack-s", "0", "--expect", "3", "--max-ranks", "2",
                        "--repeats", "2"]) == 0
    report = json.loads((tmp_path / "out" / "node_corpus.json").read_text())
    # the first traces take 3 s each, the untraced runs 1 s (8 s gone); the second
    # trace at 1 rank is expected to take twice its first, 6 s, and 6 s are left;
    # at 2 ranks 6 s are expected with 3 left: skipped; the untraced runs are
    # expected 2 s each (twice an untraced run, not a traced one): both fit
    assert ran == [("a", 1, 0, True), ("a", 2, 0, True), ("a", 1, 0, False),
                   ("a", 2, 0, False), ("a", 1, 1, True), ("a", 1, 1, False),
                   ("a", 2, 1, False)]
    assert report["skipped"] == [["a", 2, 1, True]]
    assert report["max_ranks"] == 2 and report["deadline_s"] == 14
