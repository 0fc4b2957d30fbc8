"""Screen definitions and their Textual views (``esatui.screens``)."""
