"""The MPIBench tests: names, variants and what each needs (no MPI here).

Test names follow the thesis (appendix B): a collective with variants is
written ``scattereach`` / ``scattertotal`` (or ``scatter:each``); plain
``scatter`` means the ``each`` variant.  ``each``: every process contributes
``size`` bytes; ``total``: ``size`` bytes are split among the processes.

>>> resolve_test("gathertotal")
('gather', 'total')
>>> resolve_test("isend")
('isend', '')
"""

from __future__ import annotations

from dataclasses import dataclass

from pevpm.errors import BenchmarkError


@dataclass(frozen=True)
class OperationSpec:
    """What kind of test ``name`` is.

    ``paired``: point-to-point in the complement pattern (even process count).
    ``sized``: message size matters (barrier ignores it).
    ``one_way``: its times are one message's, stamped by the sender and the
    receiver (or the sender alone), not measured from a common start; the
    ``auto`` start rule chains these repetitions back to back.
    ``buffers``: bytes of buffer per process for message size ``s`` over ``P``
    processes at the most loaded rank (root), used to refuse sizes beyond memory.
    """

    name: str
    description: str
    paired: bool = False
    variants: tuple[str, ...] = ("",)
    sized: bool = True
    one_way: bool = False

    def buffer_bytes(self, variant: str, size: int, nprocs: int) -> int:
        per_proc = size if variant != "total" else size // max(nprocs, 1)
        if self.name in ("scatter", "gather", "allgather"):
            return per_proc * nprocs + per_proc
        if self.name == "alltoall":
            return 2 * per_proc * nprocs
        if self.name == "barrier":
            return 0
        return 2 * size


CATALOG: dict[str, OperationSpec] = {
    spec.name: spec
    for spec in (
        OperationSpec("isend", "MPI_Isend end-to-end: send start to receive completion",
                      paired=True, one_way=True),
        OperationSpec("send", "blocking MPI_Send to a blocking MPI_Recv, end-to-end",
                      paired=True, one_way=True),
        OperationSpec("isendlocal", "MPI_Isend local completion: time until Isend returns",
                      paired=True, one_way=True),
        OperationSpec("isendduplex", "MPI_Isend both ways at once, end-to-end per direction",
                      paired=True, one_way=True),
        OperationSpec("sendrecv", "MPI_Sendrecv exchange with the partner", paired=True),
        OperationSpec("bcast", "MPI_Bcast from rank 0"),
        OperationSpec("barrier", "MPI_Barrier", sized=False),
        OperationSpec("scatter", "MPI_Scatter from rank 0", variants=("each", "total")),
        OperationSpec("gather", "MPI_Gather to rank 0", variants=("each", "total")),
        OperationSpec("allgather", "MPI_Allgather", variants=("each", "total")),
        OperationSpec("alltoall", "MPI_Alltoall", variants=("each", "total")),
        OperationSpec("reduce", "MPI_Reduce (float64 sum) to rank 0"),
        OperationSpec("allreduce", "MPI_Allreduce (float64 sum)"),
    )
}

DEFAULT_TESTS = ("isend", "send", "isendlocal", "sendrecv", "bcast", "barrier", "alltoall", "gather",
                 "scatter", "allreduce")


def resolve_test(word: str) -> tuple[str, str]:
    """``'scattertotal'``, ``'scatter:total'`` or ``'scatter'`` -> ``('scatter', 'total'|'each')``."""
    text = word.strip().lower()
    name, _, variant = text.partition(":")
    if not variant:
        for spec in CATALOG.values():
            for suffix in spec.variants:
                if suffix and text == spec.name + suffix:
                    return spec.name, suffix
    spec = CATALOG.get(name)
    if spec is None:
        known = ", ".join(sorted(CATALOG))
        raise BenchmarkError(f"unknown test {word!r}; known tests: {known} "
                             "(collectives also as NAMEeach / NAMEtotal)")
    if not variant:
        variant = spec.variants[0]
    if variant not in spec.variants:
        raise BenchmarkError(f"test {spec.name} has no variant {variant!r} "
                             f"(variants: {', '.join(v for v in spec.variants if v) or 'none'})")
    return spec.name, variant
