"""Profiles shipped with pevpm, by name, and where any profile was measured.

Every ``NAME-profile.db`` in the package's ``data`` folder is a *built-in*
profile called ``NAME`` (today: ``default``).  Wherever pevpm takes a
profile file -- ``--machine``, ``profile show``, ``fit``, ``validate
--machine``, ``demo --profile``, ``lab validate --profile`` -- a built-in
name does as well; :func:`resolve_profile` is the one place that decides.

>>> builtin_names()
['default']
>>> resolve_profile("default").name
'default-profile.db'
>>> str(resolve_profile("runs/machine.db"))
'runs/machine.db'

A profile's *origin* is the machine it was measured on.  ``pevpm bench``
records it in the profile's ``meta`` table (:func:`record_origin`); for older
profiles it is pieced together from the runs:

>>> origin = profile_origin("default")
>>> origin.host, origin.cores, origin.mpi_library, origin.wait
('vm', 2, 'MPICH 5.0.2', 'poll')
>>> origin.measured
'2026-11-22T02:29'
"""

from __future__ import annotations

import os
import platform
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from pevpm.errors import ProfileError
from pevpm.host import mpi_wait_style, usable_cores
from pevpm.profile.store import Profile, ProfileWriter

#: File name suffix that makes a file in ``pevpm/data`` a built-in profile.
BUILTIN_SUFFIX = "-profile.db"

#: The MPI library a synthetic profile (``pevpm machine new``) records: a machine
#: described, not measured, so no host to compare with.
SYNTHETIC_LIBRARY = "synthetic"

#: ``meta`` keys holding a profile's origin (written by ``pevpm bench``): ``cores``
#: are the cores the benchmark could use (its affinity), ``wait`` how the MPI
#: library waits (``poll`` or ``sleep``; profiles without it: ``poll``).
ORIGIN_KEYS = ("host", "host_description", "cpu", "cores", "wait", "purpose")


def _data_dir() -> Path:
    return Path(str(resources.files("pevpm") / "data"))


def builtin_names() -> list[str]:
    """Names of the profiles shipped with pevpm, sorted (``default`` first)."""
    names = [p.name[: -len(BUILTIN_SUFFIX)] for p in _data_dir().glob("*" + BUILTIN_SUFFIX)]
    return sorted(names, key=lambda name: (name != "default", name))


def is_builtin(spec: str | os.PathLike) -> bool:
    """Whether ``spec`` names a built-in profile (a name, not a path).

    >>> is_builtin("default"), is_builtin("default.db"), is_builtin("./default")
    (True, False, False)
    """
    return isinstance(spec, str) and spec in builtin_names()


def resolve_profile(spec: str | os.PathLike) -> Path:
    """The file a profile argument means: a built-in name or a path (unchecked).

    A built-in name wins over a file of the same name in the current folder;
    write ``./default`` for the file.
    """
    if is_builtin(spec):
        return _data_dir() / f"{spec}{BUILTIN_SUFFIX}"
    return Path(spec)


def open_profile(spec: str | os.PathLike) -> Profile:
    """Open the profile a name or path gives, read-only; a missing file's error
    lists the built-in names.

    >>> with open_profile("default") as prof:
    ...     prof.machine.placements
    ['1x2', '1x4']
    """
    path = resolve_profile(spec)
    if not path.is_file():
        raise ProfileError(f"no such profile file (built-in profiles: "
                           f"{', '.join(builtin_names())})", where=str(spec))
    return Profile.open(path)


def cpu_model() -> str:
    """The processor's model name as the operating system reports it ('' if unknown)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor()


@dataclass(frozen=True)
class ProfileOrigin:
    """Where and when a profile was measured, and what it is good for.

    >>> here = ProfileOrigin.of_this_host()
    >>> there = ProfileOrigin("node7", "", "Xeon", 8, "Open MPI 4.1", "2025-01-02T03:04")
    >>> there.differs_from(there), here.differs_from(there)
    (False, True)
    """

    host: str
    description: str
    cpu: str
    cores: int | None
    mpi_library: str
    measured: str
    purpose: str = ""
    wait: str = "poll"
    #: Largest send measured to complete before its receive (bytes; None: not measured).
    eager: int | None = None

    def summary(self) -> str:
        """One line: host (description), MPI library, date measured.

        >>> ProfileOrigin("n1", "", "Xeon", 8, "Open MPI 4.1", "2025-01-02T03:04").summary()
        'n1 (8 cores, Xeon), Open MPI 4.1, 2025-01-02T03:04'
        """
        about = self.description or ", ".join(filter(None, [
            f"{self.cores} cores" if self.cores else "", self.cpu]))
        host = f"{self.host} ({about})" if about else self.host or "unknown host"
        return ", ".join(filter(None, [host, self.mpi_library,
                                       self.measured]))

    @classmethod
    def of_this_host(cls) -> ProfileOrigin:
        """The machine pevpm runs on now (``cores``: those this process may use)."""
        return cls(platform.node(), "", cpu_model(), usable_cores(), "", "",
                   wait=mpi_wait_style())

    def differs_from(self, other: ProfileOrigin) -> bool:
        """Whether ``other`` is evidently another machine: another host name, or
        another processor or core count where both are recorded."""
        if self.host and other.host and self.host != other.host:
            return True
        if self.cpu and other.cpu and self.cpu != other.cpu:
            return True
        return bool(self.cores and other.cores and self.cores != other.cores)


def _library_name(text: str) -> str:
    """``'MPICH Version: 5.0.2\\n...'`` -> ``'MPICH 5.0.2'``."""
    first = " ".join(text.split("\n")[0].split())
    return first.replace(" Version:", "").replace(" version", "")


def origin_of(profile: Profile) -> ProfileOrigin:
    """The origin recorded in an open profile (gaps filled from its runs).

    >>> with open_profile("default") as prof:
    ...     origin_of(prof).description
    '2-core development VM, AMD EPYC, shared memory only'
    """
    meta = profile.metadata
    runs = profile.runs()
    hosts = sorted({host for run in runs for host in run.hosts})
    cores = meta.get("cores")
    return ProfileOrigin(
        host=meta.get("host") or ", ".join(hosts),
        description=meta.get("host_description", ""),
        cpu=meta.get("cpu", ""),
        cores=int(cores) if cores else None,
        mpi_library=_library_name(runs[-1].mpi_library) if runs else "",
        measured=(runs[0].started[:16] if runs else meta.get("created", "")[:16]),
        purpose=meta.get("purpose", ""),
        wait=meta.get("wait", "poll"),
        eager=int(meta["eager"]) if meta.get("eager") else None,
    )


def profile_origin(spec: str | os.PathLike) -> ProfileOrigin:
    """The origin of the profile a name or path gives (see :func:`origin_of`)."""
    with open_profile(spec) as profile:
        return origin_of(profile)


def record_origin(writer: ProfileWriter, host: str | None = None,
                  cores: int | None = None) -> None:
    """Write this machine's host name, processor, usable cores (``cores``: the
    count taken before a benchmark pinned its ranks to one core each) and MPI
    wait style into a profile (what ``pevpm bench`` does), keeping a
    description or purpose already there.

    >>> import tempfile, shutil, os
    >>> folder = tempfile.mkdtemp()
    >>> copy = shutil.copy(resolve_profile("default"), os.path.join(folder, "m.db"))
    >>> with ProfileWriter.open(copy) as writer:
    ...     record_origin(writer, host="node7")
    >>> origin = profile_origin(copy)
    >>> origin.host, origin.cores == usable_cores(), origin.wait, origin.description[:7]
    ('node7', True, 'poll', '2-core ')
    >>> shutil.rmtree(folder)
    """
    here = ProfileOrigin.of_this_host()
    cores = cores or here.cores
    writer.set_metadata(host=host or here.host, cpu=here.cpu, cores=str(cores or ""),
                        wait=here.wait)


def different_host_note(spec: str | os.PathLike) -> str | None:
    """A note when the profile was measured on another machine than this one, else None
    (also for a synthetic profile, which describes a machine rather than measures one).

    >>> different_host_note("default") is None or "measured on" in different_host_note("default")
    True
    """
    origin = profile_origin(spec)
    here = ProfileOrigin.of_this_host()
    if origin.mpi_library == SYNTHETIC_LIBRARY or not origin.differs_from(here):
        return None
    name = f"'{spec}'" if is_builtin(spec) else str(spec)
    return (f"profile {name} was measured on {origin.summary()}; this is {here.host or '?'} "
            f"({here.cores} cores, {here.cpu or 'unknown processor'}): the prediction is for "
            "that machine (measure this one with: mpiexec -n 2 pevpm bench --quick -o "
            "machine.db)")


__all__ = ["ProfileOrigin", "builtin_names", "different_host_note", "is_builtin",
           "open_profile", "origin_of", "profile_origin", "record_origin", "resolve_profile"]
