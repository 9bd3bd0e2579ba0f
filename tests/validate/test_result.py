import pytest

from pevpm.errors import PevpmError
from pevpm.validate.result import format_result, parse_result


def test_result_line_round_trips_through_noisy_output():
    line = format_result("jacobi", 2, {"size": 8}, 1.5,
                         [{"rank": 0, "compute": 1.0}, {"rank": 1, "compute": 1.2}],
                         extra={"checksum": 3.0})
    record = parse_result(f"warning: something\n{line}\nbye\n")
    assert record == {"program": "jacobi", "nprocs": 2, "params": {"size": 8},
                      "wall_time": 1.5, "extra": {"checksum": 3.0},
                      "ranks": [{"rank": 0, "compute": 1.0}, {"rank": 1, "compute": 1.2}]}


@pytest.mark.parametrize("output, message", [
    ("no result here\n", "found 0"),
    (format_result("a", 1, {}, 1.0, []) + "\n" + format_result("a", 1, {}, 1.0, []), "found 2"),
    ("PEVPM-RESULT {not json", "unreadable result line"),
])
def test_missing_duplicate_or_broken_result_lines_are_errors(output, message):
    with pytest.raises(PevpmError, match=message):
        parse_result(output)
