"""Parameters of the simulated system: parsing, validation, one-line errors, scenarios."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from esatui.sim.params import (
    CARD_TYPES,
    CP_CRYPTO_MODES,
    OPS,
    PARAM_NAMES,
    ParamError,
    SimParams,
    parse_lpar_cpus,
    parse_params,
)
from esatui.sim.scenarios import SCENARIOS, scenario

SPEC_NAMES = (
    "guests",
    "threads",
    "op",
    "key_bits",
    "cards",
    "card_type",
    "poll_timeout_us",
    "cp_crypto_mode",
    "smt",
    "lpar_cpus",
    "cpu_load",
)


def test_every_spec_parameter_is_accepted() -> None:
    assert set(SPEC_NAMES) <= set(PARAM_NAMES)
    p = parse_params(
        [
            "guests=3",
            "threads=5",
            "op=rsa_verify",
            "key_bits=4096",
            "cards=4",
            "card_type=cex6a",
            "poll_timeout_us=50",
            "cp_crypto_mode=interrupts",
            "smt=true",
            "lpar_cpus=1CP+2IFL",
            "cpu_load=0.25",
        ]
    )
    assert (p.guests, p.threads, p.op, p.key_bits, p.cards) == (3, 5, "rsa_verify", 4096, 4)
    assert p.card_type == "CEX6A"
    assert p.poll_timeout_us == 50.0
    assert p.cp_crypto_mode == "interrupts"
    assert p.smt is True
    assert parse_lpar_cpus(p.lpar_cpus) == {"CP": 1, "IFL": 2}
    assert p.cpu_load == 0.25


def test_poll_timeout_irq() -> None:
    p = parse_params(["poll_timeout_us=IRQ"])
    assert p.poll_timeout_us == "irq"
    assert p.guest_irq


def test_default_poll_timeout_is_the_zvm_kernel_default() -> None:
    assert SimParams().poll_timeout_us == 1500.0


@pytest.mark.parametrize(
    ("item", "fragment"),
    [
        ("bogus=1", "unknown parameter 'bogus'; valid: guests, threads, op"),
        ("guests=x", "bad value for guests"),
        ("guests=0", "guests must be 1..1000"),
        ("key_bits=1000", "key_bits must be one of 1024, 2048, 4096"),
        ("op=rsa_encrypt", "op must be one of rsa_sign, rsa_verify"),
        ("poll_timeout_us=fast", "expected microseconds or irq"),
        ("poll_timeout_us=0", "poll_timeout_us must be 1..1000000 or irq"),
        ("cp_crypto_mode=fast", "cp_crypto_mode must be one of baseline, polling, interrupts"),
        ("smt=maybe", "expected true or false"),
        ("lpar_cpus=2XYZ", "lpar_cpus type 'XYZ'"),
        ("lpar_cpus=2ZIIP", "needs a CP or an IFL"),
        ("cpu_load=1.5", "cpu_load must be 0..1"),
        ("cpu_load=nan", "finite"),
        ("card_type=CEX2C", "card_type must be one of"),
        ("guests", "expected KEY=VALUE"),
        ("guests=1000", "guests x threads must be at most"),
    ],
)
def test_errors_are_one_line(item: str, fragment: str) -> None:
    with pytest.raises(ParamError) as err:
        parse_params([item, "threads=50"] if item == "guests=1000" else [item])
    message = str(err.value)
    assert fragment in message
    assert "\n" not in message


def test_unknown_name_lists_every_valid_name() -> None:
    with pytest.raises(ParamError) as err:
        parse_params(["nope=1"])
    for name in PARAM_NAMES:
        assert name in str(err.value)


def test_wrong_python_types_are_refused() -> None:
    with pytest.raises(ParamError):
        SimParams(guests=2.5)  # type: ignore[arg-type]
    with pytest.raises(ParamError):
        SimParams(smt=1)  # type: ignore[arg-type]


def test_scenarios_are_valid_presets() -> None:
    names = {f"seed002-t{t}-{m}" for t in (1, 2, 3) for m in CP_CRYPTO_MODES}
    names |= {f"seed003-t1-{c}" for c in ("aes128", "aes192", "aes256")}
    names |= {f"seed003-t3-{load}" for load in ("light", "medium", "heavy")}
    assert names | {"mode-vm-day"} == set(SCENARIOS)
    t2 = scenario("seed002-t2-polling")
    assert (t2.threads, t2.smt, t2.key_bits, t2.cards, t2.card_type) == (10, True, 1024, 2, "CEX7A")
    assert scenario("seed002-t3-interrupts").threads == 1
    day = scenario("mode-vm-day")
    assert parse_lpar_cpus(day.lpar_cpus) == {"CP": 1, "IFL": 2}
    assert (day.cards, day.card_type, day.key_bits, day.profile) == (4, "CEX4A", 2048, "day")
    with pytest.raises(KeyError, match="valid: seed002-t1-baseline"):
        scenario("nope")


def test_scenario_accepts_overrides() -> None:
    p = parse_params(["poll_timeout_us=50"], base=scenario("seed002-t3-polling"))
    assert p.poll_timeout_us == 50.0
    assert p.threads == 1


_params = st.builds(
    SimParams,
    guests=st.integers(1, 100),
    threads=st.integers(1, 200),
    op=st.sampled_from(OPS),
    key_bits=st.sampled_from((1024, 2048, 4096)),
    cards=st.integers(1, 64),
    card_type=st.sampled_from(CARD_TYPES),
    poll_timeout_us=st.one_of(st.just("irq"), st.floats(1.0, 1e6)),
    cp_crypto_mode=st.sampled_from(CP_CRYPTO_MODES),
    smt=st.booleans(),
    lpar_cpus=st.sampled_from(("8IFL", "1CP+2IFL", "2CP", "4IFL+1ZIIP")),
    cpu_load=st.floats(0.0, 1.0),
    vcpus=st.integers(1, 64),
)


@settings(max_examples=60, deadline=None)
@given(_params)
def test_settings_round_trip(p: SimParams) -> None:
    assert parse_params(f"{k}={v}" for k, v in p.as_settings().items()) == p


def test_a_poll_timeout_out_of_range_is_said_as_typed() -> None:
    with pytest.raises(ParamError) as err:
        parse_params(["poll_timeout_us=2000000"])
    assert str(err.value).endswith("or irq, not 2000000")  # not 2000000.0
