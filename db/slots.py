"""Slots: the rows a screen shows, one per interval or bucket, with every kind's data in it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from esatui.db.records import Value


@dataclass(slots=True)
class EntityData:
    """One entity's row in a slot. Treated as immutable, though not frozen: the slot
    reading makes one per stored row, and a frozen dataclass's ``__init__`` (an
    ``object.__setattr__`` per field) costs twice a plain one's."""

    key: str
    attrs: Mapping[str, str]
    values: Mapping[str, Value]
    flags: int
    hf_n: int

    def field(self, name: str) -> Value:
        """A stored field by name, the row's ``flags`` and ``hf_n`` among them (as the
        reader's rows of one entity name them)."""
        if name == "flags":
            return self.flags
        if name == "hf_n":
            return self.hf_n
        return self.values.get(name)


@dataclass(frozen=True, slots=True)
class KindSlice:
    """One kind, from one source, within one slot."""

    source: str
    duration_us: int  # total measured duration of the contributing intervals
    flags: int
    rows: Mapping[str, EntityData]  # entity key -> data


@dataclass(frozen=True, slots=True)
class Slot:
    start_us: int
    end_us: int  # the time a screen shows (interval end, or the bucket's nominal end)
    duration_us: int  # the recorded time it holds (the timeline source's intervals)
    flags: int
    data: Mapping[str, Mapping[str, KindSlice]] = field(default_factory=dict)
    partial: bool = False  # a bucket its recorded intervals cover only in part

    def get(self, kind: str, prefer: Sequence[str] = ()) -> KindSlice | None:
        """The kind's slice, from the first preferred source that has it (else any)."""
        by_source = self.data.get(kind)
        if not by_source:
            return None
        for source in prefer:
            if source in by_source:
                return by_source[source]
        return by_source[min(by_source)]
