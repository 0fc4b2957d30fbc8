"""The client against the loopback server: framing, misbehaving servers, retries, TLS, IUCV."""

from __future__ import annotations

import shutil
import socket
import ssl
import struct
import subprocess
import threading
from pathlib import Path

import pytest

from esatui.collectors.smapi.client import SmapiClient
from esatui.collectors.smapi.credentials import EMPTY, Secret
from esatui.collectors.smapi.errors import (
    SmapiAuthError,
    SmapiCallError,
    SmapiConnectionRefused,
    SmapiError,
    SmapiProtocolError,
    SmapiTimeout,
    SmapiTransportError,
    SmapiUnsupportedTransport,
)
from esatui.collectors.smapi.transport import (
    AF_IUCV,
    IucvTransport,
    TcpTransport,
    make_tls_context,
    sockaddr_iucv,
)
from tests.fakes.smapi_server import Misbehave, SimGuest, SmapiTestServer
from tests.smapi.conftest import PASSWORD


def _client(port: int, **kw: object) -> SmapiClient:
    options: dict[str, object] = {"read_timeout": 2.0, "retry_delays": (0.0,)}
    options.update(kw)
    return SmapiClient(TcpTransport("127.0.0.1", port), "esauser", Secret(PASSWORD), **options)  # type: ignore[arg-type]


def _one_line_without_password(exc: BaseException) -> str:
    text = str(exc)
    assert "\n" not in text
    assert PASSWORD.decode() not in text and PASSWORD.decode() not in repr(exc)
    return text


def test_call_returns_decoded_output(server: SmapiTestServer) -> None:
    response = _client(server.port).call("Image_CPU_Query", "LINUX01").check()
    assert response.output.get("number_cpus") == 2
    assert [e["cpu_type"] for e in response.output.get("cpu_info_array")] == [2, 2]
    assert server.received[-1].function == "Image_CPU_Query"
    assert server.received[-1].userid == "esauser" and server.received[-1].password_matched


def test_wrong_password_is_rc_120(server: SmapiTestServer) -> None:
    client = SmapiClient(TcpTransport("127.0.0.1", server.port), "esauser", Secret(b"nope"))
    response = client.call("System_Information_Query", "ESAUSER")
    assert (response.rc, response.rs) == (120, 0)
    with pytest.raises(SmapiAuthError) as err:
        response.check()
    assert "return code 120" in _one_line_without_password(err.value)


def test_other_return_codes_raise_call_error(server: SmapiTestServer) -> None:
    server.answer_next(24, 1310)
    response = _client(server.port).call("System_Information_Query", "ESAUSER")
    with pytest.raises(SmapiCallError) as err:
        response.check()
    assert "syntax error in parameter 13: characters not in 0-9" in str(err.value)


@pytest.mark.parametrize(
    ("how", "error", "words"),
    [
        (Misbehave.CLOSE_BEFORE_ID, SmapiTransportError, "closed the connection after 0 of 4"),
        (Misbehave.SHORT_LENGTH, SmapiProtocolError, "more bytes than its output length"),
        (Misbehave.HUGE_LENGTH, SmapiProtocolError, "exceeds"),
        (Misbehave.ID_MISMATCH, SmapiProtocolError, "differs from the immediate id"),
        (Misbehave.STALL, SmapiTimeout, "request id"),
        (Misbehave.GARBAGE, SmapiError, ""),
    ],
)
def test_misbehaving_server_gives_one_clear_error(
    server: SmapiTestServer, how: Misbehave, error: type[Exception], words: str
) -> None:
    server.misbehave(how)
    with pytest.raises(error) as err:
        _client(server.port, read_timeout=0.3).call("Image_CPU_Query", "LINUX01")
    assert words in _one_line_without_password(err.value)


@pytest.mark.parametrize("how", [Misbehave.CLOSE_MID_OUTPUT, Misbehave.LONG_LENGTH])
@pytest.mark.parametrize("with_header", [True, False])
def test_broken_read_is_recovered(
    server: SmapiTestServer, how: Misbehave, with_header: bool
) -> None:
    server.recovery_with_header = with_header
    server.misbehave(how)
    response = _client(server.port).call("Image_CPU_Query", "LINUX01").check()
    assert response.recovered
    assert response.output.get("number_cpus") == 2
    assert [r.function for r in server.received][-1] == "Response_Recovery"


@pytest.mark.parametrize("how", [Misbehave.CLOSE_AFTER_ID, Misbehave.STALL_AFTER_ID])
def test_unrecoverable_broken_read(server: SmapiTestServer, how: Misbehave) -> None:
    server.misbehave(how)
    with pytest.raises(SmapiTransportError) as err:
        _client(server.port, read_timeout=0.3).call("Image_CPU_Query", "LINUX01")
    text = _one_line_without_password(err.value)
    assert "Response_Recovery returned rc 4 rs 4 (no saved response" in text


def test_reissue_is_retried_a_bounded_number_of_times(server: SmapiTestServer) -> None:
    slept: list[float] = []
    server.misbehave(Misbehave.REISSUE, Misbehave.REISSUE)
    client = _client(server.port, retries=2, retry_delays=(0.1, 0.2), sleep=slept.append)
    assert client.call("Image_CPU_Query", "LINUX01").check().output.get("number_cpus") == 2
    assert slept == [0.1, 0.2]
    server.misbehave(*[Misbehave.REISSUE] * 3)
    response = client.call("Image_CPU_Query", "LINUX01")
    assert (response.rc, response.rs) == (900, 99)
    assert response.outcome.reissue


def test_each_retry_is_told_why_before_its_wait(server: SmapiTestServer) -> None:
    told: list[str] = []
    server.misbehave(Misbehave.REISSUE)
    client = _client(server.port, retries=2, retry_delays=(0.1, 0.2), sleep=lambda _: None)
    client.on_retry = told.append
    assert client.call("Image_CPU_Query", "LINUX01").check().output.get("number_cpus") == 2
    assert told == [
        "Image_CPU_Query answered rc 900 rs 99 (server busy or restarting: reissue the "
        "request): trying again in 0.1 s (2 more at most)"
    ]
    told.clear()
    refused = _client(_free_port(), retries=2, retry_delays=(0.5, 1.0), sleep=lambda _: None)
    refused.on_retry = told.append
    with pytest.raises(SmapiConnectionRefused):
        refused.call("Image_CPU_Query", "LINUX01")
    assert [line.split(": ", 1)[1] for line in told] == [
        "trying again in 0.5 s (2 more at most)",
        "trying again in 1 s (1 more at most)",
    ]
    assert all("refused the connection" in line for line in told)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_connection_refused_is_retried_until_the_server_is_up() -> None:
    port = _free_port()
    started: list[SmapiTestServer] = []

    def start_server(delay: float) -> None:  # the "sleep" between attempts
        if not started:
            started.append(SmapiTestServer(userid="ESAUSER", password=PASSWORD, port=port).start())

    try:
        client = _client(port, retries=2, sleep=start_server)
        response = client.call("System_Information_Query", "ESAUSER").check()
        assert response.output.get("system_information_data")
    finally:
        for srv in started:
            srv.stop()


def test_connection_refused_gives_up_after_the_retries() -> None:
    slept: list[float] = []
    client = _client(_free_port(), retries=3, sleep=slept.append)
    with pytest.raises(SmapiConnectionRefused) as err:
        client.call("System_Information_Query", "ESAUSER")
    assert len(slept) == 3
    assert "refused the connection" in _one_line_without_password(err.value)


def test_repr_hides_the_password(server: SmapiTestServer) -> None:
    client = _client(server.port)
    assert PASSWORD.decode() not in repr(client) + repr(client.__dict__)


# --- TLS -------------------------------------------------------------------------------------


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
            "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    return cert, key


def _tls_server(cert: Path, key: Path) -> SmapiTestServer:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    return SmapiTestServer(userid="ESAUSER", password=PASSWORD, tls=ctx)


def test_tls_with_the_server_certificate_trusted(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    with _tls_server(cert, key) as srv:
        transport = TcpTransport("127.0.0.1", srv.port, make_tls_context(cert))
        client = SmapiClient(transport, "esauser", Secret(PASSWORD))
        assert client.call("System_Information_Query", "ESAUSER").check().rc == 0
        assert transport.describe().endswith("(TLS)")


def test_tls_checks_certificates_by_default(certificate: tuple[Path, Path]) -> None:
    cert, key = certificate
    with _tls_server(cert, key) as srv:
        transport = TcpTransport("127.0.0.1", srv.port, make_tls_context())
        with pytest.raises(SmapiTransportError) as err:
            SmapiClient(transport, "esauser", Secret(PASSWORD)).call("Image_CPU_Query", "X")
        assert "certificate" in _one_line_without_password(err.value)
        unchecked = TcpTransport("127.0.0.1", srv.port, make_tls_context(verify=False))
        assert SmapiClient(unchecked, "esauser", Secret(PASSWORD)).call(
            "Image_CPU_Query", "LINUX01"
        ).rc in (0, 200)


# --- AF_IUCV ---------------------------------------------------------------------------------


def test_sockaddr_iucv_layout() -> None:
    raw = sockaddr_iucv("vsmreqiu", "DMSRSRQU")
    assert len(raw) == 32
    family, port, addr = struct.unpack("=HHI", raw[:8])
    assert (family, port, addr) == (AF_IUCV, 0, 0)
    assert raw[8:] == b" " * 8 + b"VSMREQIU" + b"DMSRSRQU"
    with pytest.raises(SmapiError):
        sockaddr_iucv("TOOLONGNAME", "DMSRSRQU")


def test_iucv_unsupported_here_is_a_clear_error() -> None:
    try:
        socket.socket(AF_IUCV, socket.SOCK_STREAM, 0).close()
    except OSError:
        pass
    else:
        pytest.skip("this system has AF_IUCV")
    with pytest.raises(SmapiUnsupportedTransport) as err:
        IucvTransport().connect(1.0)
    assert "AF_IUCV" in str(err.value) and "\n" not in str(err.value)


def test_iucv_path_with_a_socket_pair_standing_in_for_the_kernel() -> None:
    srv = SmapiTestServer(guests=[SimGuest("LINUX01")], allow_empty_credentials=True)
    seen: list[bytes] = []

    def make_socket() -> socket.socket:
        ours, theirs = socket.socketpair()
        threading.Thread(target=srv._serve, args=(theirs,), daemon=True).start()
        return ours

    def libc_connect(fd: int, address: bytes) -> int:
        seen.append(address)
        return 0

    client = SmapiClient(
        IucvTransport(make_socket=make_socket, libc_connect=libc_connect), "", EMPTY
    )
    response = client.call("Image_CPU_Query", "LINUX01").check()
    assert response.output.get("number_cpus") == 2
    assert seen == [sockaddr_iucv("VSMREQIU", "DMSRSRQU")]
    assert srv.received[-1].userid == "" and srv.received[-1].password_matched


def test_iucv_connect_errors_are_typed() -> None:
    import errno

    def refuse(fd: int, address: bytes) -> int:
        return errno.ECONNREFUSED

    transport = IucvTransport(make_socket=lambda: socket.socketpair()[0], libc_connect=refuse)
    with pytest.raises(SmapiConnectionRefused):
        transport.connect(1.0)
