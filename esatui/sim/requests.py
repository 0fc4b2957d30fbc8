"""One crypto request on its way from a guest thread to a card and back."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from esatui.sim.adapter import RealQueue
    from esatui.sim.linux import GuestThread


class Request:
    """Timestamps (µs) of the phases seed 002's accumulators measure."""

    __slots__ = (
        "function",
        "queue",
        "service",
        "t_card",
        "t_cpdq",
        "t_made",
        "t_rnq",
        "t_vnq",
        "thread",
    )

    def __init__(self, thread: GuestThread, function: int, service: float, made: float) -> None:
        self.thread = thread
        self.function = function
        self.service = service  # engine time it will need
        self.queue: RealQueue | None = None
        self.t_made = made  # the thread made it (queued in the guest's requestq)
        self.t_vnq = 0.0  # guest NQAP delivered to CP
        self.t_rnq = 0.0  # CP delivered it to the real queue
        self.t_card = 0.0  # the card finished it
        self.t_cpdq = 0.0  # CP has the reply (and posted it to the guest's queue)
