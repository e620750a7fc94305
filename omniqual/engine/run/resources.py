"""What a host offers a campaign run with ``--jobs``, and what each launch group takes of it.

Pure values and arithmetic, apart from :func:`host_resources`, which looks once. A host with
GPUs is shared out by devices: a launch group takes its recipes' ``devices`` (unset: every
device, so a recipe written without it never shares a GPU it may shard over). A host without
GPUs is shared out by cores: a group takes its recipes' ``cores`` (unset: 2, one server's
engine and API processes). A group served at a URL launches nothing here and takes only a job.

``--jobs auto`` never asks for more than the host holds. A number asks for that many groups at
once: devices are still never shared, but on a host without GPUs the groups then share its cores
(start-ups and output comparisons overlap, which is what a small host gains from it; a gate that
measures time or memory still waits for the host to itself, see ``host_share``).
"""

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from omniqual.deploy.fingerprint import nvml_gpus
from omniqual.domain.recipe import LaunchRecipe, RecipeKind

DEFAULT_CORES = 2
"""What one CPU server keeps busy: its engine process and its API process."""

Jobs = int | Literal["auto"]


@dataclass(frozen=True, slots=True)
class Host:
    cores: int
    devices: tuple[str, ...] = ()
    """GPU ids as ``CUDA_VISIBLE_DEVICES`` takes them; empty on a host without GPUs."""
    pci_order: bool = False
    """The ids are NVML's indices, so a launch numbers devices in PCI bus order as NVML does
    (CUDA's default order is fastest first)."""


@dataclass(frozen=True, slots=True)
class Need:
    devices: int = 0
    cores: int = 0


def parse_jobs(text: str) -> Jobs:
    """``auto`` or a whole number of at least 1 (``--jobs``)."""
    value = text.strip().lower()
    if value == "auto":
        return "auto"
    try:
        count = int(value)
    except ValueError:
        count = 0
    if count < 1:
        raise ValueError(f"--jobs takes `auto` or a whole number of at least 1, not {text!r}")
    return count


def host_resources() -> Host:
    """This host: the cores this process may run on, and its GPUs (NVML's, or the ones
    ``CUDA_VISIBLE_DEVICES`` already confines this process to)."""
    affinity = getattr(os, "sched_getaffinity", None)
    cores = len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)
    gpus = nvml_gpus()
    if not gpus:
        return Host(cores)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:  # confined already: the groups share out what this process was given
        return Host(cores, tuple(t.strip() for t in visible.split(",") if t.strip()))
    return Host(cores, tuple(str(gpu.index) for gpu in gpus), pci_order=True)


def group_need(recipes: Sequence[LaunchRecipe], host: Host) -> Need:
    """What one launch group (recipes one launch serves) occupies while it runs: the largest
    declaration among its recipes, at most the whole host (a group must be able to run)."""
    launched = [r for r in recipes if r.kind is not RecipeKind.URL]
    if not launched:
        return Need()
    if host.devices:
        devices = [r.devices for r in launched if r.devices is not None]
        return Need(devices=min(max(devices, default=len(host.devices)), len(host.devices)))
    cores = [r.cores for r in launched if r.cores is not None]
    return Need(cores=max(1, min(max(cores, default=DEFAULT_CORES), host.cores)))


def auto_jobs(host: Host, needs: Sequence[Need]) -> int:
    """How many launch groups ``--jobs auto`` runs at once: as many of the smallest as the host
    holds, at least one. Each group still starts only when what it needs is free."""
    if host.devices:
        capacity, sizes, fallback = len(host.devices), [n.devices for n in needs], 1
    else:
        capacity, sizes, fallback = host.cores, [n.cores for n in needs], DEFAULT_CORES
    smallest = min((size for size in sizes if size > 0), default=fallback)
    return max(1, capacity // smallest)


@dataclass(slots=True)
class Ledger:
    """The host's free devices and cores and how many groups run; groups take and give back.
    Devices are handed out lowest id first, so an assignment is the same from run to run."""

    host: Host
    jobs: int
    share_cores: bool = False
    """The job count was asked for on a host without GPUs: groups share its cores."""
    running: int = 0
    free_cores: int = field(init=False)
    free_devices: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.free_cores = self.host.cores
        self.free_devices = list(self.host.devices)

    def take(self, need: Need) -> tuple[str, ...] | None:
        """The devices given to a group that needs ``need``, or None while it does not fit."""
        fits = need.devices <= len(self.free_devices) and (
            self.share_cores or need.cores <= self.free_cores
        )
        if self.running >= self.jobs or not fits:
            return None
        taken = tuple(self.free_devices[: need.devices])
        del self.free_devices[: need.devices]
        self.free_cores -= need.cores
        self.running += 1
        return taken

    def give(self, devices: tuple[str, ...], need: Need) -> None:
        free = {*self.free_devices, *devices}
        self.free_devices = [d for d in self.host.devices if d in free]
        self.free_cores += need.cores
        self.running -= 1
