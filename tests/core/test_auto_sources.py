"""``--source auto`` builds, and so imports, only the sources whose files are present."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from esatui.registry import Registry, SourceOptions, SourceType

PROBE = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from esatui.commands.common import registry
    from esatui.registry import SourceOptions

    made = registry().make_sources(["auto"], SourceOptions(root=Path(sys.argv[1])))
    print(",".join(s.name for s in made))
    print(",".join(sorted(m for m in sys.modules if m.startswith("esatui.collectors."))))
    """
)


def test_auto_imports_only_the_collectors_of_sources_present(tmp_path: Path) -> None:
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "stat").write_bytes(Path("/proc/stat").read_bytes())
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == "host"
    imported = out[1].split(",")
    for absent in ("zcrypt", "hypfs", "vmcp", "monitor"):
        assert not [m for m in imported if m.startswith(f"esatui.collectors.{absent}")], absent


def test_a_type_none_of_whose_marks_exists_is_not_built(tmp_path: Path) -> None:
    built: list[str] = []

    def never(arg: str | None, opts: SourceOptions) -> object:
        built.append("absent")
        raise AssertionError("built")

    registry = Registry()
    registry.add(SourceType("absent", "", True, never, ("/dev/nothing-here",)))  # type: ignore[arg-type]
    assert registry.make_sources(["auto"], SourceOptions(root=tmp_path)) == []
    assert built == []


def test_a_mark_this_user_may_not_see_leaves_it_to_the_probe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """debugfs is root's (mode 0700): as another user, stat raises PermissionError there,
    which must neither stop `auto` nor count as absent."""
    hidden = tmp_path / "sys" / "kernel" / "debug" / "thing"
    real_stat = Path.stat

    def stat(self: Path, **kwargs: object) -> object:
        if self == hidden:
            raise PermissionError(13, "Permission denied", str(self))
        return real_stat(self, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "stat", stat)
    hidden_type = SourceType("hidden", "", True, lambda a, o: [], ("/sys/kernel/debug/thing",))
    absent_type = SourceType("absent", "", True, lambda a, o: [], ("/sys/kernel/debug/nope",))
    opts = SourceOptions(root=tmp_path)
    assert hidden_type.maybe_present(opts)
    assert not absent_type.maybe_present(opts)
