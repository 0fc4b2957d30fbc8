"""The Prometheus reader's timeline: a kind's spans from any of its families."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from esatui.db.reader import Timeline
from tests.core.test_rollups import set_zone
from tests.exposition.test_prometheus_calendar import Ranged, utc_s

LAST_S = utc_s("2026-03-10", 12)


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    set_zone(monkeypatch, "UTC")


class SmapiAlone(Ranged):
    """A node whose processors come from SMAPI alone: busy ratios, no times."""

    def _get(self, path: str, params: Mapping[str, str]) -> object:
        query = params["query"]
        answer = super()._get(path, params)
        if query.startswith("count by (source)"):
            assert isinstance(answer, dict)
            has = "esatui_lpar_processor_busy_ratio" in query
            for series in answer["result"]:
                series["metric"] = {"source": "smapi"}
            return answer if has else {"resultType": "matrix", "result": []}
        return answer


def test_a_timeline_is_found_in_any_family_of_its_kind() -> None:
    reader = SmapiAlone(LAST_S)
    window = reader.window(Timeline("n1", ("lcpu",), ("monitor", "smapi")), None, None, limit=3)
    assert window.source == "smapi" and len(window.spans) == 3
