"""The one cleaning every way text gets into memory goes through, with the user's settings.

Hooks (captured payloads), the MCP ``save_memory`` tool, the viewer's edits over HTTP,
``kenning import`` (CLI and HTTP) and what an observer writes all call :func:`cleaner` with
the settings in force: ``<private>`` and echo blocks are stripped, then secrets are redacted
with the built-in detectors minus ``redact_disabled`` plus ``redact_custom`` (unless
``redact_secrets`` is off). Text (not a raw payload) also loses terminal escape sequences and control
characters. Standard library only (the hook uses it).
"""

from __future__ import annotations

from kenning.context.controls import strip_controls
from kenning.privacy.tags import strip_text, strip_value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from kenning.privacy.redact import Redactor
    from kenning.settings import Settings

# Text fields of what is stored, by record kind (observer drafts, export records).
OBSERVATION_TEXT = ("title", "subtitle", "narrative")
OBSERVATION_LISTS = ("facts", "concepts")
SUMMARY_TEXT = ("request", "investigated", "learned", "completed", "next_steps", "notes")


class Cleaner:
    """Strip private and echo blocks, then redact secrets, as the settings say."""

    def __init__(self, redactor: Redactor | None) -> None:
        self.redactor = redactor

    def text(self, value: str) -> str:
        # No escape sequence a terminal would act on when `show`, `search` or `review` prints the memory.
        out = strip_text(strip_controls(value))
        return self.redactor.text(out) if self.redactor is not None else out

    def payload(self, payload: dict[str, Any], agent: str) -> dict[str, Any]:
        """A hook payload: the agent's own metadata fields are left alone (see privacy.fields)."""
        out = strip_value(payload)
        return self.redactor.payload(out, agent) if self.redactor is not None else out

    def value(self, value: Any) -> Any:
        """Any JSON-like value: strings cleaned, fields named for a secret lose their value."""
        out = strip_value(value)
        return self.redactor.value(out) if self.redactor is not None else out

    def fields(self, obj: Any, text: tuple[str, ...], lists: tuple[str, ...] = ()) -> Any:
        """Clean the named text and list-of-text attributes of a draft in place; returns it."""
        for name in text:
            v = getattr(obj, name, None)
            if isinstance(v, str) and v:
                setattr(obj, name, self.text(v))
        for name in lists:
            v = getattr(obj, name, None)
            if isinstance(v, list):
                setattr(obj, name, [self.text(x) if isinstance(x, str) else x for x in v])
        return obj

    def outcome(self, outcome: Any) -> Any:
        """An observer's outcome (observations and summary) before it is stored."""
        for d in getattr(outcome, "observations", ()) or ():
            self.fields(d, OBSERVATION_TEXT, OBSERVATION_LISTS)
            why = getattr(d, "why", None)
            if isinstance(why, dict) and why:  # the sentence a memory was judged from is stored too
                d.why = {k: self.text(v) if isinstance(v, str) else v for k, v in why.items()}
        if getattr(outcome, "summary", None) is not None:
            self.fields(outcome.summary, SUMMARY_TEXT)
        return outcome


def redactor(settings: Settings) -> Redactor | None:
    """The redactor the settings ask for, or None when ``redact_secrets`` is off."""
    if not settings.redact_secrets:
        return None
    from kenning.privacy.redact import Redactor
    from kenning.settings import custom_patterns

    return Redactor(disabled=settings.redact_disabled, custom=custom_patterns(settings))


def cleaner(settings: Settings) -> Cleaner:
    return Cleaner(redactor(settings))
