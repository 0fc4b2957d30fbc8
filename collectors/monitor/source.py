"""Building a monitor source from its SPEC string (``monreader[:DEVICE]``, ``monwrite:FILE``)."""

from __future__ import annotations

from pathlib import Path

from esatui.collectors.base import SourceContext
from esatui.collectors.monitor.layoutfile import effective_layouts
from esatui.collectors.monitor.monreader import MonreaderSource
from esatui.collectors.monitor.monwrite import MonwriteSource, Progress


def is_monitor_spec(spec: str) -> bool:
    return spec == "monreader" or spec.startswith(("monreader:", "monwrite:"))


def monitor_source(
    spec: str,
    ctx: SourceContext,
    layout_file: Path | None = None,
    progress: Progress | None = None,
) -> MonreaderSource | MonwriteSource:
    """The source for ``spec``; ``ValueError`` (one line) for a spec it does not know, and
    :class:`~esatui.collectors.monitor.layoutfile.LayoutError` for a bad layout file."""
    layouts = effective_layouts(layout_file)
    kind, _, arg = spec.partition(":")
    if kind == "monreader":
        return MonreaderSource(ctx, arg or None, layouts)
    if kind == "monwrite":
        if not arg:
            raise ValueError("monwrite needs a file: --source monwrite:FILE")
        return MonwriteSource(ctx, arg, layouts, progress)
    raise ValueError(f"not a monitor source: {spec!r} (monreader[:DEVICE] or monwrite:FILE)")
