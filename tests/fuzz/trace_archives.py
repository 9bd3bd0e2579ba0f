"""Small OTF2 archives, whole or damaged, for fuzzing the trace commands.

An archive is written from one list of records per rank, each a tuple:
``("enter", tick, region, cpu, sleep)`` (``cpu``/``sleep``: the Enter's
``pevpm::cpu``/``pevpm::sleep`` attributes, None to leave one out),
``("leave", tick, region)``, ``("send", tick, peer, tag, size)``,
``("recv", tick, peer, tag, size)`` or ``("barrier", begin, end)``; ticks are
microseconds.  The writer takes the records as given, so they may be out of
order, unbalanced or name any region.  :func:`damage` then breaks the files.

>>> import tempfile
>>> from pevpm.trace.otf2.read import read_archive
>>> with tempfile.TemporaryDirectory() as d:
...     trace = read_archive(write_archive(Path(d), ping_records()))
>>> [[c.name for c in calls] for calls in trace.ranks]
[['MPI_Init', 'MPI_Send', 'MPI_Barrier', 'MPI_Finalize'], ['MPI_Init', 'MPI_Recv', 'MPI_Barrier', 'MPI_Finalize']]
"""

from __future__ import annotations

from pathlib import Path

import otf2
from otf2.enums import CollectiveOp, GroupType, LocationGroupType, Paradigm, RegionRole, Type

from pevpm.trace.events import CPU_ATTRIBUTE, SLEEP_ATTRIBUTE


def call(name: str, start: int, end: int, cpu=None, sleep=None, *inner) -> list[tuple]:
    """One MPI call's records: Enter (with its gap's attributes), ``inner``, Leave."""
    return [("enter", start, name, cpu, sleep), *inner, ("leave", end, name)]


def ping_records(cpu=0.002, sleep=0.0, attributes: bool = True) -> list[list[tuple]]:
    """Rank 0 sends 800 bytes to rank 1, then both meet in a barrier; without
    ``attributes`` no Enter has ``pevpm::cpu`` or ``pevpm::sleep`` (a Score-P archive)."""
    zero = 0.0 if attributes else None
    if not attributes:
        cpu = sleep = None
    return [
        [*call("MPI_Init", 0, 1000), *call("MPI_Send", 3000, 3500, cpu, sleep,
                                           ("send", 3000, 1, 5, 800)),
         *call("MPI_Barrier", 4000, 4200, zero, zero, ("barrier", 4000, 4200)),
         *call("MPI_Finalize", 5000, 5100)],
        [*call("MPI_Init", 0, 1200), *call("MPI_Recv", 1500, 3600, zero, zero,
                                           ("recv", 3600, 0, 5, 800)),
         *call("MPI_Barrier", 4100, 4200, zero, zero, ("barrier", 4100, 4200)),
         *call("MPI_Finalize", 4800, 5100)],
    ]


def write_archive(directory: Path, ranks: list[list[tuple]]) -> Path:
    """Write ``ranks`` (one list of records per rank) as ``directory/traces.otf2``."""
    with otf2.writer.open(str(directory), archive_name="traces",
                          timer_resolution=1_000_000) as archive:
        d = archive.definitions
        node = d.system_tree_node("node")
        locations = [d.location("Master thread", group=d.location_group(
            f"MPI Rank {r}", location_group_type=LocationGroupType.PROCESS,
            system_tree_parent=node)) for r in range(len(ranks))]
        d.group("", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI,
                members=locations)
        world = d.comm("MPI_COMM_WORLD", group=d.group(
            "MPI_COMM_WORLD", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI,
            members=list(range(len(ranks)))))
        cpu = d.attribute(CPU_ATTRIBUTE, "CPU seconds before the call", Type.DOUBLE)
        slept = d.attribute(SLEEP_ATTRIBUTE, "seconds slept before the call", Type.DOUBLE)
        regions: dict = {}

        def region(name):
            return regions.setdefault(name, d.region(
                name, paradigm=Paradigm.MPI, region_role=RegionRole.POINT2POINT))

        for location, records in zip(locations, ranks, strict=True):
            writer = archive.event_writer_from_location(location)
            for kind, tick, *rest in records:
                if kind == "enter":
                    name, seconds, sleep = rest
                    named = {a: v for a, v in ((cpu, seconds), (slept, sleep)) if v is not None}
                    writer.enter(tick, region(name), attributes=named or None)
                elif kind == "leave":
                    writer.leave(tick, region(rest[0]))
                elif kind == "send":
                    writer.mpi_send(tick, rest[0], world, rest[1], rest[2])
                elif kind == "recv":
                    writer.mpi_recv(tick, rest[0], world, rest[1], rest[2])
                else:
                    writer.mpi_collective_begin(tick)
                    writer.mpi_collective_end(rest[0], CollectiveOp.BARRIER, world,
                                              otf2.Undefined.UINT32, 0, 0)
    return directory / "traces.otf2"


def damage(directory: Path, how: str) -> None:
    """Break the archive in ``directory``: ``no-definitions`` (the global definitions
    file removed), ``no-events`` (rank 0's event file removed), ``truncated-events``,
    ``truncated-definitions`` (cut to half), ``garbled-events`` (bytes overwritten),
    ``empty-anchor`` (the anchor file cut to its magic bytes)."""
    anchor = directory / "traces.otf2"
    events = min((directory / "traces").glob("*.evt"))
    definitions = directory / "traces.def"
    if how == "no-definitions":
        definitions.unlink()
    elif how == "no-events":
        events.unlink()
    elif how.startswith("truncated-"):
        path = events if how == "truncated-events" else definitions
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif how == "garbled-events":
        data = bytearray(events.read_bytes())
        data[len(data) // 3: len(data) // 3 + 16] = b"\xff" * 16
        events.write_bytes(bytes(data))
    elif how == "empty-anchor":
        anchor.write_bytes(anchor.read_bytes()[:16])
    else:
        raise ValueError(how)


DAMAGES = ("no-definitions", "no-events", "truncated-events", "truncated-definitions",
           "garbled-events", "empty-anchor")
