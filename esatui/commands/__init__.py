"""The commands of ``esatui``, one module each: its arguments (``register``) and its work.

A module imports only what it needs when its command runs, so ``collect`` and ``export``
start without loading Textual or the simulator. ``esatui.cli`` builds the parser from
:data:`COMMANDS`, in this order.
"""

COMMANDS = (
    "live",
    "collect",
    "replay",
    "export",
    "compare",
    "sim",
    "demo",
    "screens",
    "metrics",
    "sources",
    "db",
    "serve",
)
