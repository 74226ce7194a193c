"""Probes: behaviour mutation testing found unchecked (docs/testing.md, "Mutation testing").

Rotated log file names, the energy in the end-of-run paragraph, the simulated GPUs' identity, memory
sizes, ranks and evaluation phase, the demo's process-following GPUs, and a sampler on a clock that
lands exactly on its deadlines.
"""

from __future__ import annotations

import itertools
import os
import re

import pytest

from gputui.probes import sampler as sampler_mod
from gputui.probes.headless import RotatingWriter, Summary
from gputui.probes.process_sim import ProcessSimBackend
from gputui.probes.sim import SimBackend
from gputui.stream.records import event, gpu_sample

GIB = 1024**3


# --------------------------------------------------------------------------- headless log


def test_rotation_keeps_the_newest_files_numbered_one_to_keep(tmp_path) -> None:
    path = str(tmp_path / "gpu.jsonl")
    writer = RotatingWriter(path, max_bytes=200, keep=5)
    writer.write(event("probe_started", message="probe started", backend="sim"))
    for i in range(60):
        writer.write(gpu_sample(host="node1", gpu_id="GPU-0", vendor="nvidia", source="sim", time=1000.0 + i))
    writer.close()
    assert writer.rotations > 6
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["gpu.jsonl", *(f"gpu.jsonl.{n}" for n in range(1, 6))]
    # FILE is the newest (started by the last rotation); FILE.n the one started n rotations earlier
    for n in range(6):
        with open(f"{path}.{n}" if n else path) as f:
            first = f.readline()
        assert f'"rotation":{writer.rotations - n}}}' in first


def test_end_of_run_paragraph_gives_the_energy_used() -> None:
    summary = Summary()
    for i, energy in enumerate((1000.0, 4600.0, 8200.0)):  # 7200 J = 2 Wh
        summary.add(
            gpu_sample(
                host="node1", gpu_id="GPU-0", vendor="nvidia", source="sim", time=100.0 + i,
                index=0, util_gpu_pct=50.0, energy_j=energy,
            )
        )  # fmt: skip
    assert "energy 2.00 Wh" in summary.paragraph("count", 3)


# --------------------------------------------------------------------------- simulated GPUs


def _sim(**env: str) -> SimBackend:
    backend = SimBackend({"SLURMD_NODENAME": "node1", **env})
    backend.open()
    return backend


@pytest.mark.parametrize(("vendor", "total"), [("nvidia", 40 * GIB), ("amd", 64 * GIB)])
def test_simulated_gpus_have_their_models_memory(vendor: str, total: int) -> None:
    (record, *_) = _sim(GPUTUI_SIM_VENDOR=vendor).sample(processes=False, now=1.0)
    assert record["mem_total_bytes"] == total


def test_simulated_gpus_have_nvidia_style_uuids_and_distinct_pci_addresses() -> None:
    records = _sim().sample(processes=False, now=1.0)
    uuids = [r["uuid"] for r in records]
    assert len(set(uuids)) == 4
    for uuid in uuids:
        assert re.fullmatch(r"GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", uuid), uuid
    assert [r["pci_bus_id"] for r in records] == [f"00000000:{b}:00.0" for b in ("10", "20", "30", "40")]


@pytest.mark.parametrize(("node", "ranks"), [("0", [0, 1, 2, 3]), ("1", [4, 5, 6, 7])])
def test_simulated_processes_carry_the_global_rank_and_their_own_pid(node: str, ranks: list[int]) -> None:
    records = _sim(SLURM_NODEID=node).sample(processes=True, now=1.0)
    assert [r["processes"][0]["rank"] for r in records] == ranks
    assert [r["processes"][0]["pid"] for r in records] == [40000 + 100 * int(node) + i for i in range(4)]


def test_simulated_trace_follows_elapsed_time_at_any_interval(monkeypatch) -> None:
    """The start-up ramp (5 % + 4 %/s for 8 s) in seconds since the start, sampled every 0.5 s."""
    clock = ExactClock()
    monkeypatch.setattr(sampler_mod.time, "sleep", clock.sleep)
    out: list = []
    sampler = sampler_mod.Sampler(
        _sim(GPUTUI_SIM_GPUS="1"), None, clock=clock.monotonic, wall=clock.monotonic, interval=0.5, count=4
    )
    sampler.run(out.append)
    assert [r["util_gpu_pct"] for r in out if r.kind == "gpu"] == [5.0, 7.0, 9.0, 11.0]


def test_simulated_trace_has_an_evaluation_phase_every_five_minutes() -> None:
    backend = _sim()
    util: dict[int, list[float]] = {}
    for t in range(310):  # one sample per virtual second
        for r in backend.sample(processes=False, now=float(t)):
            util.setdefault(t, []).append(r["util_gpu_pct"])
    assert all(0 <= u <= 100 for values in util.values() for u in values)
    evaluation = [u for t in range(300, 310) for u in util[t]]
    assert any(55 <= u < 65 for u in evaluation)
    assert not any(55 <= u < 65 for t in range(200, 290) for u in util[t])  # busy plateau or dips


def test_process_following_gpus_report_16_gib_and_the_processes_memory() -> None:
    backend = ProcessSimBackend(lambda: [os.getpid()], 1, {"SLURMD_NODENAME": "node1"})
    backend.open()
    (record,) = backend.sample(processes=True, now=1.0)
    assert record["mem_total_bytes"] == 16 * GIB
    (proc,) = record["processes"]
    assert proc["pid"] == os.getpid() and proc["rank"] == 0 and proc["used_mem_bytes"] > 0


def test_process_following_gpu_is_busy_while_its_process_computes() -> None:
    """Utilisation = the process's CPU time over the wall time between samples, as a percentage."""
    backend = ProcessSimBackend(lambda: [os.getpid()], 1, {"SLURMD_NODENAME": "node1"})
    backend.open()
    before = os.times()
    backend.sample(processes=False, now=1000.0)
    deadline = before.user + before.system + 0.3
    while (lambda t: t.user + t.system)(os.times()) < deadline:
        pass  # burn at least 0.3 s of CPU
    after = os.times()
    (record,) = backend.sample(processes=False, now=1010.0)  # 10 s of "wall time" later
    used = (after.user + after.system) - (before.user + before.system)
    assert record["util_gpu_pct"] == pytest.approx(min(100.0, 10.0 * used), abs=1.5)
    assert 2.0 < record["util_gpu_pct"] < 100.0


# --------------------------------------------------------------------------- sampler


class ExactClock:
    """A monotonic clock far from zero that a sleep moves exactly to the deadline asked for."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def test_a_clock_landing_on_its_deadlines_gives_evenly_spaced_samples(monkeypatch) -> None:
    clock = ExactClock()
    monkeypatch.setattr(sampler_mod.time, "sleep", clock.sleep)
    out: list = []
    sampler = sampler_mod.Sampler(
        _sim(),
        None,
        clock=clock.monotonic,
        wall=clock.monotonic,
        interval=0.1,
        count=12,
        process_interval=5.0,
    )
    sampler.run(out.append)
    times = sorted({r.time for r in out})
    assert len(times) == 12
    assert [round(b - a, 6) for a, b in itertools.pairwise(times)] == [0.1] * 11


def test_energy_from_power_when_the_gpu_has_no_energy_counter() -> None:
    summary = Summary()
    for t in (100.0, 110.0, 120.0):  # 360 W for 20 s = 7200 J = 2 Wh
        summary.add(
            gpu_sample(host="node1", gpu_id="GPU-0", vendor="amd", source="sim", time=t, power_w=360.0)
        )
    assert "energy ~2.00 Wh (from power)" in summary.paragraph("count", 3)


def test_simulated_data_loader_dips_vary_between_15_and_35_percent() -> None:
    backend = _sim()
    dips = []
    for t in range(600):
        for r in backend.sample(processes=False, now=float(t)):
            if t >= 8 and r["util_gpu_pct"] < 40:
                dips.append(r["util_gpu_pct"])
    assert dips and all(15 <= u < 35 for u in dips)
    assert max(dips) > 25 and min(dips) < 20


def test_amd_gpus_are_matched_to_kfd_nodes_by_their_full_pci_address(tmp_path) -> None:
    from gputui.probes.amd.topology import read_topology

    nodes = tmp_path / "class" / "kfd" / "kfd" / "topology" / "nodes"
    layout = {
        "0": ("0", "cpu_cores_count 64\n"),  # the CPU
        "1": ("4242", "simd_count 104\n"),  # a GPU node without location_id: skipped
        "2": ("1111", "location_id 49425\ndrm_render_minor 128\n"),  # 0xc111: c1:02.1, no domain line
        "3": ("2222", "location_id 768\ndomain 1\ndrm_render_minor 129\n"),  # 0x0300 in domain 1
    }
    for name, (gpu_id, props) in layout.items():
        (nodes / name).mkdir(parents=True)
        (nodes / name / "gpu_id").write_text(gpu_id + "\n")
        (nodes / name / "properties").write_text(props)
    found = {bdf: (n.node, n.gpu_id) for bdf, n in read_topology(str(tmp_path)).items()}
    assert found == {"0000:c1:02.1": (2, 1111), "0001:03:00.0": (3, 2222)}
