"""Deep but legal models end in one error naming the limit, never a
RecursionError (issue 30, item 3); a cycle of calls is named as a cycle."""

from __future__ import annotations

import pytest

from pevpm.cli import main
from pevpm.model.depth import MAX_NESTING

CONSTANT = "constant:latency=1e-6"


def nested(keyword: str, levels: int) -> str:
    opener = {"Runon": "// PEVPM Runon c1 = procnum >= 0",
              "Condition": "// PEVPM Condition c1 = 1",
              "Loop": "// PEVPM Loop iterations = 2"}[keyword]
    return "\n".join([f"{opener}\n// PEVPM {{"] * levels + ["// PEVPM Serial time = 1"]
                     + ["// PEVPM }"] * levels) + "\n"


def chain(length: int) -> str:
    lines = ["// PEVPM Call name = s0"]
    for i in range(length):
        inner = f"// PEVPM Call name = s{i + 1}" if i < length - 1 else "// PEVPM Serial time = 1"
        lines += [f"// PEVPM Subroutine name = s{i}", "// PEVPM {", inner, "// PEVPM }"]
    return "\n".join(lines) + "\n"


LOOPS_PY = '''import contextlib

from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder()
    with contextlib.ExitStack() as stack:
        for _ in range(LEVELS):
            stack.enter_context(b.loop(1))
        b.serial(1)
    return b
'''


def run_all(path, capsys) -> list[str]:
    """The error line of show, check and predict (2 workers: the pool pickles)."""
    lines = []
    for argv in (["show", str(path)], ["check", str(path)],
                 ["predict", str(path), "-n", "2", "--runs", "4", "--workers", "2",
                  "--machine", CONSTANT]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert "Traceback" not in err and "RecursionError" not in err, err
        lines.append(err.strip().splitlines()[0])
    return lines


@pytest.mark.parametrize("keyword", ["Runon", "Condition"])
def test_150_nested_blocks(tmp_path, capsys, keyword):
    model = tmp_path / "deep.c"
    model.write_text(nested(keyword, 150))
    for line in run_all(model, capsys):
        assert f"deep.c:{2 * MAX_NESTING + 1}:" in line and f"{MAX_NESTING}" in line, line


def test_a_chain_of_400_subroutines(tmp_path, capsys):
    model = tmp_path / "chain.c"
    model.write_text(chain(400))
    for line in run_all(model, capsys):
        assert "nests 400 levels deep" in line and "main calls s0" in line, line


def test_3000_nested_loops_in_a_python_model_and_the_deepest_allowed(tmp_path, capsys):
    model = tmp_path / "loops.py"
    model.write_text(LOOPS_PY.replace("LEVELS", "3000"))
    for line in run_all(model, capsys):
        assert "nests 3000 levels deep" in line, line
    model.write_text(LOOPS_PY.replace("LEVELS", str(MAX_NESTING - 1)))   # + the Serial
    assert main(["predict", str(model), "-n", "2", "--runs", "4", "--workers", "2",
                 "--machine", CONSTANT]) == 0


def test_mutual_recursion_is_named_as_a_cycle(tmp_path, capsys):
    model = tmp_path / "m.c"
    model.write_text("// PEVPM Call name = a\n"
                     "// PEVPM Subroutine name = a\n// PEVPM {\n// PEVPM Call name = b\n"
                     "// PEVPM }\n"
                     "// PEVPM Subroutine name = b\n// PEVPM {\n// PEVPM Call name = a\n"
                     "// PEVPM }\n")
    assert main(["show", str(model)]) == 2
    err = capsys.readouterr().err
    assert "a calls b, b calls a" in err and "calls itself" not in err
