"""A row's attention backend held to what its server's log says it resolved: the shipped axis
catalogue's pattern reads vLLM-Omni 0.30's start-up line, every role must resolve to a name of the
row's value, and a log that shows none proves nothing."""

from pathlib import Path

import pytest
from pydantic import ValidationError

from omniqual.domain.axes import Axis, RowKey
from omniqual.domain.log_proof import LogProof, log_proofs
from omniqual.specs.matrix import load_catalog

ROOT = Path(__file__).resolve().parents[3]
# As vLLM-Omni 0.30 logs it on the embedded target (the worker's prefix, then the selector).
CPU_LINE = ("(DiffusionWorker pid=12484) INFO 12-05 05:51:20 [selector.py:93] Resolved diffusion "
            "attention backend 'CPU_SDPA' for role='self' via platform default")  # fmt: skip
FLASH_CROSS = CPU_LINE.replace("'CPU_SDPA' for role='self'", "'FLASH_ATTN' for role='cross'")


def _proof(backend: str = "sdpa") -> LogProof:
    catalog = load_catalog(ROOT / "matrices" / "axes.yaml")
    values = {axis.name: axis.values[0].name if axis.values else "x" for axis in catalog.axes}
    row = RowKey(tuple((name, backend if name == "attention_backend" else value)
                       for name, value in values.items()))  # fmt: skip
    (proof,) = log_proofs(catalog, row)
    return proof


def test_the_embedded_servers_cpu_sdpa_is_the_sdpa_rows_backend() -> None:
    reading = _proof().judge(f"boot\n{CPU_LINE}\nready\n")
    assert reading.reason() is None and reading.seen == {"self": "CPU_SDPA"}
    assert reading.proof.accepted == ("SDPA", "CPU_SDPA")


def test_a_role_resolved_to_another_backend_names_it() -> None:
    reading = _proof().judge(f"{CPU_LINE}\n{FLASH_CROSS}\n")
    reason = reading.reason()
    assert reason is not None and reason.startswith("attention_backend_not_served:")
    assert "FLASH_ATTN for 'cross'" in reason and "attention_backend=sdpa" in reason
    assert "CPU_SDPA" not in reason.split("resolved")[-1]  # the matching role is not blamed


def test_a_flash_row_on_a_server_that_resolved_sdpa_is_not_served() -> None:
    assert _proof("flash-attn").judge(CPU_LINE).reason() is not None


def test_a_log_without_a_resolution_proves_nothing() -> None:
    reading = _proof().judge("INFO started\nINFO ready\n")
    assert reading.reason() is None and reading.seen == {}


def test_a_value_without_served_names_and_an_axis_without_a_pattern_are_not_held() -> None:
    catalog = load_catalog(ROOT / "matrices" / "axes.yaml")
    values = {axis.name: axis.values[0].name if axis.values else "x" for axis in catalog.axes}
    linear = RowKey(tuple((k, "linear" if k == "attention_backend" else v)
                          for k, v in values.items()))  # fmt: skip
    assert log_proofs(catalog, linear) == ()


def test_a_log_pattern_needs_a_name_group() -> None:
    with pytest.raises(ValidationError, match="needs a"):
        Axis(name="a", description="d", log_pattern="Resolved '([^']+)'")
    with pytest.raises(ValidationError, match="not a regular expression"):
        Axis(name="a", description="d", log_pattern="(?P<name>")
