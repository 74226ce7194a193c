"""Sample Factory's report lines (``gputui.logs.formats.sample_factory``): env frames are the step."""

from __future__ import annotations

from gputui.logs import parse_bytes

LOG = """\
[2025-07-18 12:41:10,452][2131609] Fps is (10 sec: nan, 60 sec: nan, 300 sec: nan). Total num frames: 0. \
Throughput: 0: nan. Samples: 0. Policy #0 lag: (min: -1.0, avg: -1.0, max: -1.0)
[2025-07-18 12:41:15,452][2131609] Fps is (10 sec: 66354.9, 60 sec: 66218.6, 300 sec: 66218.6). \
Total num frames: 4022272. Throughput: 0: 15756.9. Samples: 655914. \
Policy #0 lag: (min: 0.0, avg: 0.6, max: 2.0)
[2025-07-18 12:41:15,453][2131609] Avg episode reward: [(0, '3.012')]
[2025-07-18 12:41:15,454][2134819] Saving new best policy, reward=4.384!
[2025-07-18 12:42:11,943][2131609] Collected {0: 4005888}, FPS: 61925.8
"""


def test_reports_at_their_frames_episodes_at_the_latest_and_collected_as_the_summary() -> None:
    got = [
        (r.get("name"), r.get("value"), r.get("step"), r.get("scope"))
        for r in parse_bytes(LOG.encode())
        if r.kind == "metric" and r.get("step") != 0
    ]
    assert got == [
        ("fps_10_sec", 66354.9, 4022272, "step"),
        ("fps_60_sec", 66218.6, 4022272, "step"),
        ("fps_300_sec", 66218.6, 4022272, "step"),
        ("total_num_frames", 4022272.0, 4022272, "step"),
        ("throughput", 15756.9, 4022272, "step"),
        ("samples", 655914.0, 4022272, "step"),
        ("policy_lag_min", 0.0, 4022272, "step"),
        ("policy_lag_avg", 0.6, 4022272, "step"),
        ("policy_lag_max", 2.0, 4022272, "step"),
        ("avg_episode_reward", 3.012, 4022272, "step"),
        ("reward", 4.384, 4022272, "step"),
        ("collected", 4005888.0, 4022272, "summary"),
        ("fps", 61925.8, 4022272, "summary"),
    ]
