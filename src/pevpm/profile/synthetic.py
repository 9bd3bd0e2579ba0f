"""Hypothetical machines: a profile computed from a few numbers, not measured.

The thesis's further work no. 6: obtain Pearson V communication parameters
from a machine's description instead of from benchmarks.  A
:class:`HypotheticalMachine` is described by latency, bandwidth, a Pearson V
shape and how contention on a link changes it; :func:`write_profile` turns
it into a profile file with the same ``isend`` / ``isendlocal`` blocks (and
stored Pearson V fits) that MPIBench writes, so the virtual machine and
``pevpm fit`` use it like a measured one.

For a message of ``s`` bytes sharing its busiest link with ``c`` messages
(``c = 1`` alone):

* location ``g = latency + s / bandwidth`` (the contention-free time);
* shape ``a(c) = 1 + (shape - 1) c^(-shape_decay)``: more contention, a
  heavier tail, and the mean stays finite (``a > 1``);
* mean excess over ``g``: ``spread * g * c^contention_exponent``, so the
  scale is ``(a - 1) * spread * g * c^contention_exponent``.

A non-blocking send returns after ``send_overhead`` (default a quarter of
the latency) with the same shape and spread.

>>> m = HypotheticalMachine(latency=2e-6, bandwidth=10e9, shape=4.0, spread=0.25)
>>> d = m.distribution(size=10_000, contention=1)
>>> round(d.loc * 1e6, 6), round((d.mean() - d.loc) / d.loc, 6)
(3.0, 0.25)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from pevpm.errors import ModelError
from pevpm.profile.store import (
    LOCAL_TEST,
    TRANSFER_TEST,
    BlockKey,
    ProfileWriter,
    block_contention,
    parse_nxp,
)

if TYPE_CHECKING:      # scipy loads with the distributions: not for `machine --help`
    from pevpm.stats.distributions import PearsonV

DEFAULT_SIZES = (0, 256, 1024, 4096, 16384, 65536)
DEFAULT_PLACEMENTS = ("1x2", "2x1", "2x2", "2x4", "2x8")

_BANDWIDTH = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([kKMGT]?)(B|bit|b)/s\s*$")
_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def parse_bandwidth(text: str) -> float:
    """Bytes per second from ``'10GB/s'``, ``'100Mbit/s'``, ``'1.2e9B/s'`` (SI prefixes).

    >>> parse_bandwidth("10GB/s"), parse_bandwidth("100Mbit/s")
    (10000000000.0, 12500000.0)
    """
    match = _BANDWIDTH.match(str(text))
    if not match:
        raise ModelError(f"cannot read bandwidth {text!r}; e.g. 10GB/s, 100Mbit/s, 1.5e9B/s")
    value = float(match.group(1)) * _PREFIX[match.group(2)]
    value = value / 8 if match.group(3) in ("bit", "b") else value
    if value <= 0:
        raise ModelError(f"bandwidth must be positive, got {text!r}")
    return value


@dataclass(frozen=True)
class HypotheticalMachine:
    """A machine described by latency (s), bandwidth (B/s) and Pearson V behaviour.

    ``intra_latency`` / ``intra_bandwidth`` describe messages within a node
    (default: the same as between nodes).
    """

    latency: float
    bandwidth: float
    shape: float = 4.0
    spread: float = 0.25
    contention_exponent: float = 1.0
    shape_decay: float = 0.5
    intra_latency: float | None = None
    intra_bandwidth: float | None = None
    send_overhead: float | None = None

    def __post_init__(self) -> None:
        checks = [
            (self.latency > 0, f"latency must be positive, got {self.latency}"),
            (self.bandwidth > 0, f"bandwidth must be positive, got {self.bandwidth}"),
            (self.shape > 1, f"Pearson V shape must exceed 1 (finite mean), got {self.shape}"),
            (self.spread > 0, f"spread must be positive, got {self.spread}"),
            (self.shape_decay >= 0, f"shape decay must be >= 0, got {self.shape_decay}"),
            (self.contention_exponent >= 0, "contention exponent must be >= 0"),
        ]
        for optional in (self.intra_latency, self.intra_bandwidth, self.send_overhead):
            checks.append(
                (
                    optional is None or optional > 0,
                    f"optional values must be positive, got {optional}",
                )
            )
        for ok, message in checks:
            if not ok:
                raise ModelError(f"hypothetical machine: {message}")

    def _shape(self, contention: int) -> float:
        return 1.0 + (self.shape - 1.0) * contention ** (-self.shape_decay)

    def _pearson(self, location: float, contention: int) -> PearsonV:
        from pevpm.stats.distributions import PearsonV

        shape = self._shape(contention)
        excess = self.spread * location * contention**self.contention_exponent
        return PearsonV(shape=shape, scale=(shape - 1.0) * excess, loc=location)

    def distribution(self, size: int, contention: int, intra_node: bool = False) -> PearsonV:
        """End-to-end time of a ``size``-byte message under ``contention``."""
        latency = self.intra_latency if intra_node and self.intra_latency else self.latency
        bandwidth = self.intra_bandwidth if intra_node and self.intra_bandwidth else self.bandwidth
        return self._pearson(latency + size / bandwidth, contention)

    def local_distribution(self, contention: int) -> PearsonV:
        """Time until a non-blocking send returns."""
        return self._pearson(self.send_overhead or self.latency / 4, contention)


def write_profile(
    machine: HypotheticalMachine,
    path,
    *,
    sizes: Sequence[int] = DEFAULT_SIZES,
    placements: Sequence[str] = DEFAULT_PLACEMENTS,
    samples: int = 2000,
    name: str = "hypothetical",
    random_state=None,
    cores: int | None = None,
    wait: str = "poll",
) -> int:
    """Write a synthetic profile with ``samples`` times per block; returns the block count.

    ``cores``: cores per node of the machine described (recorded in the
    profile's origin with ``wait``, how its MPI library waits; ``None``: no
    limit, ranks never share a core).

    Each placement ``NxP`` becomes a run with one ``isend`` and one
    ``isendlocal`` block per size, sampled from the machine's Pearson V and
    stored with that Pearson V as the block's best fit.
    """
    if samples < 10:
        raise ModelError(f"a synthetic profile needs at least 10 samples per block, got {samples}")
    layouts = [parse_nxp(text) for text in placements]
    for text, (n, p) in zip(placements, layouts):
        if n * p < 2 or (n * p) % 2:
            raise ModelError(
                f"placement {text}: point-to-point blocks need an even rank count >= 2"
            )
    from pevpm.stats.distributions import as_generator

    rng = as_generator(random_state)
    written = 0
    with ProfileWriter.open(path, machine=name) as writer:
        if cores is not None:
            writer.set_metadata(cores=str(cores), wait=wait)
        for n, p in layouts:
            ranks = n * p
            run_id = writer.begin_run(
                n=n,
                p=p,
                hosts=[f"{name}-node{i}" for i in range(n)],
                mpi_library="synthetic",
                mpi_version="pevpm machine new",
                clock="synthetic",
                clock_resolution=0.0,
                sync_method="none",
                resend_limit=0,
                plan={"machine": asdict(machine), "sizes": list(sizes), "samples": samples},
            )
            reps = max(1, -(-samples // ranks))
            for size in sizes:
                for test in (TRANSFER_TEST, LOCAL_TEST):
                    key = BlockKey(test, "", int(size), n, p)
                    contention = block_contention(key)
                    if test == TRANSFER_TEST:
                        truth = machine.distribution(int(size), contention, intra_node=n == 1)
                    else:
                        truth = machine.local_distribution(contention)
                    times = truth.rvs(size=(ranks, reps), random_state=rng)
                    writer.write_block(
                        run_id,
                        key,
                        times,
                        reps=reps,
                        warmup=0,
                        start_mode="synthetic",
                        sync_error=0.0,
                        elapsed=0.0,
                        seed=int(rng.integers(2**31)),
                    )
                    writer.store_fit(
                        key, truth.family, truth.params, {"rank": 1, "synthetic": True}
                    )
                    written += 1
            writer.finish_run(run_id, [])
    return written
