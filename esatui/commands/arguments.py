"""Argument types and the option groups several commands share."""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from esatui.commands.common import DEFAULT_HF_S, UsageError

# A value that starts with a minus and a digit is a value, never an option: a relative time
# (``--from -90m``) or a negative number. No option of esatui's starts so.
_DASH_VALUE = re.compile(r"^-\d")


DEBUG_HELP = "show tracebacks on errors"


class Parser(argparse.ArgumentParser):
    """Bad arguments are a :class:`UsageError` (one line, exit status 2). Every command
    takes ``--debug`` too, before or after its name (``esatui.cli.main`` looks for it)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _DASH_VALUE
        self.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help=DEBUG_HELP
        )

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


T = TypeVar("T")

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[Parser]


def _parsed(parse: Callable[[str], T], text: str) -> T:
    """``parse(text)``, its ParseError an argparse type error (the message as it is)."""
    from esatui.timeparse import ParseError

    try:
        return parse(text)
    except ParseError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def duration(text: str, at_most_s: float | None = None) -> float:
    from esatui.timeparse import MAX_DURATION_S, parse_duration

    longest = MAX_DURATION_S if at_most_s is None else at_most_s
    return _parsed(lambda t: parse_duration(t, longest), text)


MAX_INTERVAL_S = 86_400.0  # an interval (or --hf period) of a day at most
MAX_WIDTH = 4096  # columns of a text report: wider than any screen's every column


def interval(text: str) -> float:
    """A duration above 0 and at most a day (``--interval``, ``--hf``)."""
    return duration(text, MAX_INTERVAL_S)


MAX_INTERVAL_LEN_S = 366 * 86_400.0  # a bucket of a leap year at most


def interval_length(text: str) -> float:
    """``--interval-len``: a duration of at most a year (a longer bucket holds no more)."""
    return duration(text, MAX_INTERVAL_LEN_S)


def width(text: str) -> int:
    """A report width in columns: at least what a screen needs, at most :data:`MAX_WIDTH`."""
    from esatui.screens.render import MIN_WIDTH

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value > MAX_WIDTH:
        raise argparse.ArgumentTypeError(f"{text!r}: must be at most {MAX_WIDTH} columns")
    if value < MIN_WIDTH:
        raise argparse.ArgumentTypeError(f"{text!r}: screens need at least {MIN_WIDTH} columns")
    return value


def size(text: str) -> int:
    from esatui.timeparse import parse_size

    return _parsed(parse_size, text)


SMALLEST_BOUND = 64 * 1024  # far below any esatui database (an empty one is about 400 KB)


def max_size(text: str) -> int:
    """``--max-size``: a bound no database could keep (0, 2 bytes, 1K) is a mistyped one,
    refused rather than taken as "delete all but each source's newest interval"."""
    value = size(text)
    if value < SMALLEST_BOUND:
        raise argparse.ArgumentTypeError(
            f"{text!r} is {value:,} bytes: no esatui database fits (an empty one takes about "
            "400 KB); give at least 64KB, e.g. 2GB"
        )
    return value


def moment(text: str) -> int:
    from esatui.timeparse import parse_time

    return _parsed(parse_time, text)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r}: must be at least 1")
    return value


NODE_NAME_MAX = 64  # a host name's longest (HOST_NAME_MAX): the default node is the host's
MONITOR_NODE_MAX = 8  # a z/VM system's name in the monitor's records (D1R4 SYSTMID)


def node_name(text: str, longest: int = NODE_NAME_MAX) -> str:
    """``--node``, wherever it is given: 1 to ``longest`` printable ASCII characters, no
    spaces (it is shown on screens and in messages: no escape sequence, no line break)."""
    if 0 < len(text) <= longest and all("!" <= c <= "~" for c in text):
        return text
    shown = repr(text[:24]) + ("..." if len(text) > 24 else "")
    raise argparse.ArgumentTypeError(
        f"{shown}: a node name is 1 to {longest} letters, digits or signs, no spaces"
    )


def monitor_node_name(text: str) -> str:
    """``sim --node``: the simulated z/VM system's name, which its monitor records carry."""
    return node_name(text, MONITOR_NODE_MAX)


LOOPBACK = "127.0.0.1"


def listen(text: str) -> tuple[str, int]:
    """``[HOST:]PORT`` (an IPv6 host in brackets); the host defaults to loopback."""
    host, sep, port_text = text.rpartition(":")
    host = host.strip("[]") if sep else LOOPBACK
    try:
        port = int(port_text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: not [HOST:]PORT") from None
    if not 0 < port < 65536:
        raise argparse.ArgumentTypeError(f"{text!r}: the port must be 1 to 65535")
    return host or LOOPBACK, port


def directory(text: str) -> Path:
    """An existing directory (``--textfile``): a wrong name is refused before anything is
    recorded, not warned about at every interval (an empty one is not taken as ``.``)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty name: give a directory")
    path = Path(text)
    if not path.is_dir():
        why = "not a directory" if path.exists() else "no such directory"
        raise argparse.ArgumentTypeError(f"{text!r}: {why}")
    return path


def speed(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value <= 1e6:
        raise argparse.ArgumentTypeError(f"{text!r}: must be above 0 (1 is wall-clock speed)")
    return value


def threshold(text: str) -> tuple[str, float, float]:
    name, sep, levels = text.partition("=")
    warn_s, _, crit_s = levels.partition(",")
    try:
        if not sep:
            raise ValueError
        warn, crit = float(warn_s), float(crit_s or warn_s)
        if not (math.isfinite(warn) and math.isfinite(crit)):
            raise ValueError
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give NAME=WARN,CRIT, e.g. steal=10,25"
        ) from None
    if warn < 0:  # every value a threshold marks is a count, a time or a share: none below 0
        raise argparse.ArgumentTypeError(f"{text!r}: the levels are 0 or more")
    if warn > crit:  # * would never show: every value past WARN is past CRIT too
        raise argparse.ArgumentTypeError(
            f"{text!r}: WARN ({warn:g}) is above CRIT ({crit:g}); give the lower level first"
        )
    return name.strip(), warn, crit


# Spelled out here so that building the parser never imports the simulator.
SCENARIO_HELP = (
    "mode-vm-day, seed002-t1|t2|t3-baseline|polling|interrupts (seed 002's runs), or "
    "seed003-t1-aes128|aes192|aes256, seed003-t3-light|medium|heavy (seed 003's encrypted paging)"
)
SET_HELP = (
    "a model parameter: guests, threads, op (rsa_sign, rsa_verify, rsa_sign_verify), key_bits, "
    "cards, card_type, poll_timeout_us (a number or irq), cp_crypto_mode (baseline, polling, "
    "interrupts), smt, lpar_cpus (e.g. 1CP+2IFL), cpu_load; and vcpus, domains, rate, "
    "foreign_rate, cp_speed, dedicated, profile, vse_guests, vse_load, paging_cipher (off, "
    "aes128, aes192, aes256), paging_out_s, paging_in_s, lock_hold_us (docs/MODEL.md)"
)


def range_options(p: argparse.ArgumentParser) -> None:
    """``--from`` and ``--to``: the range a screen shows."""
    p.add_argument(
        "--from", dest="from_", type=moment, metavar="T", help="first time (14:30, 3h ago, a date)"
    )
    p.add_argument("--to", type=moment, metavar="T", help="last time (default: the newest)")


def db_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", type=Path, help="database (default: $ESATUI_DB or the user data dir)")


def source_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--interval", type=interval, default=60.0, help="interval length (default 60s)")
    p.add_argument(
        "--hf",
        type=interval,
        help=f"gauge sampling rate, at most the interval (default {DEFAULT_HF_S:g}s)",
    )
    p.add_argument(
        "--source",
        action="append",
        default=[],
        metavar="SPEC",
        help="auto (default), host, zcrypt, hypfs, vmcp, monreader[:DEV], "
        "monwrite:FILE, smapi:HOST[:PORT], smapi:iucv, sim:SCENARIO",
    )
    p.add_argument(
        "--root", type=root_dir, default=Path("/"), help="read /proc and /sys below this directory"
    )
    p.add_argument(
        "--node",
        type=node_name,
        help="node name to record under (default: VM00 name or host name)",
    )
    p.add_argument("--smapi-user", help="SMAPI authenticated userid")
    p.add_argument("--smapi-password-file", type=Path, help="file holding the SMAPI password")
    p.add_argument(
        "--smapi-guests",
        default="*",
        metavar="LIST",
        help="guests to query: * (all active), U1,U2 or namelist:NAME",
    )
    p.add_argument("--smapi-tls", action="store_true", help="SMAPI over TLS (certificates checked)")
    p.add_argument("--smapi-ca", type=Path, metavar="FILE", help="CA certificates for --smapi-tls")
    p.add_argument("--monitor-layout", type=Path, help="monitor record layout file")
    p.add_argument("--keep", type=duration, help="retention: delete intervals older than this")
    p.add_argument("--max-size", type=max_size, help="retention: keep the database under this size")


def root_dir(text: str) -> Path:
    """``--root``: a directory that exists (else every source would be 'not available');
    an empty name is refused, not taken as ``.`` (the current directory's files as the
    system's)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty name: give a directory")
    path = Path(text)
    if not path.is_dir():
        why = "not a directory" if path.exists() else "no such directory"
        raise argparse.ArgumentTypeError(f"{text!r}: {why}")
    return path


def prometheus_url(text: str) -> str:
    """A Prometheus server's address: an http:// or https:// URL with a host."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(text)
    except ValueError as exc:  # "Invalid IPv6 URL": argparse said "invalid prometheus_url value"
        raise argparse.ArgumentTypeError(
            f"{text!r} is no URL ({exc}): give the server's http:// or https:// URL "
            "(http://prometheus:9090)"
        ) from None
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give the server's http:// or https:// URL (http://prometheus:9090)"
        )
    return text


def prometheus_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--prometheus",
        type=prometheus_url,
        metavar="URL",
        help="read the intervals from this Prometheus server instead of a database "
        "(every node esatui --listen exposed to it; --node NAME)",
    )


def exposition_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--listen",
        type=listen,
        metavar="[HOST:]PORT",
        help="serve the recorded metrics to Prometheus at http://HOST:PORT/metrics "
        "(HOST defaults to 127.0.0.1; 0.0.0.0 for every interface; docs/METRICS.md)",
    )
    p.add_argument(
        "--textfile",
        type=directory,
        metavar="DIR",
        help="write the metrics to DIR/esatui.prom every interval (node_exporter's textfile "
        "collector)",
    )


VIEW_OPTION_HELP = "a screen's view option: normalized (ESACPUU), sort:COLUMN (ESANODE)"


def threshold_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--threshold",
        action="append",
        type=threshold,
        default=[],
        metavar="NAME=WARN,CRIT",
        help=(
            "highlight levels: steal, dserv_pct, dserv_us, unsucc_dq_s, dq_per_op, "
            "busy_per_kvnq, spin_pct (NAME=LEVEL: both at one level; one with a gate set "
            "alone marks on its own; defaults and reasons: esatui screens, the README)"
        ),
    )


def crypto_costs_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--crypto-costs",
        metavar="FILE",
        help="ESACRYPE's software cost table: a JSON or TOML file, or a built-in table's name "
        "(default: seed 000's figures; docs/CRYPTO_COSTS.md)",
    )


def view_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--screen", default="ESASSUM", help="first screen (default ESASSUM)")
    threshold_option(p)
    crypto_costs_option(p)


def simulation_options(p: argparse.ArgumentParser) -> None:
    # SPEC section 6 writes both "--set KEY=VALUE..." and "[--set KEY=VALUE]...": either
    p.add_argument(
        "--set", action="extend", nargs="+", default=[], metavar="KEY=VALUE", help=SET_HELP
    )
