"""The command line: ``esatui [live|collect|replay|export|sim|demo|screens|sources|db]``.

Each command is a module of ``esatui.commands`` that imports only what it needs when it
runs, so ``collect`` and ``export`` start without loading Textual. Errors are one line on
stderr (a traceback only with ``--debug``); exit status 0 on success, 2 on bad arguments,
1 on anything else.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence

from esatui import __version__
from esatui.commands import COMMANDS
from esatui.commands.arguments import Parser
from esatui.commands.common import EXIT_ERROR, EXIT_OK, EXIT_USAGE, UsageError
from esatui.registry import SourceUsageError


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="esatui", description="ESAMON-style performance screens for Linux on IBM Z and z/VM."
    )
    parser.add_argument("--version", action="version", version=f"esatui {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    for name in COMMANDS:
        importlib.import_module(f"esatui.commands.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = _with_command(list(sys.argv[1:] if argv is None else argv))
    debug = "--debug" in argv
    try:
        args = parser.parse_args(argv)
        run: Callable[[argparse.Namespace], int] = args.run
        return run(args)
    except (UsageError, SourceUsageError) as exc:
        print(f"esatui: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_ERROR
    except BrokenPipeError:
        # the reader (head, less) went away: not an error, and nothing more to say
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:
        if debug:
            raise
        print(f"esatui: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_ERROR


def _with_command(argv: list[str]) -> list[str]:
    """``esatui`` and ``esatui --db X`` mean ``esatui live ...``."""
    i = 0
    while i < len(argv) and argv[i] == "--debug":
        i += 1
    if i < len(argv) and (not argv[i].startswith("-") or argv[i] in ("--version", "-h", "--help")):
        return argv  # a command (argparse names the unknown ones)
    return [*argv[:i], "live", *argv[i:]]


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " ".join(text.split())
