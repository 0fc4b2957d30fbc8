"""Warnings have one channel: a source says each trouble once, through its context, and the
recorder passes it on as it is (no second copy, no "vmcp: vmcp:")."""

from __future__ import annotations

import threading
from pathlib import Path

from esatui.collectors.base import SourceContext, Warnings
from esatui.collectors.host import HostSource
from esatui.collectors.vmcp import VmcpSource
from esatui.sampling.session import Recording, WarnChannel
from esatui.sim.interfaces.procfs import ProcStat
from esatui.sim.interfaces.vmcp import ScriptedVmcp, zvm_guest
from tests.fixtures.clock import stepping

START_US = 1_790_000_040_000_000  # on a minute boundary


def test_once_per_key_until_cleared() -> None:
    said: list[str] = []
    warn = Warnings(said.append, "zcrypt")
    warn("skipped a: garbage", key="a")
    warn("skipped a: other garbage", key="a")  # the same trouble, worded otherwise
    warn("one of a kind")
    warn("one of a kind")
    assert said == ["zcrypt: skipped a: garbage", "zcrypt: one of a kind"]
    assert warn.outstanding
    warn.clear("a")  # a reads well again
    warn("skipped a: garbage", key="a")
    assert said[-1] == "zcrypt: skipped a: garbage" and len(said) == 3


def test_a_recording_passes_each_warning_on_once(tmp_path: Path) -> None:
    """vmcp answers two of its queries with an error every interval: each is said once, in
    the recorder's channel, prefixed once with the source's name."""
    root = tmp_path / "root"
    stat = ProcStat(root, [0, 1])
    stat.write()

    def advance(seconds: float) -> None:
        for cpu in (0, 1):
            stat.advance(cpu, user=int(seconds * 40), idle=int(seconds * 60))
        stat.write()

    clock = stepping(START_US, advance)
    channel = WarnChannel(print)  # where warnings went before the recording ran
    ctx = SourceContext(root, channel, clock)
    device = ScriptedVmcp(zvm_guest({0: "IFL", 1: "IFL"}))  # no crypto queries scripted
    recording = Recording(
        tmp_path / "w.sqlite",
        [HostSource(ctx), VmcpSource(ctx, opener=device.open)],
        interval_s=60,
        hf_s=None,
        node="LNXT01",
        clock=clock,
        channel=channel,
    )
    said: list[str] = []
    stats = recording.run(threading.Event(), warn=said.append, count=3)
    assert stats.written == 3 * 3  # host, vmcp and esatui
    assert said == [
        "vmcp: QUERY VIRTUAL CRYPTO: CP return code 1: HCPCMD001E Unknown CP command: QUERY",
        "vmcp: QUERY CRYPTO AP: CP return code 1: HCPCMD001E Unknown CP command: QUERY",
    ]
