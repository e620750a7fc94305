"""SKILL G0-31: the curl the report publishes for a task that uploads a file is a multipart form
with the file as a part (``-F field=@file``), never a JSON-only request."""

import pytest

from omniqual.report.curl import task_curl


@pytest.mark.parametrize(
    ("api_mode", "task", "part"),
    [
        ("images-edits", "i2i", "image=@input.png"),
        ("videos-sync", "i2v", "input_reference=@input.png"),
        ("videos-async", "ti2v", "input_reference=@input.png"),
        ("videos-sync", "v2v", "input_reference=@input.mp4"),
    ],
)
def test_an_upload_task_is_published_as_a_multipart_curl(
    api_mode: str, task: str, part: str
) -> None:
    curl = task_curl(api_mode, task, "org/model", "http://127.0.0.1:8000")
    assert curl is not None
    assert f"-F {part}" in curl
    assert "application/json" not in curl and " -d " not in curl
