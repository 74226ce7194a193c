"""Root file systems and config files for ``ci/slurm-version-cluster`` (Python 3 stdlib only).

One Debian root per Slurm version, made once with ``debootstrap`` and cached under
``/tmp/gputui-slurm-roots/<suite>``; the cluster's own files (config, logs, state, client wrappers) live
under ``/tmp/gputui-slurm-<version>``.  Paths under /tmp, $HOME and the checkout are the same inside and
outside the root (bind mounts in the cluster's private mount namespace), so one ``SLURM_CONF`` serves both.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import slurm_cluster_lib as lib
from slurm_cluster_lib import ClusterError, log

ROOTS_DIR = Path(os.environ.get("GPUTUI_SLURM_ROOTS") or "/tmp/gputui-slurm-roots")
MIRROR = os.environ.get("GPUTUI_DEBIAN_MIRROR") or "http://deb.debian.org/debian"
BASE_PACKAGES = ("slurmctld", "slurmd", "slurm-client", "munge", "libffi8", "libexpat1")
ACCOUNTING_PACKAGES = ("slurmdbd", "mariadb-server", "mariadb-client")
INSIDE_MARKER = "/etc/gputui-slurm-root"  # exists only inside a root: wrappers exec the real command
CLIENTS = (
    "squeue", "sinfo", "sacct", "sacctmgr", "scontrol", "sbatch", "srun", "scancel",
    "salloc", "sattach", "sstat", "sprio", "sshare",
)  # fmt: skip
NODES = 2
GPUS = 4
SLURMD_TIMEOUT = lib.DEFAULT_SLURMD_TIMEOUT


@dataclass(frozen=True)
class Version:
    """One Slurm version: where its root comes from and which names, addresses and ports it uses
    (none shared with the host's 22.05 cluster: 127.0.10.x, ports 16817+)."""

    label: str  # "24.11"
    suite: str  # Debian suite that ships it
    cluster_name: str
    node_prefix: str
    addr_prefix: str
    base_port: int  # mariadb +0 (-11), slurmdbd +10 (-1), slurmctld +11, slurmd of node i: +11+i

    @property
    def rootfs(self) -> Path:
        return ROOTS_DIR / self.suite

    @property
    def state(self) -> Path:
        return Path(f"/tmp/gputui-slurm-{self.label}")

    @property
    def db_port(self) -> int:
        return self.base_port - 11

    @property
    def dbd_port(self) -> int:
        return self.base_port - 1

    @property
    def ctld_port(self) -> int:
        return self.base_port

    def node_names(self) -> list[str]:
        return [f"{self.node_prefix}{i}" for i in range(1, NODES + 1)]

    def addr(self, node: str) -> str:
        return f"{self.addr_prefix}{int(node[len(self.node_prefix) :])}"

    def port(self, node: str) -> int:
        return self.base_port + int(node[len(self.node_prefix) :])


VERSIONS = {
    "24.11": Version("24.11", "trixie", "v2411", "tnode", "127.0.24.", 26817),
    "26.05": Version("26.05", "sid", "v2605", "snode", "127.0.26.", 27817),
}


class Paths:
    """The files of one version's cluster (all under ``Version.state``)."""

    def __init__(self, v: Version) -> None:
        r = v.state
        self.r = r
        self.conf = r / "etc" / "slurm.conf"
        self.info = r / "etc" / "cluster.json"
        self.bin = r / "bin"
        self.run = r / "run"
        self.log = r / "log"
        self.munge_socket = r / "munge" / "munge.socket"
        self.db_socket = r / "run" / "mysql.sock"
        self.datadir = r / "mysql"


# --------------------------------------------------------------------------- roots


def stamp(v: Version, what: str) -> Path:
    return v.rootfs / "etc" / f"gputui-slurm-{what}"


def build_root(v: Version) -> None:
    """debootstrap the version's root once (into ``<root>.partial``, renamed when complete)."""
    if stamp(v, "base").exists():
        return
    tool = lib.find_binary("debootstrap")
    if not tool:
        _apt_host("debootstrap")
        tool = lib.find_binary("debootstrap")
    if not tool:
        raise ClusterError(
            "debootstrap is not installed and apt-get could not install it", lib.EXIT_UNAVAILABLE
        )
    ROOTS_DIR.mkdir(parents=True, exist_ok=True)
    partial = v.rootfs.with_name(v.suite + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.rmtree(v.rootfs, ignore_errors=True)
    logfile = ROOTS_DIR / f"{v.suite}.log"
    log(f"building the Slurm {v.label} root: debootstrap {v.suite} (once; log: {logfile})")
    t0 = time.monotonic()
    argv = [tool, "--variant=minbase", f"--include={','.join(BASE_PACKAGES)}", v.suite, str(partial), MIRROR]
    if not _logged(argv, logfile, timeout=1200):
        raise ClusterError(f"debootstrap {v.suite} failed; see {logfile}", lib.EXIT_UNAVAILABLE)
    policy = partial / "usr" / "sbin" / "policy-rc.d"  # packages never start daemons in this root
    policy.write_text("#!/bin/sh\nexit 101\n")
    policy.chmod(0o755)
    (partial / INSIDE_MARKER.lstrip("/")).write_text(f"Slurm {v.label} root of ci/slurm-version-cluster\n")
    partial.rename(v.rootfs)
    stamp(v, "base").write_text(f"{time.monotonic() - t0:.1f} s\n")
    log(f"root {v.rootfs} built ({time.monotonic() - t0:.1f} s)")


def install_accounting(v: Version, inside: list[str]) -> None:
    """slurmdbd and MariaDB into the root (once); ``inside`` enters the cluster's namespace and root."""
    if stamp(v, "accounting").exists():
        return
    logfile = ROOTS_DIR / f"{v.suite}-accounting.log"
    log(f"installing {' '.join(ACCOUNTING_PACKAGES)} into {v.rootfs} (once; log: {logfile})")
    t0 = time.monotonic()
    apt = [*inside, "env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "-q"]
    apt += ["-o", "Acquire::Check-Valid-Until=false"]  # sid's InRelease may look expired to this clock
    install = [*apt, "install", "-y", "--no-install-recommends", *ACCOUNTING_PACKAGES]
    if not (_logged([*apt, "update"], logfile, 600) and _logged(install, logfile, 900)):
        raise ClusterError(f"installing slurmdbd and MariaDB failed; see {logfile}", lib.EXIT_UNAVAILABLE)
    stamp(v, "accounting").write_text(f"{time.monotonic() - t0:.1f} s\n")


def _logged(argv: list[str], logfile: Path, timeout: float) -> bool:
    with logfile.open("a") as fh:
        fh.write(f"$ {shlex.join(argv)}\n")
        fh.flush()
        try:
            res = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=fh, stderr=fh, timeout=timeout)
        except (subprocess.TimeoutExpired, OSError) as exc:
            fh.write(f"{exc}\n")
            return False
    return res.returncode == 0


def _apt_host(package: str) -> None:
    apt = lib.find_binary("apt-get")
    if apt:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        argv = [apt, "install", "-y", "-q", "--no-install-recommends", package]
        subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=300)


# --------------------------------------------------------------------------- config files


def slurm_conf(v: Version, p: Paths, accounting: bool) -> str:
    """The project's slurm.conf (``ci/slurm_cluster_lib.render_slurm_conf``) with this version's names,
    ports and paths; accounting through slurmdbd when asked."""
    base = lib.render_slurm_conf(lib.Cluster(p.r, NODES, GPUS, SLURMD_TIMEOUT))
    lines = [line for line in base.splitlines() if not line.startswith(("NodeName=", "PartitionName="))]
    swap = {
        "ClusterName": v.cluster_name,
        "SlurmctldPort": str(v.ctld_port),
        "SlurmdPort": str(v.port(v.node_names()[0])),
    }
    lines = [_replaced(line, swap) for line in lines]
    lines[0] = f"# Written by ci/slurm-version-cluster for Slurm {v.label}; regenerated on every `up`."
    if accounting:
        lines.remove("AccountingStorageType=accounting_storage/none")
        lines += [
            "AccountingStorageType=accounting_storage/slurmdbd",
            "AccountingStorageHost=localhost",
            f"AccountingStoragePort={v.dbd_port}",
            f"AccountingStoragePass={p.munge_socket}",  # else slurmctld asks the default munge socket
            "AccountingStorageTRES=gres/gpu",  # GPUs in sacct's AllocTRES (GPU-hours)
            "JobAcctGatherType=jobacct_gather/linux",
            "JobAcctGatherFrequency=5",
        ]
        lines.remove("JobAcctGatherType=jobacct_gather/none")
    for node in v.node_names():
        lines.append(
            f"NodeName={node} NodeAddr={v.addr(node)} NodeHostname={node} Port={v.port(node)}"
            " CPUs=8 Boards=1 SocketsPerBoard=1 CoresPerSocket=8 ThreadsPerCore=1"
            f" RealMemory=4000 Gres=gpu:{GPUS} State=UNKNOWN"
        )
    lines.append("PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP")
    return "\n".join(lines) + "\n"


def _replaced(line: str, swap: dict[str, str]) -> str:
    key = line.split("=", 1)[0]
    return f"{key}={swap[key]}" if key in swap else line


def gres_conf(v: Version, p: Paths) -> str:
    lines = ["AutoDetect=off"]
    for node in v.node_names():
        lines.append(f"NodeName={node} Name=gpu File={p.r}/dev/{node}/nvidia[0-{GPUS - 1}]")
    return "\n".join(lines) + "\n"


def slurmdbd_conf(v: Version, p: Paths) -> str:
    return (
        f"AuthType=auth/munge\nAuthInfo=socket={p.munge_socket}\nDbdHost=localhost\nDbdAddr=127.0.0.1\n"
        f"DbdPort={v.dbd_port}\nSlurmUser=root\nLogFile={p.log}/slurmdbd.log\n"
        f"PidFile={p.run}/own-slurmdbd.pid\nDebugLevel=info\nStorageType=accounting_storage/mysql\n"
        f"StorageHost=127.0.0.1\nStoragePort={v.db_port}\nStorageLoc=slurm_acct_db\nStorageUser=slurm\n"
        "StoragePass=gputui\n"
    )


def write_layout(v: Version, p: Paths, accounting: bool, uts: bool) -> None:
    """Directories, config files, munge key, fake GPUs, the root's /etc/hosts, client wrappers and
    ``etc/cluster.json`` (the description the tests read)."""
    for sub in ("etc", "run", "log", "spool/ctld", "munge", "bin"):
        (p.r / sub).mkdir(parents=True, exist_ok=True)
    os.chmod(p.r, 0o755)
    os.chmod(p.r / "munge", 0o755)
    keydir = p.r / "munge-key"
    keydir.mkdir(mode=0o700, exist_ok=True)
    key = keydir / "munge.key"
    if not key.exists() or key.stat().st_size < 32:
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(os.urandom(1024))
    p.conf.write_text(slurm_conf(v, p, accounting))
    (p.conf.parent / "gres.conf").write_text(gres_conf(v, p))
    dbd = p.conf.parent / "slurmdbd.conf"
    dbd.unlink(missing_ok=True)
    if accounting:  # slurmdbd finds it next to SLURM_CONF and wants mode 600
        fd = os.open(dbd, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(slurmdbd_conf(v, p))
    for node in v.node_names():
        (p.r / "spool" / node).mkdir(parents=True, exist_ok=True)
        devdir = p.r / "dev" / node
        devdir.mkdir(parents=True, exist_ok=True)
        for i in range(GPUS):
            lib.make_char_device(devdir / f"nvidia{i}", lib.NVIDIA_MAJOR, i)
    hosts = ["127.0.0.1 localhost " + os.uname().nodename]
    hosts += [f"{v.addr(n)} {n}" for n in v.node_names()]
    (v.rootfs / "etc" / "hosts").write_text("\n".join(hosts) + "\n")
    write_wrappers(v, p)
    info = {
        "version": v.label,
        "cluster_name": v.cluster_name,
        "accounting": accounting,
        "nodes": NODES,
        "gpus_per_node": GPUS,
        "slurmd_timeout": SLURMD_TIMEOUT,
        "uts_namespaces": uts,
        "node_names": v.node_names(),
        "conf": str(p.conf),
        "bin": str(p.bin),
        "rootfs": str(v.rootfs),
    }
    p.info.write_text(json.dumps(info, indent=2) + "\n")


def write_wrappers(v: Version, p: Paths) -> None:
    """``bin/<client>``: run the root's client inside the cluster's namespace, in the caller's directory;
    inside the root (a job's step calling srun) run it directly."""
    nsfile = shlex.quote(str(p.run / "ns.pid"))
    for name in CLIENTS:
        real = f"/usr/bin/{name}"
        text = (
            "#!/bin/sh\n"
            f"# Slurm {v.label}'s {name} (written by ci/slurm-version-cluster)\n"
            f'if [ -e {INSIDE_MARKER} ]; then exec {real} "$@"; fi\n'
            f"ns=$(cat {nsfile} 2>/dev/null) || {{\n"
            f"  echo '{name}: the Slurm {v.label} test cluster is not up "
            f"(ci/slurm-version-cluster up {v.label})' >&2; exit 1; }}\n"
            f'exec nsenter -t "$ns" -m -- chroot {shlex.quote(str(v.rootfs))} /bin/sh -c '
            f'\'cd "$0" 2>/dev/null || cd /; exec {real} "$@"\' "$PWD" "$@"\n'
        )
        path = p.bin / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            path.chmod(0o755)
