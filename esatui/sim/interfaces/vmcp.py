"""A scripted /dev/vmcp: CP's answers come from a table, with the kernel driver's semantics.

``ScriptedVmcp(responses).open`` is an opener for :class:`esatui.collectors.vmcp.VmcpClient`
and :class:`esatui.collectors.vmcp.VmcpSource`. Like the driver: a session starts with a one
page buffer, ``set_buffer`` refuses more than 1 MiB, commands longer than 240 bytes are
refused, ``get_size`` reports the whole response and ``read`` returns at most the buffer.

Responses are looked up by the command with blanks collapsed and upper-cased; a value can be
a ``(rc, text)`` pair or a function returning one (the simulated z/VM system answers from its
state). Unknown commands answer like CP: rc 1 and HCPCMD001E.
"""

from __future__ import annotations

import errno
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from esatui.collectors.vmcp.device import MAX_BUFFER, MAX_COMMAND, PAGE

Response = tuple[int, str]
Answer = Response | Callable[[], Response]


def normalize(command: str) -> str:
    return " ".join(command.upper().split())


@dataclass
class ScriptedVmcp:
    responses: Mapping[str, Answer] = field(default_factory=dict)
    permitted: bool = True  # False: open fails with EPERM, as without CAP_SYS_ADMIN
    present: bool = True  # False: open fails with ENOENT (no vmcp module)
    commands: list[str] = field(default_factory=list)  # every command written, in order
    opens: int = 0

    def open(self) -> _Session:
        if not self.present:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", "/dev/vmcp")
        if not self.permitted:
            raise PermissionError(errno.EPERM, "Operation not permitted", "/dev/vmcp")
        self.opens += 1
        return _Session(self)

    def answer(self, command: str) -> Response:
        self.commands.append(command)
        entry = self.responses.get(normalize(command))
        if entry is None:
            word = command.split(maxsplit=1)[0].upper() if command.split() else ""
            return 1, f"HCPCMD001E Unknown CP command: {word}\n"
        return entry() if callable(entry) else entry


class _Session:
    def __init__(self, device: ScriptedVmcp) -> None:
        self._device = device
        self._bufsize = PAGE
        self._response: bytes | None = None
        self._rc = 0
        self._pos = 0
        self.closed = False

    def set_buffer(self, size: int) -> None:
        self._response = None
        if size > MAX_BUFFER or size <= 0:
            self._bufsize = PAGE
            raise OSError(errno.EINVAL, "Invalid argument")
        self._bufsize = size

    def write(self, command: bytes) -> None:
        if len(command) > MAX_COMMAND:
            raise OSError(errno.EINVAL, "Invalid argument")
        rc, text = self._device.answer(command.decode("ascii"))
        self._rc = rc
        self._response = text.encode("ascii", errors="replace")
        self._pos = 0

    def get_code(self) -> int:
        return self._rc

    def get_size(self) -> int:
        return 0 if self._response is None else len(self._response)

    def read(self, size: int) -> bytes:
        if self._response is None:
            return b""
        end = min(len(self._response), self._bufsize, self._pos + size)
        data = self._response[self._pos : end]
        self._pos = end
        return data

    def close(self) -> None:
        self.closed = True


def zvm_guest(
    cpus: Mapping[int, str],
    *,
    base: int = 0,
    cpuid: str = "FF0C452E20978000",
    real: Mapping[int, tuple[str, str]] | None = None,
    userid: str = "LINUX01",
    level: str = "z/VM Version 7 Release 3.0, service level 2401 (64-bit)",
    crypto: str | None = None,
    busy: Mapping[int, float] | None = None,
) -> dict[str, Answer]:
    """Answers of a z/VM guest with virtual CPUs ``{address: type}``.

    ``real`` maps real processor addresses to (type, polarization code: HZ/VH/VM/VL) for
    INDICATE LOAD. Line layouts follow the real captures in tests/data/vmcp/ (INDICATE
    LOAD/USER) and the documented QUERY VIRTUAL CPUS response; ``crypto`` is the raw text to
    answer QUERY VIRTUAL CRYPTO with (no public capture exists); ``busy`` gives INDICATE
    LOAD's busy percentage per real processor (0 when not given).
    """
    vcpus = "".join(
        f"CPU {a:02X}  ID  {cpuid} {'(BASE) ' if a == base else ''}{t.upper():<4} CPUAFF ON\n"
        for a, t in sorted(cpus.items())
    )
    real = real or dict.fromkeys(range(2), ("CP", "HZ"))
    pct = {a: min(999, max(0, round((busy or {}).get(a, 0.0)))) for a in real}
    procs = [f"PROC {a:04X}-{pct[a]:03d}% {t.upper():<4} {p}" for a, (t, p) in sorted(real.items())]
    avg = round(sum(pct.values()) / len(pct)) if pct else 0
    pairs = ["     ".join(procs[i : i + 2]) for i in range(0, len(procs), 2)]
    load = (
        f"AVGPROC-{avg:03d}% {len(real):02d}\n"
        "MDC READS-000000/SEC WRITES-000000/SEC HIT RATIO-000%\n"
        "PAGING-0/SEC\n"
        "Q0-00000(00000)                           DORMANT-00001\n"
        "Q1-00000(00000)           E1-00000(00000)\n"
        "Q2-00000(00000) EXPAN-001 E2-00000(00000)\n"
        "Q3-00000(00000) EXPAN-001 E3-00000(00000)\n\n" + "\n".join(pairs) + "\n\nLIMITED-00000\n"
    )
    user_cpus = "".join(
        f"CPU {a:02X}: CTIME=00:38 VTIME=000:00 TTIME=000:00 IO=000603\n"
        f"        RDR=000000 PRT=000432 PCH=000000 TYPE={t.upper():<4} CPUAFFIN=ON\n"
        for a, t in sorted(cpus.items())
    )
    user = (
        f"USERID={userid:<8} MACH=ESA STOR=256M VIRT=V XSTORE=NONE\n"
        "IPLSYS=DEV 0190 DEVNUM=00036\n"
        "PAGES: RES=1622  WS=1601  LOCKEDREAL=0  RESVD=0\n"
        "       INSTAN=1622\n"
        "NPREF=0  PREF=0  READS=1  WRITES=13\n" + user_cpus
    )
    answers: dict[str, Answer] = {
        "QUERY CPLEVEL": (0, f"{level}\nGenerated at 01/01/24 00:00:00 UTC\n"),
        "QUERY VIRTUAL CPUS": (0, vcpus),
        "INDICATE LOAD": (0, load),
        "INDICATE USER": (0, user),
    }
    if crypto is not None:
        answers["QUERY VIRTUAL CRYPTO"] = (0, crypto)
    return answers
