"""The example notebook runs from top to bottom (executed with nbclient when it is installed)."""

import importlib
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _need(module):
    # test-all.sh installs python/requirements-dev.txt: there a missing runner is a failure, not
    # a skip nobody reads.
    if os.environ.get("VMLAB_PYTHON_CARGO_BUILD"):
        return importlib.import_module(module)
    return pytest.importorskip(module)


def test_tour_notebook_executes():
    nbformat = _need("nbformat")
    nbclient = _need("nbclient")
    _need("ipykernel")
    nb = nbformat.read(ROOT / "examples" / "tour.ipynb", as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(ROOT / "examples")}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    text = "".join(str(o.get("data", {}).get("text/plain", "")) for o in outputs)
    assert "gain %" in text and "linux-6.8" in text
