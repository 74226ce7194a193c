"""AMD compute processes from the KFD tree, and which cards a step may use (render nodes, device cgroup)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest
from amd_tree import GCDS, add_kfd_process, build_amd_tree, build_dev_tree
from probe_helpers import clean_env, dev_root, parse_lines, run_gputui

from gputui.probes import sampler as sampler_mod
from gputui.probes.amd.rocm import AmdRocmBackend
from gputui.probes.amd.sysfs import AmdSysfsBackend
from gputui.probes.amd.topology import read_topology
from gputui.probes.base import ProbeError

GIB = 2**30
SLOT = {g["card"]: g["slot"] for g in GCDS}


def _backend(tree: Path, env: dict | None = None, **kw) -> AmdSysfsBackend:
    kw.setdefault("dev_root", dev_root(tree))
    return AmdSysfsBackend(env or {}, root=str(tree), **kw)


def _by_slot(backend: AmdSysfsBackend, processes: bool = True) -> dict[str, dict]:
    backend.open()
    try:
        return {r["pci_bus_id"]: r for r in backend.sample(processes=processes, now=1.0)}
    finally:
        backend.close()


@pytest.fixture
def ranks():
    """Three real processes: RANK=3 (and SLURM_PROCID=9: RANK wins), SLURM_PROCID=5 only, neither."""
    envs = [{"RANK": "3", "SLURM_PROCID": "9"}, {"SLURM_PROCID": "5"}, {}]
    procs = [subprocess.Popen(["sleep", "120"], env={"PATH": os.environ["PATH"], **e}) for e in envs]
    deadline = time.monotonic() + 10
    for p in procs:  # a child is "pytest" in /proc until it has exec'd sleep (seen under load)
        while Path(f"/proc/{p.pid}/comm").read_text().strip() != "sleep" and time.monotonic() < deadline:
            time.sleep(0.01)
    yield [p.pid for p in procs]
    for p in procs:
        p.kill()
        p.wait()


def test_topology_maps_kfd_gpu_ids_to_cards_by_pci_location(tmp_path):
    tree = build_amd_tree(tmp_path / "sys", kfd_order=[3, 1, 2])  # KFD order differs from card order
    topo = read_topology(str(tree))
    assert {bdf: (n.node, n.gpu_id, n.render_minor) for bdf, n in topo.items()} == {
        "0000:d1:00.0": (1, 7104, 130),
        "0000:c1:00.0": (2, 52110, 128),
        "0000:c6:00.0": (3, 26386, 129),
    }  # CPU node 0 (gpu_id 0) left out


def test_processes_with_vram_per_gpu_and_rank_from_environ(amd_tree, ranks):
    p_rank3, p_slurm5, p_none = ranks
    add_kfd_process(amd_tree, p_rank3, {1: 30 * GIB, 2: 2**20})  # ROCr opened both GCDs of the package
    add_kfd_process(amd_tree, p_slurm5, {2: 20 * GIB})
    add_kfd_process(amd_tree, p_none, {3: GIB})
    add_kfd_process(amd_tree, 999_999_999, {3: 0})  # gone from /proc: no name, no rank
    recs = _by_slot(_backend(amd_tree, {"SLURMD_NODENAME": "nid005123"}))

    def rows(card):
        return [(p["pid"], p["used_mem_bytes"], p["rank"], p["name"]) for p in recs[SLOT[card]]["processes"]]

    assert rows(1) == [(p_rank3, 30 * GIB, 3, "sleep")]
    assert sorted(rows(2)) == sorted([(p_rank3, 2**20, 3, "sleep"), (p_slurm5, 20 * GIB, 5, "sleep")])
    assert rows(3) == [(p_none, GIB, None, "sleep"), (999_999_999, 0, None, None)]
    assert all("processes" not in r.get("missing", {}) for r in recs.values())


def test_no_process_is_an_empty_list_and_unreadable_environ_means_no_rank(amd_tree, tmp_path):
    fake_proc = tmp_path / "proc"
    (fake_proc / "4242").mkdir(parents=True)
    (fake_proc / "4242" / "comm").write_text("python\n")  # environ unreadable: absent here
    add_kfd_process(amd_tree, 4242, {3: 5 * GIB})
    recs = _by_slot(_backend(amd_tree, proc_root=str(fake_proc)))
    assert recs[SLOT[1]]["processes"] == [] and "processes" not in recs[SLOT[1]].get("missing", {})
    assert recs[SLOT[3]]["processes"] == [
        {"pid": 4242, "used_mem_bytes": 5 * GIB, "rank": None, "name": "python"}
    ]


def test_unreadable_kfd_tree_is_no_permission(amd_tree, monkeypatch):
    add_kfd_process(amd_tree, 4242, {1: GIB})
    kfd_proc = str(amd_tree / "class" / "kfd" / "kfd" / "proc")
    real_listdir = os.listdir

    def listdir(path, deny):
        if str(path).startswith(deny):
            raise PermissionError(13, "Permission denied", str(path))
        return real_listdir(path)

    for deny in (kfd_proc, f"{kfd_proc}/"):  # the proc directory itself, then every process directory
        monkeypatch.setattr(os, "listdir", lambda p, d=deny: listdir(p, d))
        recs = _by_slot(_backend(amd_tree))
        for rec in recs.values():
            assert rec["processes"] is None and rec["missing"]["processes"] == "no_permission"
        monkeypatch.setattr(os, "listdir", real_listdir)


def test_without_kfd_processes_are_not_supported(tmp_path):
    tree = build_amd_tree(tmp_path / "sys", kfd=False)
    recs = _by_slot(_backend(tree, dev_root=str(tmp_path / "nodev")))
    assert {r["missing"]["processes"] for r in recs.values()} == {"not_supported"}


def test_processes_every_few_seconds_on_the_samplers_cadence(amd_tree, monkeypatch):
    add_kfd_process(amd_tree, 4242, {1: GIB})
    now = [1000.0]
    monkeypatch.setattr(sampler_mod.time, "sleep", lambda s: now.__setitem__(0, now[0] + s))
    backend = _backend(amd_tree)
    backend.open()
    reads = []
    real_read = backend.kfd.read
    backend.kfd.read = lambda ids: reads.append(now[0]) or real_read(ids)
    out = []
    s = sampler_mod.Sampler(
        backend, None, interval=1.0, count=11, process_interval=5.0, clock=lambda: now[0], wall=lambda: now[0]
    )
    s.run(out.append)
    backend.close()
    assert reads == [1000.0, 1005.0, 1010.0]  # one pass over the KFD tree for all GPUs, every 5 s
    first = [r for r in out if r["pci_bus_id"] == SLOT[1]]
    assert [r["processes"] is not None for r in first] == [i % 5 == 0 for i in range(11)]
    assert first[1]["missing"]["processes"] == "not_sampled"


def test_rocm_library_records_carry_kfd_processes(amd_tree, monkeypatch, ranks):
    add_kfd_process(amd_tree, ranks[0], {1: GIB})
    monkeypatch.setattr("gputui.probes.amd.rocm.quiet_import", lambda what: (None, "not installed"))
    recs = _by_slot(AmdRocmBackend({}, root=str(amd_tree), dev_root=dev_root(amd_tree)))
    assert recs[SLOT[1]]["processes"][0]["rank"] == 3


def test_probe_command_reports_kfd_processes_then_not_sampled(amd_tree, ranks):
    add_kfd_process(amd_tree, ranks[1], {2: 3 * GIB})
    env = clean_env(
        GPUTUI_SYSFS_ROOT=str(amd_tree), GPUTUI_AMD_LIBRARY="sysfs", GPUTUI_DEV_ROOT=dev_root(amd_tree)
    )
    res = run_gputui("probe", "--backend", "amd", "--count", "2", "--interval", "0.05", env=env)
    assert res.returncode == 0, res.stderr
    gpus = [r for r in parse_lines(res.stdout) if r["kind"] == "gpu" and r["pci_bus_id"] == SLOT[2]]
    assert [(p["pid"], p["rank"]) for p in gpus[0]["processes"]] == [(ranks[1], 5)]
    assert gpus[1]["processes"] is None and gpus[1]["missing"]["processes"] == "not_sampled"


# --- which cards the step may use: render nodes under a device cgroup ---------------------------------


def _slots(tree: Path, env: dict, dev: Path) -> list[tuple[str, str | None]]:
    b = _backend(tree, env, dev_root=str(dev))
    try:
        return [(d.pci_bus_id, d.visible_id) for d in b.open()]
    finally:
        b.close()


def test_device_cgroup_rocr_indices_number_the_openable_cards(amd_tree, tmp_path):
    dev = build_dev_tree(tmp_path / "cg", [129, 130])  # the step may open cards 2 and 3 only
    env = {"ROCR_VISIBLE_DEVICES": "0,1"}
    assert _slots(amd_tree, env, dev) == [(SLOT[2], "0"), (SLOT[3], "1")]
    assert _slots(amd_tree, env, Path(dev_root(amd_tree))) == [(SLOT[1], "0"), (SLOT[2], "1")]  # no cgroup
    assert _slots(amd_tree, {**env, "HIP_VISIBLE_DEVICES": "1"}, dev) == [(SLOT[3], "1")]
    assert _slots(amd_tree, {"ROCR_VISIBLE_DEVICES": "GPU-5f1e4a2b3c4d5e01,1"}, dev) == [(SLOT[3], "1")]
    assert [s for s, _ in _slots(amd_tree, {"SLURM_STEP_GPUS": "1,2"}, dev)] == [SLOT[2], SLOT[3]]
    assert [s for s, _ in _slots(amd_tree, {}, dev)] == [SLOT[2], SLOT[3]]


def test_permission_denied_render_node_is_dropped(amd_tree, monkeypatch):
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, m: not str(p).endswith("renderD128") and real_access(p, m))
    assert [s for s, _ in _slots(amd_tree, {}, Path(dev_root(amd_tree)))] == [SLOT[2], SLOT[3]]


def test_kfd_order_numbers_rocr_indices(tmp_path):
    tree = build_amd_tree(tmp_path / "sys", kfd_order=[3, 1, 2])
    dev = build_dev_tree(tmp_path / "dev")
    assert _slots(tree, {"ROCR_VISIBLE_DEVICES": "0"}, dev) == [(SLOT[3], "0")]


def test_no_openable_card_is_one_line_naming_the_cgroup(amd_tree, tmp_path):
    dev = build_dev_tree(tmp_path / "none", [])
    with pytest.raises(ProbeError) as info:
        _slots(amd_tree, {"ROCR_VISIBLE_DEVICES": "0"}, dev)
    text = str(info.value)
    assert "no GPUs visible" in text and "device cgroup" in text and "renderD128" in text and "\n" not in text
