"""A command that failed when the agent ran it and passed when the user ran it, with nothing changed between.

In Claude Code the user runs a command with ``!`` (the transcript's ``<bash-input>``; kenning.history gives it as a
Bash call with ``actor: user``). When the agent's ``git commit`` failed ("Couldn't sign message (signer): agent
refused operation?") and the user's own ``git commit`` then passed, with no file changed between, what differs is
who ran it: commit signing, a credential, a terminal the agent has not. The next session should hand such a
command to the user at once. Proved by the two runs; the same tool (program and subcommand: "git commit") is
enough, since the agent's message or arguments are what the user runs when asked to.

The agent's failures are remembered across the turns of one observed batch (an import sees a whole session).
"""

from __future__ import annotations

import re

from kenning.memory.text import clip
from kenning.observer import evidence, proven
from kenning.observer.rejected_usage import tool_of
from kenning.records import Event, ObservationDraft

# An error line that says why, in the tool's words: what refused, what was denied or is missing
_WHY = re.compile(r"refused|denied|permission|not permitted|not allowed|couldn'?t|could not|cannot|can'?t|unable|"
                  r"passphrase|password|authenticat|credential|\btty\b|terminal|interactive", re.IGNORECASE)


class UserRan:
    """The agent's failed commands of the batch so far, to match against the user's own runs."""

    def __init__(self) -> None:
        self.failed: list[evidence.Command] = []

    def gotchas(self, events: list[Event]) -> list[ObservationDraft]:
        """The gotchas ``events`` (one turn's, in order) prove with the failures seen before them."""
        out: list[ObservationDraft] = []
        for ev in events:
            if ev.kind not in ("PostToolUse", "PostToolUseFailure"):
                continue
            if evidence.modified_files(ev):
                self.failed = []  # a file changed since: the next run may pass for that reason
                continue
            c = evidence.command(ev)
            if c is None:
                continue
            if ev.payload.get("actor") != "user":
                if not c.ok:
                    self.failed.append(c)
                continue
            tool = tool_of(c.command) if c.ok else ""
            failed = next((f for f in reversed(self.failed) if tool and tool_of(f.command) == tool), None)
            if failed is None:
                continue
            self.failed = [f for f in self.failed if tool_of(f.command) != tool]
            why = _why(failed.output)
            title = f"`{tool}` fails when the agent runs it" + (f" ({why})" if why else "") + \
                " and passes when you run it yourself"
            out.append(proven.gotcha(
                title, proved_by="the commands",
                facts=[f"the agent's `{clip(failed.command, 80)}` failed" + (f": {why}" if why else ""),
                       f"your own `{clip(c.command, 80)}` passed"],
                narrative=f"`{tool}` failed when the agent ran it" + (f" ({why})" if why else "") +
                "; you ran it yourself, nothing changed between, and it passed.",
                at=c.at, how="the agent's run failed, and yours passed with no file changed between"))
        return out[:1]


def _why(output: str) -> str:
    """The error line that says why (the tool's words), else the most specific error line."""
    lines = [ln.strip() for ln in output.splitlines() if ln.strip() and not re.match(r"^Exit code \d+$", ln.strip())]
    line = next((ln for ln in lines if _WHY.search(ln) and not re.search(r"/(?:var|tmp|private)/\S{20,}", ln)), "")
    return clip(line or evidence.error_headline(output), 120)
