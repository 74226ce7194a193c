"""Building blocks for ``ci/slurm-cluster`` (Python 3 stdlib only).

A local Slurm 22.05 test cluster on one Debian host: munged, slurmctld and one slurmd per fake
node, all started by us, all files under one root directory.  See ``ci/slurm-cluster`` for the
defaults and docs/testing.md for the recipe and its pitfalls.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

DEFAULT_ROOT = "/tmp/gputui-slurm"
ROOT_ENV = "GPUTUI_SLURM_ROOT"
CTLD_PORT = 16817
SLURMD_BASE_PORT = 16818  # node i (1-based) listens on SLURMD_BASE_PORT + i - 1
ADDR_PREFIX = "127.0.10."  # node i has address 127.0.10.i
HOSTS_FILE = Path("/etc/hosts")
HOSTS_MARKER = "# gputui-slurm-ci:"
NVIDIA_MAJOR = 195
PACKAGES = ("slurmctld", "slurmd", "slurm-client", "munge")
BINARIES = (
    "slurmctld",
    "slurmd",
    "slurmstepd",
    "munged",
    "munge",
    "unmunge",
    "srun",
    "sbatch",
    "scontrol",
    "sinfo",
    "squeue",
    "scancel",
)
JOB_ENV_PREFIXES = ("SLURM_", "SRUN_", "SBATCH_", "SALLOC_")  # read by srun/sbatch as defaults
GOOD_NODE_STATES = {"idle", "mix", "alloc", "comp"}
DEFAULT_SLURMD_TIMEOUT = 10  # Slurm's own default is 300 s; short, so node-failure tests finish
# slurm.conf settings that `scontrol reconfigure` applies to running daemons: changing only these
# reconfigures the cluster instead of restarting it (which would cancel every job).
RECONFIGURABLE = ("SlurmdTimeout=",)

EXIT_FAILED = 1
EXIT_UNAVAILABLE = 3


class ClusterError(Exception):
    """A failure with a one-line message; ``code`` becomes the exit status."""

    def __init__(self, message: str, code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.code = code


def log(message: str) -> None:
    print(f"slurm-cluster: {message}", file=sys.stderr, flush=True)


def wait_until(predicate: Callable[[], object], timeout: float, what: str, interval: float = 0.1) -> object:
    """Poll ``predicate`` until it returns something truthy; ClusterError after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise ClusterError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def find_binary(name: str) -> str | None:
    search = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin", "/usr/bin"])
    return shutil.which(name, path=search)


# --------------------------------------------------------------------------- cluster layout


@dataclass
class Cluster:
    root: Path
    nodes: int = 2
    gpus: int = 4
    slurmd_timeout: int = DEFAULT_SLURMD_TIMEOUT

    @property
    def conf(self) -> Path:
        return self.root / "etc" / "slurm.conf"

    @property
    def state_file(self) -> Path:
        return self.root / "etc" / "cluster.json"

    @property
    def node_names(self) -> list[str]:
        return [f"node{i}" for i in range(1, self.nodes + 1)]

    @property
    def munge_socket(self) -> Path:
        return self.root / "munge" / "munge.socket"

    @property
    def hosts_marker(self) -> str:
        return f"{HOSTS_MARKER}{self.root}"

    def addr(self, node: str) -> str:
        return f"{ADDR_PREFIX}{int(node[4:])}"

    def port(self, node: str) -> int:
        return SLURMD_BASE_PORT + int(node[4:]) - 1

    def pidfile(self, daemon: str) -> Path:
        return self.root / "run" / f"{daemon}.pid"

    def logfile(self, daemon: str) -> Path:
        return self.root / "log" / f"{daemon}.log"

    def env(self) -> dict[str, str]:
        """os.environ without inherited Slurm job/option variables, plus our SLURM_CONF."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(JOB_ENV_PREFIXES)}
        env["SLURM_CONF"] = str(self.conf)
        return env

    def save_state(self, uts: bool) -> None:
        data = {
            "nodes": self.nodes,
            "gpus_per_node": self.gpus,
            "slurmd_timeout": self.slurmd_timeout,
            "uts_namespaces": uts,
            "node_names": self.node_names,
            "conf": str(self.conf),
        }
        self.state_file.write_text(json.dumps(data, indent=2) + "\n")

    @classmethod
    def load(cls, root: Path) -> Cluster | None:
        """The cluster last written by `up` under ``root`` (None if there is none)."""
        try:
            data = json.loads((root / "etc" / "cluster.json").read_text())
            timeout = int(data.get("slurmd_timeout", 300))  # older files: Slurm's default was in use
            return cls(root, int(data["nodes"]), int(data["gpus_per_node"]), timeout)
        except (OSError, ValueError, KeyError):
            return None


def cluster_root() -> Path:
    return Path(os.environ.get(ROOT_ENV) or DEFAULT_ROOT).absolute()


# --------------------------------------------------------------------------- config files


def render_slurm_conf(c: Cluster) -> str:
    r = c.root
    lines = [
        "# Written by ci/slurm-cluster; regenerated on every `up`.",
        "ClusterName=ci",
        "SlurmctldHost=localhost(127.0.0.1)",
        f"SlurmctldPort={CTLD_PORT}",
        f"SlurmdPort={SLURMD_BASE_PORT}",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={c.munge_socket}",
        "SlurmUser=root",
        "SlurmdUser=root",
        f"StateSaveLocation={r}/spool/ctld",
        f"SlurmdSpoolDir={r}/spool/%n",
        f"SlurmctldPidFile={r}/run/own-slurmctld.pid",  # ours are run/<daemon>.pid
        f"SlurmctldLogFile={c.logfile('slurmctld')}",
        f"SlurmdPidFile={r}/run/own-slurmd-%n.pid",
        f"SlurmdLogFile={r}/log/slurmd-%n.log",
        "MailProg=/bin/true",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/filetxt",
        f"JobCompLoc={r}/log/jobcomp.txt",
        "MpiDefault=none",
        "SwitchType=switch/none",
        "SchedulerType=sched/backfill",
        "SchedulerParameters=batch_sched_delay=0",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core",
        "SlurmdParameters=config_overrides",
        "ReturnToService=2",
        "MinJobAge=300",
        "KillWait=5",
        f"SlurmdTimeout={c.slurmd_timeout}",
        "InactiveLimit=0",
        "Waittime=0",
        "GresTypes=gpu",
    ]
    gres = f" Gres=gpu:{c.gpus}" if c.gpus else ""
    for node in c.node_names:
        lines.append(
            f"NodeName={node} NodeAddr={c.addr(node)} NodeHostname={node} Port={c.port(node)}"
            " CPUs=8 Boards=1 SocketsPerBoard=1 CoresPerSocket=8 ThreadsPerCore=1"
            f" RealMemory=4000{gres} State=UNKNOWN"
        )
    lines.append("PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP")
    return "\n".join(lines) + "\n"


def render_gres_conf(c: Cluster) -> str:
    lines = ["AutoDetect=off"]
    if c.gpus:
        files = "nvidia0" if c.gpus == 1 else f"nvidia[0-{c.gpus - 1}]"
        for node in c.node_names:
            lines.append(f"NodeName={node} Name=gpu File={c.root}/dev/{node}/{files}")
    return "\n".join(lines) + "\n"


def config_change(c: Cluster) -> str:
    """How the files on disk differ from what ``c`` needs: "same", "reconfigure" (only
    :data:`RECONFIGURABLE` settings differ) or "restart" (anything else, or no files)."""
    try:
        conf = c.conf.read_text()
        gres = (c.conf.parent / "gres.conf").read_text()
    except OSError:
        return "restart"
    wanted = render_slurm_conf(c)
    if conf == wanted and gres == render_gres_conf(c):
        return "same"

    def fixed(text: str) -> list[str]:
        return [line for line in text.splitlines() if not line.startswith(RECONFIGURABLE)]

    if gres == render_gres_conf(c) and fixed(conf) == fixed(wanted):
        return "reconfigure"
    return "restart"


def write_layout(c: Cluster, uts: bool) -> None:
    """Directories, config files, munge key and fake GPU devices (keeps what is already right)."""
    r = c.root
    for sub in ("etc", "run", "log", "spool/ctld"):
        (r / sub).mkdir(parents=True, exist_ok=True)
    for node in c.node_names:
        (r / "spool" / node).mkdir(parents=True, exist_ok=True)
    (r / "munge").mkdir(exist_ok=True)
    os.chmod(r, 0o755)
    os.chmod(r / "munge", 0o755)  # the socket directory must be traversable by clients
    keydir = r / "munge-key"
    keydir.mkdir(mode=0o700, exist_ok=True)
    os.chmod(keydir, 0o700)
    key = keydir / "munge.key"
    if not key.exists() or key.stat().st_size < 32:
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(os.urandom(1024))
    os.chmod(key, 0o600)
    c.conf.write_text(render_slurm_conf(c))
    (c.conf.parent / "gres.conf").write_text(render_gres_conf(c))
    c.save_state(uts)
    for node in c.node_names:
        devdir = r / "dev" / node
        devdir.mkdir(parents=True, exist_ok=True)
        for i in range(c.gpus):
            make_char_device(devdir / f"nvidia{i}", NVIDIA_MAJOR, i)


def make_char_device(path: Path, major: int, minor: int) -> None:
    try:
        st = path.lstat()
        if stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(major, minor):
            return
        path.unlink()
    except FileNotFoundError:
        pass
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(major, minor))
    except OSError as exc:
        raise ClusterError(
            f"cannot create fake GPU device {path} (mknod c {major} {minor}): {exc.strerror}"
        ) from None


# --------------------------------------------------------------------------- /etc/hosts


def hosts_lines(c: Cluster) -> list[str]:
    return [f"{c.addr(n)} {n} {c.hosts_marker}" for n in c.node_names]


def hosts_ok(c: Cluster) -> bool:
    try:
        present = HOSTS_FILE.read_text().splitlines()
    except OSError:
        return False
    return [line for line in present if line.endswith(c.hosts_marker)] == hosts_lines(c)


def edit_hosts(c: Cluster, add: bool) -> None:
    """Drop our marked lines (and re-add them when ``add``); edits in place (may be a bind mount)."""
    try:
        with HOSTS_FILE.open("r+") as fh:
            old = fh.read().splitlines()
            new = [line for line in old if not line.endswith(c.hosts_marker)]
            if add:
                new += hosts_lines(c)
            if new != old:
                fh.seek(0)
                fh.write("\n".join(new) + "\n")
                fh.truncate()
    except OSError as exc:
        raise ClusterError(f"cannot edit {HOSTS_FILE}: {exc.strerror}") from None


# --------------------------------------------------------------------------- processes


def read_pid(pidfile: Path) -> int | None:
    try:
        return int(pidfile.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def proc_running(pid: int, tokens: tuple[str, ...]) -> bool:
    """True if ``pid`` lives (not a zombie), runs program ``tokens[0]`` and has ``tokens[1:]`` as args."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    if any(line.startswith("State:") and "Z" in line.split()[1] for line in status.splitlines()):
        return False
    args = [a.decode(errors="replace") for a in argv if a]
    return bool(args) and os.path.basename(args[0]) == tokens[0] and all(t in args[1:] for t in tokens[1:])


def reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def stop_pid(pid: int, tokens: tuple[str, ...], timeout: float = 8.0) -> None:
    """SIGTERM (then SIGKILL) a process, only if it still is the daemon named by ``tokens``."""
    if not proc_running(pid, tokens):
        return
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 3.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            reap(pid)
            if not proc_running(pid, tokens):
                return
            time.sleep(0.05)
    raise ClusterError(f"{tokens[0]} (pid {pid}) survived SIGKILL")


def start_daemon(
    argv: list[str], pidfile: Path, out: Path, env: dict[str, str], cwd: Path
) -> subprocess.Popen:
    """Start a daemon in its own session, detached from our stdio; write its pid file."""
    with out.open("ab") as fh:
        try:
            proc = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=fh, stderr=fh, env=env, cwd=cwd, start_new_session=True
            )
        except OSError as exc:
            raise ClusterError(f"cannot start {argv[0]}: {exc.strerror}") from None
    pidfile.write_text(f"{proc.pid}\n")
    return proc


def run(
    argv: list[str], env: dict[str, str], timeout: float = 10.0, stdin: str | None = None
) -> subprocess.CompletedProcess:
    """Run a command, capturing text output; a timeout counts as failure (rc 124)."""
    try:
        return subprocess.run(
            argv,
            env=env,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=None if stdin is not None else subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else ""
        return subprocess.CompletedProcess(argv, 124, out, f"timed out after {timeout} s")
    except OSError as exc:
        return subprocess.CompletedProcess(argv, 127, "", exc.strerror or str(exc))


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"


def last_error(logfile: Path) -> str:
    """': <last error/fatal line of logfile>' or '' (for one-line error messages)."""
    try:
        lines = logfile.read_text(errors="replace").splitlines()[-200:]
    except OSError:
        return ""
    errors = [line for line in lines if "error" in line.lower() or "fatal" in line.lower()]
    return f": {errors[-1].strip()[-200:]}" if errors else ""
