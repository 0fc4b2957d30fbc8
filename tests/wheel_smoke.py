"""Run by `make wheel-check` with the python of a fresh venv holding only the built wheel.

It must not import the project's source tree: it runs from another directory and checks
that the installed esatui works as a user would run it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

BIN = Path(sys.executable).parent
ESATUI = str(BIN / "esatui")


def run(*args: str) -> str:
    result = subprocess.run([ESATUI, *args], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.exit(f"esatui {' '.join(args)} failed ({result.returncode}): {result.stderr}")
    return result.stdout


def main() -> None:
    import esatui

    assert "site-packages" in esatui.__file__, f"not the installed package: {esatui.__file__}"
    assert run("--version").strip() == f"esatui {esatui.__version__}"
    screens = json.loads(run("screens", "--format", "json"))
    assert {"ESASSUM", "ESALNXC", "ESAOVHD", "ESACPUU", "ESAUSR2"} <= {s["name"] for s in screens}
    from esatui.collectors.monitor.layoutfile import builtin_layouts  # packaged data file

    assert builtin_layouts()
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "smoke.sqlite")
        run("collect", "--interval", "0.2", "--count", "2", "--db", db)
        doc = json.loads(run("export", "ESALNXC", "--db", db, "--format", "json"))
        assert doc["rows"], "no rows exported"
        run("export", "ESASSUM", "--db", db)
    print("wheel smoke test passed:", esatui.__file__)


if __name__ == "__main__":
    main()
