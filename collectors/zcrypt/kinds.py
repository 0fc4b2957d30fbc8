"""The kinds the ``zcrypt`` source fills: AP cards, AP queues (APQNs) and the AP bus."""

from __future__ import annotations

from esatui.collectors.model import Kind, counter, gauge

_COUNTERS = (
    counter(
        "request_count",
        "count",
        "requests enqueued since the device was created or the counter was reset",
    ),
    gauge("requestq_count", "count", "requests waiting in the driver to be sent to the AP"),
    gauge("pendingq_count", "count", "requests sent to the AP and not yet answered"),
    # the sum as sampled, so an interval's maximum is the most ever queued at one moment
    # (the two maxima apart cannot give it); lszcrypt's PENDING column adds them the same way
    gauge(
        "pending_count",
        "count",
        "requestq_count + pendingq_count at the same sample: everything queued in the driver",
    ),
)

CARD = Kind(
    name="zcrypt_card",
    doc="Crypto Express adapter (AP card) as this Linux sees it (/sys/devices/ap/cardXX)",
    fields=(
        *_COUNTERS,
        gauge(
            "load",
            "weight",
            "zcrypt's load weight of the card at the interval boundary (not --hf sampled)",
        ),
    ),
    attrs=(
        "type",  # CEX7A ... (zcrypt's type, else derived from hwtype)
        "type_source",  # sysfs | hwtype
        "mode",  # ACCEL | CCA | EP11
        "hwtype",
        "raw_hwtype",
        "depth",  # sysfs value; lszcrypt's QDEPTH is depth + 1
        "functions",  # ap_functions, 0x%08x
        "function_letters",  # lszcrypt's FUNCTIONS column
        "online",  # 1 | 0 (absent without zcrypt driver)
        "config",  # 1 | 0 (absent on old kernels)
        "chkstop",  # 1 | 0 (absent on old kernels)
        "state",  # online | offline | deconfig | checkstop | -
        "driver",  # bound device driver (cex4card ...)
    ),
)

QUEUE = Kind(
    name="zcrypt_queue",
    doc="AP queue (APQN = card.domain) as this Linux sees it (/sys/devices/ap/cardXX/XX.YYYY)",
    fields=_COUNTERS,
    attrs=(
        "card",  # the card key (0a)
        "domain",  # the domain (usage domain index) in hex (0011)
        "type",  # the card's type and mode, repeated for screens that list queues alone
        "mode",
        "online",  # 1 | 0 (zcrypt-bound queues)
        "status",  # vfio_ap-bound queues: assigned | unassigned | in use
        "config",
        "chkstop",
        "interrupt",  # 1 | 0 | pending
        "state",  # online | offline | deconfig | checkstop | vfio:<status> | -
        "driver",  # cex4queue | vfio_ap ...
    ),
)

BUS = Kind(
    name="zcrypt_bus",
    doc="AP bus settings of this Linux (/sys/bus/ap); one entity, key 'ap'",
    fields=(
        gauge("ap_interrupts", "flag", "1 when the AP bus uses adapter interrupts"),
        gauge("poll_thread", "flag", "1 when the AP poll kernel thread runs"),
        gauge(
            "poll_timeout_ns",
            "ns",
            "high-resolution poll timer period, used when ap_interrupts is 0",
        ),
        counter("scans", "count", "AP bus scans done since boot (newer kernels)"),
        gauge("bound_apqns", "count", "APQNs bound to a device driver (bindings n/m: n)"),
        gauge("total_apqns", "count", "APQNs present (bindings n/m: m)"),
    ),
    attrs=(
        "ap_domain",  # default domain, -1 when none
        "ap_max_domain_id",
        "ap_max_adapter_id",
        "config_time",  # seconds between bus rescans
        "features",
        "bindings",
        "ap_adapter_mask",
        "ap_usage_domain_mask",
        "ap_control_domain_mask",
        "apmask",
        "aqmask",
    ),
)

BUS_KEY = "ap"
