"""Kenning as a user installs it: the wheel built from this checkout, in a scratch venv.

Tests that run from the source tree cannot see what packaging leaves out (the viewer's
favicon.svg was missing from package data, a 404 only an installed copy shows). ``install``
builds the wheel offline (``--no-build-isolation``: setuptools and wheel come with the dev
extras) from a copy of the package, creates a venv without pip, installs the wheel into it with
the dev venv's pip, and makes the dependencies (starlette, uvicorn, ...) visible through one
``.pth`` line pointing at the dev venv's site-packages. A ``.pth`` line adds a directory but
does not run the ``.pth`` files inside it, so the checkout's editable install stays out: the
scratch interpreter imports ``kenning`` from the wheel only (``check`` proves it). ~4 s.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def build(out: Path) -> Path:
    """The wheel of this checkout (built from a copy, so the tree gets no build/ or egg-info)."""
    src = out / "src"
    shutil.copytree(REPO / "kenning", src / "kenning", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, src / name)
    dist = out / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(dist),
                    str(src)], check=True, capture_output=True, timeout=300)
    (wheel,) = dist.glob("kenning-*.whl")
    return wheel


def install(root: Path) -> Path:
    """A scratch venv under ``root`` with the wheel installed; returns its python."""
    root.mkdir(parents=True, exist_ok=True)
    wheel = build(root)
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps",
                    "--no-index", str(wheel)], check=True, capture_output=True, timeout=300)
    site = subprocess.run([str(python), "-I", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    (Path(site) / "kenning-test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    check(python, venv)
    return python


def check(python: Path, venv: Path) -> None:
    """The scratch interpreter imports kenning from the wheel, not from this checkout."""
    where = subprocess.run([str(python), "-I", "-c", "import kenning, starlette; print(kenning.__file__)"],
                           check=True, capture_output=True, text=True, cwd=str(venv)).stdout.strip()
    assert where.startswith(str(venv)) and not where.startswith(str(REPO)), where


def package_dir(python: Path) -> Path:
    out = subprocess.run([str(python), "-I", "-c", "import kenning, os; print(os.path.dirname(kenning.__file__))"],
                         check=True, capture_output=True, text=True).stdout.strip()
    return Path(out)
