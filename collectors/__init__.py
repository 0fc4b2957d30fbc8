"""Sources: each reads one raw interface and returns typed samples (``esatui.collectors``)."""
