"""Chart ticks (gputui.tui.axes): 1-2-5 spacing, elapsed time as m:ss / h:mm:ss, integer steps, short
values."""

from __future__ import annotations

import pytest

from gputui.tui.axes import elapsed, nice_step, step_ticks, time_ticks, value_ticks


@pytest.mark.parametrize(
    ("span", "most", "step"),
    [(10, 5, 2), (10, 10, 1), (7, 5, 2), (100, 5, 20), (0.27, 5, 0.1), (4768.8, 5, 1000), (3, 5, 1)],
)
def test_nice_step_is_1_2_or_5_times_a_power_of_ten(span, most, step):
    assert nice_step(span, most) == pytest.approx(step)


def test_time_ticks_short_run_in_m_ss():
    positions, labels = time_ticks(0, 184, most=5)  # a 3-minute replay: never '0.013 minutes'
    assert positions == [0, 60, 120, 180]
    assert labels == ["0:00", "1:00", "2:00", "3:00"]


def test_time_ticks_seconds_and_clock_steps():
    assert time_ticks(0, 9, most=5)[1] == ["0:00", "0:02", "0:04", "0:06", "0:08"]
    assert time_ticks(0, 60, most=5)[1] == ["0:00", "0:15", "0:30", "0:45", "1:00"]
    assert time_ticks(0, 1700, most=4)[1] == ["0:00", "10:00", "20:00"]


def test_time_ticks_past_an_hour_in_h_mm_ss():
    positions, labels = time_ticks(0, 19.8 * 3600, most=5)
    assert positions[1] == 21600  # 6-hour steps
    assert labels == ["0:00:00", "6:00:00", "12:00:00", "18:00:00"]
    assert time_ticks(0, 5400, most=4)[1] == ["0:00:00", "0:30:00", "1:00:00", "1:30:00"]


def test_time_ticks_many_days_stay_whole_days():
    positions, labels = time_ticks(0, 40 * 86400, most=4)
    assert positions == [0, 864000, 1728000, 2592000, 3456000]
    assert labels[1:3] == ["10-00:00:00", "20-00:00:00"]


def test_time_ticks_start_mid_range():
    positions, labels = time_ticks(7.3, 50, most=4)
    assert positions == [15, 30, 45] and labels == ["0:15", "0:30", "0:45"]


def test_elapsed():
    assert elapsed(0) == "0:00" and elapsed(61.4) == "1:01" and elapsed(3661) == "1:01:01"
    assert elapsed(59, hours=True) == "0:00:59" and elapsed(90061) == "1-01:01:01"


def test_step_ticks_are_integers_with_thousands():
    positions, labels = step_ticks(1, 12000, most=5)
    assert labels == ["5,000", "10,000"] and positions == [5000, 10000]
    assert step_ticks(1, 12000, most=8)[1] == ["2,000", "4,000", "6,000", "8,000", "10,000", "12,000"]
    positions, labels = step_ticks(1, 60, most=5)
    assert labels == ["20", "40", "60"]
    positions, labels = step_ticks(1, 4, most=8)  # never a half step
    assert labels == ["1", "2", "3", "4"]
    assert step_ticks(5, 5)[1] == ["5"]


def test_value_ticks_have_only_the_decimals_they_need():
    assert value_ticks(0.2081, 0.4692, most=4) == ([0.3, 0.4], ["0.3", "0.4"])  # not 0.30000000000000004
    assert value_ticks(0.2496, 2.16, most=5)[1] == ["0.5", "1.0", "1.5", "2.0"]
    # a narrow range still gets two ticks or more, with the decimals they need
    assert value_ticks(0.2651, 0.2742, most=4)[1] == ["0.266", "0.268", "0.270", "0.272", "0.274"]
    assert value_ticks(0, 30000, most=3)[1] == ["0", "10k", "20k", "30k"]
    assert value_ticks(-1, 1, most=2)[1] == ["-1", "0", "1"]
    assert value_ticks(3.0, 3.0)[1] == ["3.00"]
    assert value_ticks(0.3125, 0.3125)[1] == ["0.312"]  # a flat s/step line is not labelled 0
    assert value_ticks(0.517400, 0.517420)[1] == ["0.517"]  # not six ticks of its noise
    assert value_ticks(0.0, 0.0)[1] == ["0"] and value_ticks(12345.0, 12345.0)[1] == ["12.35k"]
