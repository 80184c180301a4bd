"""``opencode run <words>`` (1.18.33) makes its prompt by wrapping each word holding a space in double quotes,
its own ``"`` escaped as ``\\"``, and joining the words with one space (piped stdin follows after a newline).
:func:`run_prompt` undoes exactly that, given the process's arguments, and nothing else."""

from __future__ import annotations

import pytest

from kenning.integrations import opencode


def cli(*words: str) -> str:
    """What OpenCode 1.18.33 sends as the prompt for these message words (its ``run`` command's rule)."""
    return " ".join('"' + w.replace('"', '\\"') + '"' if " " in w else w for w in words)


ARGV = ["run", "-m", "fake/fake-model"]


@pytest.mark.parametrize("words", [
    ['Fix the "add" bug'],
    ["Always run ruff before committing"],
    ["now", "check the tests"],
    ["fix", "it"],
    ['"hello"'],                       # a word without a space: the CLI kept its quotes, so do we
    ['say "hi" then', '"quoted two"'],
    ['ends with a backslash\\'],        # the CLI's \" at the end is this backslash and its closing quote
    ['"x y\\'],
    ['tab\there', "new\nline and space"],
])
def test_the_prompt_is_what_the_user_typed(words: list[str]) -> None:
    assert opencode.run_prompt(cli(*words), [*ARGV, *words]) == " ".join(words)


def test_options_between_the_words_and_piped_stdin() -> None:
    argv = ["run", "fix the build", "--title", "build fix", "-m", "fake/fake-model", "please"]
    assert opencode.run_prompt(cli("fix the build", "please"), argv) == "fix the build please"
    assert opencode.run_prompt(cli("fix the build") + '\n"log" from stdin', ["run", "fix the build"]) == \
        'fix the build\n"log" from stdin'


@pytest.mark.parametrize(("prompt", "argv"), [
    ('"fix the build"', []),                                   # the TUI: no `run` in the arguments
    ('"fix the build"', ["/home/me/project"]),
    ('"fix the build"', ["run", "fix", "the", "build"]),       # the CLI would not have quoted these words
    ('"fix the build" and more', ["run", "fix the build"]),    # more than the CLI made of them
    ('Summarise "a b" for me', ["run", "a b"]),                # a subagent's prompt in the same process
    ('"a b"', ["run", "a  b"]),
])
def test_quotes_the_cli_did_not_add_are_kept(prompt: str, argv: list[str]) -> None:
    assert opencode.run_prompt(prompt, argv) == prompt


def test_the_hook_stores_the_prompt_unquoted_and_not_the_arguments() -> None:
    payload = {"session_id": "ses_1", "cwd": "/p", "prompt": cli('Fix the "add" bug'),
               "cli_args": [*ARGV, 'Fix the "add" bug']}
    assert opencode.HOOK.translate("UserPromptSubmit", payload) == (
        "UserPromptSubmit", {"session_id": "ses_1", "cwd": "/p", "prompt": 'Fix the "add" bug'})
    tui = {"session_id": "ses_2", "cwd": "/p", "prompt": '"as typed"', "cli_args": []}
    assert opencode.HOOK.translate("UserPromptSubmit", tui)[1] == {"session_id": "ses_2", "cwd": "/p",
                                                                   "prompt": '"as typed"'}
