"""The fuzzing harness tells clean outcomes from failures."""

from __future__ import annotations

from fuzz_harness import _kind, run


def test_a_command_past_its_time_is_a_hang(tmp_path):
    model = tmp_path / "forever.c"
    model.write_text("// PEVPM Loop iterations = 1e12\n// PEVPM {\n// PEVPM Serial time = 1e-9\n"
                     "// PEVPM }\n")
    outcome = run(["predict", str(model), "-n", "1", "--runs", "1", "--workers", "1",
                   "--max-events", "0", "--no-bounds", "--exact"], limit=1.0)
    assert outcome.kind == "hang" and outcome.failed


def test_clean_and_unclean_exits():
    assert _kind(2, "pevpm: error: x.c:1:1: bad\n", "", False) == "error"
    assert _kind(2, "pevpm: error: x.c:1:1: bad\n// PEVPM Serail\n         ^\n", "", False) \
        == "error"
    assert _kind(2, "pevpm: error: one\npevpm: error: two\n", "", False) == "unclean"
    assert _kind(None, "", "Traceback (most recent call last):\n", False) == "traceback"
    assert _kind(0, "Traceback (most recent call last):\n", "", False) == "traceback"
    assert _kind(130, "pevpm: interrupted\n", "", False) == "unclean"
