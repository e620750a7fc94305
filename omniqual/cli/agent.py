"""``omniqual agent``: run beside a server so a harness on another host can observe it (and arm
faults in it); and the ``--agent`` options of ``gate run`` and ``run`` that point a harness at one.
"""

import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

import typer

from omniqual.cli.exits import Exit, fail, user_errors
from omniqual.domain.agent import is_loopback

if TYPE_CHECKING:  # the client is imported when an option needs it
    from omniqual.deploy.agent.client import AgentAccess


def agent_access(url: str | None, token_file: Path | None) -> "AgentAccess | None":
    """``--agent URL`` with its token (``--agent-token-file`` or ``OMNIQUAL_AGENT_TOKEN``)."""
    from omniqual.deploy.agent.client import AgentAccess
    from omniqual.deploy.agent.token import agent_token

    if url is None:
        if token_file is not None:
            raise ValueError("--agent-token-file goes with --agent URL")
        return None
    return AgentAccess(url, agent_token(token_file, os.environ))


def campaign_agents(values: list[str], token_file: Path | None,
                    url_targets: list[str]) -> dict[str, "AgentAccess"]:  # fmt: skip
    """``--agent RECIPE=URL`` (repeatable), or a bare ``--agent URL`` when the campaign uses
    exactly one target by URL."""
    found: dict[str, AgentAccess] = {}
    for value in values:
        recipe, sep, url = value.partition("=")
        if not sep:
            if len(url_targets) != 1:
                raise ValueError(
                    f"--agent {value}: say which target it observes, RECIPE=URL "
                    f"(targets by URL: {', '.join(url_targets) or 'none'})"
                )
            recipe, url = url_targets[0], value
        access = agent_access(url, token_file)
        assert access is not None
        found[recipe] = access
    if token_file is not None and not values:
        raise ValueError("--agent-token-file goes with --agent")
    return found


def _stop(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(0)


@user_errors
def agent_command(
    pid: int = typer.Option(..., "--pid", help="The server's process id (its tree is watched)."),
    host: str = typer.Option(
        "127.0.0.1",
        "--host",
        help="Address to listen on: loopback unless --allow-remote is given too.",
    ),
    allow_remote: bool = typer.Option(
        False,
        "--allow-remote",
        help="Allow a --host beyond loopback (plain HTTP: only on a network you trust).",
    ),
    port: int = typer.Option(0, "--port", help="Port to listen on (0: an ephemeral one)."),
    token_file: Path = typer.Option(
        None,
        "--token-file",
        help="The bearer token's file: read when it exists, else a new token is written there "
        "(0600). Default: a new token in $OMNIQUAL_HOME/agent/.",
    ),
    watch_dirs: list[Path] = typer.Option(
        [],
        "--watch-dir",
        help="A directory whose files count as the server's temp residue "
        "(repeatable). Default: the server's TMPDIR, when its environment names one.",
    ),
    fault_control: Path = typer.Option(
        None, "--fault-control", help="The fault injector's control file (OMNIQUAL_FAULT_CONTROL)."
    ),
    fault_record: Path = typer.Option(
        None, "--fault-record", help="The fault injector's record file (OMNIQUAL_FAULT_RECORD)."
    ),
    gpu: bool = typer.Option(True, "--gpu/--no-gpu", help="Read GPU memory through NVML."),
) -> None:
    """Serve the readings of a server's process tree over HTTP, token-checked (see README)."""
    import psutil

    from omniqual.deploy.agent.server import AgentServer
    from omniqual.deploy.agent.service import AgentConfig, AgentService
    from omniqual.deploy.agent.token import new_token, read_token_file, write_token_file
    from omniqual.deploy.process_tree import temp_dir_of
    from omniqual.deploy.state import omniqual_home

    if not is_loopback(host) and not allow_remote:
        # Refused before anything is made: the agent answers in plain HTTP and can arm faults,
        # so reaching it from other hosts is a choice to state, not a default to stumble into.
        raise fail(Exit.USAGE, f"--host {host!r} is not a loopback address: the agent speaks "
                   "plain HTTP and can arm faults in the server; pass --allow-remote to listen "
                   "beyond this host (on a network you trust), or keep loopback and tunnel it "
                   "(ssh -L)")  # fmt: skip
    if not psutil.pid_exists(pid):
        raise ValueError(f"--pid {pid}: no such process on this host")
    if (fault_control is None) != (fault_record is None):
        raise ValueError("--fault-control and --fault-record go together")
    if token_file is not None and token_file.exists():
        token = read_token_file(token_file)
    else:
        token = new_token()
        if token_file is None:
            (omniqual_home() / "agent").mkdir(parents=True, exist_ok=True, mode=0o700)
            token_file = omniqual_home() / "agent" / f"pid-{pid}-{os.getpid()}.token"
        write_token_file(token_file, token)
    temp = temp_dir_of(pid)
    dirs = tuple(watch_dirs) or ((temp,) if temp is not None else ())
    service = AgentService(AgentConfig(pid=pid, token=token, watch_dirs=dirs,
                                       fault_control=fault_control, fault_record=fault_record,
                                       gpu=gpu))  # fmt: skip
    try:
        server = AgentServer(service, host, port)
    except OSError as exc:  # a port in use, an address not on this host
        raise fail(Exit.USAGE, f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    signal.signal(signal.SIGTERM, _stop)
    if not is_loopback(host):
        typer.echo(f"warning: listening on {host}, beyond loopback: plain HTTP, so use it on a "
                   "network you trust (or tunnel it)", err=True)  # fmt: skip
    typer.echo(f"omniqual agent: watching pid {pid}; token in {token_file}", err=True)
    typer.echo(f"listening on {server.url}")
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
