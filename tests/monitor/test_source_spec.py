from __future__ import annotations

import json
from pathlib import Path

import pytest

from esatui.collectors.base import PolledSource, SourceContext, StreamSource
from esatui.collectors.monitor import (
    LayoutError,
    MonreaderSource,
    MonwriteSource,
    is_monitor_spec,
    monitor_source,
)


def test_specs(tmp_path: Path) -> None:
    ctx = SourceContext(root=tmp_path)
    r = monitor_source("monreader", ctx)
    assert isinstance(r, MonreaderSource) and r.device == str(tmp_path / "dev/monreader")
    r = monitor_source("monreader:/dev/other", ctx)
    assert isinstance(r, MonreaderSource) and r.device == "/dev/other"
    w = monitor_source("monwrite:/x/y.mon", ctx)
    assert isinstance(w, MonwriteSource) and w.path == Path("/x/y.mon")
    for src in (r, w):
        assert isinstance(src, StreamSource) and not isinstance(src, PolledSource)
        assert src.name == "monitor"
        assert [k.name for k in src.kinds] == [
            "crypto",
            "crypto_ap",
            "lcpu",
            "paging_enc",
            "spin_cpu",
            "spin_lock",
        ]
    with pytest.raises(ValueError, match="needs a file"):
        monitor_source("monwrite", ctx)
    with pytest.raises(ValueError, match="not a monitor source"):
        monitor_source("host", ctx)
    assert is_monitor_spec("monreader") and is_monitor_spec("monwrite:f")
    assert not is_monitor_spec("monreaderx") and not is_monitor_spec("smapi:h")


def test_layout_file_reaches_the_source(tmp_path: Path) -> None:
    p = tmp_path / "l.json"
    p.write_text(json.dumps({"records": [{"domain": 5, "record": 9, "length": 500, "fields": []}]}))
    src = monitor_source("monwrite:f", SourceContext(), p)
    assert [x.length for x in src.layouts.layouts(5, 9)] == [112, 128, 360, 500]
    p.write_text("[]")
    with pytest.raises(LayoutError):
        monitor_source("monwrite:f", SourceContext(), p)
