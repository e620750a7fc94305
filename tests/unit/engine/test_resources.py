"""Sizing `--jobs` from the host, what each launch group takes, and handing devices out."""

from pathlib import Path

import pytest

from omniqual.domain.recipe import LaunchRecipe
from omniqual.domain.run import GpuInfo
from omniqual.engine.run import resources
from omniqual.engine.run.plan import launch_groups, recipe_serve_config
from omniqual.engine.run.resources import (
    DEFAULT_CORES,
    Host,
    Ledger,
    Need,
    auto_jobs,
    group_need,
    parse_jobs,
)
from omniqual.specs.recipes import LoadedRecipe

EIGHT_GPUS = Host(cores=64, devices=tuple(str(i) for i in range(8)), pci_order=True)
TWO_CORES = Host(cores=2)


def _recipe(recipe_id: str = "r", **fields: object) -> LaunchRecipe:
    return LaunchRecipe.model_validate({
        "id": recipe_id, "description": "d", "kind": "command", "model": "m",
        "command": ["serve", "{model}", "--port", "{port}"], **fields,
    })  # fmt: skip


def test_jobs_is_auto_or_a_whole_number_of_at_least_one() -> None:
    assert parse_jobs("auto") == "auto" and parse_jobs(" AUTO ") == "auto"
    assert parse_jobs("3") == 3
    for bad in ("0", "-2", "two", "1.5", ""):
        with pytest.raises(ValueError, match="--jobs takes"):
            parse_jobs(bad)


def test_auto_on_a_two_core_host_picks_one() -> None:
    need = group_need([_recipe()], TWO_CORES)
    assert need == Need(cores=DEFAULT_CORES)
    assert auto_jobs(TWO_CORES, [need, need, need]) == 1


def test_auto_on_an_eight_gpu_host_with_two_device_recipes_picks_four() -> None:
    needs = [group_need([_recipe(f"r{i}", devices=2)], EIGHT_GPUS) for i in range(6)]
    assert needs[0] == Need(devices=2)
    assert auto_jobs(EIGHT_GPUS, needs) == 4


def test_auto_counts_cores_on_a_cpu_host_and_the_smallest_group() -> None:
    host = Host(cores=16)
    assert auto_jobs(host, [group_need([_recipe()], host)]) == 8
    assert auto_jobs(host, [Need(cores=8), Need(cores=4)]) == 4
    assert auto_jobs(host, [Need()]) == 8  # URL groups only: a job per default server's cores


def test_a_recipe_that_declares_no_devices_takes_the_whole_gpu_host() -> None:
    # Written before --jobs, it may shard over every device: it never shares one.
    assert group_need([_recipe()], EIGHT_GPUS) == Need(devices=8)
    assert auto_jobs(EIGHT_GPUS, [group_need([_recipe()], EIGHT_GPUS)]) == 1


def test_a_group_takes_its_largest_declaration_capped_at_the_host() -> None:
    assert group_need([_recipe("a", devices=1), _recipe("b", devices=4)], EIGHT_GPUS).devices == 4
    assert group_need([_recipe(devices=16)], EIGHT_GPUS) == Need(devices=8)
    assert group_need([_recipe(cores=6)], TWO_CORES) == Need(cores=2)
    url = LaunchRecipe(id="u", description="d", kind="url", url="http://h:1")
    assert group_need([url], EIGHT_GPUS) == Need() == group_need([url], TWO_CORES)


def test_the_ledger_hands_out_disjoint_devices_and_takes_them_back() -> None:
    ledger = Ledger(EIGHT_GPUS, jobs=8)
    first, second = ledger.take(Need(devices=2)), ledger.take(Need(devices=4))
    assert first == ("0", "1") and second == ("2", "3", "4", "5")
    assert ledger.take(Need(devices=4)) is None  # two left: it waits
    assert ledger.take(Need(devices=2)) == ("6", "7")
    ledger.give(("0", "1"), Need(devices=2))
    assert ledger.take(Need(devices=2)) == ("0", "1")


def test_the_ledger_counts_cores_and_jobs() -> None:
    ledger = Ledger(Host(cores=8), jobs=2)
    assert ledger.take(Need(cores=2)) == () and ledger.take(Need(cores=2)) == ()
    assert ledger.take(Need(cores=2)) is None  # cores are free, jobs are not
    ledger.give((), Need(cores=2))
    assert ledger.take(Need(cores=8)) is None and ledger.take(Need(cores=6)) == ()  # 6 free


def test_a_ledger_that_shares_cores_still_counts_jobs_and_devices() -> None:
    cpu = Ledger(TWO_CORES, jobs=2, share_cores=True)
    assert cpu.take(Need(cores=2)) == () and cpu.take(Need(cores=2)) == ()
    assert cpu.take(Need(cores=2)) is None  # the jobs asked for are running
    gpus = Ledger(Host(cores=8, devices=("0", "1")), jobs=4, share_cores=True)
    assert gpus.take(Need(devices=2)) == ("0", "1")
    assert gpus.take(Need(devices=1)) is None  # a device is never shared


def test_the_host_is_read_from_nvml_or_the_devices_this_process_was_given(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gpus = tuple(GpuInfo(index=i, name="g", memory_total_bytes=1) for i in range(4))
    monkeypatch.setattr(resources, "nvml_gpus", lambda: gpus)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    host = resources.host_resources()
    assert host.devices == ("0", "1", "2", "3") and host.pci_order and host.cores >= 1
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert resources.host_resources().devices == ("2", "3")
    assert not resources.host_resources().pci_order  # the given numbering is kept as it is
    monkeypatch.setattr(resources, "nvml_gpus", lambda: ())
    assert resources.host_resources().devices == ()


def test_scheduling_fields_are_not_serving_configuration(tmp_path: Path) -> None:
    plain = LoadedRecipe(_recipe("plain"), tmp_path / "plain.yaml", None)
    declared = LoadedRecipe(_recipe("declared", devices=2, cores=4), tmp_path / "d.yaml", None)
    assert recipe_serve_config(plain) == recipe_serve_config(declared)
    assert launch_groups([plain, declared]) == ((0, 1),)  # still one deployment, one launch


def test_a_url_recipe_declares_no_devices_or_cores() -> None:
    with pytest.raises(ValueError, match="occupies nothing here"):
        LaunchRecipe.model_validate(
            {"id": "u", "description": "d", "kind": "url", "url": "http://h:1", "devices": 1}
        )
    assert _recipe().with_overrides(["devices=2"]).devices == 2
