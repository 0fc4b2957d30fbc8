"""The ``KEY=value KEY=value`` text of System_Information_Query and DETAILED_CPU entries.

Values may hold blanks (``MONITOR_RATE=2.00 SECONDS``) and are blank-padded
(``LPAR_NAME=LP1      LPAR_NUMBER=1``): a value runs from its ``=`` to the next
``KEY=`` that starts a word, and is stripped.
"""

from __future__ import annotations

import re

_KEY = re.compile(r"(?:^|(?<=\s))([A-Z][A-Z0-9_]*)=")


def split_entry(line: str) -> tuple[str, str]:
    """``"DETAILED_CPU=LPAR_NAME=..."`` -> ``("DETAILED_CPU", "LPAR_NAME=...")``."""
    key, _, rest = line.partition("=")
    return key.strip(), rest


def parse_pairs(text: str) -> dict[str, str]:
    """Every ``KEY=value`` in ``text``; a repeated key keeps its first value."""
    pairs: dict[str, str] = {}
    matches = list(_KEY.finditer(text))
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        pairs.setdefault(m.group(1), text[m.end() : end].strip())
    return pairs


def percent(value: str | None) -> float | None:
    """``"98.50%"`` -> 98.5; anything else (absent, ``...``, negative) -> None."""
    if value is None:
        return None
    try:
        number = float(value.strip().rstrip("%"))
    except ValueError:
        return None
    return number if 0.0 <= number < float("inf") else None


def integer(value: str | None) -> int | None:
    if value is None:
        return None
    value = value.strip()
    return int(value) if value.isdigit() and value.isascii() else None
