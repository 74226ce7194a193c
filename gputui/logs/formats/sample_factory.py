"""Sample Factory (RL at scale: VizDoom, Atari, IsaacGym): its runner's reports (``docs/log-formats.md``).

::

    Fps is (10 sec: 66354.9, 60 sec: 66218.6, 300 sec: 66218.6). Total num frames: 4022272.
        Throughput: 0: 15756.9. Samples: 655914. Policy #0 lag: (min: 0.0, avg: 0.6, max: 2.0)
    Avg episode reward: [(0, '3.012')]
    Avg episode rewards: #0: 14.070, true rewards: #0: 7.526
    Saving new best policy, reward=4.384!
    Collected {0: 4005888}, FPS: 61925.8

The env frames counted so far are the step (``Total num frames``; also a value, ``total_num_frames``).
The report gives the frame rates over 10, 60 and 300 s (``fps_10_sec``…), the learner's ``throughput``,
the ``samples`` trained on and the policy lag (``policy_lag_min``/``_avg``/``_max``); the episode
lines give the policy's average rewards at the latest step. ``Collected`` closes the run: the frames
collected and the run's mean ``fps`` (summary). Policy #0 is read; further policies' columns are not.
"""

from __future__ import annotations

import re

from gputui.logs.base import NUM, Context, emit, to_float
from gputui.stream.records import Record

NAME = "sample_factory"
REPORT = re.compile(
    r"\bFps is \(10 sec: (" + NUM + r"), 60 sec: (" + NUM + r"), 300 sec: (" + NUM + r")\)\. "
    r"Total num frames: (\d+)\. Throughput: \d+: (" + NUM + r")(?:, \d+: " + NUM + r")*\. Samples: (\d+)\. "
    r"Policy #\d+ lag: \(min: (" + NUM + r"), avg: (" + NUM + r"), max: (" + NUM + r")\)",
    re.IGNORECASE,
)
REPORT_NAMES = ("fps_10_sec", "fps_60_sec", "fps_300_sec", "total_num_frames", "throughput", "samples")
LAG_NAMES = ("policy_lag_min", "policy_lag_avg", "policy_lag_max")
EPISODES = (
    (re.compile(r"\bAvg episode reward: \[\(\d+, '(" + NUM + r")'\)"), ("avg_episode_reward",)),
    (
        re.compile(r"\bAvg episode rewards: #\d+: (" + NUM + r"), true rewards: #\d+: (" + NUM + r")"),
        ("avg_episode_rewards", "true_rewards"),
    ),
    (
        re.compile(r"\bAvg episode reward: (" + NUM + r"), avg true_objective: (" + NUM + r")"),
        ("avg_episode_reward", "avg_true_objective"),
    ),
    (re.compile(r"\bSaving new best policy, reward=(" + NUM + r")!"), ("reward",)),
)
COLLECTED = re.compile(r"\bCollected \{\d+: (\d+)\}, FPS: (" + NUM + r")")


def _floats(names: tuple[str, ...], raws: tuple[str, ...]) -> list[tuple[str, float]]:
    return [(n, v) for n, raw in zip(names, raws, strict=True) if (v := to_float(raw)) is not None]


class SampleFactoryParser:
    name = NAME

    #: The cheap pre-test of auto routing (:func:`gputui.logs.parser.route_auto`).
    PRETEST = (
        '"Fps is (" in text or "episode reward" in text or "best policy" in text or "Collected {" in text'
    )

    def parse(self, text: str, ctx: Context, now: float) -> list[Record] | None:
        out: list[Record] = []
        if (m := REPORT.search(text)) is not None:
            step = int(m.group(4))
            ctx.step = step
            groups = m.groups()
            pairs = _floats(REPORT_NAMES, groups[:6]) + _floats(LAG_NAMES, groups[6:])
            emit(out, pairs, NAME, "step", ctx, now, ctx.epoch, step)
            return out
        if (m := COLLECTED.search(text)) is not None:
            pairs = _floats(("collected", "fps"), m.groups())
            emit(out, pairs, NAME, "summary", ctx, now, ctx.epoch, ctx.step)
            return out
        for pattern, names in EPISODES:
            if (m := pattern.search(text)) is not None:
                emit(out, _floats(names, m.groups()), NAME, "step", ctx, now, ctx.epoch, ctx.step)
                return out
        return None


PARSER = SampleFactoryParser()
