"""Finding sysstat's ``sadc``, and installing sysstat (or another peer) with apt-get when it
is missing (benchmarks only: the test suite never installs anything)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

# Where distributions put sadc: Debian/Ubuntu, Fedora/RHEL, SUSE, Arch, Alpine
SADC_PATHS = (
    "/usr/lib/sysstat/sadc",
    "/usr/lib64/sa/sadc",
    "/usr/lib/sa/sadc",
    "/usr/libexec/sysstat/sadc",
    "/usr/local/lib/sa/sadc",
)


def find_sadc() -> str | None:
    for path in SADC_PATHS:
        if os.access(path, os.X_OK):
            return path
    return shutil.which("sadc")


def apt_install(package: str, log: Callable[[str], None] = print) -> str | None:
    """``apt-get install -y PACKAGE`` (the package lists refreshed once if that fails);
    ``None`` when it was run, else why it could not be."""
    apt = shutil.which("apt-get")
    if apt is None:
        return f"no apt-get to install {package} with"
    if os.geteuid() != 0:
        return f"installing {package} needs root (apt-get install {package})"
    log(f"  installing {package} (apt-get install -y {package})")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = [apt, "install", "-y", package]
    if subprocess.run(install, capture_output=True, env=env, check=False).returncode != 0:
        # the package lists may be missing or stale: refresh them once and try again
        subprocess.run([apt, "update"], capture_output=True, env=env, check=False)
        subprocess.run(install, capture_output=True, env=env, check=False)
    return None


def ensure_sadc(log: Callable[[str], None] = print) -> tuple[str | None, str]:
    """``sadc``'s path, installing the sysstat package with apt-get when it is missing;
    the second item says what was done (or why sadc is not there)."""
    found = find_sadc()
    if found:
        return found, "sysstat already installed"
    why = apt_install("sysstat", log)
    if why is not None:
        return None, f"sadc not found; {why}"
    found = find_sadc()
    if found:
        return found, "sysstat installed by this benchmark (apt-get install -y sysstat)"
    return None, "apt-get install sysstat did not give a sadc"


def sadc_data_file(directory: Path, name: str) -> Path:
    """A fresh output file: sadc appends to an existing one (and ignores -S then)."""
    path = directory / name
    path.unlink(missing_ok=True)
    return path
