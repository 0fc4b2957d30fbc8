"""esatui's recorded intervals as Prometheus metrics (``--listen``, ``--textfile``).

``catalog.py`` names every metric from the collectors' kind declarations (pure data, also
what ``esatui metrics`` prints as docs/METRICS.md); ``exporter.py`` keeps the cumulative
totals the recorder's committed intervals add up to, off the recorder's thread, with the
few counters ``derived.py`` computes from an interval's fields (ESACPUU's steal);
``serve.py`` starts the HTTP endpoint and writes the textfile; ``doc.py`` renders
docs/METRICS.md; ``prometheus_reader.py`` reads the series back as the screens' Reader
(``--prometheus URL``). The commands import this package only when asked for.
"""
