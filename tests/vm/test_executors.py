"""Executors by name, chunking, and error hand-back."""

import pytest

from pevpm.errors import PevpmError
from pevpm.vm.strategies.executors import InlineExecutor, chunk_ranges, open_executor


@pytest.mark.parametrize("count, chunks", [(10, 3), (7, 7), (3, 8), (1, 1), (100, 16)])
def test_chunks_cover_every_index_once_in_order(count, chunks):
    ranges = chunk_ranges(count, chunks)
    covered = [i for start, stop in ranges for i in range(start, stop)]
    assert covered == list(range(count))
    sizes = [stop - start for start, stop in ranges]
    assert len(ranges) == min(count, chunks)
    assert max(sizes) - min(sizes) <= 1


def test_inline_executor_returns_results_and_exceptions():
    ex = InlineExecutor()
    assert ex.submit(divmod, 7, 2).result() == (3, 1)
    with pytest.raises(ZeroDivisionError):
        ex.submit(divmod, 1, 0).result()


def test_one_local_worker_means_no_pool():
    with open_executor("local", workers=1) as ex:
        assert isinstance(ex, InlineExecutor)


def test_local_pool_runs_calls_in_other_processes():
    import os

    with open_executor("local", workers=2) as ex:
        pids = {ex.submit(os.getpid).result() for _ in range(4)}
    assert os.getpid() not in pids


def test_unknown_executor_and_bad_worker_count_are_user_errors():
    with pytest.raises(PevpmError, match="unknown executor 'threads'"), \
            open_executor("threads"):
        pass
    with pytest.raises(PevpmError, match="at least 1"), open_executor("local", workers=0):
        pass
