"""axe-core (Deque's accessibility engine) run inside a page of the viewer.

The pinned npm release is fetched once with ``npm pack`` into ``<repo>/.cache/axe-core`` (a lock file
beside it, like the agent CLIs in :mod:`tests.support.agent_clis`) and ``axe.min.js`` is read from the
tarball. No npm, or npm cannot reach its registry: ``script()`` returns None and the tests skip.
Override with ``KENNING_TEST_AXE`` (the path of an ``axe.min.js``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from tests.support.claude_cli import _file_lock

AXE_VERSION = "4.14.1"
REPO_ROOT = Path(__file__).resolve().parents[2]
CACHE = REPO_ROOT / ".cache" / "axe-core"
# WCAG 2.x A and AA, plus axe's best practices (landmarks, heading order, region).
TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]
SERIOUS = ("serious", "critical")


def script() -> str | None:
    """The text of axe.min.js of the pinned release, or None when it cannot be had here."""
    override = os.environ.get("KENNING_TEST_AXE")
    if override:
        return Path(override).read_text(encoding="utf-8")
    target = CACHE / f"axe-{AXE_VERSION}.min.js"
    if target.is_file():
        return target.read_text(encoding="utf-8")
    npm = shutil.which("npm")
    if not npm:
        return None
    CACHE.mkdir(parents=True, exist_ok=True)
    with _file_lock(CACHE.parent / "axe-core.lock"):
        if target.is_file():
            return target.read_text(encoding="utf-8")
        work = tempfile.mkdtemp(prefix="kenning-axe-")
        try:
            proc = subprocess.run([npm, "pack", "--silent", "--cache", os.path.join(work, "npm-cache"),
                                   f"axe-core@{AXE_VERSION}"], cwd=work, capture_output=True, text=True,
                                  timeout=180, stdin=subprocess.DEVNULL)
            if proc.returncode != 0:
                (CACHE / "npm-pack.log").write_text(proc.stdout + proc.stderr)
                return None
            tgz = Path(work) / f"axe-core-{AXE_VERSION}.tgz"
            with tarfile.open(tgz) as tar:
                member = tar.extractfile("package/axe.min.js")
                if member is None:
                    return None
                text = member.read().decode("utf-8")
        except (OSError, subprocess.TimeoutExpired, tarfile.TarError, KeyError):
            return None
        finally:
            shutil.rmtree(work, ignore_errors=True)
        tmp = target.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(target)
        return text


def run(page: Any, source: str, context: str = "document") -> list[dict[str, Any]]:
    """The serious and critical violations axe finds on the page as it is now (injected once per page)."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        # Evaluated through the DevTools protocol: the page's Content-Security-Policy (no inline script)
        # stays as it is, and the viewer is checked under it.
        page.evaluate(f"{source}\n;undefined")
    found = page.evaluate(
        """async ([ctx, tags]) => {
            const r = await axe.run(ctx === 'document' ? document : document.querySelector(ctx),
                                    {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
            return r.violations.map((v) => ({id: v.id, impact: v.impact, help: v.help,
              nodes: v.nodes.map((n) => ({target: n.target.join(' '), summary: n.failureSummary}))}));
        }""",
        [context, TAGS],
    )
    if os.environ.get("KENNING_TEST_AXE_ALL"):  # every finding, for a person improving the page
        print(describe(found))
    return [v for v in found if v["impact"] in SERIOUS]


def describe(violations: list[dict[str, Any]]) -> str:
    lines = []
    for v in violations:
        lines.append(f"{v['impact']} {v['id']}: {v['help']}")
        for n in v["nodes"][:6]:
            lines.append(f"    {n['target']}: {(n['summary'] or '').splitlines()[-1:]}")
    return "\n".join(lines)
