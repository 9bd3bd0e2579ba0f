"""The report's table of predictions beyond the measured counts (issue 29)."""

from pevpm.report.html import write_report


def test_each_point_says_how_it_was_obtained_with_speedup_and_efficiency(tmp_path):
    points = [{"n": 4, "mean": 0.4, "sd": 0.01, "grid": 256, "iterations": 100,
               "simulated_iterations": 4, "runs": 8, "scaled_by": 25.0,
               "calibration": "serial time from the kernels calibrated for 4 ranks"},
              {"n": 16, "mean": 0.2, "sd": 0.01, "grid": 256, "iterations": 100,
               "simulated_iterations": 4, "runs": 8, "scaled_by": 25.0,
               "calibration": "serial time from the kernels calibrated for 16 ranks"}]
    write_report({"title": "t", "scaling": {"fft2d": points}}, str(tmp_path))
    page = (tmp_path / "index.html").read_text()
    assert ("<th>speedup</th><th>efficiency</th><th>grid</th><th>iterations simulated</th>"
            "<th>runs</th>") in page
    assert ("<tr><td>16</td><td>200.000 ms</td><td>10.000 ms</td><td>2.00</td><td>0.50</td>"
            "<td>256</td><td>4 of 100 (time x 25)</td><td>8</td>"
            "<td class='l'>serial time from the kernels calibrated for 16 ranks</td></tr>") in page
