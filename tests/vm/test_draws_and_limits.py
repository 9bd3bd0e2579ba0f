"""Random draws, non-finite values, inlining and deep expressions (issue 16)."""

from __future__ import annotations

import pytest

from pevpm.errors import DirectiveError, ModelError
from pevpm.machine.presets import parse_machine
from pevpm.model.directives import parse_directives
from pevpm.model.expr import Expr
from pevpm.model.inlining import MAX_INSTRUCTIONS, inlined_size
from pevpm.vm.kernel.engine import simulate

MACHINE = parse_machine("constant:latency=1us")


def run(text: str, numprocs: int = 1):
    return simulate(parse_directives(text, "m.c"), numprocs, MACHINE)


@pytest.mark.parametrize("time, expected", [
    ("exponential(-1) + procnum", ("m.c:1:10: exponential(-1) is undefined: needs a finite "
                                  "mean >= 0")),
    ("gamma(procnum, 1)", "m.c:1:10: gamma(0, 1) is undefined: needs finite mean > 0"),
    ("uniform(procnum, 1e308 * 10)", "m.c:1:10: uniform(0, inf) is undefined"),
    ("gamma(1e-300, 1e300)", ("m.c:1:10: gamma(1e-300, 1e+300) is undefined: the mean and sd "
                             "are too far apart")),
    ("log2(procnum - 1)", "m.c:1:10: log2(-1) is undefined: math domain error"),
    ("1e308 * (procnum + 10)", ("m.c:1:10: '1e+308 * (procnum + 10)' is inf on rank 0, not a "
                               "finite number")),
])
def test_bad_values_at_run_time_name_the_place(time, expected):
    with pytest.raises(ModelError) as info:
        run(f"// PEVPM Serial time = {time}\n")
    assert str(info.value).startswith(expected)


def test_documented_random_serial_time_runs():
    result = run("// PEVPM Serial time = gamma(1, 0.5)\n")
    assert result.makespan > 0


def test_non_finite_size_and_count_are_errors_not_crashes():
    with pytest.raises(ModelError, match="is inf on rank 0"):
        run("// PEVPM Loop iterations = 1e308 * (procnum + 10)\n// PEVPM {\n"
            "// PEVPM Serial time = 1\n// PEVPM }\n")


def subroutines(depth: int) -> str:
    lines = ["// PEVPM Call name = s0"]
    for i in range(depth):
        lines += [f"// PEVPM Subroutine name = s{i}", "// PEVPM {",
                  f"// PEVPM Call name = s{i + 1}", f"// PEVPM Call name = s{i + 1}", "// PEVPM }"]
    lines += [f"// PEVPM Subroutine name = s{depth}", "// PEVPM {", "// PEVPM Serial time = 1",
              "// PEVPM }"]
    return "\n".join(lines) + "\n"


def test_inlining_explosion_is_refused_before_any_work_naming_the_chain():
    model = parse_directives(subroutines(40), "deep.c")
    assert inlined_size(model) == 2**40
    with pytest.raises(ModelError, match=r"^deep.c: inlining subroutines would create "
                                         r"1099511627776 instructions \(limit 1000000\): main "
                                         r"calls s0 \(1 time\), s0 calls s1 \(2 times\)"):
        simulate(model, 2, MACHINE)


def test_inlining_below_the_limit_still_runs():
    model = parse_directives(subroutines(10), "ok.c")
    assert inlined_size(model) == 1024 < MAX_INSTRUCTIONS
    assert simulate(model, 1, MACHINE).makespan == 1024


def test_long_flat_sum_is_refused_with_its_line():
    text = "int a;\n// PEVPM Serial time = " + "+".join(["1e-9"] * 5000) + "\n"
    with pytest.raises(DirectiveError) as info:
        parse_directives(text, "sum.c")
    message = str(info.value)
    assert message.startswith("sum.c:2:24: expression nested too deeply (5000 levels")
    assert "blocks nested too deeply" not in message
    assert max(len(line) for line in message.splitlines()) < 300


def test_a_megabyte_expression_is_tokenised_in_linear_time():
    text = "+".join(["procnum"] * 140_000)          # about 1.1 MB
    with pytest.raises(DirectiveError, match="nested too deeply"):
        Expr.parse(text)
