"""The attribute formats, checked against the kernel's printf formats and real lszcrypt output."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from esatui.collectors.zcrypt import attrs as fmt
from esatui.sim.interfaces.aptree import FUNCTIONS, hwtype_of

DATA = Path(__file__).parent.parent / "data" / "zcrypt"


def test_unsigned_accepts_kernel_output_only() -> None:
    assert fmt.unsigned(b"1382729\n") == 1382729
    assert fmt.unsigned(b"18446744073709551615\n") == fmt.U64_MAX
    for bad in (b"", b"\n", b"-1\n", b"1_000\n", b"12abc\n", b"18446744073709551616\n", b"\xff\n"):
        with pytest.raises(fmt.Garbage):
            fmt.unsigned(bad)


def test_request_count_dash_means_not_initialised() -> None:
    assert fmt.request_count(b"-\n") is None
    assert fmt.request_count(b"42\n") == 42


def test_a_32_bit_request_count_past_2_31_is_the_counter_it_was() -> None:
    """Kernels before 5.6 printed an ``unsigned int`` with ``%d`` (drivers/s390/crypto/
    ap_card.c and ap_queue.c before upstream fcd98d4002539)."""
    assert fmt.old_request_count(b"-1\n") == 2**32 - 1
    assert fmt.old_request_count(b"-2147483648\n") == 2**31
    for other in (b"-\n", b"5\n", b"-2147483649\n", b"-0x1\n", b"--1\n"):
        assert fmt.old_request_count(other) is None


def test_interrupt_texts() -> None:
    assert fmt.interrupt(b"Interrupts enabled.\n") == "1"
    assert fmt.interrupt(b"Interrupts disabled.\n") == "0"
    assert fmt.interrupt(b"Enable Interrupt pending.\n") == "pending"
    with pytest.raises(fmt.Garbage):
        fmt.interrupt(b"maybe\n")


def test_masks_and_bindings() -> None:
    mask = "0x" + "f" * 8 + "0" * 56
    assert fmt.mask((mask + "\n").encode()) == mask
    assert fmt.mask(b"not supported\n") == "not supported"
    with pytest.raises(fmt.Garbage):
        fmt.mask(b"0xzz\n")
    assert fmt.bindings(b"12/12 (complete)\n") == fmt.Bindings(12, 12, True)
    assert fmt.bindings(b"3/12\n") == fmt.Bindings(3, 12, False)
    with pytest.raises(fmt.Garbage):
        fmt.bindings(b"3 of 12\n")


def test_signed_ap_domain() -> None:
    assert fmt.signed(b"-1\n") == -1
    assert fmt.signed(b"17\n") == 17
    with pytest.raises(fmt.Garbage):
        fmt.signed(b"--1\n")


def test_mode_from_type_letter_then_function_bits() -> None:
    assert fmt.mode_of("CEX7A", None) == "ACCEL"
    assert fmt.mode_of("CEX7C", None) == "CCA"
    assert fmt.mode_of("CEX8P", None) == "EP11"
    assert fmt.mode_of(None, 0x06800000) == "EP11"
    assert fmt.mode_of(None, 0x68800000) == "ACCEL"
    assert fmt.mode_of(None, 0x92800000) == "CCA"
    assert fmt.mode_of(None, 0) is None


def test_type_from_hwtype() -> None:
    assert fmt.type_from_hwtype(13, 0x92800000) == "CEX7C"
    assert fmt.type_from_hwtype(14, 0x06800000) == "CEX8P"
    assert fmt.type_from_hwtype(8, None) == "CEX3A"
    assert fmt.type_from_hwtype(99, None) is None


def test_ep11_function_letters_match_the_real_lszcrypt_capture() -> None:
    text = (DATA / "lszcrypt-V-cex8p-ep11-se-guest-sestat-kata.txt").read_text()
    row = next(line for line in text.splitlines() if line.startswith("03 "))
    cols = row.split()
    card_type, hwtype, qdepth, letters = cols[1], int(cols[6]), int(cols[7]), cols[8]
    assert card_type == "CEX8P"
    assert fmt.function_letters(FUNCTIONS["P"]) == letters
    assert hwtype_of(card_type) == hwtype
    assert qdepth == 8  # the fixture's sysfs depth 7 + 1, as lszcrypt prints it


def test_accelerator_functions_match_the_real_lszcrypt_capture() -> None:
    text = (DATA / "lszcrypt-VVV-s390tools1x-cex5a-ubuntu1804-labdoc.txt").read_text()
    m = re.search(r"(CEX\w+).*hwtype=(\d+).*functions=0x([0-9A-Fa-f]+)", text)
    assert m is not None
    assert hwtype_of(m.group(1)) == int(m.group(2))
    assert int(m.group(3), 16) == FUNCTIONS["A"]
    assert fmt.mode_of(m.group(1), int(m.group(3), 16)) == "ACCEL"


def test_cca_type_of_the_real_capture() -> None:
    text = (DATA / "lszcrypt-cex7c-kvm-guest-old-header-kata.txt").read_text()
    row = next(line for line in text.splitlines() if line.startswith("06.0032"))
    assert row.split()[1] == "CEX7C"
    assert fmt.mode_of("CEX7C", None) == "CCA"
    assert hwtype_of("CEX7C") == 13
