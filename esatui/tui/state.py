"""What the monitor shows, as a value: the keys change it, the view renders it.

Kept free of Textual so navigation (paging in time, drilling, interval length) is tested
directly and reads the same in live and replay.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from esatui.screens import catalog
from esatui.screens.model import Drill, Row

# `+` and `-` step through these interval lengths (None: as recorded).
INTERVAL_STEPS: tuple[int | None, ...] = (
    None,
    60_000_000,
    300_000_000,
    900_000_000,
    3_600_000_000,
    86_400_000_000,
)


SORT = "sort:"  # a view option: rows sorted by this column, worst first (ESANODE)


@dataclass(frozen=True)
class ViewState:
    screen: str = "ESASSUM"
    anchor_us: int | None = None  # newest interval end shown; None: follow the newest
    interval_len_us: int | None = None
    hpage: int = 0
    entity: str | None = None
    after_us: int | None = None  # the range a replay was asked for, or a drilled interval
    until_us: int | None = None
    options: frozenset[str] = frozenset()
    back: ViewState | None = None  # where Esc returns to (a drill, or a jump to a screen)
    drilled: bool = False  # shows exactly the interval it was drilled from
    node: str | None = None  # a node drilled into (ESANODE); None: the monitor's own
    # the row the cursor was on when a drill left this view: Esc puts it back there
    selected: Row | None = field(default=None, compare=False)
    column: str | None = field(default=None, compare=False)  # and the column cursor's id

    @property
    def following(self) -> bool:
        return self.anchor_us is None

    def query_window(self, limit: int) -> tuple[int | None, int | None, int | None]:
        """(after, until, limit) for the store: the ``limit`` newest intervals up to the anchor."""
        if self.drilled:
            return self.after_us, self.until_us, None
        until = self.until_us
        if self.anchor_us is not None:
            until = self.anchor_us if until is None else min(until, self.anchor_us)
        return self.after_us, until, limit

    def go_screen(self, name: str) -> ViewState:
        """Screen ``name`` over the user's own range and at the same moment; Esc returns
        here."""
        screen = catalog.get(name).name
        after, until = self.back_range()
        anchor = self.anchor_us
        if self.drilled:  # at the drilled interval's time
            anchor = self.until_us
        return ViewState(
            screen=screen,
            anchor_us=anchor,
            interval_len_us=self.interval_len_us,
            after_us=after,
            until_us=until,
            options=self.options,
            back=self,
        )

    def jump(self, moment_us: int) -> ViewState:
        """The same screen with its newest row at ``moment_us`` (a drilled view leaves the
        drill: a jump in time is a view of its own)."""
        root = self
        while root.drilled and root.back is not None:
            root = root.back
        return replace(root, anchor_us=moment_us)

    def back_range(self) -> tuple[int | None, int | None]:
        """The user's own range (a replay's --from/--to), not a drilled interval's."""
        root = self
        while root.drilled and root.back is not None:
            root = root.back
        return root.after_us, root.until_us

    def drill(self, target: Drill) -> ViewState:
        catalog.get(target.screen)
        return ViewState(
            screen=target.screen,
            anchor_us=None,
            interval_len_us=self.interval_len_us,
            entity=target.entity,
            after_us=target.start_us,
            until_us=target.end_us,
            options=self.options,
            back=self,
            drilled=True,
            node=target.node or self.node,
        )

    def go_back(self) -> ViewState | None:
        return self.back

    def at(self, anchor_us: int | None) -> ViewState:
        return replace(self, anchor_us=anchor_us)

    def page(self, delta: int, n_pages: int) -> ViewState:
        return replace(self, hpage=max(0, min(n_pages - 1, self.hpage + delta)))

    def longer(self) -> ViewState:
        return replace(self, interval_len_us=_step(self.interval_len_us, +1))

    def shorter(self) -> ViewState:
        return replace(self, interval_len_us=_step(self.interval_len_us, -1))

    def toggle(self, option: str) -> ViewState:
        return replace(self, options=self.options ^ {option})

    def sort_next(self, columns: tuple[str, ...]) -> ViewState:
        """The next of a screen's sort columns (``sort:<column>`` among the options)."""
        current = next((o for o in self.options if o.startswith(SORT)), None)
        order = [f"{SORT}{c}" for c in columns]
        following = order[(order.index(current) + 1) % len(order)] if current in order else order[0]
        return replace(self, options=(self.options - {current}) | {following})


def _step(current: int | None, direction: int) -> int | None:
    if current in INTERVAL_STEPS:
        index = INTERVAL_STEPS.index(current)
    else:
        index = 0 if current is None else len(INTERVAL_STEPS) - 1
    return INTERVAL_STEPS[max(0, min(len(INTERVAL_STEPS) - 1, index + direction))]
