"""Golden files: compare, or rewrite them with ESATUI_UPDATE_GOLDEN=1 (then review the diff)."""

from __future__ import annotations

import os
from pathlib import Path

GOLDEN = Path(__file__).parent.parent / "golden"


def check(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("ESATUI_UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.exists(), f"no golden file {path}: run with ESATUI_UPDATE_GOLDEN=1 and review"
    assert text == path.read_text()
