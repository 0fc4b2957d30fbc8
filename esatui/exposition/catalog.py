"""Every Prometheus metric esatui exposes, derived from the collectors' kind declarations.

A kind's field becomes a metric family: counters stay counters (``_total``), gauges stay
gauges, in base units (seconds, bytes, ratios: Prometheus's naming conventions). Fields that
are parts of one whole share a family and differ by a label (``esatui_cpu_seconds_total``
with ``mode="user"``, ``mode="steal"`` ...); :data:`GROUPS` says which, :data:`NAMES` names
the few fields whose generic name (``esatui_<kind>_<field>``) would read badly. An entity's
key and the attributes that identify it become labels (:data:`ENTITY_LABELS`); attributes
that change while it exists (a card's state) are labels of its ``esatui_<kind>_info`` family
alone, so its counters keep one series through a change. Every series also carries the
target labels ``node``, ``lpar`` and ``zvm_system``. This module is pure data:
``esatui metrics`` prints it as docs/METRICS.md, and the exporter follows it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from enum import Enum

from esatui.collectors.host import CPU
from esatui.collectors.kinds import GUEST, LCPU
from esatui.collectors.model import Field, Kind, Role
from esatui.collectors.monitor.kinds import (
    ALL_FUNCTIONS,
    CRYPTO,
    CRYPTO_AP,
    CRYPTO_KEY,
    FUNCTION_TITLES,
    PAGING,
    SPIN_CPU,
    SPIN_LOCK,
)
from esatui.collectors.selfmon import COLLECTOR, SELF
from esatui.collectors.vmcp.source import VCPU
from esatui.collectors.zcrypt.kinds import BUS, BUS_KEY, CARD, QUEUE
from esatui.exposition.derived import DERIVED
from esatui.screens import catalog as screen_catalog

EXPOSED_KINDS: tuple[Kind, ...] = (
    CPU,
    LCPU,
    GUEST,
    CARD,
    QUEUE,
    BUS,
    CRYPTO,
    CRYPTO_AP,
    PAGING,
    SPIN_LOCK,
    SPIN_CPU,
    SELF,
    COLLECTOR,
    VCPU,
)
"""Every kind that declares numeric fields (a test finds any other the collectors declare),
and the kinds of attributes alone that a screen reads (as ``esatui_<kind>_info`` 1)."""

TARGET_LABELS = ("node", "lpar", "zvm_system")
"""On every series: the node recorded (as ``--node`` or its first source names it), its LPAR
and its z/VM system (empty until a source tells them)."""

SCALE_ATTR = "scale"  # crypto_ap: seconds per raw time unit of the measurement block


class MetricType(Enum):
    COUNTER = "counter"
    GAUGE = "gauge"


@dataclass(frozen=True, slots=True)
class Unit:
    """A kind's unit as Prometheus sees it: the base unit's name and the factor to it, as
    a multiplier and a divisor (µs / 1e6 is exact where µs x 1e-6 is not)."""

    base: str  # "seconds", "bytes", "ratio", or "" for plain counts
    factor: Factor | None  # None: per entity, from its SCALE_ATTR


Factor = tuple[float, float]  # (multiply by, divide by)

UNITS: Mapping[str, Unit] = {
    "us": Unit("seconds", (1.0, 1e6)),
    "ms": Unit("seconds", (1.0, 1e3)),
    "ns": Unit("seconds", (1.0, 1e9)),
    "bytes": Unit("bytes", (1.0, 1.0)),
    "KiB": Unit("bytes", (1024.0, 1.0)),
    "pct": Unit("ratio", (1.0, 100.0)),
    "count": Unit("", (1.0, 1.0)),
    "flag": Unit("", (1.0, 1.0)),
    "weight": Unit("", (1.0, 1.0)),
    "cmb": Unit("seconds", None),
}

_UNIT_SUFFIXES = ("_us", "_ms", "_ns", "_kib", "_pct", "_count", "_time")


@dataclass(frozen=True, slots=True)
class EntityLabels:
    """How an entity of a kind is labelled: its key (if it names something), the attributes
    that do not change while it exists (labels of every family of the kind), and those that
    do (``state``: labels of its info family alone, which a kind with any gets)."""

    key: str | None
    attrs: tuple[tuple[str, str], ...] = ()  # (label, attribute)
    by_source: bool = False  # several sources fill the kind: a ``source`` label keeps them apart
    state: tuple[tuple[str, str], ...] = ()  # (label, attribute)

    @property
    def names(self) -> tuple[str, ...]:
        return (
            *(() if self.key is None else (self.key,)),
            *(label for label, _ in self.attrs),
            *(("source",) if self.by_source else ()),
        )

    @property
    def info_names(self) -> tuple[str, ...]:
        """The labels of the kind's info family: the entity's identity, then its state."""
        return (*self.names, *(label for label, _ in self.state))

    @property
    def labelled(self) -> tuple[tuple[str, str], ...]:
        """Every (label, attribute) of the kind, on whichever family."""
        return (*self.attrs, *self.state)


_TYPE = (("type", "type"), ("type_source", "type_source"))
_STATE = (("mode", "mode"), ("online", "online"), ("state", "state"))

# Every attribute a screen reads is a label (a test holds them in step), so the screens work
# on what Prometheus holds. A label of a counter that changed would start a new series (the
# old one stale, rate() blind to the interval of the change): what changes is ``state``.
# Kept as identity: a zcrypt card's type (CEX7A: its mode's letter) changes only when the
# kernel re-creates the device, counting from 0 again; a measurement block's type and scale
# only with the hardware (and the reader needs scale on each series to give back raw units);
# layout and record_length only with the z/VM level, which changes what a field counts.
ENTITY_LABELS: Mapping[str, EntityLabels] = {
    "cpu": EntityLabels("cpu", (*_TYPE, ("address", "address"))),
    # the processor's own LPAR (SMAPI and hypfs see every LPAR's): not the target label lpar
    "lcpu": EntityLabels("processor", (*_TYPE, ("processor_lpar", "lpar")), by_source=True),
    "guest": EntityLabels("guest", (("userid", "userid"),), by_source=True),
    "zcrypt_card": EntityLabels("card", (("type", "type"),), state=_STATE),
    # interrupt: whether the kernel polls the queue on its timer (ESACRYQ's header)
    "zcrypt_queue": EntityLabels(
        None,
        (("card", "card"), ("domain", "domain"), ("type", "type")),
        state=(*_STATE, ("interrupt", "interrupt")),
    ),
    "zcrypt_bus": EntityLabels(None),
    # one entity: the z/VM system's crypto facility
    "crypto": EntityLabels(None, (("layout", "layout"), ("record_length", "record_length"))),
    # mode: reconfigured on the SE, the same card (its functions tell what it measures)
    "crypto_ap": EntityLabels(
        "ap", (("type", "type"), ("scale", "scale")), state=(("mode", "mode"),)
    ),
    # the monitor's per-processor and per-lock records; layout: which record layout read them
    "paging_enc": EntityLabels("processor", (("layout", "layout"),)),
    "spin_lock": EntityLabels("lock", (("layout", "layout"),)),
    "spin_cpu": EntityLabels("processor", (("layout", "layout"),)),
    "esatui": EntityLabels(None),
    "collector": EntityLabels("collector"),
    "vcpu": EntityLabels("vcpu", _TYPE),
}

# Reading back (esatui --prometheus): an entity's key from its labels, and the source of the
# kinds that carry no source label (the source that fills them when esatui records).
KEY_FORMAT: Mapping[str, str] = {
    "cpu": "{cpu}",
    "lcpu": "{processor}",
    "guest": "{guest}",
    "zcrypt_card": "{card}",
    "zcrypt_queue": "{card}.{domain}",
    "zcrypt_bus": BUS_KEY,
    "crypto": CRYPTO_KEY,
    "crypto_ap": "{ap}",
    "paging_enc": "{processor}",
    "spin_lock": "{lock}",
    "spin_cpu": "{processor}",
    "esatui": "self",
    "collector": "{collector}",
    "vcpu": "{vcpu}",
}
SOURCE_OF: Mapping[str, str] = {
    "cpu": "host",
    "zcrypt_card": "zcrypt",
    "zcrypt_queue": "zcrypt",
    "zcrypt_bus": "zcrypt",
    "crypto": "monitor",
    "crypto_ap": "monitor",
    "paging_enc": "monitor",
    "spin_lock": "monitor",
    "spin_cpu": "monitor",
    "esatui": "esatui",
    "collector": "esatui",
    "vcpu": "vmcp",
}

PREFIX: Mapping[str, str] = {
    "cpu": "esatui_cpu",
    "lcpu": "esatui_lpar_processor",
    "guest": "esatui_guest",
    "zcrypt_card": "esatui_zcrypt_card",
    "zcrypt_queue": "esatui_zcrypt",
    "zcrypt_bus": "esatui_zcrypt_bus",
    "crypto": "esatui_crypto",
    "crypto_ap": "esatui_crypto_ap",
    "paging_enc": "esatui_encrypted_paging",
    "spin_lock": "esatui_spin_lock",
    "spin_cpu": "esatui_processor_spin",
    "esatui": "esatui_self",
    "collector": "esatui_collector",
    "vcpu": "esatui_vcpu",
}


@dataclass(frozen=True, slots=True)
class Group:
    """Fields of one kind that are parts of one whole: one family, told apart by ``label``."""

    kind: str
    name: str  # without the unit and _total
    label: str
    members: Mapping[str, str]  # field -> label value


def _sides(stem_virt: str, stem_real: str) -> dict[str, str]:
    return {stem_virt: "virt", stem_real: "real"}


_GUEST_CPU = {"guest_us": "user", "guest_nice_us": "nice"}

GROUPS: tuple[Group, ...] = (
    # guest time is in user time already (guest_nice in nice), as the kernel counts it: a
    # family of its own (node_exporter's node_cpu_guest_seconds_total), so the modes of a
    # CPU add up to its time
    Group(
        "cpu",
        "esatui_cpu",
        "mode",
        {f.name: f.name.removesuffix("_us") for f in CPU.fields if f.name not in _GUEST_CPU},
    ),
    Group("cpu", "esatui_cpu_guest", "mode", _GUEST_CPU),
    # the parts of a processor's online time, as ESACPUU adds them (total + idle + steal =
    # 100): busy where the source cannot split it, and the steal left after busy and idle
    # (derived.py); the recorded steal_us holds the idle wait, management time is beside
    Group(
        "lcpu",
        "esatui_lpar_processor",
        "mode",
        {
            "emul_us": "emul",
            "user_us": "user",
            "syst_us": "syst",
            "busy_us": "busy",
            "idle_us": "idle",
            "ready_steal_us": "steal",
        },
    ),
    Group(
        "guest",
        "esatui_guest_state_samples",
        "state",
        {f"samp_{s}": s for s in ("cpu", "delay", "page", "idle", "other")},
    ),
    Group(
        "crypto",
        "esatui_crypto_service",
        "phase",
        {f"{p}_us": p.upper() for p in ("vserv", "nserv", "rserv", "hserv", "dserv")},
    ),
    Group("crypto", "esatui_crypto_operations", "side", _sides("virt_nq", "real_nq")),
    Group("crypto", "esatui_crypto_dequeues", "side", _sides("virt_dq", "real_dq")),
    Group("crypto", "esatui_crypto_completions", "side", _sides("virt_done", "real_done")),
    Group("crypto", "esatui_crypto_rejects", "side", _sides("virt_rej", "real_rej")),
    Group(
        "crypto_ap",
        "esatui_crypto_ap_operations",
        "function",
        {f"{fn}_count": fn for fn in ALL_FUNCTIONS},
    ),
    Group(
        "crypto_ap", "esatui_crypto_ap_busy", "function", {f"{fn}_time": fn for fn in ALL_FUNCTIONS}
    ),
    Group(
        "paging_enc",
        "esatui_encrypted_paging_pages",
        "direction",
        {"enc_pages": "encrypt", "dec_pages": "decrypt"},
    ),
    Group(
        "paging_enc",
        "esatui_encrypted_paging_cpu",
        "direction",
        {"enc_us": "encrypt", "dec_us": "decrypt"},
    ),
    Group(
        "spin_lock",
        "esatui_spin_lock_spins",
        "mode",
        {"excl_spins": "exclusive", "shared_spins": "shared"},
    ),
    Group(
        "spin_lock",
        "esatui_spin_lock_spin",
        "mode",
        {"excl_us": "exclusive", "shared_us": "shared"},
    ),
)

NAMES: Mapping[tuple[str, str], str] = {
    ("lcpu", "elapsed_us"): "esatui_lpar_processor_online",
    ("lcpu", "steal_us"): "esatui_lpar_processor_not_dispatched",
    ("lcpu", "mgmt_us"): "esatui_lpar_processor_management",
    ("guest", "elapsed_us"): "esatui_guest_logged_on",
    ("guest", "samp_total"): "esatui_guest_samples",
    ("guest", "mem_used_kib"): "esatui_guest_memory_used",
    ("guest", "mem_max_kib"): "esatui_guest_memory_max",
    ("zcrypt_card", "request_count"): "esatui_zcrypt_card_requests",
    ("zcrypt_queue", "request_count"): "esatui_zcrypt_requests",
    ("zcrypt_card", "requestq_count"): "esatui_zcrypt_card_request_queue",
    ("zcrypt_queue", "requestq_count"): "esatui_zcrypt_request_queue",
    ("zcrypt_card", "pendingq_count"): "esatui_zcrypt_card_pending_queue",
    ("zcrypt_queue", "pendingq_count"): "esatui_zcrypt_pending_queue",
    ("zcrypt_card", "pending_count"): "esatui_zcrypt_card_queued",
    ("zcrypt_queue", "pending_count"): "esatui_zcrypt_queued",
    ("zcrypt_bus", "ap_interrupts"): "esatui_zcrypt_bus_interrupts",
    ("esatui", "store_bytes"): "esatui_self_store_written",
    ("crypto", "nq_waiting"): "esatui_crypto_nq_waiting",
    ("spin_cpu", "spins"): "esatui_processor_spins",
    ("spin_cpu", "spin_us"): "esatui_processor_spin",
}


_SINCE_START = "since the recorder started"


def _operations(title: str) -> str:
    return title if title.endswith("operations") else f"{title} operations"


# A field's doc says what its source reads; where that misleads about the exposed value (a
# percentage exposed as a ratio, raw units as seconds, a device's count since it was created
# as the sum of the deltas since the recorder started), the family's HELP says this instead.
HELP: Mapping[tuple[str, str], str] = {
    ("cpu", "guest_us"): "/proc/stat guest time: running a guest's virtual CPU (KVM), "
    "counted in user time already",
    ("cpu", "guest_nice_us"): "/proc/stat guest_nice time: running a niced guest's virtual "
    "CPU, counted in nice time already",
    ("lcpu", "elapsed_us"): "time the processor was online, which its modes are parts of",
    ("lcpu", "busy_us"): "time dispatched, where the source does not split it into emul, "
    "user and syst (hypfs, the monitor without D0R2)",
    ("lcpu", "busy_pct"): "busy, as a ratio of the source's own interval (SMAPI, vmcp)",
    ("lcpu", "overhead_pct"): "LPAR overhead, as a ratio of the source's own interval (SMAPI)",
    ("zcrypt_card", "request_count"): f"requests enqueued to the card, {_SINCE_START}",
    ("zcrypt_queue", "request_count"): f"requests enqueued to the APQN, {_SINCE_START}",
    ("zcrypt_bus", "scans"): f"AP bus scans (newer kernels), {_SINCE_START}",
    ("esatui", "cpu_us"): "CPU used: the process CPU clock less its stolen share",
    ("collector", "cpu_us"): "CPU used in the source's sample calls: the thread CPU clock "
    "less its stolen share",
    **{("crypto_ap", f"{fn}_count"): _operations(FUNCTION_TITLES[fn]) for fn in ALL_FUNCTIONS},
    **{
        ("crypto_ap", f"{fn}_time"): f"{FUNCTION_TITLES[fn]} busy time "
        "(the block's raw units times its scale)"
        for fn in ALL_FUNCTIONS
    },
}


def doc(kind: str, field: Field) -> str:
    """What the exposed value of a kind's field is."""
    return HELP.get((kind, field.name), field.doc)


@dataclass(frozen=True, slots=True)
class Member:
    """One field in a family: the label value it takes (in a group) and how it converts."""

    field: Field
    value: str | None
    factor: Factor | None  # None: the entity's SCALE_ATTR
    derived: bool = False  # computed by the exporter (derived.py), never read back


@dataclass(frozen=True, slots=True)
class Family:
    """One metric family: what a scrape shows under one name."""

    name: str  # as exposed, without _total (prometheus_client adds it to counters)
    kind: str
    type: MetricType
    unit: str
    labels: tuple[str, ...]  # the entity's, then the group's; the target labels come first
    group_label: str | None
    members: tuple[Member, ...]
    maximum: bool = False  # a gauge's maximum in the interval (its average is another family)
    state: tuple[str, ...] = ()  # an info family's labels that change while the entity exists

    @property
    def exposed(self) -> str:
        return self.name + ("_total" if self.type is MetricType.COUNTER else "")

    @property
    def help(self) -> str:
        if self.state:
            return (
                f"1 for each {self.kind}, its state as labels ({', '.join(self.state)}): "
                "join it to the kind's other series on the rest"
            )
        if not self.members:
            return f"1 for each {self.kind} (its attributes as labels)"
        if self.maximum:
            return f"the most at one --hf sample in the interval: {self._doc(self.members[0])}"
        if self.group_label is None:
            return self._doc(self.members[0])
        return "; ".join(f"{m.value}: {self._doc(m)}" for m in self.members)

    def _doc(self, member: Member) -> str:
        return doc(self.kind, member.field)

    @property
    def provisional(self) -> bool:
        return any(m.field.provisional for m in self.members)


def _stem(field: str) -> str:
    for suffix in _UNIT_SUFFIXES:
        if field.endswith(suffix):
            return field.removesuffix(suffix)
    return field


def _named(name: str, unit: Unit) -> str:
    return name if not unit.base or name.endswith("_" + unit.base) else f"{name}_{unit.base}"


def _family(kind: Kind, name: str, group: Group | None, fields: list[Field]) -> Family:
    units = {UNITS[f.unit] for f in fields}
    roles = {f.role for f in fields}
    if len(units) != 1 or len(roles) != 1:
        raise ValueError(f"{name}: its fields differ in unit or role")
    unit = units.pop()
    labels = ENTITY_LABELS[kind.name].names + (() if group is None else (group.label,))
    return Family(
        name=_named(name, unit),
        kind=kind.name,
        type=MetricType.COUNTER if roles.pop() is Role.COUNTER else MetricType.GAUGE,
        unit=unit.base,
        labels=labels,
        group_label=None if group is None else group.label,
        members=tuple(
            Member(
                f,
                None if group is None else group.members[f.name],
                unit.factor,
                any(d.field == f for d in DERIVED.get(kind.name, ())),
            )
            for f in fields
        ),
    )


def families() -> tuple[Family, ...]:
    """Every family, kind by kind in :data:`EXPOSED_KINDS` order: its info family (a kind of
    attributes alone, or with a state), then its fields' in declared order."""
    maxima = read_maxima()
    out: list[Family] = []
    for kind in EXPOSED_KINDS:
        spec = ENTITY_LABELS[kind.name]
        if not kind.fields or spec.state:
            state = tuple(label for label, _ in spec.state)
            name = f"{PREFIX[kind.name]}_info"
            labels = spec.info_names
            out.append(Family(name, kind.name, MetricType.GAUGE, "", labels, None, (), state=state))
        if not kind.fields:
            continue
        groups = [g for g in GROUPS if g.kind == kind.name]
        grouped = {f for g in groups for f in g.members}
        for group in groups:
            out.append(_family(kind, group.name, group, [_field(kind, f) for f in group.members]))
        for f in kind.fields:
            if f.name not in grouped:
                name = NAMES.get((kind.name, f.name), f"{PREFIX[kind.name]}_{_stem(f.name)}")
                family = _family(kind, name, None, [f])
                out.append(family)
                if (kind.name, f.name) in maxima:
                    peak = _family(kind, f"{name}_max", None, [f])
                    out.append(replace(peak, maximum=True))
    return tuple(out)


def _field(kind: Kind, name: str) -> Field:
    """A kind's recorded field, or one the exporter derives from them."""
    derived = {d.field.name: d.field for d in DERIVED.get(kind.name, ())}
    return derived[name] if name in derived else kind.field(name)


def read_maxima() -> frozenset[tuple[str, str]]:
    """The gauges whose interval maximum a screen shows: (kind, gauge). They get a ``_max``
    family beside their average, so the screens show them from Prometheus too."""
    return frozenset(
        (reads.kind, field.removesuffix("_max"))
        for screen in screen_catalog.screens().values()
        for reads in screen.reads
        for field in reads.fields
        if field.endswith("_max")
    )
