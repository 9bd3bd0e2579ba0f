"""Hypothesis strategies for the trace commands (``replay``, ``extract``,
``predict --recorded``, ``report --recorded``): a small two-rank archive
(:func:`trace_archives.ping_records`) with a few of its records changed
(hostile ``pevpm::cpu``/``pevpm::sleep`` values, a record dropped, a region
renamed, a peer out of range, a rank emptied, one rank or three) and perhaps
its files damaged, then one command with hostile option values and an output
path that may be a folder, an existing file or in a missing folder.

A case is drawn as for :mod:`fuzz_strategies`: ``case(tmp, profile) -> list of argv``.
:func:`output_paths` names the files and folders a command line would write.
"""

from __future__ import annotations

import contextlib
import copy
from pathlib import Path

import _otf2
from hypothesis import strategies as st
from trace_archives import DAMAGES, damage, ping_records, write_archive

from pevpm.trace.otf2.read import quiet_otf2

SECONDS = st.sampled_from([-1.0, float("nan"), float("inf"), 1e300, 0.0, 1e-9, 5e-3])
PEERS = st.sampled_from([0, 1, 2, 7, 2**31])
REGIONS = st.sampled_from(["MPI_Frobnicate", "compute", "MPI_Recv", "MPI_Init", "x"])
OPTIONS = ("-1", "0", "nan", "inf", "1e-320", "1e308", "2", "0.5", "abc", "")
SECTIONS = ("MPI_Init:MPI_Finalize", "MPI_Barrier:MPI_Finalize", "MPI_X:MPI_Y", ":",
            "MPI_Send", "MPI_Send:MPI_Send", "MPI_Finalize:MPI_Init")
MACHINE = ["--machine", "constant:latency=1us"]
#: A model that runs at any rank count, for ``--model`` and ``predict --recorded``.
LOOP_MODEL = ("// PEVPM Loop iterations = 3\n// PEVPM {\n// PEVPM Serial time = 1e-6\n"
              "// PEVPM }\n")


@st.composite
def _change(draw):
    """One change to the records: a function of the list of ranks, in place."""
    kind = draw(st.sampled_from(["cpu", "sleep", "drop", "rename", "peer", "empty", "one",
                                 "three"]))
    rank, index, value = draw(st.integers(0, 1)), draw(st.integers(0, 40)), None
    if kind in ("cpu", "sleep"):
        value = draw(SECONDS)
    elif kind == "rename":
        value = draw(REGIONS)
    elif kind == "peer":
        value = draw(PEERS)

    def apply(ranks: list) -> None:
        records = ranks[rank % len(ranks)] if ranks else []
        if kind == "one":
            del ranks[1:]
        elif kind == "three":
            ranks.append(copy.deepcopy(ranks[0]))
        elif kind == "empty":
            records.clear()
        elif records and kind == "drop":
            records.pop(index % len(records))
        elif records:
            _edit(records, kind, index, value)
    return apply


def _edit(records: list, kind: str, index: int, value) -> None:
    """Change the ``index``-th (modulo) record of the kind the change needs."""
    wanted = {"cpu": "enter", "sleep": "enter", "rename": "enter", "peer": ("send", "recv")}
    at = [i for i, r in enumerate(records) if r[0] in wanted[kind]]
    if not at:
        return
    i = at[index % len(at)]
    record = list(records[i])
    slot = {"cpu": 3, "sleep": 4, "rename": 2, "peer": 2}[kind]
    record[slot] = value
    records[i] = tuple(record)


@st.composite
def trace_case(draw):
    changes = draw(st.lists(_change(), max_size=2))
    broken = draw(st.sampled_from([None] * len(DAMAGES) + list(DAMAGES)))
    value = draw(st.one_of(st.sampled_from(OPTIONS), st.sampled_from(["1", "2", "0.5"])))
    section = draw(st.sampled_from(SECTIONS))
    template = draw(st.sampled_from([
        ["replay", "{trace}", *MACHINE, "--speed", "{v}", "--runs", "2"],
        ["replay", "{trace}", *MACHINE, "--runs", "{v}"],
        ["replay", "{trace}", *MACHINE, "--no-delays", "--runs", "2", "--json"],
        ["replay", "{trace}", *MACHINE, "--runs", "1", "--perfetto", "{path}"],
        ["extract", "{trace}", "-o", "{path}"],
        ["extract", "{trace}", "-o", "{path}", "--section", section],
        ["predict", "{model}", "--recorded", "{trace}", "--trace", "{path}", *MACHINE,
         "--runs", "2", "--workers", "1", "--no-bounds"],
        ["report", "{folder}", "--recorded", "{trace}", *MACHINE],
        ["report", "{folder}", "--recorded", "{trace}", *MACHINE, "--section", section],
        ["report", "{folder}", "--recorded", "{trace}", *MACHINE, "--model", "{model}"],
    ]))
    path_kind = draw(st.sampled_from(["missing-folder", "folder", "file", "new", "new", "new"]))

    def case(tmp: Path, profile: Path) -> list[list[str]]:
        ranks = ping_records()
        for apply in changes:
            apply(ranks)
        archive = tmp / "trace"
        with quiet_otf2(), contextlib.suppress(_otf2.ErrorCodes.Error):
            write_archive(archive, ranks)      # refused (times out of order): no archive
        if broken and any((archive / "traces").glob("*.evt")):
            damage(archive, broken)
        model = tmp / "loop.c"
        model.write_text(LOOP_MODEL)
        existing = tmp / "existing.txt"
        existing.write_text("keep me\n")
        path = {"missing-folder": tmp / "no" / "such" / "out.x", "folder": tmp,
                "file": existing, "new": tmp / "new-output.json"}[path_kind]
        folder = {"missing-folder": tmp / "no" / "report", "folder": tmp / "report",
                  "file": existing, "new": tmp / "report"}[path_kind]
        fill = {"{trace}": str(archive), "{v}": value, "{path}": str(path),
                "{folder}": str(folder), "{model}": str(model)}
        return [[fill.get(word, word) for word in template]]
    return case


def output_paths(argv: list[str]) -> list[Path]:
    """The files (``-o``, ``--perfetto``, ``--trace``) and report folder a trace
    command line writes.

    >>> output_paths(["report", "r", "--recorded", "t"]), output_paths(["extract", "t", "-o", "m"])
    ([PosixPath('r')], [PosixPath('m')])
    """
    found = [Path(argv[i + 1]) for i, word in enumerate(argv[:-1])
             if word in ("-o", "--perfetto", "--trace")]
    return found + ([Path(argv[1])] if argv[0] == "report" else [])
