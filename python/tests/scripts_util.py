"""One way for the tests to import a script of scripts/ (hyphenated names, no package) as a module."""

import importlib.util
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def load_script(file_name: str):
    """scripts/FILE_NAME loaded as a module named after it (hyphens as underscores)."""
    path = SCRIPTS / file_name
    spec = importlib.util.spec_from_file_location(path.stem.replace("-", "_"), path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
