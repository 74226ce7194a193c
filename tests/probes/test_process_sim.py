"""ProcessSimBackend: simulated GPUs whose utilisation is a real process's CPU use."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from gputui.probes.process_sim import SIM_MEM_TOTAL, ProcessSimBackend

BUSY = "while True:\n    pass\n"
SLEEPY = "import time\ntime.sleep(60)\n"


@pytest.fixture
def children() -> Iterator[list[subprocess.Popen]]:
    procs = [
        subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL) for code in (BUSY, SLEEPY)
    ]
    try:
        yield procs
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def test_busy_process_shows_high_util_and_sleeping_one_shows_none(children):
    busy, sleepy = children
    backend = ProcessSimBackend(lambda: [busy.pid, sleepy.pid, None], 3)
    devices = backend.open()
    assert len(devices) == 3
    time.sleep(0.5)  # let both children finish starting up
    first = backend.sample(processes=True, now=time.time())
    assert [r.get("util_gpu_pct") for r in first] == [0.0, 0.0, 0.0]  # no interval measured yet
    deadline = time.monotonic() + 15  # on a loaded machine one 0.6 s window may give the busy child < 50 %
    while True:
        time.sleep(0.6)
        records = backend.sample(processes=True, now=time.time())
        utils = [r.get("util_gpu_pct") for r in records]
        if utils[0] > 50 or time.monotonic() > deadline:
            break
    assert len(records) == 3
    assert utils[0] > 50, utils
    assert utils[1] < 10, utils
    assert utils[2] == 0.0
    for rec in records:
        assert rec.kind == "gpu"
        assert rec.get("simulated") is True
        assert rec.get("source") == "sim"
        assert rec.get("mem_total_bytes") == SIM_MEM_TOTAL
    # memory "used" is the process's resident memory; the rank with no process has none
    assert records[0].get("mem_used_bytes") > 0 and records[1].get("mem_used_bytes") > 0
    assert records[2].get("mem_used_bytes") == 0
    assert records[0].get("processes") == [
        {"pid": busy.pid, "used_mem_bytes": records[0].get("mem_used_bytes"), "rank": 0, "name": "python"}
    ]
    assert records[2].get("processes") == []
    # the busy GPU draws more power and runs hotter than the idle one
    assert records[0].get("power_w") > records[1].get("power_w")
    assert records[0].get("temp_c") > records[1].get("temp_c")
    assert len({r.get("gpu_id") for r in records}) == 3


def test_a_process_that_ended_shows_zero(children):
    busy, _ = children
    backend = ProcessSimBackend(lambda: [busy.pid], 1)
    backend.open()
    backend.sample(processes=False, now=time.time())
    time.sleep(0.3)
    busy.kill()
    busy.wait()
    record = backend.sample(processes=False, now=time.time())[0]
    assert record.get("util_gpu_pct") == 0.0
    assert record.get("mem_used_bytes") == 0


def test_visibility_variables_do_not_hide_simulated_gpus():
    env = {"CUDA_VISIBLE_DEVICES": "", "SLURM_STEP_GPUS": "7"}
    backend = ProcessSimBackend(lambda: [], 2, env)
    assert len(backend.open()) == 2
    records = backend.sample(processes=True, now=time.time())
    assert [r.get("util_gpu_pct") for r in records] == [0.0, 0.0]
    assert all(r.get("simulated") is True for r in records)
