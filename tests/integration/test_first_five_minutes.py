"""A new user's first five minutes, as the README tells them, on a copy of this checkout in a scratch HOME.

`bash scripts/install.sh` exactly as written (the README's set-up command; the `bash scripts/test.sh` of
its Development section runs this very suite), the PATH line it prints, then every command of the
README's "See it work" block, parsed from README.md and run as written through a shell: each must exit 0
and show what the README promises, every example id in the README's sample output must exist with that
title, and `kenning doctor` must be green. Then `install.sh --with anthropic` must give a venv whose
worker picks the anthropic provider once ANTHROPIC_API_KEY is set, and `kenning uninstall` must take the
command's link away again.

Nothing of the developer's is used but the pip cache (a cache: every package still installs into the
scratch venv). The worker gets a free port instead of the default one, which a real install may hold.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO, free_port
from tests.support.machine import outside_env, user_commands

pytestmark = pytest.mark.slow
README = (REPO / "README.md").read_text(encoding="utf-8")


def readme_section(heading: str) -> str:
    """The text under ``## heading`` up to the next ``## `` heading outside a code block."""
    lines, fenced = [], False
    for line in README.split(f"\n## {heading}\n", 1)[1].splitlines(keepends=True):
        if line.startswith("```"):
            fenced = not fenced
        elif line.startswith("## ") and not fenced:
            break
        lines.append(line)
    return "".join(lines)


def readme_block(heading: str) -> list[str]:
    """The command lines of the first ```bash block under ``## heading``."""
    section = readme_section(heading)
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def sample_rows() -> dict[str, str]:
    """id -> title of the rows in the README's sample of what a new session sees (ellipses cut)."""
    sample = readme_section("See it work").split("```\n<kenning-context>", 1)[1].split("</kenning-context>", 1)[0]
    rows = {}
    for line in sample.splitlines():
        m = re.match(r'^(#\d+|S\d+)\s+\d+(?:m|h|d|w|mo|y)\s+\S+\s+(.*)$', line)  # id, age, icon, title
        if m:
            rows[m.group(1)] = m.group(2).split("…")[0].strip()
    return rows


@dataclass
class Scratch:
    src: Path
    home: Path
    env: dict[str, str]

    def sh(self, line: str, *, timeout: float = 300, **extra: str) -> subprocess.CompletedProcess[str]:
        """Run one command line as the user would type it (cwd: the checkout)."""
        return subprocess.run(["bash", "-c", line], cwd=self.src, env={**self.env, **extra}, capture_output=True,
                              text=True, timeout=timeout)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scratch]:
    root = tmp_path_factory.mktemp("first-five-minutes")
    src, home = root / "kenning", root / "home"
    home.mkdir()
    # The checkout as it would be committed: tracked files and new ones, not what .gitignore hides.
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        if (REPO / rel).is_file():
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, src / rel)
    env, system_path = outside_env()
    bin_dir = user_commands(root)  # what a machine with Claude Code installed has on PATH
    env.update({"HOME": str(home), "PATH": os.pathsep.join([str(bin_dir), *system_path]),
                "KENNING_PORT": str(free_port()), "BROWSER": str(bin_dir / "browser"),
                "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR") or os.path.expanduser("~/.cache/pip"),
                "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    s = Scratch(src=src, home=home, env=env)
    try:
        yield s
    finally:
        kenning = home / ".local" / "share" / "kenning" / "venv" / "bin" / "kenning"
        if kenning.exists():
            subprocess.run([str(kenning), "worker", "stop"], env=env, capture_output=True, timeout=60)


@pytest.fixture(scope="module")
def installed(scratch: Scratch) -> subprocess.CompletedProcess[str]:
    [command] = [line for line in readme_block("Set up on a fresh machine") if "install.sh" in line]
    r = scratch.sh(command, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    # The user follows the line the installer printed: ~/.local/bin on PATH in the next shell.
    scratch.env["PATH"] = f"{scratch.home}/.local/bin{os.pathsep}{scratch.env['PATH']}"
    return r


def test_the_installer_links_kenning_and_prints_the_path_line(scratch: Scratch,
                                                              installed: subprocess.CompletedProcess[str]) -> None:
    link = scratch.home / ".local" / "bin" / "kenning"
    venv = scratch.home / ".local" / "share" / "kenning" / "venv"
    assert link.is_symlink() and link.resolve() == (venv / "bin" / "kenning").resolve()
    assert f"Linked {link}" in installed.stdout
    assert 'export PATH="$HOME/.local/bin:$PATH"' in installed.stdout  # it was not on PATH yet
    assert "Traceback" not in installed.stdout + installed.stderr


def test_see_it_work_as_written(scratch: Scratch, installed: subprocess.CompletedProcess[str]) -> None:
    lines = readme_block("See it work")
    words = [shlex.split(line, comments=True) for line in lines]
    assert [w[:2] for w in words][:1] == [["kenning", "demo"]]
    out: dict[str, str] = {}
    for line, argv in zip(lines, words, strict=True):
        r = scratch.sh(line)
        assert r.returncode == 0, f"{line}\n{r.stdout}\n{r.stderr}"
        assert "Traceback" not in r.stdout + r.stderr, line
        out[argv[1]] = r.stdout

    assert "Added to your memory" in out["demo"] and "<kenning-context>" in out["demo"]
    context = out["context"]
    assert context.startswith("<kenning-context>") and "# Memory of kenning-demo" in context
    # Every example row of the README's sample is there, with its id and its title.
    rows = sample_rows()
    assert len(rows) >= 6, rows
    for rid, title in rows.items():
        assert re.search(rf"^{re.escape(rid)}\s.*{re.escape(title)}", context, re.M), (rid, title, context)
    assert re.search(r"^memory +18 observations, 3 summaries, 3 sessions", out["status"], re.M), out["status"]
    shown = next(a for a in words if a[1] == "show")[2]
    assert out["show"].startswith(f"#{shown} [decision] {rows[f'#{shown}']}"), out["show"]
    assert re.search(r"^#\d+ .*VAT is now rounded.*\(kenning-demo, ~\d+ tokens\)$", out["search"], re.M), out["search"]
    # doctor: green. The only warning allowed is a machine without the `claude` command.
    marks = [line for line in out["doctor"].splitlines() if not line.startswith("✓")]
    assert all(m.startswith("! Claude Code:") for m in marks) and (not marks or not shutil.which(
        "claude", path=scratch.env["PATH"])), out["doctor"]
    # open: a browser got the signed-in viewer URL, and the page it names answers.
    url = (scratch.src.parent / "opened-url").read_text().strip()
    assert re.fullmatch(rf"http://127\.0\.0\.1:{scratch.env['KENNING_PORT']}/#(?:token|code)=[0-9a-f]+", url), url
    with urllib.request.urlopen(url.split("#")[0], timeout=10) as page:
        assert page.status == 200 and b"<html" in page.read().lower()


def test_with_anthropic_the_anthropic_provider_is_picked(scratch: Scratch,
                                                          installed: subprocess.CompletedProcess[str]) -> None:
    r = scratch.sh("bash scripts/install.sh --with anthropic", timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Added anthropic to" in r.stdout
    key = {"ANTHROPIC_API_KEY": "sk-ant-test-not-a-real-key", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    assert scratch.sh("kenning worker restart", **key).returncode == 0
    status = scratch.sh("kenning worker status", **key)
    assert '"provider": "anthropic"' in status.stdout, status.stdout
    doctor = scratch.sh("kenning doctor", **key)
    assert re.search(r"^✓ observer: the worker uses anthropic \(", doctor.stdout, re.M), doctor.stdout
    # Without the key, the same install falls back to the offline observer, and says why.
    assert scratch.sh("kenning worker restart").returncode == 0
    assert '"provider": "rules"' in scratch.sh("kenning worker status").stdout


def test_uninstall_removes_the_link(scratch: Scratch, installed: subprocess.CompletedProcess[str]) -> None:
    r = scratch.sh("kenning uninstall")
    assert r.returncode == 0, r.stdout + r.stderr
    assert not (scratch.home / ".local" / "bin" / "kenning").exists()
    assert "Removed the link" in r.stdout
