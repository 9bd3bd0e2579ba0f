"""Was the machine busy?  Load snapshots taken around measurements.

A measurement taken while other programs compete for the cores is not a
measurement of the machine: serial regions stretch, messages wait for a
descheduled peer.  :func:`probe_machine` watches the machine for a short
interval and records

* ``load``: the 1-minute load average;
* ``cores``: cores this process may run on (its affinity);
* ``others``: how many cores' worth of CPU time *other* processes used
  during the interval (from ``/proc/stat``, minus this process's own);
* ``spin_rate``: iterations per second of a fixed busy loop run by this
  process, which drops when it has to share its core.

:meth:`MachineState.busy` calls a machine busy when other processes used
more than ``threshold`` (default a fifth) of a core.  :class:`BusyMeter`
measures the ``others`` figure over a stretch of work without spinning
(MPIBench wraps every block in one; the job's own CPU time is subtracted).  :func:`disturbance`
compares two snapshots (before and after, or now and when a profile was
measured) in words a table or report can print.

>>> quiet = MachineState(load=0.1, cores=2, others=0.02, spin_rate=4.0e7)
>>> busy = MachineState(load=2.1, cores=2, others=0.95, spin_rate=2.1e7)
>>> quiet.busy(), busy.busy()
(False, True)
>>> busy.describe()
'load 2.10, other processes used 0.95 of 2 cores, spin 21.0 M/s'
>>> disturbance(quiet, busy)
'busy: other processes used 0.95 of 2 cores; the probe ran at 52% of its reference speed'
"""

from __future__ import annotations

import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

#: Other processes' CPU use (in cores) above which a machine counts as busy.
BUSY_THRESHOLD = 0.2
#: A spin rate this share below a reference's also counts as disturbed.
SLOWDOWN_THRESHOLD = 0.15


@dataclass(frozen=True)
class MachineState:
    """One snapshot of the machine's load (see the module doc)."""

    load: float
    cores: int
    others: float
    spin_rate: float

    def busy(self, threshold: float = BUSY_THRESHOLD) -> bool:
        """Whether other processes used more than ``threshold`` cores."""
        return self.others > threshold

    def describe(self) -> str:
        """One line for tables and notes."""
        return (f"load {self.load:.2f}, other processes used {self.others:.2f} of "
                f"{self.cores} cores, spin {self.spin_rate / 1e6:.1f} M/s")

    def to_dict(self) -> dict:
        """The snapshot as a plain dict (for JSON)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> MachineState:
        """The snapshot :meth:`to_dict` wrote."""
        return cls(**{name: data[name] for name in ("load", "cores", "others", "spin_rate")})


def disturbance(reference: MachineState, state: MachineState) -> str | None:
    """Why ``state`` differs from ``reference`` in a way that moves timings,
    or ``None`` when it does not (neither busy nor slower)."""
    reasons = []
    if state.busy():
        reasons.append(f"other processes used {state.others:.2f} of {state.cores} cores")
    if reference.spin_rate > 0 and state.spin_rate > 0:
        speed = state.spin_rate / reference.spin_rate
        if speed < 1 - SLOWDOWN_THRESHOLD:
            reasons.append(f"the probe ran at {speed:.0%} of its reference speed")
    return "busy: " + "; ".join(reasons) if reasons else None


def probe_machine(interval: float = 0.2) -> MachineState:
    """Watch the machine for ``interval`` seconds, spinning on this core meanwhile.

    >>> state = probe_machine(0.02)
    >>> state.cores >= 1 and state.spin_rate > 0 and state.others >= 0
    True
    """
    meter, own = BusyMeter().start(), own_cpu_seconds()
    began = time.perf_counter()
    spins = 0
    while time.perf_counter() - began < interval:
        for _ in range(1000):
            pass
        spins += 1000
    elapsed = time.perf_counter() - began
    others = meter.others(own_cpu_seconds() - own)
    return MachineState(load=load_average(), cores=usable_cores(), others=round(others, 3),
                        spin_rate=spins / elapsed)


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity).

    >>> usable_cores() >= 1
    True
    """
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def loads_differ(others: float, reference: float | None) -> bool:
    """Whether two measurements of other processes' CPU (cores) differ by more
    than :data:`BUSY_THRESHOLD` (False when ``reference`` was not taken).

    >>> loads_differ(1.1, 0.05), loads_differ(0.1, 0.05), loads_differ(1.1, None)
    (True, False, False)
    """
    return reference is not None and abs(others - reference) > BUSY_THRESHOLD


#: How an MPI rank blocked in a call waits: busy-polling its core, or asleep.
WAIT_STYLES = ("poll", "sleep")


def mpi_wait_style(environ: dict[str, str] | None = None) -> str:
    """How this machine's MPI library waits in a blocking call, from the
    environment: ``"sleep"`` when Intel MPI's ``I_MPI_WAIT_MODE`` is on, else
    ``"poll"`` (MPICH's and Open MPI's default: a waiting rank keeps its core
    busy; Open MPI's ``mpi_yield_when_idle`` still polls between yields).

    >>> mpi_wait_style({}), mpi_wait_style({"I_MPI_WAIT_MODE": "1"})
    ('poll', 'sleep')
    """
    env = os.environ if environ is None else environ
    if env.get("I_MPI_WAIT_MODE", "").strip().lower() in ("1", "on", "yes", "enable"):
        return "sleep"
    return "poll"


def own_cpu_seconds() -> float:
    """CPU seconds (user + system) this process has used."""
    times = os.times()
    return times.user + times.system


def _cpu_ticks() -> tuple[int, int]:
    """(all, idle) jiffies summed over the machine's cores; (0, 0) off Linux."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0, 0
    ticks = [int(value) for value in fields]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)       # idle + iowait
    return sum(ticks[:8]), idle


class BusyMeter:
    """How many cores' worth of CPU time other processes used while a job worked.

    Call :meth:`start` before the work and :meth:`others` after it with the
    CPU seconds the job's own processes spent meanwhile (one process:
    :func:`own_cpu_seconds` differences; an MPI job: their sum over ranks).

    >>> meter = BusyMeter().start()
    >>> began = own_cpu_seconds()
    >>> _ = sum(range(200_000))
    >>> meter.others(own_cpu_seconds() - began) >= 0
    True
    """

    def start(self) -> BusyMeter:
        """Note the CPU counters now; returns the meter."""
        self._ticks = _cpu_ticks()
        self._began = time.perf_counter()
        return self

    def others(self, job_cpu_seconds: float) -> float:
        """Cores' worth of CPU others used since :meth:`start` (0 off Linux)."""
        elapsed = time.perf_counter() - self._began
        total, idle = _cpu_ticks()
        if total <= self._ticks[0] or elapsed <= 0:
            return 0.0
        busy_share = 1 - (idle - self._ticks[1]) / (total - self._ticks[0])
        return max(0.0, busy_share * (os.cpu_count() or 1) - job_cpu_seconds / elapsed)


def load_average() -> float:
    """The 1-minute load average (0 where the system does not say).

    >>> load_average() >= 0
    True
    """
    try:
        return os.getloadavg()[0]
    except OSError:
        return 0.0
