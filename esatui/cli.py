"""The command line: ``esatui [live|collect|replay|export|sim|demo|screens|sources|db]``.

Each command is a module of ``esatui.commands`` that imports only what it needs when it
runs, so ``collect`` and ``export`` start without loading Textual; a command line that names
its command builds that command's parser alone (``esatui export`` starts in a fraction of
the time the whole parser takes). Errors are one line on
stderr (a traceback only with ``--debug``); exit status 0 on success, 2 on bad arguments,
1 on anything else.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence

from esatui import __version__
from esatui.commands import COMMANDS
from esatui.commands.arguments import Parser
from esatui.commands.common import EXIT_ERROR, EXIT_OK, EXIT_USAGE, UsageError, damage_said
from esatui.commands.streams import StdoutError, drop_standard_output, take_standard_streams


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of ``command`` alone (its arguments, its help and
    its errors are the same either way)."""
    parser = Parser(
        prog="esatui", description="ESAMON-style performance screens for Linux on IBM Z and z/VM."
    )
    parser.add_argument("--version", action="version", version=f"esatui {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=Parser)
    for name in COMMANDS if command is None else (command,):
        importlib.import_module(f"esatui.commands.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:  # the program itself, not a test calling it
        take_standard_streams()
    argv = _with_command(list(sys.argv[1:] if argv is None else argv))
    parser = build_parser(_command(argv))
    debug = "--debug" in argv
    args: argparse.Namespace | None = None
    try:
        args = _parsed(parser, argv)
        run: Callable[[argparse.Namespace], int] = args.run
        code = run(args)
        sys.stdout.flush()  # a report that cannot be written fails here, not at exit
        return code
    except KeyboardInterrupt:
        return EXIT_ERROR
    except BrokenPipeError:
        # the reader (head, less) went away, of standard output or of an --output pipe
        # (/dev/stdout): not an error, and nothing more to say
        drop_standard_output()
        return EXIT_OK
    except Exception as exc:
        if isinstance(exc, StdoutError):
            drop_standard_output()
        if isinstance(exc, _usage_errors()):
            print(f"esatui: error: {_one_line(exc)}", file=sys.stderr)
            return EXIT_USAGE
        if debug:
            raise
        said = damage_said(args, exc) or _one_line(exc)
        print(f"esatui: error: {said}", file=sys.stderr)
        return EXIT_ERROR


def _parsed(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """The arguments; ``--help`` and ``--version`` print and exit here, so what they
    printed is flushed here too: standard output full or closed is then said in one line
    (exit 1), not lost at the interpreter's exit (exit 0, or 120 with a traceback)."""
    try:
        return parser.parse_args(argv)
    except SystemExit:
        sys.stdout.flush()
        raise


def _usage_errors() -> tuple[type[Exception], ...]:
    """Bad arguments: a :class:`UsageError`, or a source's options that do not fit, which
    only a loaded source registry can raise (``export`` never loads it)."""
    registry = sys.modules.get("esatui.registry")
    return (UsageError,) if registry is None else (UsageError, registry.SourceUsageError)


def _command(argv: Sequence[str]) -> str | None:
    """The command ``argv`` names (``None``: none, or one esatui does not have)."""
    words = [a for a in argv if a != "--debug"]
    return words[0] if words and words[0] in COMMANDS else None


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
