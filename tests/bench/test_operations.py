import numpy as np

from pevpm.bench.operations import derive_times


def test_end_to_end_uses_partner_send_start():
    stamps = {"send_start": np.array([[100], [400]]), "recv_done": np.array([[900], [350]]),
              "send_return": np.array([[110], [420]])}
    times = derive_times("end_to_end", stamps, partners=[1, 0])
    assert np.allclose(times, [[500e-9], [250e-9]])
    assert np.allclose(derive_times("local_send", stamps, None), [[10e-9], [20e-9]])


def test_from_start_measures_from_earliest_start():
    stamps = {"start": np.array([[10, 0], [20, 5]]), "end": np.array([[30, 9], [25, 6]])}
    assert np.allclose(derive_times("from_start", stamps, None), [[20e-9, 9e-9], [15e-9, 6e-9]])
