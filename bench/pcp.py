"""PCP's ``pmlogger`` as a peer of ``esatui collect``: a private ``pmcd`` with the Linux
PMDA (``pmdalinux``, its own process, as PCP deploys it), on a port and socket of its own,
and a ``pmlogger`` logging ``kernel.percpu.cpu`` and ``kernel.all.cpu`` (what esatui's host
source records: every CPU's times, and their sum) every second. Installing PCP is done when
it is missing, with ``apt-get install -y pcp`` (benchmarks only: the test suite never
installs anything).

The peer's CPU per sample is the three processes': pmlogger asks pmcd, which asks
pmdalinux, which reads ``/proc/stat``; the private pmcd serves nobody else.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench.sysstat import apt_install

# Where distributions put PCP's programs and files: Debian/Ubuntu, Fedora/RHEL/SUSE
PMCD_PATHS = ("/usr/lib/pcp/bin/pmcd", "/usr/libexec/pcp/bin/pmcd")
PMLOGGER_PATHS = ("/usr/lib/pcp/bin/pmlogger", "/usr/libexec/pcp/bin/pmlogger")
PMDALINUX_PATHS = ("/var/lib/pcp/pmdas/linux/pmdalinux", "/usr/lib/pcp/pmdas/linux/pmdalinux")
PMNS_PATHS = ("/usr/lib/pcp/pmns/root_linux", "/var/lib/pcp/pmns/root_linux")
PORT = 44_931  # not pmcd's 44321: a system pmcd may run beside this one
METRICS = ("kernel.all.cpu", "kernel.percpu.cpu")


@dataclass(frozen=True)
class Pcp:
    pmcd: str
    pmlogger: str
    pmdalinux: str
    pmns: str


def _first(paths: tuple[str, ...], name: str | None = None) -> str | None:
    for path in paths:
        if os.access(path, os.R_OK):
            return path
    return shutil.which(name) if name else None


def find_pcp() -> Pcp | None:
    found = (
        _first(PMCD_PATHS),
        _first(PMLOGGER_PATHS, "pmlogger"),
        _first(PMDALINUX_PATHS),
        _first(PMNS_PATHS),
    )
    if None in found:
        return None
    return Pcp(*found)  # type: ignore[arg-type]


def ensure_pcp(log: Callable[[str], None] = print) -> tuple[Pcp | None, str]:
    """PCP's programs, installing the pcp package with apt-get when they are missing; the
    second item says what was done (or why they are not there)."""
    found = find_pcp()
    if found:
        return found, "PCP already installed"
    # its post-install script fails where systemd does not run (a container): the
    # programs are there all the same, which is all this benchmark needs
    why = apt_install("pcp", log)
    found = find_pcp()
    if found:
        return found, "PCP installed by this benchmark (apt-get install -y pcp)"
    return None, f"pmlogger not measured: {why or 'apt-get install pcp gave no pmcd/pmlogger'}"


def children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return found


@contextmanager
def private_pmcd(pcp: Pcp, workdir: Path) -> Iterator[tuple[list[int], dict[str, str]]]:
    """A pmcd serving the Linux PMDA alone, for this benchmark: the pids of pmcd and
    pmdalinux, and the environment a client needs to reach it."""
    conf = workdir / "pmcd.conf"
    conf.write_text(f"linux\t60\tpipe\tbinary\t{pcp.pmdalinux}\n")
    sock = workdir / "pmcd.socket"
    argv = [
        pcp.pmcd,
        "-f",
        "-A",
        "-c",
        str(conf),
        "-n",
        pcp.pmns,
        "-p",
        str(PORT),
        "-s",
        str(sock),
        "-l",
        str(workdir / "pmcd.log"),
        "-x",
        str(workdir / "pmcd.err"),
    ]
    if os.geteuid() == 0:
        argv += ["-U", "root"]
    # the PMDA writes its log (linux.log) in its working directory: the benchmark's own
    proc = subprocess.Popen(argv, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        pids: list[int] = []
        while time.monotonic() < deadline and proc.poll() is None:
            pids = children(proc.pid)
            if pids and sock.exists():
                break
            time.sleep(0.1)
        if proc.poll() is not None or not pids:
            log_file = workdir / "pmcd.log"
            log = log_file.read_text(errors="replace") if log_file.exists() else ""
            raise RuntimeError(f"pmcd did not start with pmdalinux: {log[-300:]}")
        time.sleep(0.5)  # the PMDA's own start-up
        yield [proc.pid, *pids], dict(os.environ, PMCD_PORT=str(PORT))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def logger_config(workdir: Path) -> Path:
    path = workdir / "pmlogger.conf"
    path.write_text("log mandatory on 1 sec {\n" + "".join(f"    {m}\n" for m in METRICS) + "}\n")
    return path


def pmlogger_argv(pcp: Pcp, config: Path, samples: int, archive: Path) -> list[str]:
    """pmlogger taking ``samples`` samples a second apart, then ending."""
    return [
        pcp.pmlogger,
        "-h",
        "localhost",
        "-c",
        str(config),
        "-l",
        str(archive.with_suffix(".log")),
        "-s",
        str(samples),
        str(archive),
    ]
