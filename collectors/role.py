"""How a field becomes interval values: the one part of the sources' vocabulary
(``collectors/model.py``) that reading the store needs, on its own so that reading (an
export) does not create the samples' classes."""

from __future__ import annotations

from enum import Enum


class Role(Enum):
    """How a field is turned into interval values."""

    COUNTER = "counter"  # cumulative integer; the interval keeps its delta
    GAUGE = "gauge"  # sampled value; the interval keeps average and maximum
