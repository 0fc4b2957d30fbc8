"""The Prometheus reader's entities from several families: a counter labelled with what
identifies an APQN alone, its state from the info family, as the database gives both; and
a kind's timeline from any of its families."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest

from esatui.db.reader import Timeline
from esatui.db.records import Value
from esatui.exposition.prometheus_reader import _entity
from tests.core.test_rollups import set_zone
from tests.exposition.test_prometheus_calendar import Ranged, utc_s

QUEUE = {"card": "01", "domain": "0010", "type": "CEX7A"}
CHANGE_S = utc_s("2026-03-10", 12)  # the interval ending here is the first offline one
HOUR_US = 3_600_000_000

Series = tuple[dict[str, str], Callable[[float], bool]]  # labels, whether it has a sample


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    set_zone(monkeypatch, "UTC")


def online(t: float) -> bool:
    return t <= CHANGE_S  # the exporter moves the info series as it adds the interval


def offline(t: float) -> bool:
    return t > CHANGE_S


def info(state: str) -> dict[str, str]:
    return {**QUEUE, "mode": "ACCEL", "online": "1" if state == "online" else "0", "state": state}


class Stateful(Ranged):
    """A server with one APQN that counts a request a second and goes offline at
    CHANGE_S: its counter one series, its info series moved to the new state."""

    def __init__(self) -> None:
        super().__init__(CHANGE_S + 4 * 3600)

    def _series(self, query: str, step: float) -> list[Series]:
        if "esatui_zcrypt_requests_total" in query:
            return [(QUEUE, lambda t: True)]
        if "esatui_zcrypt_info" not in query:
            return []
        if "last_over_time" in query:  # a sample in (t - step, t]
            return [
                (info("online"), lambda t: t - step < CHANGE_S),
                (info("offline"), lambda t: t > CHANGE_S),
            ]
        return [(info("online"), online), (info("offline"), offline)]

    def _get(self, path: str, params: Mapping[str, str]) -> object:
        query = params["query"]
        if query.startswith("count by (source)"):
            return super()._get(path, params)
        start, end, step = (float(params[p]) for p in ("start", "end", "step"))
        result = []
        for labels, present in self._series(query, step):
            points, k = [], 0
            while (t := start + k * step) <= end and t <= self.last_s:
                if present(t):
                    points.append([t, str(t)])
                k += 1
            if points:
                result.append({"metric": labels, "values": points})
        return {"resultType": "matrix", "result": result}


def states(length_us: int | None) -> dict[float, tuple[dict[str, str], Value]]:
    """Each span's APQN: its attributes and its requests."""
    reader = Stateful()
    timeline = Timeline("n1", ("zcrypt_queue",), (), length_us)
    after, until = CHANGE_S - 3 * 3600, CHANGE_S + 2 * 3600
    window = reader.window(timeline, int(after * 1e6), int(until * 1e6))
    out: dict[float, tuple[dict[str, str], Value]] = {}
    for slot in reader.slots(window, ("zcrypt_queue",)):
        queues = slot.get("zcrypt_queue")
        assert queues is not None
        row = queues.rows["01.0010"]
        out[slot.end_us / 1e6] = (dict(row.attrs), row.values.get("request_count"))
    return out


def test_each_interval_has_its_state_and_its_requests() -> None:
    spans = states(None)
    assert spans[CHANGE_S - 60] == (info("online"), 60)
    assert spans[CHANGE_S] == (info("offline"), 60)
    assert all(requests == 60 for _, requests in spans.values())


def test_a_bucket_has_the_state_of_its_end() -> None:
    """As the database gives a bucket the attributes of its newest row."""
    spans = states(HOUR_US)
    assert spans[CHANGE_S - 3600] == (info("online"), 3600)
    assert spans[CHANGE_S] == (info("offline"), 3600)  # its newest interval is offline
    assert spans[CHANGE_S + 3600] == (info("offline"), 3600)


def test_an_entity_s_attributes_come_from_whichever_family_carries_them() -> None:
    assert _entity("zcrypt_queue", {**QUEUE, "node": "n1"}) == ("01.0010", QUEUE)
    assert _entity("zcrypt_queue", info("offline")) == ("01.0010", info("offline"))


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
    reader = SmapiAlone(CHANGE_S)
    window = reader.window(Timeline("n1", ("lcpu",), ("monitor", "smapi")), None, None, limit=3)
    assert window.source == "smapi" and len(window.spans) == 3
