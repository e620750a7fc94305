"""The hardware recipe block per row: how the row was served, how to send it a request, and the
host it ran on (the seed's hardware-recipe contract: identity, software, commands, deployment).

* The serve command exactly as launched (``Provenance.serve_argv``, secrets and prompts masked)
  and the deploy config: the config files the command names, the normalized config's hash, and
  the row's deployment axes. A config file the launch recorded (a ``deploy-config`` artifact) is
  shown, scrubbed like any record text and bounded, with a link to the artifact; one only named
  (an older run, a URL target) is named.
* One ``curl`` per task the row serves (``curl``), with a placeholder prompt.
* The target host: GPU SKU, driver, CUDA/ROCm and interconnect from the run's fingerprint when
  the target was launched on the harness host; for a URL target those are not knowable here.
"""

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import PurePath

from omniqual.domain.evidence import Artifact
from omniqual.domain.matrix import CompiledRow
from omniqual.domain.provenance import HARNESS_HOST, NOT_VISIBLE
from omniqual.domain.result import GateResult
from omniqual.domain.run import EnvironmentFingerprint
from omniqual.report.blocks import Block, Code, KeyValues
from omniqual.report.curl import base_url, task_curl
from omniqual.report.links import ARTIFACTS, EvidenceLinks
from omniqual.report.redact import REDACTED, masked_key, safe_command, safe_text

RECIPE_PREFIX = "Recipe "
"""Every block of a row's recipe is titled ``Recipe #n…`` (a PR comment may keep only some)."""
GIB = 1024**3
UNKNOWN = "unknown (not recorded)"
NOT_KNOWABLE = "not knowable on this host (the target was given by URL)"
CONFIG_FLAGS = ("--deploy-config", "--stage-configs-path", "--strategy-config")
DEPLOY_AXES = (
    "execution", "attention_backend", "packed_layout", "cache_policy", "quantization", "offload",
    "topology", "dtype", "output_transport",
)  # fmt: skip


DEPLOY_CONFIG_ROLE = "deploy-config"
"""The role of a config file a launch recorded (``omniqual.engine.targets.targets``)."""
CONFIG_LINES = 400
"""The most lines of one config file a report shows (HTML); the artifact holds the rest."""
CONFIG_PREVIEW_LINES = 60
"""The lines of one config file Markdown shows (a PR comment stays short)."""
_YAML_KEY = re.compile(r"^(?P<head>\s*(?:-\s+)?[\"']?(?P<key>[A-Za-z_][\w.-]*)[\"']?\s*:)\s*\S")


def _config_files(argv: Sequence[str]) -> list[tuple[str, str]]:
    """(flag, value as given) for every config file the argv names."""
    found = []
    for i, arg in enumerate(argv):
        name, eq, value = arg.partition("=")
        if name in CONFIG_FLAGS:
            given = value if eq else (argv[i + 1] if i + 1 < len(argv) else "")
            found.append((name, given))
    return found


def _config_text(data: bytes) -> str:
    """A config file as a report may show it: secrets and prompt-like keys masked, base64 runs
    and over-long lines cut, at most :data:`CONFIG_LINES` lines."""
    lines = data.decode("utf-8", errors="replace").splitlines()
    shown = []
    for line in lines[:CONFIG_LINES]:
        key = _YAML_KEY.match(line)
        if key and masked_key(key.group("key")):
            shown.append(f"{key.group('head')} {REDACTED}")
        else:
            shown.append(safe_text(line))
    return "\n".join(shown)


def _read_artifact(links: EvidenceLinks, run_id: str, artifact: Artifact) -> bytes | None:
    """The artifact's bytes when its run directory is known and the file is intact."""
    run_dir = links.run_dirs.get(run_id)
    if run_dir is None:
        return None
    try:
        data = (run_dir / ARTIFACTS / artifact.sha256).read_bytes()
    except OSError:
        return None
    return data if hashlib.sha256(data).hexdigest() == artifact.sha256 else None


def _config_items_and_blocks(
    label: str, launch: GateResult | None, links: EvidenceLinks
) -> tuple[list[str], list[Block]]:
    """What the recipe says of each named config file, and a code block per recorded one."""
    if launch is None:
        return [], []
    recorded = {a.name: a for a in launch.artifacts if a.role == DEPLOY_CONFIG_ROLE}
    items: list[str] = []
    blocks: list[Block] = []
    for flag, given in _config_files(launch.provenance.serve_argv):
        named = f"{flag} {safe_text(given)}"
        artifact = recorded.get(PurePath(given).name) if given else None
        if artifact is None:
            items.append(named)  # named by the command, its content not recorded by the run
            continue
        data = _read_artifact(links, launch.run_id, artifact)
        if data is None:
            items.append(f"{named} (recorded as artifact {artifact.sha256[:12]}…, not found in "
                         "the evidence directories)")  # fmt: skip
            continue
        items.append(f"{named} (recorded, sha256 {artifact.sha256[:12]}…, shown below)")
        text = _config_text(data)
        total = len(data.decode("utf-8", errors="replace").splitlines())
        cut = total > CONFIG_LINES
        note = f"The file has {total} lines; a report shows at most {CONFIG_LINES}." if cut else ""
        yaml = artifact.media_type == "application/yaml"
        blocks.append(Code(
            f"{RECIPE_PREFIX}{label}: deploy config {flag} {safe_text(artifact.name)}", text,
            language="yaml" if yaml else "text", link=links.artifact(launch.run_id,
            artifact.sha256), note=note, folded=True, preview_lines=CONFIG_PREVIEW_LINES,
        ))  # fmt: skip
    return items, blocks


def _accelerator_stack(env: EnvironmentFingerprint) -> str:
    """CUDA/ROCm as the installed torch build says it (``2.5.1+cu124``, ``+rocm6.2``, ``+cpu``)."""
    torch = env.packages.get("torch", "")
    build = torch.partition("+")[2]
    if build.startswith("cu") and build[2:].isdigit():
        digits = build[2:]
        return f"CUDA {digits[:-1]}.{digits[-1]} (torch {torch})"
    if build.startswith("rocm"):
        return f"ROCm {build[4:]} (torch {torch})"
    if build == "cpu":
        return f"none: CPU build of torch ({torch})"
    for name in ("nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime-cu11", "rocm"):
        if name in env.packages:
            return f"{name} {env.packages[name]}"
    return f"{UNKNOWN}" + (f" (torch {torch} names no build)" if torch else "")


def host_items(
    target_host: str | None, env: EnvironmentFingerprint | None
) -> list[tuple[str, str]]:
    """The target host's identity and software, as far as the records know them."""
    if target_host == NOT_VISIBLE:
        return [("machine", NOT_KNOWABLE), ("gpu", NOT_KNOWABLE), ("driver", NOT_KNOWABLE),
                ("cuda / rocm", NOT_KNOWABLE), ("interconnect", NOT_KNOWABLE)]  # fmt: skip
    if env is None:
        return [("machine", UNKNOWN + ": no run fingerprint for this result")]
    skus = Counter(f"{g.name} {g.memory_total_bytes / GIB:.0f} GiB" for g in env.gpus)
    gpus = "; ".join(f"{n} x {sku}" for sku, n in skus.items())
    drivers = sorted({g.driver for g in env.gpus if g.driver})
    where = "the harness host" if target_host == HARNESS_HOST else "the harness host (assumed)"
    return [
        ("machine", f"{where}: {env.machine}, {env.cpu_model} ({env.cpu_count} logical), "
                 f"{env.memory_total_bytes / GIB:.0f} GiB, {env.os} {env.kernel}"
                 + (f"; bf16 {env.cpu_numerics.bf16}" if env.cpu_numerics else "")),
        ("gpu", gpus or "none (no GPU on this host)"),
        ("driver", ", ".join(drivers) if drivers else
         ("none" if not env.gpus else UNKNOWN)),
        ("cuda / rocm", _accelerator_stack(env)),
        ("interconnect", "none (one device or no GPU)" if len(env.gpus) <= 1 else
         "not knowable from the fingerprint (it records no NVLink/xGMI topology)"),
        ("python / vllm / vllm-omni", " / ".join(
            [env.python, env.packages.get("vllm", "—"), env.packages.get("vllm-omni", "—")])),
    ]  # fmt: skip


def _latest_launch(results: Iterable[GateResult]) -> GateResult | None:
    launched = [r for r in results if r.provenance.serve_argv]
    return max(launched, key=lambda r: (r.finished_at, r.result_id)) if launched else None


def recipe_blocks(
    row: CompiledRow,
    label: str,
    results: Sequence[GateResult],
    environments: Mapping[str, EnvironmentFingerprint],
    links: EvidenceLinks,
) -> tuple[Block, ...]:
    """Serve command, deploy config, curls and host for one row (from its latest launch)."""
    launch = _latest_launch(results)
    any_result = launch or (max(results, key=lambda r: r.finished_at) if results else None)
    argv = launch.provenance.serve_argv if launch else ()
    target = any_result.target if any_result else ""
    prov = any_result.provenance if any_result else None
    model = (prov.model if prov and prov.model else "") or row.axes.get("model", "")
    files, config_blocks = _config_items_and_blocks(label, launch, links)
    deploy = [
        ("serve command", "below, exactly as launched" if argv else
         "not recorded: no result on this row launched the server (a URL target, or no run)"),
        ("config files", "; ".join(files) if files else "none: the command carries every setting"),
        ("normalized serve config sha256",
         (prov.serve_config_sha256 or UNKNOWN) if prov else UNKNOWN),
        ("deployment axes", "; ".join(f"{a}={row.axes[a]}" for a in DEPLOY_AXES if a in row.axes)),
        ("vllm-omni", (prov.vllm_omni_version or UNKNOWN) + (
            f" @ {prov.vllm_omni_commit}" if prov and prov.vllm_omni_commit else "")
         if prov else UNKNOWN),
        ("from result", f"{any_result.run_id}/{any_result.result_id}" if any_result else "none"),
    ]  # fmt: skip
    env = environments.get(any_result.run_id) if any_result else None
    host = host_items(prov.target_host if prov else None, env)
    api_mode = row.axes.get("api_mode", "")
    task = row.axes.get("task", "?")
    curl = task_curl(api_mode, task, safe_text(model), base_url(argv, target))
    request = (
        f"below: {task} via {api_mode}, placeholder prompt"
        if curl is not None
        else f"no curl: api_mode {safe_text(api_mode)!r} has no HTTP request omniqual knows"
    )
    items = (*deploy, ("request", request), *((f"host: {k}", v) for k, v in host))
    href = links.result(any_result.run_id, any_result.result_id) if any_result else ""
    hrefs = tuple(href if key == "from result" else "" for key, _ in items)
    blocks: list[Block] = [KeyValues(f"{RECIPE_PREFIX}{label}", items, links=hrefs)]
    if argv:
        blocks.append(Code(f"{RECIPE_PREFIX}{label}: serve command", safe_command(argv)))
    blocks += config_blocks
    if curl is not None:
        blocks.append(Code(f"{RECIPE_PREFIX}{label}: request ({task} via {api_mode})", curl))
    return tuple(blocks)
