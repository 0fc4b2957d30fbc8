"""z/VM CP monitor records: the record framework, layouts as data, and the two sources.

``monreader[:DEVICE]`` reads the live stream of ``/dev/monreader``; ``monwrite:FILE`` imports a
file written by the CMS MONWRITE utility. Both yield one :class:`Sample` per monitor sample
interval, stamped with the records' own TOD clock. See ``docs/MONITOR.md``.
"""

from esatui.collectors.monitor.kinds import CRYPTO, CRYPTO_AP
from esatui.collectors.monitor.layoutfile import LayoutError, effective_layouts
from esatui.collectors.monitor.monreader import MonreaderSource
from esatui.collectors.monitor.monwrite import MonwriteSource
from esatui.collectors.monitor.source import is_monitor_spec, monitor_source

__all__ = [
    "CRYPTO",
    "CRYPTO_AP",
    "LayoutError",
    "MonreaderSource",
    "MonwriteSource",
    "effective_layouts",
    "is_monitor_spec",
    "monitor_source",
]
