"""Layering: the store knows nothing of observers or surfaces."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import REPO


def test_the_store_imports_no_observer_module() -> None:
    code = ("import sys, pkgutil, importlib, kenning.store as s\n"
            "for m in pkgutil.iter_modules(s.__path__):\n"
            "    importlib.import_module('kenning.store.' + m.name)\n"
            "bad = sorted(m for m in sys.modules if m.startswith(('kenning.observer', 'kenning.worker',"
            " 'kenning.mcp', 'kenning.commands', 'kenning.viewer')))\n"
            "print(','.join(bad))\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "", f"the store pulls in {r.stdout.strip()}"


def test_records_are_importable_from_the_observer_interface_too() -> None:
    from kenning import records
    from kenning.observer import base

    assert base.Event is records.Event and base.ObservationDraft is records.ObservationDraft
