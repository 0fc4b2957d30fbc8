"""Which entity a screen row shows: the values of its key columns other than the time.

Comparisons and distributions match rows across models (two runs; a bucket and the recorded
intervals inside it) by this key: ESACPUU's ``IFL 0001``, its ``IFL Tot`` subtotal, ESACRYQ's
``0a.0011``, or nothing on a screen with one row per interval (ESAPOLL).
"""

from __future__ import annotations

from collections.abc import Sequence

from esatui.screens.model import Column, Row, RowKind

EntityKey = tuple[str, ...]


def names_entity(column: Column) -> bool:
    """A key column that tells which entity a row is: text (type, card, guest, lock) or a
    whole number (a CPU's id, a card's type); not the time (the interval's, not the
    entity's), and not a measurement kept among the keys (ESACRYPA's Util%, which changes
    every interval)."""
    return column.key and column.id != "time" and (column.is_text or column.decimals == 0)


def key_columns(columns: Sequence[Column]) -> tuple[Column, ...]:
    """The columns that name a row's entity."""
    return tuple(c for c in columns if names_entity(c))


def measured_columns(columns: Sequence[Column]) -> tuple[Column, ...]:
    """The columns holding measurements: every one with numbers but the time and the keys
    that name entities (ESACRYPA's Util% is one, though it sits among the keys)."""
    return tuple(c for c in columns if not c.is_text and c.id != "time" and not names_entity(c))


def entity_key(keys: Sequence[Column], row: Row) -> EntityKey:
    """The row's entity: its key columns' values as text, and the row's kind when it is a
    subtotal or a total (a ``Tot`` row is not the processor called ``Tot``)."""
    values = tuple("" if row.values.get(c.id) is None else str(row.values[c.id]) for c in keys)
    return values if row.kind is RowKind.DATA else (*values, row.kind.value)


def entity_text(key: EntityKey) -> str:
    """``IFL 1``, ``0a.0011``; empty for a screen without entities."""
    return " ".join(part for part in key if part)
