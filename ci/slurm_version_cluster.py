#!/usr/bin/env python3
"""Slurm 24.11 or 26.05 test clusters beside the host's 22.05 one (Debian root in a private namespace).

Usage (run as ``ci/slurm-version-cluster``; root; Python 3 stdlib only):
    eval "$(ci/slurm-version-cluster up 24.11)"           # build the root once, start or repair
    eval "$(ci/slurm-version-cluster up 26.05 --accounting)"   # with slurmdbd + MariaDB
    ci/slurm-version-cluster status 24.11   # one line per daemon; exit 0 only if all are up
    eval "$(ci/slurm-version-cluster env 24.11)"   # export SLURM_CONF and PATH (starts nothing)
    ci/slurm-version-cluster down 24.11     # cancel jobs, stop every process of the cluster

Every daemon runs ``chroot <root>`` inside ONE private mount namespace (held by a ``sleep`` process)
that bind-mounts /proc, /dev, /sys, /tmp, $HOME and the checkout into the root: nothing is mounted
on the host, and the mounts go with the namespace's last process. Clients are wrappers in
``/tmp/gputui-slurm-<version>/bin`` (put first on PATH) that enter the namespace and the root.

    version  suite   cluster  nodes           addresses     ports (ctld, slurmd, slurmdbd, mariadb)
    24.11    trixie  v2411    tnode1, tnode2  127.0.24.i    26817, 26818-9, 26816, 26806
    26.05    sid     v2605    snode1, snode2  127.0.26.i    27817, 27818-9, 27816, 27806

Exit status: 0 ok, 1 failure (one line naming the log to read), 2 usage, 3 unavailable here.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).resolve().parent))
import slurm_cluster_lib as lib  # noqa: E402
import slurm_version_root as vr  # noqa: E402
from slurm_cluster_lib import ClusterError  # noqa: E402
from slurm_version_root import Paths, Version  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def log(message: str) -> None:
    print(f"slurm-version-cluster: {message}", file=sys.stderr, flush=True)


vr.log = log  # the root module's progress lines name this script


class Cluster:
    def __init__(self, v: Version, accounting: bool) -> None:
        self.v, self.p, self.accounting = v, Paths(v), accounting
        self.rootfs = str(v.rootfs)

    # ----------------------------------------------------------------- namespace

    def ns_pid(self) -> int | None:
        """The namespace holder (``sleep infinity`` whose mounts include our root's /proc)."""
        pid = lib.read_pid(self.p.run / "ns.pid")
        if not pid or not lib.proc_running(pid, ("sleep", "infinity")):
            return None
        try:
            mounts = Path(f"/proc/{pid}/mountinfo").read_text()
        except OSError:
            return None
        return pid if f" {self.rootfs}/proc " in mounts else None

    def inside(self) -> list[str]:
        return ["nsenter", "-t", str(self.ns_pid()), "-m", "--", "chroot", self.rootfs]

    def start_namespace(self) -> None:
        holder = ["unshare", "--mount", "--propagation", "private", "--", "sleep", "infinity"]
        lib.start_daemon(holder, self.p.run / "ns.pid", self.p.log / "ns.out", self.env(), self.p.r)
        pid = lib.wait_until(lambda: lib.read_pid(self.p.run / "ns.pid"), 5, "the namespace holder")
        lib.wait_until(lambda: _mnt_ns(pid) not in (None, _mnt_ns("self")), 5, "the private namespace")
        binds = [("--bind", "/tmp"), ("--bind", str(Path.home())), ("--bind", str(REPO))]
        binds += [("--rbind", "/proc"), ("--rbind", "/dev"), ("--rbind", "/sys")]
        for how, src in binds:
            (self.v.rootfs / src.lstrip("/")).mkdir(parents=True, exist_ok=True)
            res = lib.run(
                ["nsenter", "-t", str(pid), "-m", "--", "mount", how, src, self.rootfs + src], self.env()
            )
            if res.returncode != 0:
                raise ClusterError(
                    f"mount {how} {src} into {self.rootfs} failed: {lib.last_line(res.stderr)}"
                )

    def namespace_pids(self) -> list[int]:
        """Every process in our mount namespace except the holder (daemons, steps, tasks, clients)."""
        holder = self.ns_pid()
        ns = _mnt_ns(holder) if holder else None
        if not ns:
            return []
        pids = (int(d.name) for d in Path("/proc").iterdir() if d.name.isdigit())
        return [pid for pid in pids if pid != holder and _mnt_ns(pid) == ns]

    # ----------------------------------------------------------------- daemons

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(lib.JOB_ENV_PREFIXES)}
        env["SLURM_CONF"] = str(self.p.conf)
        env["PATH"] = f"{self.p.bin}{os.pathsep}{env.get('PATH', '/usr/bin:/bin')}"
        return env

    def daemons(self) -> list[tuple[str, list[str]]]:
        """(name, argv inside the root) in start order."""
        p, sock = self.p, str(self.p.munge_socket)
        keys = ["--key-file", f"{p.r}/munge-key/munge.key", "--seed-file", f"{p.r}/munge-key/munged.seed"]
        out = [
            ("munged", ["/usr/sbin/munged", "-F", f"--socket={sock}", f"--pid-file={p.run}/own-munged.pid",
                        f"--log-file={p.log}/munged.log", *keys]),
        ]  # fmt: skip
        if self.accounting:
            out.append(("mariadbd", ["/usr/sbin/mariadbd", "--no-defaults", "--user=root",
                        f"--datadir={p.datadir}", f"--socket={p.db_socket}", f"--port={self.v.db_port}",
                        "--bind-address=127.0.0.1", f"--pid-file={p.run}/own-mariadb.pid",
                        f"--log-error={p.log}/mariadb.log", "--innodb-buffer-pool-size=128M",
                        "--innodb-lock-wait-timeout=900", "--innodb-snapshot-isolation=OFF"]))  # fmt: skip
            out.append(("slurmdbd", ["/usr/sbin/slurmdbd", "-D"]))
        out.append(("slurmctld", ["/usr/sbin/slurmctld", "-D", "-c", "-f", str(p.conf)]))
        return out

    def pid(self, name: str) -> int | None:
        """The daemon's pid if it runs, inside our root, as the program its pid file says."""
        pid = lib.read_pid(self.p.run / f"{name}.pid")
        program = "slurmd" if name.startswith("slurmd-") else name
        if not pid or not lib.proc_running(pid, (program,)):
            return None
        try:
            return pid if os.readlink(f"/proc/{pid}/root") == self.rootfs else None
        except OSError:
            return None

    def start(self, name: str, argv: list[str]) -> subprocess.Popen:
        log(f"starting {name}")
        pidfile, out = self.p.run / f"{name}.pid", self.p.log / f"{name}.out"
        return lib.start_daemon([*self.inside(), *argv], pidfile, out, self.env(), self.p.r)

    def start_slurmd(self, node: str, uts: bool) -> subprocess.Popen:
        log(f"starting slurmd-{node}")
        enter = ["nsenter", "-t", str(self.ns_pid()), "-m", "--"]
        slurmd = ["chroot", self.rootfs, "/usr/sbin/slurmd", "-D", "-f", str(self.p.conf), "-N", node]
        if uts:  # own UTS namespace: `hostname` in a task prints the node name
            slurmd = ["unshare", "--uts", "--", "/bin/sh", "-c", 'hostname "$0" && exec "$@"', node, *slurmd]
        pidfile, out = self.p.run / f"slurmd-{node}.pid", self.p.log / f"slurmd-{node}.out"
        return lib.start_daemon([*enter, *slurmd], pidfile, out, self.env(), self.p.r)

    def stop(self, name: str) -> None:
        pid = self.pid(name)
        if pid:
            log(f"stopping {name}")
            program = "slurmd" if name.startswith("slurmd-") else name
            lib.stop_pid(pid, (program,))
        (self.p.run / f"{name}.pid").unlink(missing_ok=True)

    # ----------------------------------------------------------------- checks

    def client(self, *argv: str, timeout: float = 10) -> subprocess.CompletedProcess:
        return lib.run([str(self.p.bin / argv[0]), *argv[1:]], self.env(), timeout=timeout)

    def munge_ok(self) -> bool:
        sock = str(self.p.munge_socket)
        cred = lib.run([*self.inside(), "munge", "-n", "-S", sock], self.env(), timeout=5)
        unmunge = [*self.inside(), "unmunge", "-S", sock]
        return cred.returncode == 0 and lib.run(unmunge, self.env(), 5, stdin=cred.stdout).returncode == 0

    def ctld_up(self) -> bool:
        ping = self.client("scontrol", "ping", timeout=5)
        return ping.returncode == 0 and "is UP" in ping.stdout

    def node_states(self) -> dict[str, str]:
        res = self.client("sinfo", "-h", "-N", "-o", "%N %t", timeout=5)
        lines = res.stdout.splitlines() if res.returncode == 0 else []
        return dict(line.split(None, 1) for line in lines if " " in line)

    def nodes_ready(self) -> bool:
        states = self.node_states()
        return set(states) == set(self.v.node_names()) and all(
            s in lib.GOOD_NODE_STATES for s in states.values()
        )

    def healthy(self) -> bool:
        names = [n for n, _ in self.daemons()] + [f"slurmd-{n}" for n in self.v.node_names()]
        return (
            bool(self.ns_pid()) and all(self.pid(n) for n in names) and self.ctld_up() and self.nodes_ready()
        )


def _mnt_ns(pid: int | str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt")
    except OSError:
        return None


def uts_permitted() -> bool:
    return lib.run(["unshare", "--uts", "true"], os.environ.copy(), timeout=5).returncode == 0


def watch(c: Cluster, name: str, proc: subprocess.Popen, check, timeout: float, what: str) -> None:
    """Wait for ``check``; a daemon that exits meanwhile fails at once, naming its log."""

    def probe():
        if proc.poll() is not None:
            raise ClusterError(f"{name} exited during start-up (status {proc.returncode}); see {c.p.log}/")
        return check()

    lib.wait_until(probe, timeout, f"{what} (see {c.p.log}/)")


# --------------------------------------------------------------------------- commands


def start_accounting(c: Cluster, name: str, argv: list[str]) -> None:
    p = c.p
    if name == "mariadbd":
        if not (p.datadir / "mysql").is_dir():
            log("creating the MariaDB data directory")
            install = [*c.inside(), "mariadb-install-db", "--user=root", f"--datadir={p.datadir}",
                       "--auth-root-authentication-method=normal"]  # fmt: skip
            if lib.run(install, c.env(), timeout=120).returncode != 0:
                raise ClusterError(f"mariadb-install-db failed; see {p.log}/")
        proc = c.start(name, argv)
        sql = [*c.inside(), "mariadb", "-S", str(p.db_socket), "-uroot", "-e"]
        watch(c, name, proc, lambda: lib.run([*sql, "SELECT 1"], c.env(), 5).returncode == 0, 30, "MariaDB")
        grants = ["CREATE DATABASE IF NOT EXISTS slurm_acct_db;"]
        for host in ("localhost", "127.0.0.1"):
            grants += [f"CREATE USER IF NOT EXISTS 'slurm'@'{host}' IDENTIFIED BY 'gputui';",
                       f"GRANT ALL ON slurm_acct_db.* TO 'slurm'@'{host}';"]  # fmt: skip
        res = lib.run([*sql, " ".join([*grants, "FLUSH PRIVILEGES;"])], c.env(), 15)
        if res.returncode != 0:
            raise ClusterError(f"creating the accounting database failed: {lib.last_line(res.stderr)}")
    else:  # slurmdbd: ready when sacctmgr gets an answer from it
        proc = c.start(name, argv)
        ready = lambda: c.client("sacctmgr", "-n", "list", "cluster", timeout=5).returncode == 0  # noqa: E731
        watch(c, name, proc, ready, 30, "slurmdbd to answer sacctmgr")


def cmd_up(c: Cluster) -> None:
    t0 = time.monotonic()
    vr.build_root(c.v)
    uts = uts_permitted()
    old = _load_info(c.v)
    same = (
        c.p.conf.exists() and c.p.conf.read_text() == vr.slurm_conf(c.v, c.p, c.accounting)
        and old.get("uts_namespaces") == uts
    )  # fmt: skip
    if same and c.healthy():
        log(f"Slurm {c.v.label} cluster already up ({time.monotonic() - t0:.2f} s)")
        return
    if not same and c.ns_pid():
        log("configuration changed: restarting the cluster")
        cmd_down(Cluster(c.v, bool(old.get("accounting"))))
    c.p.log.mkdir(parents=True, exist_ok=True)
    c.p.run.mkdir(parents=True, exist_ok=True)
    if not c.ns_pid():
        for stale in c.p.run.glob("*.pid"):  # their processes went with the namespace
            stale.unlink()
        c.start_namespace()
    if c.accounting:
        vr.install_accounting(c.v, c.inside())
    vr.write_layout(c.v, c.p, c.accounting, uts)
    restarted = False
    for name, argv in c.daemons():
        if c.pid(name):
            continue
        if name == "munged":
            proc = c.start(name, argv)
            watch(c, name, proc, c.munge_ok, 10, "munged to answer")
        elif name == "slurmctld":  # a fresh (-c) controller: restart the slurmds too
            for node in c.v.node_names():
                c.stop(f"slurmd-{node}")
            proc = c.start(name, argv)
            watch(c, name, proc, c.ctld_up, 20, "`scontrol ping` to report UP")
            restarted = True
        else:
            start_accounting(c, name, argv)
    procs = [(n, c.start_slurmd(n, uts)) for n in c.v.node_names() if not c.pid(f"slurmd-{n}")]
    resumed: set[str] = set()

    def ready() -> bool:
        for name, proc in procs:
            if proc.poll() is not None:
                raise ClusterError(f"slurmd-{name} exited during start-up; see {c.p.log}/slurmd-{name}.log")
        for node, state in c.node_states().items():
            if state in ("down", "drain", "drng") and node not in resumed:
                resumed.add(node)  # left DOWN by a slurmd that died earlier
                c.client("scontrol", "update", f"NodeName={node}", "State=RESUME")
        return c.nodes_ready()

    lib.wait_until(ready, 30, f"nodes to be idle (see {c.p.log}/)")
    n = vr.NODES
    smoke = c.client("srun", f"-N{n}", f"-n{n}", "-t1", "--quiet", "true", timeout=30)
    if smoke.returncode != 0:
        raise ClusterError(f"smoke test srun failed ({lib.last_line(smoke.stderr)}); see {c.p.log}/")
    what = "started" if restarted else "repaired"
    log(f"Slurm {c.v.label} cluster {what} with accounting={c.accounting} ({time.monotonic() - t0:.1f} s)")


def cmd_down(c: Cluster) -> None:
    if c.ns_pid():
        if c.pid("slurmctld"):
            jobs = c.client("squeue", "-h", "-o", "%i").stdout.split()
            if jobs:
                log(f"cancelling {len(jobs)} job(s)")
                c.client("scancel", *jobs)
                with contextlib.suppress(ClusterError):
                    lib.wait_until(
                        lambda: not c.client("squeue", "-h", "-o", "%i").stdout.strip(), 15, "jobs"
                    )
        names = [f"slurmd-{n}" for n in c.v.node_names()] + [n for n, _ in reversed(c.daemons())]
        for name in names:
            c.stop(name)
        for pid in c.namespace_pids():  # a stopped slurmd leaves its slurmstepd and tasks behind
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        holder = c.ns_pid()
        if holder:
            lib.stop_pid(holder, ("sleep", "infinity"))
    (c.p.run / "ns.pid").unlink(missing_ok=True)
    for stale in c.p.run.glob("*.pid") if c.p.run.is_dir() else []:
        stale.unlink()
    log(f"Slurm {c.v.label} cluster is down")


def cmd_status(c: Cluster) -> int:
    if not c.p.conf.exists() or not c.ns_pid():
        print(f"namespace      DOWN  (Slurm {c.v.label}: run ci/slurm-version-cluster up {c.v.label})")
        return 1
    up = bool(c.pid("slurmctld")) and c.ctld_up()
    states = c.node_states() if up else {}
    ok = True
    for name, _ in c.daemons():
        pid = c.pid(name)
        good = bool(pid) and (name != "slurmctld" or up)
        info = f"port {c.v.ctld_port}, scontrol ping {'UP' if up else 'DOWN'}" if name == "slurmctld" else ""
        ok = ok and good
        print(f"{name:<14} {'up' if good else 'DOWN':<5} pid {pid or '-':<8} {info}")
    for node in c.v.node_names():
        pid, state = c.pid(f"slurmd-{node}"), states.get(node, "unknown")
        good = bool(pid) and state in lib.GOOD_NODE_STATES
        ok = ok and good
        info = f"{c.v.addr(node)}:{c.v.port(node)}, state {state}"
        print(f"{'slurmd-' + node:<14} {'up' if good else 'DOWN':<5} pid {pid or '-':<8} {info}")
    return 0 if ok else 1


def exports(c: Cluster) -> str:
    conf, path = shlex.quote(str(c.p.conf)), shlex.quote(str(c.p.bin))
    return f'export SLURM_CONF={conf}\nexport PATH={path}:"$PATH"'


def _load_info(v: Version) -> dict:
    try:
        return json.loads(Paths(v).info.read_text())
    except (OSError, ValueError):
        return {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="slurm-version-cluster", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_up = sub.add_parser("up", help="build the root once, start or repair the cluster, print exports")
    p_up.add_argument("version", choices=sorted(vr.VERSIONS))
    acct = p_up.add_mutually_exclusive_group()
    acct.add_argument("--accounting", action="store_true", default=None, help="slurmdbd + MariaDB")
    acct.add_argument("--no-accounting", dest="accounting", action="store_false")
    for name, text in (
        ("down", "cancel jobs, stop every process of the cluster"),
        ("status", "one line per daemon; exit 0 if the whole cluster is up"),
        ("env", "print `export SLURM_CONF=...` and `export PATH=<wrappers>:$PATH` (starts nothing)"),
    ):
        sub.add_parser(name, help=text).add_argument("version", choices=sorted(vr.VERSIONS))
    args = parser.parse_args(argv)
    v = vr.VERSIONS[args.version]
    accounting = getattr(args, "accounting", None)
    if accounting is None:  # not said: keep what the cluster had (a fresh one has none)
        accounting = bool(_load_info(v).get("accounting"))
    c = Cluster(v, accounting)
    if args.command == "env":
        print(exports(c))
        return 0
    try:
        if os.geteuid() != 0:
            raise ClusterError("must run as root (chroot, namespaces, slurmd)", lib.EXIT_UNAVAILABLE)
        v.state.mkdir(parents=True, exist_ok=True)
        with (v.state / ".lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one up/down/status at a time per version
            if args.command == "status":
                return cmd_status(c)
            if args.command == "up":
                cmd_up(c)
                print(exports(c))
            else:
                cmd_down(c)
        return 0
    except ClusterError as exc:
        print(f"slurm-version-cluster: error: {exc}", file=sys.stderr)
        return exc.code
    except Exception as exc:  # one line, never a traceback
        print(f"slurm-version-cluster: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("slurm-version-cluster: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
