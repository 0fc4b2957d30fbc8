"""The SQLite store: writing intervals (``store``), reading them (``reading``, through the
``reader`` interface and the ``navigator``), schema and migrations (``esatui.db``)."""
