"""The software cost table ESACRYPE prices the adapters' work with: CPU milliseconds per
operation, by ESACRYPA's function names, and whose figures they are.

Built-in tables (``crypto_costs.json`` beside this module, sources in docs/CRYPTO_COSTS.md)
hold only published figures; the first named by ``default`` is used unless ``--crypto-costs``
names another built-in table or a file of the user's own (JSON or TOML)::

    name = "z15 openssl 3.0"                    # shown in ESACRYPE's header
    whose = "our measurement, openssl speed, LPAR PROD1, 2024-05"
    cpu_type = "IFL"                            # the processors the figures are for
    [ms_per_op]
    rsa2048_crt = 1.05
    rsa4096_crt = 6.9

A table is never a measurement of the user's system unless the user's file says so: the
header names ``whose`` it is.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path

from esatui.screens.esacrypa import FUNCTIONS

FUNCTION_NAMES = frozenset(fn.name for fn in FUNCTIONS)


class CostTableError(ValueError):
    """A cost table that cannot be used: the message is one line for the user."""


@dataclass(frozen=True)
class CostTable:
    name: str
    whose: str
    ms_per_op: Mapping[str, float]
    cpu_type: str = ""
    source: str = ""
    builtin: bool = False
    extra: tuple[str, ...] = field(default=(), compare=False)  # names not understood

    def describe(self) -> str:
        """The header line: which table, whose figures."""
        kind = "built-in, not measured here" if self.builtin else "file"
        return f"Software costs: {self.name} ({kind}): {self.whose}"


def _table(raw: object, origin: str, *, builtin: bool) -> CostTable:
    if not isinstance(raw, Mapping):
        raise CostTableError(f"{origin}: a cost table must be a table of keys")
    name, whose = raw.get("name"), raw.get("whose")
    if not isinstance(name, str) or not name.strip():
        raise CostTableError(f"{origin}: 'name' (the table's name, shown in the header) is missing")
    if not isinstance(whose, str) or not whose.strip():
        raise CostTableError(
            f"{origin}: 'whose' (whose figures these are, shown in the header) is missing"
        )
    costs = raw.get("ms_per_op")
    if not isinstance(costs, Mapping) or not costs:
        raise CostTableError(f"{origin}: 'ms_per_op' (function = CPU ms per operation) is missing")
    ms: dict[str, float] = {}
    extra: list[str] = []
    for fn, value in costs.items():
        if fn not in FUNCTION_NAMES:
            extra.append(str(fn))
            continue
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise CostTableError(f"{origin}: ms_per_op.{fn} must be a number, not {value!r}")
        if not math.isfinite(value) or value <= 0:
            raise CostTableError(f"{origin}: ms_per_op.{fn} must be a positive number of ms")
        ms[str(fn)] = float(value)
    if not ms:
        raise CostTableError(
            f"{origin}: no known function in ms_per_op (known: {', '.join(sorted(FUNCTION_NAMES))})"
        )
    cpu_type = raw.get("cpu_type", "")
    source = raw.get("source", "")
    return CostTable(
        name.strip(),
        whose.strip(),
        ms,
        cpu_type if isinstance(cpu_type, str) else "",
        source if isinstance(source, str) else "",
        builtin,
        tuple(extra),
    )


@cache
def builtin_tables() -> tuple[dict[str, CostTable], str]:
    """The built-in tables by name, and the default's name."""
    text = resources.files("esatui.screens").joinpath("crypto_costs.json").read_text("utf-8")
    doc = json.loads(text)
    tables = {}
    for raw in doc["tables"]:
        table = _table(raw, "crypto_costs.json", builtin=True)
        tables[table.name] = table
    return tables, doc["default"]


def default_table() -> CostTable:
    tables, name = builtin_tables()
    return tables[name]


def load(spec: str) -> CostTable:
    """``spec``: a built-in table's name or a JSON/TOML file; ``CostTableError`` (one line)
    when it is neither or the file is not a usable table."""
    tables, _ = builtin_tables()
    if spec in tables:
        return tables[spec]
    path = Path(spec)
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        raise CostTableError(
            f"--crypto-costs {spec}: no such file and no built-in table "
            f"(built-in: {', '.join(tables)})"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CostTableError(f"--crypto-costs {spec}: cannot read it ({exc})") from None
    raw: object
    try:
        raw = tomllib.loads(text) if path.suffix.lower() == ".toml" else json.loads(text)
    except ValueError as exc:  # json.JSONDecodeError and tomllib.TOMLDecodeError
        what = "TOML" if path.suffix.lower() == ".toml" else "JSON"
        raise CostTableError(f"--crypto-costs {spec}: not valid {what}: {exc}") from None
    return _table(raw, f"--crypto-costs {spec}", builtin=False)
