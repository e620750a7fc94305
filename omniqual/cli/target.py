"""``omniqual target ...``: launch, inspect and stop qualification targets from launch recipes.

Exit codes: 0 ok; 2 bad recipe, unknown name, port taken or target already running; 3 the server
did not come up (rejected flag, death during start, readiness timeout) or the embedded
environment could not be prepared.
"""

import shlex
import time
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.table import Table

from omniqual.deploy.launcher import LaunchError, launch, stop
from omniqual.deploy.readiness import probe
from omniqual.deploy.state import TargetState, list_states, omniqual_home, read_state
from omniqual.domain.recipe import Expectation, LaunchRecipe, RecipeKind, RecipeOverrideError
from omniqual.specs.recipes import LoadedRecipe, RecipeBook, RecipeNotFound, load_recipes
from omniqual.specs.source import SpecError

target_app = typer.Typer(
    name="target",
    help="Launch, inspect and stop qualification targets (launch recipes under runners/).",
    no_args_is_help=True,
)
out = Console()
err = Console(stderr=True)

RunnersOption = Annotated[
    Path | None,
    typer.Option("--runners", help="Recipe directory (default $OMNIQUAL_RUNNERS or ./runners)."),
]


def _fail(message: str, code: int) -> NoReturn:
    err.print(message, markup=False, highlight=False, soft_wrap=True)
    raise typer.Exit(code)


def _book(runners: Path | None) -> RecipeBook:
    try:
        return load_recipes(runners)
    except SpecError as exc:
        _fail(str(exc), 2)


def _recipe(book: RecipeBook, name: str) -> LoadedRecipe:
    try:
        return book[name]
    except RecipeNotFound as exc:
        _fail(str(exc), 2)


def checkpoints_dir() -> Path:
    return omniqual_home() / "checkpoints"


def _build(pipeline: str, *, force: bool = False) -> Path:
    try:
        from omniqual.deploy.embedded import catalog
    except ImportError as exc:
        _fail(f"the embedded target is not available here ({exc})", 3)
    if pipeline not in catalog.PIPELINES:
        known = ", ".join(sorted(catalog.PIPELINES))
        _fail(f"unknown bundled pipeline {pipeline!r} (known: {known})", 2)
    try:
        built = catalog.build_checkpoint(pipeline, checkpoints_dir(), force=force)
    except Exception as exc:  # a builder failure is an environment problem, reported in one line
        _fail(f"building {pipeline} failed: {type(exc).__name__}: {exc}", 3)
    path: Path = built.path
    state = "rebuilt" if built.rebuilt else "up to date"
    out.print(f"checkpoint {pipeline}: {path} ({state})")
    return path


@target_app.command("list")
def list_recipes(runners: RunnersOption = None) -> None:
    """List the launch recipes."""
    book = _book(runners)
    table = Table()
    table.add_column("id", no_wrap=True)
    table.add_column("kind")
    table.add_column("expect")
    table.add_column("pipeline / model / url", overflow="fold")
    table.add_column("description", ratio=1)
    for entry in book.entries:
        r = entry.recipe
        what = r.pipeline or r.model or r.url or ""
        table.add_row(r.id, r.kind.value, r.expect.value, what, r.description)
    out.print(table)


def _print_failure(recipe: LaunchRecipe, exc: LaunchError) -> None:
    err.print(f"[bold red]{exc}[/]")
    if exc.command:
        err.print(
            "command: " + shlex.join(exc.command), markup=False, highlight=False, soft_wrap=True
        )
    if exc.log_tail:
        err.print(f"last {len(exc.log_tail)} log lines ({exc.log_path}):", markup=False,
                  soft_wrap=True)  # fmt: skip
        for line in exc.log_tail:
            err.print("  " + line, markup=False, highlight=False, soft_wrap=True)
    if recipe.expect is Expectation.REJECTS:
        err.print(f"(recipe {recipe.id} expects this rejection: {recipe.expected_error})",
                  markup=False, soft_wrap=True)  # fmt: skip


@target_app.command("up")
def up(
    name: Annotated[str, typer.Argument(help="Recipe id.")],
    port: Annotated[int | None, typer.Option(help="Port (default: a free one).")] = None,
    overrides: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override: flags.X=v, env.X=v, readiness.timeout_s=v, ..."),
    ] = None,
    runners: RunnersOption = None,
) -> None:
    """Start a recipe's server and leave it running (stop it with `target down`)."""
    entry = _recipe(_book(runners), name)
    try:
        recipe = entry.recipe.with_overrides(overrides or [])
    except RecipeOverrideError as exc:
        _fail(str(exc), 2)
    if recipe.kind is RecipeKind.URL:
        assert recipe.url is not None
        status = probe(recipe.url.rstrip("/") + recipe.readiness.path, recipe.readiness.timeout_s)
        if status != 200:
            _fail(f"{recipe.id}: {recipe.url} is not healthy (status {status})", 3)
        out.print(f"{recipe.id}: existing deployment at {recipe.url} is healthy; nothing to launch")
        return
    model = None
    if recipe.kind is RecipeKind.EMBEDDED:
        model = str(_build(recipe.pipeline or ""))
    out.print(f"starting {recipe.id} ...")
    try:
        target = launch(
            recipe, name=recipe.id, model=model, port=port, recipe_dir=entry.directory,
            persist=True,
        )  # fmt: skip
    except LaunchError as exc:
        if exc.reason in ("port-in-use", "already-running"):
            _fail(str(exc), 2)
        _print_failure(recipe, exc)
        raise typer.Exit(3) from None
    except ValueError as exc:
        _fail(f"{recipe.id}: {exc}", 2)
    out.print(
        f"[green]{target.name}[/] ready at {target.url} in {target.time_to_ready_s:.1f}s"
        f" (pid {target.pid}, startup RSS {target.startup_rss_bytes / 2**20:.0f} MiB)"
    )
    out.print(f"log: {target.log_path}", markup=False, highlight=False, soft_wrap=True)
    if recipe.expect is Expectation.REJECTS:
        err.print(f"warning: recipe {recipe.id} expects a startup rejection, but it served")


def _uptime(state: TargetState) -> str:
    seconds = max(0, int(time.time() - state.started_at.timestamp()))
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m{seconds % 60:02d}s"


@target_app.command("status")
def status() -> None:
    """Show targets started by omniqual (state under $OMNIQUAL_HOME/targets)."""
    states = list_states()
    if not states:
        out.print("no targets running")
        return
    table = Table()
    # URLs and log paths are for copying: fold them, never cut them short.
    for column in ("name", "recipe", "pid", "url", "state", "health", "up", "log"):
        table.add_column(column, overflow="fold", no_wrap=column in ("pid", "health"))
    for state in states:
        alive = state.alive()
        code = probe(state.url + "/health", 2.0) if alive else None
        health = "-" if code is None else str(code)
        table.add_row(
            state.name, state.recipe_id, str(state.pid), state.url,
            "running" if alive else "[red]gone (stale record)[/]", health, _uptime(state),
            state.log_path,
        )  # fmt: skip
    out.print(table)


@target_app.command("down")
def down(
    name: Annotated[str | None, typer.Argument(help="Target name (default: all).")] = None,
) -> None:
    """Stop a target (or all): SIGTERM to its process group, SIGKILL after the grace period."""
    if name is not None:
        state = read_state(name)
        if state is None:
            known = ", ".join(s.name for s in list_states()) or "none running"
            _fail(f"no target named {name!r} ({known})", 2)
        states = [state]
    else:
        states = list_states()
        if not states:
            out.print("no targets running")
    for state in states:
        was_alive = state.alive()
        killed = stop(state)
        how = "killed after grace" if killed else "stopped" if was_alive else "stale record removed"
        out.print(f"{state.name}: {how}")


@target_app.command("build")
def build(
    names: Annotated[
        list[str] | None, typer.Argument(help="Bundled pipelines or embedded recipe ids.")
    ] = None,
    force: Annotated[bool, typer.Option(help="Rebuild even when up to date.")] = False,
    runners: RunnersOption = None,
) -> None:
    """Build bundled tiny checkpoints into $OMNIQUAL_HOME/checkpoints."""
    if not names:
        try:
            from omniqual.deploy.embedded import catalog
        except ImportError as exc:
            _fail(f"the embedded target is not available here ({exc})", 3)
        names = sorted(catalog.PIPELINES)
    try:
        book: RecipeBook | None = load_recipes(runners)
    except SpecError:
        book = None  # plain pipeline names still work without a readable runners tree
    for name in names:
        pipeline = name
        if book is not None and name in book:
            pipeline = book.find(name).pipeline or name
        _build(pipeline, force=force)


@target_app.command("fix-env")
def fix_env() -> None:
    """Apply the embedded target's environment fixes (idempotent) and report each."""
    try:
        from omniqual.deploy.embedded.envfix import EnvFixError, apply_environment_fixes
    except ImportError as exc:
        _fail(f"the embedded target is not available here ({exc})", 3)
    try:
        fixes = apply_environment_fixes()
    except EnvFixError as exc:
        _fail(f"environment fix failed: {exc}", 3)
    table = Table("fix", "status", "detail")
    for fix in fixes:
        table.add_row(fix.name, str(fix.status), fix.detail)
    out.print(table)
