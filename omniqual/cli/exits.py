"""Exit codes and the one place user mistakes become a clear line instead of a traceback."""

import functools
import logging
from collections.abc import Callable, Sequence
from enum import IntEnum
from typing import ParamSpec, TypeVar

import typer
from rich.console import Console

from omniqual.specs.recipes import RecipeNotFound
from omniqual.specs.source import SpecError, SpecProblem

P = ParamSpec("P")
R = TypeVar("R")

err_console = Console(stderr=True, highlight=False, soft_wrap=True)
log = logging.getLogger(__name__)


class Exit(IntEnum):
    OK = 0
    FAILED = 1
    USAGE = 2
    TARGET = 3


def fail(code: Exit, message: str) -> typer.Exit:
    err_console.print(f"[bold red]error:[/] {message}", markup=True)
    return typer.Exit(int(code))


def first_of_chains(problems: Sequence[SpecProblem]) -> list[SpecProblem]:
    """``problems`` without knock-on errors: a problem reported after another one inside the
    field it names, in the same file, follows from it (pydantic adds "at least 1 item" to a list
    whose only item failed), so only the first cause of the chain is reported."""
    return [
        p
        for index, p in enumerate(problems)
        if not p.field
        or not any(q.file == p.file and q.field.startswith(f"{p.field}.") for q in problems[:index])
    ]


def _target_errors() -> tuple[type[Exception], ...]:
    # Imported lazily so that `omniqual --help` stays fast and light.
    from omniqual.client.errors import ClientError
    from omniqual.deploy.launcher import LaunchError

    return (ClientError, LaunchError)


def _store_errors() -> tuple[type[Exception], ...]:
    from omniqual.evidence.store import StoreError

    return (StoreError,)


def user_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Map omniqual's error families to exit codes with a readable message."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except SpecError as exc:
            for problem in first_of_chains(exc.problems):
                err_console.print(str(problem), markup=False)
            raise typer.Exit(int(Exit.USAGE)) from None
        except ValueError as exc:
            raise fail(Exit.USAGE, str(exc)) from None
        except RecipeNotFound as exc:  # a recipe id the user named
            raise fail(Exit.USAGE, str(exc.args[0]) if exc.args else repr(exc)) from None
        except Exception as exc:
            if isinstance(exc, _store_errors()):
                raise fail(Exit.USAGE, str(exc)) from None
            if isinstance(exc, _target_errors()):
                # Notes name what else failed beside it (other launch groups under --jobs).
                said = "\n".join([str(exc), *getattr(exc, "__notes__", ())])
                raise fail(Exit.TARGET, said) from None
            raise

    return wrapper
