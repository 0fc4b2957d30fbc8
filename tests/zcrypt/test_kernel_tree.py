"""The zcrypt source on trees written byte by byte as the kernel prints them (not by the
simulator's ApTree), for the cases where devices and their drivers come and go."""

from __future__ import annotations

from pathlib import Path

from esatui.collectors.base import SourceContext
from esatui.collectors.model import Reading, Sample
from esatui.collectors.zcrypt import ZcryptSource

CARD = "sys/devices/ap/card01"
QUEUE = CARD + "/01.0011"

# drivers/s390/crypto/ap_card.c ap_card_dev_attrs (hwtype_show ... max_msg_size_show): a
# CEX7C card as the AP bus creates it, before any zcrypt driver has probed it
AP_CARD = {
    "hwtype": b"13\n",  # hwtype_show "%d\n" (compatible type)
    "raw_hwtype": b"13\n",  # raw_hwtype_show "%d\n"
    "depth": b"7\n",  # depth_show "%d\n"
    "ap_functions": b"0x92800000\n",  # ap_functions_show "0x%08X\n"
    "request_count": b"0\n",  # request_count_show "%llu\n"
    "requestq_count": b"0\n",  # requestq_count_show "%d\n"
    "pendingq_count": b"0\n",  # pendingq_count_show "%d\n"
    "modalias": b"ap:t0D\n",  # modalias_show "ap:t%02X\n"
    "config": b"1\n",  # config_show "%d\n"
    "chkstop": b"0\n",  # chkstop_show "%d\n"
    "max_msg_size": b"12288\n",  # max_msg_size_show "%u\n"
}
# drivers/s390/crypto/ap_queue.c ap_queue_dev_attrs, the queue initialised
# (dev_state > AP_DEV_STATE_UNINITIATED, so request_count_show prints the number)
AP_QUEUE = {
    "request_count": b"0\n",
    "requestq_count": b"0\n",
    "pendingq_count": b"0\n",
    "reset": b"No Reset Timer set.\n",  # reset_show
    "interrupt": b"Interrupts disabled.\n",  # interrupt_show
    "config": b"1\n",
    "chkstop": b"0\n",
    "ap_functions": b"0x92800000\n",
}
# zcrypt_card.c zcrypt_card_attrs and zcrypt_queue.c zcrypt_queue_attrs: the groups
# zcrypt_card_register / zcrypt_queue_register add when zcrypt_cex4 probes the devices
ZCRYPT_CARD = {"type": b"CEX7C\n", "online": b"1\n", "load": b"0\n"}
ZCRYPT_QUEUE = {"online": b"1\n", "load": b"0\n"}
# ap_bus.c ap_bus_attrs of a z/VM guest without adapter interrupts
AP_BUS = {
    "ap_domain": b"17\n",
    "ap_interrupts": b"0\n",
    "poll_thread": b"0\n",
    "poll_timeout": b"1500000\n",
    "config_time": b"30\n",
}


def write(root: Path, relpath: str, content: bytes) -> None:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("r+b" if path.exists() else "wb") as f:  # in place, as sysfs changes
        f.write(content)
        f.truncate()


def remove(root: Path, relpath: str) -> None:
    """Truncate, then unlink: a kept descriptor then reads nothing, as sysfs gives ENODEV."""
    path = root / relpath
    path.open("r+b").truncate()
    path.unlink()


def kernel_tree(root: Path) -> None:
    """The AP bus with card 01 and queue 01.0011, no zcrypt driver bound yet."""
    for name, value in AP_BUS.items():
        write(root, f"sys/bus/ap/{name}", value)
    for name, value in AP_CARD.items():
        write(root, f"{CARD}/{name}", value)
    for name, value in AP_QUEUE.items():
        write(root, f"{QUEUE}/{name}", value)
    devices = root / "sys/bus/ap/devices"
    devices.mkdir()
    (devices / "card01").symlink_to("../../../devices/ap/card01")
    (devices / "01.0011").symlink_to("../../../devices/ap/card01/01.0011")
    for driver in ("cex4card", "cex4queue"):
        (root / "sys/bus/ap/drivers" / driver).mkdir(parents=True)


def bind_zcrypt(root: Path) -> None:
    """zcrypt_cex4 probes card and queue: its attribute groups and the driver links."""
    for name, value in ZCRYPT_CARD.items():
        write(root, f"{CARD}/{name}", value)
    for name, value in ZCRYPT_QUEUE.items():
        write(root, f"{QUEUE}/{name}", value)
    (root / CARD / "driver").symlink_to("../../../bus/ap/drivers/cex4card")
    (root / QUEUE / "driver").symlink_to("../../../../bus/ap/drivers/cex4queue")


def unbind_zcrypt(root: Path) -> None:
    for name in ZCRYPT_CARD:
        remove(root, f"{CARD}/{name}")
    for name in ZCRYPT_QUEUE:
        remove(root, f"{QUEUE}/{name}")
    (root / CARD / "driver").unlink()
    (root / QUEUE / "driver").unlink()


def by_key(sample: Sample) -> dict[str, Reading]:
    return {r.key: r for r in sample.all_readings()}


def test_a_zcrypt_driver_bound_after_the_devices_were_found(tmp_path: Path) -> None:
    # zcrypt_cex4 is a module: udev loads it for the AP bus's devices (at boot, or when a
    # card is attached to a guest that had none), so the source may find the devices first
    kernel_tree(tmp_path)
    warnings: list[str] = []
    source = ZcryptSource(SourceContext(root=tmp_path, warn=warnings.append))
    for _ in range(2):  # the read plan settles
        seen = by_key(source.sample())
        assert seen["01"].attrs["state"] == "-"
        assert seen["01"].attrs["type_source"] == "hwtype"
        assert seen["01"].values["load"] is None
    bind_zcrypt(tmp_path)
    seen = by_key(source.sample())
    card, queue = seen["01"], seen["01.0011"]
    assert card.attrs["state"] == queue.attrs["state"] == "online"
    assert card.values["load"] == 0
    assert card.attrs["type_source"] == "sysfs"
    assert card.attrs["driver"] == "cex4card"
    assert queue.attrs["driver"] == "cex4queue"
    unbind_zcrypt(tmp_path)  # rmmod zcrypt_cex4
    for _ in range(2):
        card = by_key(source.sample())["01"]
        assert card.attrs["state"] == "-"
        assert card.attrs["type_source"] == "hwtype"
        assert "driver" not in card.attrs
    bind_zcrypt(tmp_path)  # modprobe again: same devices, same inodes
    card = by_key(source.sample())["01"]
    assert card.attrs["state"] == "online"
    assert card.attrs["driver"] == "cex4card"
    assert not warnings
    source.close()
