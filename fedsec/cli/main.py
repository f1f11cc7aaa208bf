"""Entry point of the ``fedsec`` command: parses arguments, maps errors to exit codes.

Exit codes: 0 success, 1 failure (a corrupt transcript, a failed run),
2 usage error (bad arguments, unknown names, invalid parameters), 130 interrupted (Ctrl-C),
143 terminated (SIGTERM; :mod:`fedsec.cli.signals`). Errors are printed as one line (a
scenario's problems one a line); ``--debug`` shows the traceback.

Each subcommand module builds its parser from the standard library and fedsec's light modules
alone, and its handler imports what it uses when it runs: ``fedsec --help`` starts without
numpy, and ``fedsec run`` imports the one protocol it runs (tests/core/test_builtin_index.py;
tests/benchmarks/startup.py times it).
"""

from __future__ import annotations

import argparse
import functools
import signal
import sys
import traceback
import warnings
from collections.abc import Callable, Sequence
from typing import TextIO

from fedsec import __version__
from fedsec.cli import attack_cmd, audit_cmd, describe_cmd, inspect_cmd, list_cmd, run_cmd
from fedsec.cli.signals import Terminated, exit_code, stopping_on_signals
from fedsec.errors import FedsecError, UnknownNameError, ValidationError

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="fedsec",
        description="Audit the privacy of federated-learning protocols.",
    )
    parser.add_argument("--version", action="version", version=f"fedsec {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in (run_cmd, inspect_cmd, attack_cmd, audit_cmd, list_cmd, describe_cmd):
        module.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    args = parser.parse_args(args_list)
    with stopping_on_signals() as received, warnings.catch_warnings():
        default_show = warnings.showwarning
        warnings.showwarning = functools.partial(_show_warning, default_show)
        code = _handle(args)
    if received and code < 128:  # a library swallowed the signal: the command still stopped
        print(f"fedsec: {_stopped(received[0])}", file=sys.stderr)
        return exit_code(received[0])
    return code


def _handle(args: argparse.Namespace) -> int:
    try:
        return int(args.handler(args) or EXIT_OK)
    except (ValidationError, UnknownNameError) as error:
        return _fail(args, error, EXIT_USAGE)
    except FedsecError as error:
        return _fail(args, error, EXIT_FAILURE)
    except BrokenPipeError:  # the reader went away (for example `| head`): nothing to report
        sys.stderr.close()
        return EXIT_OK
    except KeyboardInterrupt:
        print(f"fedsec: {_stopped(signal.SIGINT)}", file=sys.stderr)
        return exit_code(signal.SIGINT)
    except Terminated as stop:
        print(f"fedsec: {_stopped(stop.signum)}", file=sys.stderr)
        return exit_code(stop.signum)
    except Exception as error:  # an unexpected failure still gets one readable line
        return _fail(args, error, EXIT_FAILURE, prefix=f"internal error ({type(error).__name__}): ")


def _show_warning(default: Callable[..., None], message: Warning | str,
                  category: type[Warning], filename: str, lineno: int,
                  file: TextIO | None = None, line: str | None = None) -> None:
    """fedsec's own warnings as one line (``fedsec: warning: ...``); others as Python shows
    them."""
    if category.__module__.split(".")[0] != "fedsec":
        default(message, category, filename, lineno, file, line)
        return
    print(f"fedsec: warning: {message}", file=file or sys.stderr)


def _stopped(signum: int) -> str:
    return ("interrupted" if signum == signal.SIGINT
            else f"terminated ({signal.Signals(signum).name})")


def _fail(args: argparse.Namespace, error: BaseException, code: int, prefix: str = "") -> int:
    if getattr(args, "debug", False):
        traceback.print_exception(error)
    if isinstance(getattr(error, "problems", None), list):  # a scenario's: one a line
        head, *rest = str(error).splitlines() or [""]
        lines = [f"fedsec: error: {prefix}{' '.join(head.split())}", *rest]
        print("\n".join(lines), file=sys.stderr)
        return code
    message = " ".join(str(error).split())
    print(f"fedsec: error: {prefix}{message}", file=sys.stderr)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
