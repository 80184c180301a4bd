"""What a prompt states, read by its grammar: the cue words of rules, choices with their reasons,
workstream statuses and environment facts, in English ("pause the billing migration", "we chose
Postgres because …", "`make test` is gone; run `just test`"), and a one-line gist of a prompt.

The role model (kenning/observer/roles) judges every language; this grammar adds what English cue
words say precisely: which clause of a sentence is the statement, that a reason in the next sentence
belongs to it, and that a workstream's status changed.
"""

from __future__ import annotations

import re

from kenning.memory.subjects import is_status, supersedes_something
from kenning.memory.text import capitalised, sentences
from kenning.observer import ide_request, own_words
from kenning.observer.units import is_output, printed_from, test_verdict
from kenning.records import Event

_DECISION_CUES = re.compile(
    r"\b(?:(?:we|i)\s+(?:use|prefer|always|never|don't|do not|only)|prefer|always|never|"
    r"(?:i|we)(?:'d| would) rather|(?:i|we) (?:like|want|hate|dislike|don't like|do not like) (?!to know|you to)|"
    r"don't|do not|must(?: not)?|should(?:n't| not)|avoid|stick (?:to|with)|from now on|going forward|instead of|"
    r"rather than|keep using|no more|no longer|is gone|are gone|"
    r"(?:switched|moved|migrated|changed) (?:[\w.-]+ ){0,3}(?:to|from)|"
    r"only (?:on|in|from|with|via|after|before|through)|"
    r"keep (?:[\w.-]+ ){0,3}(?:small|short|simple|clean|fast|focused|minimal|consistent|sorted|in sync|under|below)|"
    r"not\s+\w+\s*,|use\s+\S+(?:\s+\S+)?\s*(?:,\s*)?(?:not|over|instead))\b",
    re.IGNORECASE)
# A choice and its reason: "we chose Postgres because …", "let's go with Redis since …".
_CHOICE_CUES = re.compile(r"\b(?:(?:we|i)(?:'ve| have)?\s+(?:chose|chosen|decided|picked|settled on|went with|"
                          r"are going with|will go with|agreed)|let's (?:go|stick) with|the decision is|"
                          r"decision:|we'll use|we will use)\b", re.IGNORECASE)
_REASON_START = re.compile(r"^(?:because|since|that's because|this is because|the reason|reason:|so that|"
                           r"otherwise|it's because|as it|as they|due to)\b", re.IGNORECASE)
# Where a piece of work stands, said by the user: "pause the billing migration until Q3".
_STATUS_CUES = re.compile(r"\b(?:pause|paused|pausing|put .{1,40} on hold|on hold|resume|resumed|resuming|"
                          r"unblocked|blocked (?:on|by)|postpone|postponed|shelve|shelved|park|parked|"
                          r"(?:is|are) (?:done|finished|shipped|cancelled|canceled|dropped|abandoned|live)|"
                          r"we(?:'re| are) (?:back on|done with|resuming|pausing))\b", re.IGNORECASE)
# A fact about the environment, said by the user: "the integration tests need Docker running".
_FACT_CUES = re.compile(r"\b(?:needs?|requires?|only works?|won't work|fails? (?:unless|without|when|if)|"
                        r"breaks? (?:unless|without|when|if)|must be set|has to be set|heads up|fyi|note that|"
                        r"gotcha)\b", re.IGNORECASE)
# An imperative that holds beyond this turn: "run `make test` before every commit".
_STANDING = re.compile(r"\b(?:every|each time|always|whenever|any ?time|by default|in this (?:repo|repository|project|"
                       r"codebase)|going forward|from now on|before (?:any|committing|pushing|merging|a commit|a push)|"
                       r"after (?:any|committing|pulling))\b", re.IGNORECASE)
# What a fact about the environment is about (else "totals need VAT rounding" would be one).
_SETUP = re.compile(r"\b(?:running|installed|install|set|env|environment|variable|locale|timezone|version|port|path|"
                    r"docker|container|service|daemon|server|node|python|java|ruby|go|rust|vpn|network|credentials?|"
                    r"token|key|permissions?|root|sudo|ci|machine|os|linux|macos|windows|database|db|cache|disk|"
                    r"memory|cpu|gpu|browser|headless|display)\b|`[^`]+`|\b[A-Z][A-Z0-9_]+=", re.IGNORECASE)
_USER_CAUSE = re.compile(r"\b(?:was|were|is|are) caused by|\broot cause\b|\bthe (?:cause|culprit|problem|issue|bug) "
                         r"(?:was|is)\b|\bturned out\b|\bcame from\b", re.IGNORECASE)
# "I don't know why it fails" has a cue word but states no rule.
_NOT_A_RULE = re.compile(r"\b(?:i|we)\s+(?:don't|do not|didn't|did not)\s+(?:know|understand|think|see|get|remember)\b",
                         re.IGNORECASE)
_LEAD_IN = re.compile(r"^(?:(?:and|also|but|so|oh|plus|btw|please|pls|ok|okay|one more thing|fyi|heads up|"
                      r"(?:one|two|three|a few|some) things?|note|important|remember|keep in mind)"
                      r"(?: that)?\b[\s,:\-—]*)+",
                      re.IGNORECASE)
_REQUEST = re.compile(r"^(?:can|could|would|will) you\b|^(?:fix|add|implement|write|refactor|rename|explain|"
                      r"investigate|find|check|look|make|create|update|change|remove|delete|run)\b(?!.*\b(?:always|"
                      r"never|from now on|instead of|no longer|going forward)\b)", re.IGNORECASE)


def statements(prompt: str) -> list[tuple[str, str]]:
    """(kind, sentence) of what a prompt states: ``rule``, ``choice`` (with its reason), ``status``, ``fact``.

    One sentence each, however it is punctuated inside ("e.g.", ``make proto``); a reason in
    the next sentence ("Use Redis. Because …") stays with its decision; two rules joined by a
    semicolon are two, a correction and what replaces it ("`make test` is gone; run …") one.
    """
    out: list[tuple[str, str]] = []
    parts = sentences(prompt)
    consumed: set[int] = set()
    for i, raw in enumerate(parts):
        if i in consumed:
            continue
        kinds = [_clause_kind(c) for c in _clauses(raw)]
        for j, (kind, s) in enumerate(kinds):
            if kind is None or own_words.asks(raw) or len(s) > 300 or len(s.split()) < 3:
                continue
            if kind in ("fact", "status") and j + 1 < len(kinds) and kinds[j + 1][0] is None:
                s = f"{s}; {kinds[j + 1][1]}"  # "… was caused by X; we fixed it with Y": the fix goes along
            following = parts[i + 1] if i + 1 < len(parts) else ""
            if kind in ("choice", "rule") and _REASON_START.match(following) and len(s) + len(following) < 300:
                s = f"{s}: {_lower_first(following.rstrip('.'))}"
                consumed.add(i + 1)
            s = capitalised(s)
            if all(s != x for _k, x in out):
                out.append((kind, s))
    return out[:4]


def _clause_kind(clause: str) -> tuple[str | None, str]:
    s = _LEAD_IN.sub("", clause).strip().rstrip(".!; ")
    probe = _NOT_A_RULE.sub("", s.replace("\u2019", "'"))  # "don’t" typed with a curly apostrophe
    return (_kind_of(s, probe) if len(s.split()) >= 3 else None), s


def _clauses(sentence: str) -> list[str]:
    """A sentence's ';'-separated clauses; a correction ("`make test` is gone") keeps what replaces it."""
    parts = [re.sub(r"^and\s+", "", p.strip()) for p in sentence.split(";") if p.strip()]
    out: list[str] = []
    for p in parts:
        if out and supersedes_something(out[-1]) and not _DECISION_CUES.search(_GONE.sub("", out[-1])):
            out[-1] = f"{out[-1]}; {p}"
        else:
            out.append(p)
    return out


_GONE = re.compile(r"\b(?:is|are) gone|no longer \w+|was removed|has been removed\b", re.IGNORECASE)


# "Use pnpm for all installs": a tool for a kind of work (plural, -ing, "all/every …"), not for this task.
_USE_FOR = re.compile(r"^(?:(?:actually|correction|scratch that|instead|so)[\s,:;—-]+)?(?:always |please |we )?"
                      r"(?:use|prefer|stick to|go with) [\w.@/+-]+(?: [\w.@/+-]+)? (?:for|to|when|in|on) "
                      r"(?:all |every |any |new |our |the )?(?:[\w-]+ )?[\w-]+(?:s|ing)\b", re.IGNORECASE)


# A sentence that opens with a condition ("When you are done, dispatch the review agents", "Once the migration is
# done, …"): what is to happen then, not where the work stands now.
_ON_CONDITION = re.compile(r"^(?:when|whenever|once|after|if|as soon as|until|before)\b", re.IGNORECASE)


def _kind_of(s: str, probe: str) -> str | None:
    if _CHOICE_CUES.search(probe):
        return "choice"
    if _USE_FOR.search(probe):
        return "rule"
    if _STATUS_CUES.search(probe) and is_status(probe) and not _ON_CONDITION.match(probe):
        return "status"
    if _REQUEST.match(probe) and not (_STANDING.search(probe) and not probe.lower().startswith(
            ("can ", "could ", "would ", "will "))):
        return None  # "fix the bug in parser.py", "can you use pnpm?": asked for, not stated
    if _DECISION_CUES.search(probe) or _STANDING.search(probe):
        return "rule"
    if _FACT_CUES.search(probe) and _SETUP.search(probe) and not probe.lower().startswith(("i ", "we ")):
        return "fact"
    if _USER_CAUSE.search(probe):
        return "fact"  # a root cause the user found: "the flaky test was caused by the shared tmp dir"
    return None


def decisions_in(prompt: str) -> list[str]:
    """Sentences of a prompt that state a rule or preference, a decision, or a workstream's status."""
    return [s for kind, s in statements(prompt) if kind != "fact"][:3]


def _prompt_text(ev: Event | None) -> str:
    if ev is None:
        return ""
    p = ev.payload.get("prompt")
    return p if isinstance(p, str) else ""


def _is_notification(text: str) -> bool:
    """A prompt the user did not type: a tool's notification, a shell escape's output, another session's message."""
    from kenning.observer.reading import NOT_TYPED

    return text.lstrip().startswith(NOT_TYPED)


def _words(text: str) -> float:
    """About how many words ``text`` says: Chinese and Japanese put no spaces between theirs (two
    characters count one), Korean puts them between phrases."""
    def cjk(c: str) -> bool:
        return "\u3040" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af"

    spaced = sum(1 for w in text.split() if not any(cjk(c) for c in w))
    return spaced + sum(1 for c in text if cjk(c)) / 2


_ROLE = re.compile(r"^\s*(?:you are|you're|act as|your role is|tu es|du bist|eres)\s+"
                   r"(?!right|wrong|correct|absolutely|totally|mistaken|not\b|missing|confus|on\b|in\b)"
                   r"(?:a|an|the|un|une|ein|eine)?\s*"
                   r"[^.?!\n]{0,120}(?:[.\n]|$)|^\s*(?:你是一(?:个|名|位)|あなたは[^。]{0,60}(?:です|として)|당신은\s)",
                   re.IGNORECASE)


_AT_LINE = re.compile(r"^[\w./-]+\.\w{1,5}:\d+:")  # "scenario_test.go:19: …": a line a program printed


def gist_of(prompt: str, limit: int = 90) -> str:
    """A one-line gist of a prompt: its first real sentence, without pleasantries; not the role it gives the
    agent ("You are a futures analyst …"), when it asks something after that."""
    if _is_notification(prompt):
        return ""
    prompt = "\n".join(line for line in ide_request.request(prompt).split("\n") if not _printed(line))
    return _gist(prompt, limit, skip_role=True) or _gist(prompt, limit, skip_role=False)


def _printed(line: str) -> bool:
    """A line of a prompt that a program printed: set in by a tab or eight spaces (code, or a test runner's
    "        Error:  \"0\" is not greater than \"1\"" under the test it failed), or a log line that names the
    place it was printed from ("    agent_test.go:36: Agent output: Done! I've committed …", whose sentences
    are the program's, however they read)."""
    said = line.strip()
    return line.startswith(("\t", " " * 8)) or bool(_AT_LINE.match(said)) or test_verdict(said)


def _gist(prompt: str, limit: int, *, skip_role: bool) -> str:
    out = ""
    for sentence in sentences(prompt):
        s = _said(sentence, skip_role=skip_role)
        if not s:
            continue
        if not out:
            out = s
            # a lead that only points at what follows ("can you take a look at:") takes its first sentence in
            if not (s.endswith((":", "：")) and _words(s) <= _POINTER_WORDS):
                break
        else:
            out = f"{out} {s}"
            break
    return out if len(out) <= limit else out[: limit - 1].rstrip() + "…"


_POINTER_WORDS = 6


# A markdown heading's marks ("## Summary" of a pasted report, "# Fix the parser" of a pasted plan): not words
_HEADING_MARK = re.compile(r"^#{1,6}\s+")


def _said(sentence: str, *, skip_role: bool) -> str:
    """A sentence of a prompt as its gist, or "" when it says nothing of the user's."""
    if skip_role and _ROLE.match(sentence):
        return ""
    s = re.sub(r"^(?:(?:hi|hey|hello|ok|okay|great|nice|thanks|thank you|cool|perfect|please|pls|can you|"
               r"could you|would you|i want you to|i'd like you to|let's)\b[\s,!.]*)+", "", sentence,
               flags=re.IGNORECASE)  # repeated: "ok, please could you …"
    s = _LEAD_IN.sub("", s).strip().rstrip(".!")
    s = re.sub(r"\s+", " ", _HEADING_MARK.sub("", s))
    cut = printed_from(s)
    json_at = s.find('{"')  # a JSON log record pasted after the words ("still failing: {"time": …")
    cut = json_at if json_at > 0 and (cut < 0 or json_at < cut) else cut
    if cut >= 0 and not any(c.isalpha() for c in s[:cut]):
        return ""  # pasted program output only: nothing the user said
    said = s[:cut].rstrip(" :,;-—([：") if cut > 0 else ""
    if _words(said) >= 2:  # the user's words, not the log they pasted after them
        s = said
    elif is_output(s) or _AT_LINE.match(s):
        return ""  # a test runner's verdict, a log line ("x_test.go:19: …"), JSON: what a program printed
    if _words(s) < 2:
        return ""  # "Nice." / "Thanks!" / "好的" say nothing about the work
    return capitalised(s)


def _lower_first(s: str) -> str:
    """"The cause was X" → "the cause was X" (only an ordinary first word loses its capital)."""
    first = s.split(" ", 1)[0]
    return s[0].lower() + s[1:] if first.isalpha() and first[1:].islower() else s
