"""How fast annotated sources are read: parse, round trip, and lint the examples.

    PYTHONPATH=src python benchmarks/directive_parser.py [repeats]

Prints the median over ``repeats`` (default 20) of the wall time per call for
each example: parsing the file, parsing the model printed back as directives,
linting; and the directive lines parsed per second.
"""

from __future__ import annotations

import statistics
import sys
import time
from functools import partial
from pathlib import Path

from pevpm.model.directives import parse_directives
from pevpm.model.lint import lint_source
from pevpm.model.printer import to_directives
from pevpm.model.source import scan

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*/*.c"))


def median_seconds(call, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(repeats: int) -> None:
    print(f"{'example':<18}{'lines':>7}{'directives':>12}{'parse ms':>10}"
          f"{'reparse ms':>16}{'lint ms':>9}{'directive lines/s':>19}")
    for path in EXAMPLES:
        text = path.read_text()
        directives = len(scan(text, "c"))
        model = parse_directives(text, str(path))
        printed = to_directives(model)
        parse = median_seconds(partial(parse_directives, text, str(path)), repeats)
        again = median_seconds(partial(parse_directives, printed), repeats)
        lint = median_seconds(partial(lint_source, text, str(path), "c"), repeats)
        print(f"{path.name:<18}{len(text.splitlines()):>7}{directives:>12}{parse * 1e3:>10.2f}"
              f"{again * 1e3:>16.2f}{lint * 1e3:>9.2f}{directives / parse:>19.0f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
