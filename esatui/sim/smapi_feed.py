"""The simulated z/VM's SMAPI server: a loopback server answering from the model.

It is the project's SMAPI server (:mod:`esatui.sim.interfaces.smapi_server`) with the simulated
system's guests and LPAR: ``Image_Performance_Query`` returns each guest's DIAGNOSE X'2FC'
record as the latest snapshot shows it, ``System_Performance_Information_Query`` the
LPAR's logical processors with their busy percentage over the last ``rate_s`` (CP's own
monitor rate), ``System_Information_Query`` the z/VM level and the CPU id of the simulated
machine. A random password is made per run and handed to the ``smapi`` source in a file
only its owner can read.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable
from pathlib import Path

from esatui.collectors.diag2fc import encode_record
from esatui.sim.guest_records import diag2fc_record
from esatui.sim.guest_tree import cpu_serial
from esatui.sim.interfaces.smapi_server import SimCpu, SimLpar, SmapiServer
from esatui.sim.snapshot import ProcessorCounters, SystemSnapshot

SMAPI_USER = "ESATUI"


class SnapshotGuest:
    """A guest as the server serves it: its record, from the latest snapshot when asked."""

    def __init__(self, name: str, vcpus: int, latest: Callable[[], SystemSnapshot]) -> None:
        self.name = name
        self.vcpus = vcpus
        self.logged_on = True
        self._latest = latest

    def record(self) -> bytes:
        snap = self._latest()
        return encode_record(diag2fc_record(snap, snap.guest(self.name)))

    def advance(self) -> None:
        """The record changes when the simulated clock moves, not when it is read."""


class SmapiFeed:
    def __init__(self, first: SystemSnapshot, secrets_dir: Path, *, rate_s: float = 2.0) -> None:
        ident = first.identity
        self.password = secrets.token_urlsafe(18).encode()
        self.password_file = secrets_dir / "smapi-password"
        fd = os.open(self.password_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(self.password + b"\n")
        self.server = SmapiServer(
            userid=SMAPI_USER,
            password=self.password,
            my_lpar=ident.lpar,
            lpars=(),
            cp_version=ident.zvm_level,
            timezone=time.strftime("%Z", time.localtime(first.time_us // 1_000_000)) or "UTC",
            history=100,
            threaded=False,
        )
        self.server.cpu_id = f"FF{cpu_serial(ident)}{ident.machine_type}0000"
        self.rate_s = rate_s
        self._lpar = ident.lpar
        self._base: tuple[int, tuple[ProcessorCounters, ...]] | None = None
        self._busy: dict[int, float] = {}
        self._snap = first
        self.server.guests = {
            g.userid: SnapshotGuest(g.userid, g.vcpus, self.latest) for g in first.guests
        }
        self.update(first)

    def latest(self) -> SystemSnapshot:
        return self._snap

    @property
    def busy(self) -> dict[int, float]:
        """Busy % per logical processor over CP's last monitor-rate period."""
        return dict(self._busy)

    @property
    def port(self) -> int:
        return self.server.port

    def start(self) -> None:
        self.server.start()

    def stop(self) -> None:
        self.server.stop()

    def update(self, snap: SystemSnapshot) -> None:
        """What the server answers from now on (records are encoded when asked for)."""
        self._snap = snap
        if self._base is None:
            self._base = (snap.time_us, snap.processors)
        elif snap.time_us - self._base[0] >= self.rate_s * 1e6:
            self._busy = _busy_pct(self._base[1], snap.processors)
            self._base = (snap.time_us, snap.processors)
        cpus = [SimCpu(p.ptype, self._busy.get(p.address, 0.0), 0.0) for p in snap.processors]
        self.server.lpars = [SimLpar(self._lpar, 1, cpus)]


def _busy_pct(
    before: tuple[ProcessorCounters, ...], after: tuple[ProcessorCounters, ...]
) -> dict[int, float]:
    out: dict[int, float] = {}
    for b, a in zip(before, after, strict=True):
        online = a.online_us - b.online_us
        busy = (a.emul_us + a.user_us + a.syst_us) - (b.emul_us + b.user_us + b.syst_us)
        out[a.address] = 100.0 * busy / online if online > 0 else 0.0
    return out
