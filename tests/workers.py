"""Helpers shared by the tests and benches that start worker processes."""

from __future__ import annotations

import contextlib
import os
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import acesim as ace
import pytest


@contextlib.contextmanager
def worker_path() -> Iterator[None]:
    """Let spawned worker processes import this acesim: put its parent
    directory on PYTHONPATH unless it is installed in site-packages."""
    root = str(Path(ace.__file__).resolve().parents[1])
    paths = sysconfig.get_paths()
    installed = {str(Path(paths[k]).resolve()) for k in ("purelib", "platlib")}
    with pytest.MonkeyPatch.context() as mp:
        current = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        if root not in installed and root not in current:
            mp.setenv("PYTHONPATH", os.pathsep.join([root, *current]))
        yield
