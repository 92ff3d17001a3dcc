"""``Client.wait`` in a notebook: a real Jupyter kernel (ipykernel, run by nbclient) follows a
job a real worker runs, and its progress is one cell output updated in place, not a line per
change; the same code on a terminal draws a live line (tests/cli/test_client_jobs.py)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.api.conftest import EXAMPLE, TOKEN
from worker.loop import Worker

pytestmark = [pytest.mark.slow, pytest.mark.spark]

CELL = """
import json
from jetspark.sdk import Client

with Client({url!r}, {token!r}) as client:
    job = client.submit(json.loads(open({example!r}).read()))
    final = client.wait(job)
print("ended", final.status.value)
"""


def test_wait_shows_its_progress_as_one_cell_output_updated_in_place(
    api_url: str, worker: Worker, tmp_path: Path
) -> None:
    del worker
    code = CELL.format(url=api_url, token=TOKEN, example=str(EXAMPLE))
    notebook = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    notebook.cells.append(nbformat.v4.new_code_cell(code))  # type: ignore[no-untyped-call]
    NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    ).execute()
    outputs = notebook.cells[0].outputs
    shown = [out for out in outputs if out.output_type == "display_data"]
    printed = "".join(out.text for out in outputs if out.output_type == "stream")
    assert printed == "ended COMPLETED\n", outputs
    assert len(shown) == 1, outputs  # one output, replaced on each change
    html = shown[0].data["text/html"]
    assert "word-count" in html and "COMPLETED" in html and "✔" in html
    assert "attempt 1" in html and "items in 2 out 8" in html
