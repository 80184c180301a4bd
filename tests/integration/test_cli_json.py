"""`--json` wherever a command's output is data: one walk over the real parser decides which commands
print data (they must have --json) and which act (they need not, each for a stated reason); and each
command that gained --json prints the same content as its text, through the real CLI."""

from __future__ import annotations

import argparse
import json
import re

import pytest

from kenning.cli import build_parser
from tests.conftest import Home
from tests.support.clock import unclocked

# Commands whose output is data: each must take --json.
DATA = {"context", "doctor", "extras", "extras list", "forget", "pin", "restore", "search", "settings", "show",
        "stale", "stats", "status", "supersede", "timeline", "unarchive", "unpin", "team status", "team push",
        "team pull", "team sync", "team review", "why"}
# Commands that act rather than report, or whose output is a format of its own already.
NOT_DATA = {
    "completion": "prints a shell script",
    "demo": "a guided story for a person to read",
    "export": "writes JSON Lines already",
    "extras add": "runs pip",
    "hook": "speaks each agent's hook protocol (JSON already)",
    "import": "an action; its one-line report is not data",
    "import-history": "an action (its --dry-run counts are a preview for a person)",
    "install": "an action",
    "mcp": "speaks JSON-RPC on stdio",
    "open": "opens a browser",
    "reindex": "an action",
    "repair": "an action",
    "review": "a conversation with a person (one answer a line)",
    "uninstall": "an action",
    "worker": "actions; `worker status` prints JSON already",
    "team": "a group of actions",
    "team grant": "an action (the audit log on the hub records it)",
    "team init": "an action (new members' passwords go to a 0600 file, never to the output)",
    "team join": "an action",
    "team leave": "an action",
    "team mine": "an action",
    "team revoke": "an action (the audit log on the hub records it)",
}


def commands(parser: argparse.ArgumentParser, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    """Every (sub-)command of ``parser`` by its words ("extras list"), nested ones included."""
    out: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                words = f"{prefix} {name}".strip()
                out[words] = sub
                out.update(commands(sub, words))
    return out


def has_json(parser: argparse.ArgumentParser) -> bool:
    return any("--json" in a.option_strings for a in parser._actions)


def test_every_command_that_prints_data_takes_json() -> None:
    found = commands(build_parser())
    unclassified = sorted(set(found) - DATA - set(NOT_DATA))
    assert not unclassified, f"say whether these print data (DATA) or act (NOT_DATA, with why): {unclassified}"
    assert not sorted((DATA | set(NOT_DATA)) - set(found)), "a classified command no longer exists"
    assert sorted(c for c in DATA if not has_json(found[c])) == []


@pytest.fixture
def demo(home: Home) -> Home:
    r = home.kenning("demo")
    assert r.returncode == 0, r.stderr
    return home


def test_context_json_is_the_text_with_its_size(demo: Home) -> None:
    text = demo.kenning("context", "--project", "kenning-demo", "--stats")
    data = json.loads(demo.kenning("context", "--project", "kenning-demo", "--json").stdout)
    assert text.stdout.endswith("\n") and unclocked(data["context"]) == unclocked(text.stdout[:-1])
    assert unclocked(data["context"]) != data["context"]  # (the header's clock was taken out, not missed)
    assert "VAT" in data["context"]  # (the demo's memory, not an empty note)
    size = re.search(r"\[(\d+) characters, ~(\d+) tokens\]", text.stderr)
    assert size and (data["chars"], data["tokens"]) == (int(size.group(1)), int(size.group(2)))
    assert data["project"] == "kenning-demo" and data["excluded"] is False and data["key"]


def test_settings_json_holds_every_setting_the_text_lists(home: Home) -> None:
    home.env["KENNING_CONTEXT_OBSERVATIONS"] = "17"  # an effective value that is not the default
    text = home.kenning("settings").stdout
    shown = {}
    for line in text.splitlines():
        name, rest = line.split(" = ", 1)
        shown[name] = json.loads(rest.split("    # ", 1)[0])
    data = json.loads(home.kenning("settings", "--json").stdout)
    assert data["settings"] == shown and data["settings"]["context_observations"] == 17
    assert data["problems"] == []


def test_extras_json_lists_what_the_text_lists(home: Home) -> None:
    text = home.kenning("extras", "list").stdout
    rows = [re.match(r"^(\S+)\s+(installed|not installed)\s+(.*)$", ln) for ln in text.splitlines()]
    assert rows and all(rows)
    data = json.loads(home.kenning("extras", "list", "--json").stdout)
    assert [(r["name"], "installed" if r["installed"] else "not installed", r["help"]) for r in data] == \
        [m.groups() for m in rows if m]
    assert json.loads(home.kenning("extras", "--json").stdout) == data  # bare `extras` lists too
