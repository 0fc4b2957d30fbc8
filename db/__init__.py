"""The SQLite store: schema, migrations, writing intervals, reading ranges (``esatui.db``)."""
