"""The ``zcrypt`` source: Crypto Express adapters and AP queues as this Linux sees them."""

from esatui.collectors.zcrypt.kinds import BUS, BUS_KEY, CARD, QUEUE
from esatui.collectors.zcrypt.source import ZcryptSource

__all__ = ["BUS", "BUS_KEY", "CARD", "QUEUE", "ZcryptSource"]
