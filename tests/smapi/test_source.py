"""The smapi source: spec and options, credentials, samples against the loopback server."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from esatui.collectors.base import PolledSource, SourceContext, SourceError
from esatui.collectors.kinds import GUEST, LCPU
from esatui.collectors.model import Sample
from esatui.collectors.smapi.credentials import PASSWORD_ENV, Secret, load_password
from esatui.collectors.smapi.errors import SmapiConfigError
from esatui.collectors.smapi.source import (
    CONFIG_KEYS,
    Endpoint,
    SmapiSource,
    build_source,
    parse_guests,
    parse_spec,
)
from esatui.sim.interfaces.smapi_server import SimCpu, SimLpar
from tests.fakes.smapi_server import Misbehave, SmapiTestServer
from tests.smapi.conftest import PASSWORD

ENV = {PASSWORD_ENV: PASSWORD.decode()}


def _source(port: int, guests: str = "*", warnings: list[str] | None = None) -> SmapiSource:
    ctx = SourceContext(warn=(warnings if warnings is not None else []).append)
    return build_source(
        f"smapi:127.0.0.1:{port}",
        user="esauser",
        environ=ENV,
        guests=guests,
        read_timeout=1.0,
        retries=0,
        ctx=ctx,
    )


def _by_key(sample: Sample, kind: str) -> dict[str, dict[str, float | int | None]]:
    return {r.key: dict(r.values) for r in sample.readings if r.kind == kind}


# --- spec and options --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "endpoint"),
    [
        ("smapi:zvm1.example.com", Endpoint(False, "zvm1.example.com", 44444)),
        ("smapi:10.1.2.3:44446", Endpoint(False, "10.1.2.3", 44446)),
        ("smapi:[::1]:5000", Endpoint(False, "::1", 5000)),
        ("smapi:[fe80::1]", Endpoint(False, "fe80::1", 44444)),
        ("smapi:IUCV", Endpoint(True)),
    ],
)
def test_spec(spec: str, endpoint: Endpoint) -> None:
    assert parse_spec(spec) == endpoint


@pytest.mark.parametrize(
    "spec", ["smapi", "smapi:", "hypfs:x", "smapi:h:0", "smapi:h:x", "smapi:[::1]x"]
)
def test_bad_spec(spec: str) -> None:
    with pytest.raises(SmapiConfigError):
        parse_spec(spec)


def test_guest_selection() -> None:
    assert parse_guests("*").active
    assert parse_guests("namelist:LINUXES").namelist == "LINUXES"
    assert parse_guests("linux01, linux02,LINUX01").userids == ("LINUX01", "LINUX02")
    for bad in ("namelist:", "TOOLONGUSERID", ","):
        with pytest.raises(SmapiConfigError):
            parse_guests(bad)


def test_tcp_needs_a_user_and_a_password() -> None:
    with pytest.raises(SmapiConfigError, match="--smapi-user"):
        build_source("smapi:localhost", environ=ENV)
    with pytest.raises(SmapiConfigError, match=PASSWORD_ENV):
        build_source("smapi:localhost", user="u", environ={})


def test_password_file(tmp_path: Path) -> None:
    path = tmp_path / "pw"
    path.write_bytes(PASSWORD + b"\n")
    path.chmod(0o600)
    assert load_password(path, {}).reveal() == PASSWORD
    path.chmod(0o640)
    with pytest.raises(SmapiConfigError) as err:
        load_password(path, ENV)
    assert "readable by group or others (mode 0640)" in str(err.value)
    assert "\n" not in str(err.value)
    path.chmod(0o604)
    with pytest.raises(SmapiConfigError):
        build_source("smapi:localhost", user="u", password_file=path)
    empty = tmp_path / "empty"
    empty.write_bytes(b"\n")
    empty.chmod(0o600)
    with pytest.raises(SmapiConfigError, match="empty"):
        load_password(empty, {})
    with pytest.raises(SmapiConfigError, match="cannot open"):
        load_password(tmp_path / "missing", {})


def test_password_file_wins_over_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "pw"
    path.write_bytes(b"fromfile")
    path.chmod(0o400)
    assert load_password(path, ENV).reveal() == b"fromfile"
    assert load_password(None, ENV).reveal() == PASSWORD


def test_secret_never_shows() -> None:
    secret = Secret(PASSWORD)
    assert PASSWORD.decode() not in repr(secret) + str(secret) + f"{secret}"
    with pytest.raises(TypeError):
        pickle.dumps(secret)


def test_iucv_source_is_unavailable_here_with_a_reason() -> None:
    warnings: list[str] = []
    source = build_source("smapi:iucv", user="ignored", ctx=SourceContext(warn=warnings.append))
    assert isinstance(source, PolledSource)
    assert source.client.userid == "" and not source.client._password
    assert source.target == "MAINT"
    available = source.probe()
    if not available.available:
        assert "AF_IUCV" in available.reason
    assert warnings


# --- samples ------------------------------------------------------------------------------


def test_probe(server: SmapiTestServer) -> None:
    assert _source(server.port).probe().available
    server.stop()
    probe = _source(server.port).probe()
    assert not probe.available and "refused" in probe.reason


def test_sample_guests_lcpus_and_config(server: SmapiTestServer) -> None:
    warnings: list[str] = []
    source = _source(server.port, warnings=warnings)
    assert source.kinds == (LCPU, GUEST)
    first, second = source.sample(), source.sample()
    assert warnings == []
    g1, g2 = _by_key(first, "guest"), _by_key(second, "guest")
    assert set(g1) == {"LINUX01", "LINUX02", "GT@PONG"}
    assert g2["LINUX01"]["cpu_us"] - g1["LINUX01"]["cpu_us"] == 250_000  # type: ignore[operator]
    assert g2["LINUX02"]["cpu_us"] - g1["LINUX02"]["cpu_us"] == 500_000  # type: ignore[operator]
    assert g2["GT@PONG"]["cpu_us"] == g1["GT@PONG"]["cpu_us"]
    assert g2["LINUX01"]["elapsed_us"] - g1["LINUX01"]["elapsed_us"] == 1_000_000  # type: ignore[operator]
    assert g1["LINUX01"]["vcpus"] == 2 and g1["LINUX01"]["mem_max_kib"] == 4_194_304
    assert set(g1["LINUX01"]) <= {f.name for f in GUEST.fields}
    lcpus = {r.key: r for r in first.readings if r.kind == "lcpu"}
    assert set(lcpus) == {"LP1/0", "LP1/1"}
    assert lcpus["LP1/0"].attrs == {"type": "CP", "lpar": "LP1", "type_source": "smapi"}
    assert lcpus["LP1/1"].values == {"busy_pct": 50.0, "overhead_pct": 0.1}
    assert first.config is not None and set(first.config) <= set(CONFIG_KEYS)
    assert first.config["machine_type"] == "2964"
    assert first.config["lpar_name"] == "LP1"
    assert first.config["vm_level"] == "z/VM 7.1.0 SL 1801"
    assert first.config["timezone"] == "EDT"
    assert first.mono_ns is not None and second.mono_ns is not None
    assert second.mono_ns > first.mono_ns
    # system information once, then perf + status + guests per sample
    assert first.reads == 4 and second.reads == 3
    assert source.sample_gauges() is None


def test_blank_padded_lpar_names_and_other_lpars() -> None:
    lpars = [
        SimLpar("PROD", 1, [SimCpu("IFL", 12.5), SimCpu("IFL", 7.25)]),
        SimLpar("TEST LP", 2, [SimCpu("ZIIP", 3.0, 0.5)]),
    ]
    with SmapiTestServer(userid="ESAUSER", password=PASSWORD, lpars=lpars, my_lpar="PROD") as srv:
        sample = _source(srv.port).sample()
    lcpus = {r.key: r for r in sample.readings if r.kind == "lcpu"}
    assert set(lcpus) == {"PROD/0", "PROD/1", "TEST LP/0"}
    assert lcpus["TEST LP/0"].attrs["type"] == "ZIIP"
    assert lcpus["TEST LP/0"].values == {"busy_pct": 3.0, "overhead_pct": 0.5}
    assert _by_key(sample, "guest") == {}


def test_namelist_and_explicit_guest_lists(server: SmapiTestServer) -> None:
    server.namelists["LINUXES"] = ["LINUX01", "LINUX02"]
    sample = _source(server.port, guests="namelist:LINUXES").sample()
    assert set(_by_key(sample, "guest")) == {"LINUX01", "LINUX02"}
    assert server.received[-1].function == "System_Image_Performance_Query"
    assert server.received[-1].target == "LINUXES"
    sample = _source(server.port, guests="linux02,nosuch").sample()
    assert set(_by_key(sample, "guest")) == {"LINUX02"}  # 4/4: partly found
    warnings: list[str] = []
    sample = _source(server.port, guests="namelist:NOSUCH", warnings=warnings).sample()
    assert _by_key(sample, "guest") == {}
    assert any("namelist NOSUCH" in w and "return code 28" in w for w in warnings)


def test_wrong_password_stops_the_source(server: SmapiTestServer) -> None:
    source = build_source(
        f"smapi:127.0.0.1:{server.port}", user="esauser", environ={PASSWORD_ENV: "wrong"}
    )
    with pytest.raises(SourceError) as err:
        source.sample()
    text = str(err.value)
    assert "return code 120" in text and "\n" not in text
    assert "wrong" not in text


def test_a_failing_part_is_left_out_with_a_warning(server: SmapiTestServer) -> None:
    warnings: list[str] = []
    source = _source(server.port, warnings=warnings)
    source.sample()
    # next sample: DETAILED_CPU fine, Image_Status_Query fine, the guest query breaks
    server.answer_next(*_perf_answer(server))
    server.answer_next(*_status_answer(server))
    server.misbehave(Misbehave.GARBAGE)
    sample = source.sample()
    assert _by_key(sample, "guest") == {}
    assert set(_by_key(sample, "lcpu")) == {"LP1/0", "LP1/1"}
    assert len(warnings) == 1 and warnings[0].startswith("smapi: guests (*) not read")
    source.sample()  # the guests are back: no warning, and the next failure is said again
    server.answer_next(*_perf_answer(server))
    server.answer_next(*_status_answer(server))
    server.misbehave(Misbehave.GARBAGE)
    source.sample()
    assert len(warnings) == 2 and warnings[1].startswith("smapi: guests (*) not read")


def _perf_answer(srv: SmapiTestServer) -> tuple[int, int, bytes]:
    return srv._f_System_Performance_Information_Query("", b"DETAILED_CPU=SHOW=YES\0")


def _status_answer(srv: SmapiTestServer) -> tuple[int, int, bytes]:
    return srv._f_Image_Status_Query("*", b"")


def test_legacy_fallback_without_detailed_cpu(server: SmapiTestServer) -> None:
    server.unsupported.add("System_Performance_Information_Query")
    warnings: list[str] = []
    source = _source(server.port, warnings=warnings)
    first = source.sample()
    lcpus = {r.key: r for r in first.readings if r.kind == "lcpu"}
    assert set(lcpus) == {"-/0", "-/1"}
    assert lcpus["-/1"].values == {"busy_pct": 50.0, "overhead_pct": None}
    assert len(warnings) == 1 and warnings[0].startswith("smapi: DETAILED_CPU not available")
    source.sample()
    assert len(warnings) == 1
    assert server.received[-3].function == "System_Performance_Info_Query"


def test_legacy_processors_say_which_query_typed_them() -> None:
    """Before: processors read from System_Performance_Info_Query (a z/VM level without
    DETAILED_CPU) carried the type source ``smapi``, so ESACPUU and ESASSUM noted "CPU types
    from SMAPI System_Performance_Information_Query", the query that had just failed. The
    answers are the recorded z/VM 7.1 ones (tests/data/smapi: System_Information_Query-1 and
    System_Performance_Info_Query-1, lllucius/pysmapi, shared/samples/SOURCES.md):
    ``PROC 0000-046% IFL  VM`` ... four IFLs at 46, 47, 36 and 33%."""
    from esatui.screens.common import type_notes
    from tests.smapi.conftest import DATA

    warnings: list[str] = []
    with SmapiTestServer(userid="MAINT", password=b"maint") as srv:
        srv.load_recordings(
            DATA / f"{name}-1.json"
            for name in ("System_Information_Query", "System_Performance_Info_Query")
        )
        srv.unsupported.add("System_Performance_Information_Query")
        source = build_source(
            f"smapi:127.0.0.1:{srv.port}",
            user="maint",
            environ={PASSWORD_ENV: "maint"},
            guests="MAINT",
            read_timeout=1.0,
            retries=0,
            ctx=SourceContext(warn=warnings.append),
        )
        sample = source.sample()
    assert warnings[0].startswith("smapi: DETAILED_CPU not available")
    lcpus = {r.key: r for r in sample.readings if r.kind == "lcpu"}
    assert {k: r.values["busy_pct"] for k, r in lcpus.items()} == {
        "-/0": 46.0,
        "-/1": 47.0,
        "-/2": 36.0,
        "-/3": 33.0,
    }
    sources = {r.attrs["type_source"] for r in lcpus.values()}
    assert {r.attrs["type"] for r in lcpus.values()} == {"IFL"}
    assert sources == {"smapi:System_Performance_Info_Query"}
    assert type_notes(sources) == ("CPU types from SMAPI System_Performance_Info_Query.",)
    assert sample.config is not None and sample.config["vm_level"] == "z/VM 7.1.0 SL 1801"
    assert sample.config["machine_type"] == "2964"


def test_no_active_guests(server: SmapiTestServer) -> None:
    for guest in server.guests.values():
        guest.logged_on = False
    warnings: list[str] = []
    sample = _source(server.port, warnings=warnings).sample()
    assert _by_key(sample, "guest") == {}
    assert any("guests" in w for w in warnings)  # 200/12 from Image_Status_Query


def test_password_appears_nowhere(server: SmapiTestServer, tmp_path: Path) -> None:
    server.misbehave(Misbehave.GARBAGE)
    source = _source(server.port)
    samples = [source.sample(), source.sample()]
    text = repr(source) + repr(source.__dict__) + repr(samples)
    assert PASSWORD.decode() not in text
    assert PASSWORD not in pickle.dumps(samples)
    assert os.fsencode(PASSWORD.decode()) not in repr(vars(source.client)).encode()
