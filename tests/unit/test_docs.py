"""The README and docs/ tell the truth about the code they describe.

Generated sections (the CLI reference, the settings table, the MCP tools) match what the code says
now; every ``kenning …`` command shown names a command and options the parser has (and, when it is
concrete, parses); every MCP tool and every worker route is documented; every relative link and
anchor resolves; every repository path named exists; nothing points outside the repository.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from kenning import docgen
from kenning.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Written on another branch of the same issue (install routes); the README links it already.
ELSEWHERE = {ROOT / "docs" / "install.md"}


def text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


def rel(page: Path) -> str:
    return str(page.relative_to(ROOT))


FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```", re.M | re.S)


def bash_lines(page: Path) -> list[str]:
    """The command lines of the page's ```bash blocks, comments dropped, split at && ; and pipes."""
    out = []
    for lang, body in FENCE.findall(text(page)):
        if lang != "bash":
            continue
        for line in body.splitlines():
            words = shlex.split(line, comments=True)
            part: list[str] = []
            for w in [*words, "&&"]:
                if w in ("&&", ";", "|", "||"):
                    if part:
                        out.append(shlex.join(part))
                    part = []
                else:
                    part.append(w)
    return out


def inline_spans(page: Path) -> list[str]:
    """Inline code spans of the page's prose (code blocks left out)."""
    prose = FENCE.sub("", text(page))
    return [s.replace("\n", " ") for s in re.findall(r"`([^`\n]+(?:\n[^`\n]+)?)`", prose)]


def kenning_argv(command: str) -> list[str] | None:
    """The arguments of ``kenning`` when a command runs it (after VAR=value, or as ``python … -m kenning``)."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
        words.pop(0)
    if words and words[0].rsplit("/", 1)[-1] == "kenning":
        return words[1:]
    for i, w in enumerate(words[:-1]):
        if w == "-m" and words[i + 1] == "kenning" and "python" in words[0]:
            return words[i + 2:]
    return None


def placeholder(word: str) -> bool:
    return bool(re.fullmatch(r"[A-Z][A-Z_]*(\.\.\.|…)?", word)) or any(c in word for c in "<>…[]") or "..." in word


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def problems_of(argv: list[str]) -> list[str]:
    """What in ``kenning <argv>`` names no command, option or choice the parser has."""
    parser = build_parser()
    if not argv or placeholder(argv[0]):
        return []
    if argv[0].startswith("-"):
        return [] if argv[0] in parser._option_string_actions else [f"no option {argv[0]}"]
    words = list(argv)
    while True:  # descend: kenning extras add …
        children = subparsers(parser)
        if not children:
            break
        name = words.pop(0) if words else ""
        if placeholder(name) or not name:
            return []
        if name not in children:
            return [f"no command {name!r} (there are {', '.join(sorted(children))})"]
        parser = children[name]
    found, positionals = [], []
    it = iter(words)
    for w in it:
        if w.startswith("-") and len(w) > 1 and not w[1:].isdigit():
            action = parser._option_string_actions.get(w.split("=", 1)[0])
            if action is None:
                found.append(f"no option {w} for `{parser.prog}`")
            elif action.nargs != 0 and "=" not in w:
                next(it, None)
        else:
            positionals.append(w)
    pos_actions = [a for a in parser._actions if not a.option_strings and not isinstance(a, argparse._HelpAction)]
    if positionals and pos_actions and pos_actions[0].choices:
        for alt in positionals[0].split("|"):
            if alt and not placeholder(alt) and alt not in pos_actions[0].choices:
                found.append(f"{alt!r} is not one of {sorted(pos_actions[0].choices)} for `{parser.prog}`")
    return found


def test_generated_sections_match_the_code() -> None:
    assert not docgen.stale(ROOT), f"generated docs are out of date: run `{docgen.REGENERATE}`"


def test_the_stale_check_sees_a_changed_page(tmp_path: Path) -> None:
    for page in docgen.SECTIONS:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / page).write_text(text(ROOT / page), encoding="utf-8")
    page = tmp_path / "docs" / "commands.md"
    page.write_text(text(page).replace("### kenning search\n", "### kenning search (old)\n"), encoding="utf-8")
    assert docgen.stale(tmp_path) == ["docs/commands.md"]
    assert docgen.main(["--root", str(tmp_path)]) == 0 and docgen.stale(tmp_path) == []


def test_every_mcp_tool_the_server_lists_is_in_the_api_page(tmp_path: Path) -> None:
    requests = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}]
    env = {**os.environ, "HOME": str(tmp_path), "KENNING_DATA_DIR": str(tmp_path / "data")}
    r = subprocess.run([sys.executable, "-m", "kenning", "mcp"], input="".join(json.dumps(q) + "\n" for q in requests),
                       capture_output=True, text=True, env=env, timeout=60)
    answers = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    listed = [t["name"] for a in answers if a.get("id") == 2 for t in a["result"]["tools"]]
    assert "supersede_memory" in listed
    api = text(ROOT / "docs" / "api.md")
    for name in listed:
        assert f"| `{name}` |" in api, f"MCP tool {name} is missing from docs/api.md: run `{docgen.REGENERATE}`"


def test_every_worker_route_is_documented() -> None:
    routes = set()
    for source in (ROOT / "kenning" / "worker").rglob("*.py"):
        routes |= set(re.findall(r'Route\("(/api/[^"]+)"', text(source)))
    assert len(routes) > 20, routes
    api, viewer = text(ROOT / "docs" / "api.md"), text(ROOT / "docs" / "viewer-api.md")
    missing = []
    for route in sorted(routes):
        path = re.sub(r"\{\w+\}", "{id}", route)
        if path.startswith("/api/viewer/"):
            if path.removeprefix("/api/viewer/") not in viewer:
                missing.append(route)
        elif path not in api and not (path.rsplit("/", 1)[0] in api and f"/{path.rsplit('/', 1)[1]}`" in api):
            missing.append(route)
    assert not missing, f"worker routes not in docs/api.md or docs/viewer-api.md: {missing}"


@pytest.mark.parametrize("page", PAGES, ids=rel)
def test_every_kenning_command_shown_exists(page: Path) -> None:
    bad = []
    for line in bash_lines(page):
        argv = kenning_argv(line)
        if argv is None:
            continue
        found = problems_of(argv)
        if not found and not any(placeholder(w) for w in argv):
            try:  # concrete: it must parse as written
                build_parser().parse_args(argv)
            except SystemExit:
                found = ["does not parse"]
        bad += [f"{line}: {p}" for p in found]
    for span in inline_spans(page):
        argv = kenning_argv(span)
        if argv is not None:
            bad += [f"`{span}`: {p}" for p in problems_of(argv)]
    assert not bad, "\n".join(bad)


def test_the_command_checker_catches_what_does_not_exist() -> None:
    assert problems_of(["serach", "x"]) and problems_of(["search", "--nosuch"])
    assert problems_of(["worker", "begin"]) and problems_of(["extras", "remove"])
    assert not problems_of(["worker", "logs", "-n", "100"]) and not problems_of(["show", "ID"])
    assert not problems_of(["search", "-p", ".", "--type", "bugfix", "-n", "5", "flaky"])


def github_anchor(heading: str) -> str:
    slug = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return slug.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    prose = FENCE.sub("", text(page))
    return {github_anchor(h) for h in re.findall(r"^#+ (.+)$", prose, re.M)}


@pytest.mark.parametrize("page", PAGES, ids=rel)
def test_relative_links_and_anchors_resolve(page: Path) -> None:
    bad = []
    for target in re.findall(r"\]\(([^)\s]+)\)", FENCE.sub("", text(page))):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if dest in ELSEWHERE and not dest.exists():
            continue
        if not dest.exists() or ROOT not in (dest, *dest.parents):
            bad.append(f"{target}: no such file in the repository")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            bad.append(f"{target}: no heading #{anchor} in {dest.name}")
    assert not bad, bad


@pytest.mark.parametrize("page", PAGES, ids=rel)
def test_repository_paths_named_exist_and_nothing_points_outside(page: Path) -> None:
    body = text(page)
    assert not re.search(r"DESIGN\.md|\.\./shared|/work/shared", body), "points to a document outside the repository"
    named = re.findall(r"`((?:kenning|tests|bench|scripts|training)/[\w./-]+)`", body)
    missing = [p for p in named if "*" not in p and not (ROOT / p.rstrip("/")).exists()]
    assert not missing, f"no such path in the repository: {missing}"


def test_the_readme_is_the_first_five_minutes() -> None:
    readme = text(ROOT / "README.md")
    assert len(readme.splitlines()) < 150
    for page in ("getting-started", "memory", "commands", "configuration", "privacy", "troubleshooting", "api",
                 "development"):
        assert f"(docs/{page}.md)" in readme, f"the README does not point to docs/{page}.md"


def test_getting_started_has_a_section_for_every_agent() -> None:
    from kenning.integrations import LABELS

    headings = set(re.findall(r"^## (.+)$", text(ROOT / "docs" / "getting-started.md"), re.M))
    missing = [label for label in LABELS.values() if label not in headings]
    assert not missing, f"docs/getting-started.md has no section for {missing}"


def test_every_environment_variable_named_exists() -> None:
    code = "\n".join(text(p) for p in [*(ROOT / "kenning").rglob("*.py"), *(ROOT / "scripts").glob("*.sh")])
    from kenning.settings import SPECS

    known = {f"KENNING_{name.upper()}" for name in SPECS} | set(re.findall(r"KENNING_[A-Z_]+", code))
    named = {v for page in PAGES for v in re.findall(r"\bKENNING_[A-Z][A-Z_]*[A-Z]\b", text(page))}
    assert named - known == set(), f"environment variables no code reads: {sorted(named - known)}"
