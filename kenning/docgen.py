"""The parts of docs/ that quote the code: the CLI reference, the settings table, the MCP tools.

Each lives between ``<!-- generated: NAME -->`` and ``<!-- end generated: NAME -->`` in its page, so
the prose around it is written by hand and the quote cannot drift: ``python -m kenning.docgen``
rewrites them, ``python -m kenning.docgen --check`` (and tests/unit/test_docs.py) fails when a page
differs from what the code says. A developer's tool: the pages are not part of an installed package.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REGENERATE = "python -m kenning.docgen"
WIDTH = 100  # usage lines are wrapped at this width, whatever the terminal


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, tuple[argparse.ArgumentParser, str]]:
    """name -> (sub-parser, its one-line help) of the parser's sub-commands, in declaration order."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help or "" for a in action._choices_actions}
            return {name: (child, helps.get(name, "")) for name, child in action.choices.items()}
    return {}


def _metavar(action: argparse.Action) -> str:
    """How an argument's value is written: ``ID``, ``ID [ID ...]``, ``[query ...]``, ``{a,b}``."""
    if action.metavar is not None:
        name = str(action.metavar)
    elif action.choices is not None:
        name = "{" + ",".join(str(c) for c in action.choices) + "}"
    else:
        name = action.dest if not action.option_strings else action.dest.upper()
    if action.nargs == "?":
        return f"[{name}]"
    if action.nargs == "*":
        return f"[{name} ...]"
    if action.nargs == "+":
        return f"{name} [{name} ...]"
    if action.nargs == argparse.PARSER:
        return f"{name} ..."
    return name


def _shown(action: argparse.Action) -> bool:
    return not isinstance(action, argparse._HelpAction) and action.help != argparse.SUPPRESS


def _flag(action: argparse.Action) -> str:
    value = "" if action.nargs == 0 else " " + _metavar(action)
    return action.option_strings[0] + value


def _usage(parser: argparse.ArgumentParser, path: str) -> str:
    """``path [options] positionals``, wrapped at WIDTH: our own layout, the same on every Python."""
    grouped = {id(a): g for g in parser._mutually_exclusive_groups for a in g._group_actions}
    parts: list[str] = []
    done: set[int] = set()
    for action in parser._actions:
        if not _shown(action) or id(action) in done:
            continue
        if not action.option_strings:
            parts.append(_metavar(action))
            continue
        group = grouped.get(id(action))
        members = [a for a in group._group_actions if _shown(a)] if group else [action]
        done.update(id(a) for a in members)
        text = " | ".join(_flag(a) for a in members)
        parts.append(text if (group and group.required) or (not group and action.required) else f"[{text}]")
    parts.sort(key=lambda p: not p.startswith(("[-", "-")))  # options first, positionals last
    lines, line = [], path
    for part in parts:
        if len(line) + 1 + len(part) > WIDTH and line.strip():
            lines.append(line)
            line = " " * (len(path) + 1) + part
        else:
            line += " " + part
    return "\n".join([*lines, line])


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _options(parser: argparse.ArgumentParser) -> list[str]:
    fmt = argparse.HelpFormatter(parser.prog, width=WIDTH)
    rows = []
    for action in parser._actions:
        if not _shown(action) or isinstance(action, argparse._SubParsersAction):
            continue
        if action.option_strings:
            value = "" if action.nargs == 0 else " " + _metavar(action)
            name = ", ".join(f"{o}{value}" for o in action.option_strings)
        elif action.choices and action.metavar is None:
            name = action.dest.upper() + ": " + " | ".join(str(c) for c in action.choices)
        else:
            name = str(action.metavar or action.dest)
        rows.append(f"| `{_cell(name)}` | {_cell(fmt._expand_help(action))} |")
    return (["| argument | what it does |", "| --- | --- |", *rows] if rows else [])


def _command(lines: list[str], path: str, parser: argparse.ArgumentParser, summary: str, level: int) -> None:
    text = _cell(parser.description or summary)
    lines += [f"{'#' * level} {path}", "", text[:1].upper() + text[1:], "", "```", _usage(parser, path), "```", ""]
    table = _options(parser)
    if table:
        lines += [*table, ""]
    for name, (child, text) in _subcommands(parser).items():
        _command(lines, f"{path} {name}", child, text, level + 1)


def commands_markdown() -> str:
    """Every command under its task (kenning/clihelp.py GROUPS), with its usage and each argument."""
    from kenning.cli import build_parser
    from kenning.clihelp import GROUPS

    parser = build_parser()
    commands = _subcommands(parser)
    lines = ["```", f"kenning {parser.usage.removeprefix('kenning ') if parser.usage else ''}".rstrip(), "```", "",
             *_options(parser), ""]
    for title, names in GROUPS.items():
        lines += [f"## {title}", ""]
        for name in sorted(names):
            child, text = commands[name]
            _command(lines, f"kenning {name}", child, text, 3)
    return "\n".join(lines).rstrip() + "\n"


def settings_markdown() -> str:
    from kenning.cli import settings_markdown as table

    return table() + "\n"


def mcp_markdown() -> str:
    """The tools the MCP server lists (kenning/mcp/schema.py), each with its arguments."""
    from kenning.mcp.schema import REQUIRED, TOOLS

    lines = ["| tool | what it is for | arguments |", "| --- | --- | --- |"]
    for tool in TOOLS:
        args = "<br>".join(
            f"`{p.name}`{_default(p.default, REQUIRED)}: {_cell(p.description)}" for p in tool.params)
        hint = "" if tool.annotations.get("readOnlyHint") else " (writes)"
        lines.append(f"| `{tool.name}` | {_cell(tool.title)}{hint} | {args or 'none'} |")
    return "\n".join(lines) + "\n"


def _default(value: object, required: object) -> str:
    if value is required:
        return ""
    return " (optional)" if value in (None, "") else f" (default {value})"


# page (relative to the repository) -> section name -> what it holds
SECTIONS: dict[str, dict[str, Callable[[], str]]] = {
    "docs/commands.md": {"commands": commands_markdown},
    "docs/configuration.md": {"settings": settings_markdown},
    "docs/api.md": {"mcp-tools": mcp_markdown},
}


def markers(name: str) -> tuple[str, str]:
    return (f"<!-- generated: {name} ({REGENERATE}; do not edit by hand) -->\n",
            f"<!-- end generated: {name} -->")


def render(text: str, name: str, body: str) -> str:
    """``text`` with section ``name`` holding ``body``; ValueError when the page lacks its markers."""
    start, end = markers(name)
    if start not in text or end not in text:
        raise ValueError(f"no {start.strip()} … {end} markers")
    head, rest = text.split(start, 1)
    return head + start + "\n" + body + "\n" + end + rest.split(end, 1)[1]


def stale(root: Path = ROOT) -> list[str]:
    """The pages whose generated sections differ from what the code says now."""
    out = []
    for page, sections in SECTIONS.items():
        text = (root / page).read_text(encoding="utf-8")
        new = text
        for name, make in sections.items():
            new = render(new, name, make())
        if new != text:
            out.append(page)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kenning.docgen", description=__doc__.split("\n\n")[0])
    p.add_argument("--check", action="store_true", help="change nothing; exit 1 when a page is out of date")
    p.add_argument("--root", type=Path, default=ROOT, help="the repository (default: this checkout)")
    args = p.parse_args(argv)
    if args.check:
        pages = stale(args.root)
        for page in pages:
            print(f"{page} is out of date: run `{REGENERATE}`", file=sys.stderr)
        return 1 if pages else 0
    for page, sections in SECTIONS.items():
        path = args.root / page
        text = path.read_text(encoding="utf-8")
        new = text
        for name, make in sections.items():
            new = render(new, name, make())
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote {page}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
