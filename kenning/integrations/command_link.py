"""The ``kenning`` command on PATH: the link ``scripts/install.sh`` makes in ``~/.local/bin``
(as pipx does), which ``kenning uninstall`` removes and ``kenning doctor`` checks.

Only a link that points at this installation's own ``bin/kenning`` is ever removed, and never one
that ``uv tool install`` or ``pipx install`` made: theirs is removed by their own uninstall, which
would otherwise find its tool half gone.
"""

from __future__ import annotations

import os
import shutil
import sys


def link_path() -> str:
    return os.path.join(os.path.expanduser("~"), ".local", "bin", "kenning")


def own_command() -> str:
    """This installation's console script (``<venv>/bin/kenning``)."""
    return os.path.join(os.path.dirname(sys.executable), "kenning")


def _same(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


# What each tool installer leaves in the environment it made, and the command that removes the tool.
MANAGERS = {"uv": ("uv-receipt.toml", "uv tool uninstall kenning", "uv tool update-shell"),
            "pipx": ("pipx_metadata.json", "pipx uninstall kenning", "pipx ensurepath")}


def manager() -> str | None:
    """``uv`` or ``pipx`` when this installation is a tool that one of them installed, else None."""
    for name, (marker, _remove, _path) in MANAGERS.items():
        if os.path.exists(os.path.join(sys.prefix, marker)):
            return name
    return None


def remove_link() -> str | None:
    """Remove ``~/.local/bin/kenning`` if it is a link to this installation that ``scripts/install.sh``
    made (not uv's or pipx's); returns its path."""
    link = link_path()
    if manager() is None and os.path.islink(link) and _same(link, own_command()):
        os.unlink(link)
        return link
    return None


def on_path() -> tuple[str, str, str]:
    """(level, name, detail) for doctor: which ``kenning`` a shell runs, and whether it is this one."""
    found = shutil.which("kenning")
    mine = own_command()
    if found and _same(found, mine):
        return "ok", "command", f"`kenning` on PATH is this installation ({found})"
    if found:
        return ("warn", "command", f"`kenning` on PATH is {os.path.realpath(found)}, not this installation "
                f"({mine}): another program or an old install comes first; remove it or put "
                f"{os.path.dirname(link_path())} earlier in PATH")
    bin_dir = os.path.dirname(link_path())
    tool = manager()
    if tool is not None:
        return ("warn", "command", f"`kenning` is not on PATH: `{MANAGERS[tool][2]}` adds {tool}'s folder of "
                                   "commands to your shell's PATH")
    if os.path.islink(link_path()) and _same(link_path(), mine):
        return ("warn", "command", f"{bin_dir} is not on PATH: add `export PATH=\"$HOME/.local/bin:$PATH\"` "
                                   "to your shell's profile")
    return ("warn", "command", f"`kenning` is not on PATH: run `bash scripts/install.sh` from the checkout "
                               f"(it links {link_path()})")
