"""The one-line JSON result every example program prints, and its parser.

An example program times its main section on every rank, then rank 0 prints
a single line starting with ``PEVPM-RESULT `` followed by a JSON object::

    {"program": "jacobi", "nprocs": 2, "params": {...},
     "wall_time": 1.23, "ranks": [{"rank": 0, "compute": 0.9, "comm": 0.3}, ...],
     "extra": {...}}

``wall_time`` is the slowest rank's time of the timed section (started after
a barrier, measured with ``MPI.Wtime``), so start-up and tear-down are left out.

>>> line = format_result("demo", 1, {"n": 4}, 0.5, [{"rank": 0, "compute": 0.5}])
>>> parse_result(line + "\\n")["wall_time"]
0.5
"""

from __future__ import annotations

import json

from pevpm.errors import PevpmError

PREFIX = "PEVPM-RESULT "


def format_result(
    program: str,
    nprocs: int,
    params: dict,
    wall_time: float,
    ranks: list[dict],
    extra: dict | None = None,
) -> str:
    """The result line for one run (without a trailing newline)."""
    record = {
        "program": program,
        "nprocs": nprocs,
        "params": params,
        "wall_time": wall_time,
        "ranks": ranks,
        "extra": extra or {},
    }
    return PREFIX + json.dumps(record, sort_keys=True)


def report(comm, program: str, params: dict, elapsed: float, breakdown: dict,
           extra: dict | None = None) -> None:
    """Gather every rank's timing on rank 0 and print the result line there.

    ``elapsed`` is this rank's time in the timed section (``MPI.Wtime()``
    differences, started right after a barrier); ``breakdown`` maps phase
    names (``compute``, ``comm``, ...) to this rank's seconds in them.
    Collective: call it on all ranks.
    """
    entry = {"rank": comm.rank, "elapsed": elapsed, **breakdown}
    ranks = comm.gather(entry, root=0)
    if comm.rank == 0:
        wall = max(r["elapsed"] for r in ranks)
        print(format_result(program, comm.size, params, wall, ranks, extra), flush=True)


def parse_result(output: str) -> dict:
    """The result record printed in ``output``; PevpmError if there is none.

    >>> parse_result("noise\\n" + format_result("x", 2, {}, 1.0, []))["nprocs"]
    2
    """
    lines = [ln for ln in output.splitlines() if ln.startswith(PREFIX)]
    if len(lines) != 1:
        raise PevpmError(f"expected one '{PREFIX.strip()}' line in the program's output, "
                         f"found {len(lines)}")
    try:
        return json.loads(lines[0][len(PREFIX):])
    except json.JSONDecodeError as exc:
        raise PevpmError(f"unreadable result line: {exc}") from None
