"""Reading the agent's conclusion (DESIGN.md §9): which of its sentences can stand as a memory, what the answer is
about (the sentence it opens with), and how a root cause and its fix are said as one memory's title, including a
conclusion that lists its changes under the problem each one fixes.
"""

from __future__ import annotations

import re

from kenning.context import closed
from kenning.memory import cues
from kenning.memory.text import capitalised, clip, content_words, jaccard, stem
from kenning.observer import gates, no_finding
from kenning.observer.reading import Reading
from kenning.observer.roles.roles import Judged
from kenning.observer.titles import CONTEXT_CHARS, GENERIC_HEADING, NAMED, TITLE, dangling, lower_first, statement

# The agent telling itself its next step: "Now update the test-writer skill." (141 of 141 labelled sentences of
# the agent that open so are noise), and what it says next in that paragraph is why it takes that step ("This is
# the biggest change — it currently describes …": 31 of the 32 labelled sentences after one are noise).
_NEXT_STEP = re.compile(r"^(?i:(?:now|next|then|first|finally)[,:]?\s+(?:let['’]?s\s+)?(?:update|add|fix|check|run|"
                        r"read|look|write|create|remove|verify|test|commit|push|build|implement|apply|edit|make|move|"
                        r"rename|refactor|install|open|review|clean|wire|hook|set|change|replace)\b)")
# The agent narrating its own work ("I see — …", "So I'd respond …", "I'm switching to …", "Sure — let me build
# it up …"): what it did in that run, not something the next session should be told. (Of the labelled sentences
# of the agent that open so, 672 of 674 are noise.) The opening words in any case, as a sentence starts; "I"
# only as the pronoun ("I/O errors …" is no narration); and the agent's next step.
_FIRST_PERSON = re.compile(r"^(?i:(?:so|now|ok|okay|then|here|first|next|also|and|but|sure|yes|yeah|right|alright|"
                           r"got it)(?:[,:!.]|\s*[—–-])?\s+)?"
                           r"(?:[iI](?=\s)|[iI]['’](?:m|d|ll|ve)\b|(?i:let me|let['’]s|we['’]ll)\b)|"
                           r"\bI(?:['’](?:m|d|ll|ve))? "
                           r"(?:updated|changed|added|ran|switched|checked|verified|confirmed|see|think|found|had|did|didn['’]t|"
                           r"kicked|am|was|will|would|could|forgot)\b|\bI['’](?:m|ll|d|ve)\b|^I\s|"
                           + _NEXT_STEP.pattern)


_HEADINGISH = re.compile(r"^(?:summary|changes?|what (?:changed|i did)|result|overview|details|verification|"
                         r"files? changed|review|findings?)\b", re.IGNORECASE)
MIN_WORDS = 4       # a memory's own sentence says at least this much (CJK: twice as many characters)
# A sentence cut off where it goes on in a list or a block ("The fix replaces the ternary in `UnifiedFileRow` (lines
# 631-654) so that", "Made detection deterministic by", "Same golangci-lint version (2.8.0) but"): 43 labelled
# sentences of the agent end so, 37 noise and the rest fragments of a change, cause or fix that say nothing alone;
# so do the 28 that end on "like", "as" or a bare "is / are / was / be" ("To support Windows, you'd need a separate
# file using Windows-specific mechanisms like", "The reason is"), all noise
_CUT_OFF = re.compile(r"\b(?:so that|because|since|that|which|and|or|to|with|when|if|where|the|a|an|of|for|by|than|"
                      r"into|from|via|using|but|although|though|unless|until|including|such as|like|as|be|"
                      # (not "keep the retry budget as is", "leave them as they are")
                      r"(?<!\bas )(?<!\bas it )(?<!\bas they )(?:is|are|was|were))\s*[:：]?$", re.IGNORECASE)
# What the user may do if they like ("If you want exact mirroring, keep delete planning", "The medium-severity items
# remain open if you want to tackle them next: …" as a cause): an offer or advice for that moment, no finding (all 22
# labelled sentences of the agent that say so are noise); what is left open stays a to-do
_OFFER = re.compile(r"\bif you(?:['’]d)? (?:want|like|prefer|rather|wish)\b", re.IGNORECASE)
# What the agent will do once something else is done ("Fix: temporarily allow force-push for `main`, then I can push
# the corrected history", "say the word and I'll grep the Gradle files"): its next step or an offer, nothing done
# (82 of 83 labelled sentences of the agent that say so are noise)
_THEN_I = re.compile(r"\b(?:then|and) I(?:['’]ll| can| will| could)\b")
# A step of the agent's own plan reported ("Step 2 — `LocalExecutionWarning` sub-component added at the bottom of the
# file", "Task 4 — v0.16.0 릴리스 준비."): where the work went, no finding (4 of 5 labelled such sentences are noise)
_STEP_REPORT = re.compile(r"^\W*(?:step|phase|stage|task|part)\s+\d+[a-z]?\s*(?:[—–:]|-\s|\.\s)", re.IGNORECASE)
# The agent thinking aloud ("Wait, that won't work either - …", "Hmm, …", "Oh, …", "等等，…"): a step of its own
# reasoning, which it goes on to settle (9 of 9 labelled sentences of the agent that open so are noise); one that
# gives a cause ("Oh, the hook runs twice because it is registered twice") is a finding still.
_ALOUD = re.compile(r"^\W*(?:wait|hmm+|hm|oh|ah|oops|hold on|whoa|actually,? wait)\b\s*[,.!:;—–-]|"
                    r"^\W*(?:等等|等一下|嗯|哦|啊|あっ|ちょっと待って|待って|잠깐|아)\s*[，,。.!！:：]", re.IGNORECASE)
# What a review says is good ("Strengths: coverage is genuine, not coverage theatre", anything under a "✅ Strengths"
# heading): praise of the code at hand, which tells the next session nothing to do or avoid (4 of 4 labelled such
# sentences of the agent are noise; "Good catch", "Good question" are caught as acknowledgements).
_PRAISE = re.compile(r"^\W*(?:strengths?|what(?:['’]s| is| works) (?:good|well)|what works|positives?|"
                     r"highlights|well done|优点|亮点|良い点|長所|장점)\b\W*(?:[:：]|$)", re.IGNORECASE)
# What introduces what follows ("Here's what the deferred approach requires that per-commit condensation would
# eliminate", "Here's how multi-session merging works"): 57 of 58 labelled sentences of the agent that open so are
# noise (the other, where work was pushed, is told by the session's git state)
_HERE_IS = re.compile(r"^\W*(?:(?:here(?:'s|’s| is| are)|voici|voilà)(?=\W)|以下是|下面是|다음은\s)", re.IGNORECASE)


def fixing_commit(r: Reading, cause: Judged) -> str | None:
    """The turn's last commit that changed the code about what the cause says ("fix: WAL rotation skipped … due to
    non-blocking send" after "`RotateWALFiles` uses a non-blocking send …"), as "<hash> <subject>"."""
    mine = content_words(cause.text) - _ANY_FIX
    for c in reversed(r.actions.commits):
        if closed.changes_code(c.subject) and len(mine & (content_words(c.subject) - _ANY_FIX)) >= 2:
            return clip(f"{c.hash[:7]} {c.subject}".strip(), CONTEXT_CHARS)
    return None


def lead_of(r: Reading, cause: Judged | None, fix: Judged | None) -> tuple[str, bool]:
    """What a cause-and-fix memory's title opens with, and whether the cause follows it as said (not as its cause).
    The lead is the symptom the cause explains when it says something is wrong ("the CI job failed", "v4.40.1 is
    on GitHub but npm never published it"); otherwise ("Yes, only through the custom task `release-plz`") it is
    what the answer said first, and the cause follows it as said."""
    lead = topic(r, [j for j in (cause, fix) if j is not None], (cause or fix).unit.heading)  # type: ignore[union-attr]
    if gates.repo_state(lead) or gates.already_done(lead) or gates.narrated(lead) or gates.asks_the_user(lead) \
            or gates.numbered_item(lead) or ("done" in cues.signals(lead) and not gates.reports_a_problem(lead)):
        lead = ""  # "Current checkout: `main`, clean", "PR #221: auto-merge enabled": how things stood, no subject
    if _aside(lead):
        lead = ""  # "(The `walCheckpoint.go:659` lint warning is pre-existing, unrelated to this change.)": an aside
    # A lead that states the cause itself ("the job failed because of a racy assertion"), or a cause that only
    # goes on from it ("So the assertion assumes …"): the cause follows as said, not labelled the cause.
    goes_on = cause is not None and bool(_GOES_ON.match(cause.text))
    return lead, cause is not None and (not gates.symptom(lead) or goes_on or "cause" in cues.signals(lead))


def _aside(text: str) -> bool:
    """A sentence said wholly in brackets: an aside to what the answer is about (5 of 6 labelled such sentences of
    the agent are noise)."""
    text = text.strip().rstrip(".。!！")
    if len(text) < 3 or text[0] not in "(（" or text[-1] not in ")）":
        return False
    depth = 0
    for k, ch in enumerate(text):
        depth += (ch in "(（") - (ch in ")）")
        if depth == 0 and k < len(text) - 1:
            return False  # "(a) one thing, (b) another": the first bracket closes before the end
    return depth == 0


# A sentence that goes on from the one before ("So the behaviour …", "Thus hk considers …"): its first word ties it.
_GOES_ON = re.compile(r"^(?:so|thus|hence|therefore|and so|which means|consequently|as a result|accordingly)\b,?\s*",
                      re.IGNORECASE)



def worth_saying(j: Judged) -> bool:
    """A sentence that can stand as a memory: not a heading, not a table row, not the agent narrating
    what it did or leading into a list, not cut off where it goes on, and long enough to say something (a
    label's leftover "(4 locations)" is not)."""
    text = statement(j.text)
    if j.unit.table or (_HEADINGISH.match(text) and len(text.split()) < 6):
        return False
    cjk = sum(1 for c in text if "\u3040" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af")
    if j.speaker == "agent" and (_FIRST_PERSON.search(text) or _NEXT_STEP.match(j.unit.before) or _HERE_IS.match(text)
                                 or _CUT_OFF.search(text) or _STEP_REPORT.match(text)
                                 or (j.role != "todo" and _OFFER.search(text))  # (work left is open, offered or not)
                                 or _THEN_I.search(text)
                                 or gates.narrated(text) or gates.repo_state(text) or gates.edits_imports(text)
                                 or (j.role != "todo" and gates.already_done(text))
                                 or gates.asks_the_user(text) or (not cjk and _narrates(text))
                                 or (j.role not in ("change", "status")  # (what was changed reads in the log)
                                     and (gates.numbered_item(text) or mostly_figures(text)))
                                 or _PRAISE.match(j.unit.heading) or _PRAISE.match(text)
                                 or (_ALOUD.match(text) and "cause" not in cues.signals(text))):
        return False
    return len(text.split()) >= MIN_WORDS or cjk >= 2 * MIN_WORDS


# A figure, with its unit, sign or arrow ("-14.93%", "(2304→1914)", "16.3", "~", "→"): what a table's row holds.
_FIGURE = re.compile(r"[~(\[]*[-+−]?\d[\d.,:]*(?:%|x|×|ms|s|µs|ns|[kmg]i?b|b)?(?:→[-+−]?\d[\d.,]*\w{0,3})?[)\]]*[,;]?|"
                     r"[~→←|/=-]+", re.IGNORECASE)


def mostly_figures(text: str) -> bool:
    """A row of a table or a list of figures run together ("Description: sec/op B/op allocs/op BuildFormEncode ~
    (noisy) -14.93% (2304→1914) -27.27% (22→16) …", "10 files changed, +233 / -408 (net -175 lines)"): two words in
    five or more are figures, which say nothing without the table's heads (6 of 7 labelled such sentences of the
    agent are noise, the other where a commit stood)."""
    words = text.split()
    return len(words) >= 6 and sum(1 for w in words if _FIGURE.fullmatch(w)) * 5 >= 2 * len(words)


def _narrates(text: str) -> bool:
    """The agent saying what it does next in another language written with spaces ("Сейчас посмотрю логи, потому
    что …", "loglara bakacağım", "vou verificar …"; English has _FIRST_PERSON). Of such labelled sentences of the
    agent, 123 of 126 are noise. (Not in Chinese, Japanese or Korean, whose polite verb endings the cue shares.)"""
    return not cues.english(text) and "narrate" in cues.signals(text)


# "All 1309 tests pass.", "All clean.", "Fixed in x.py; tests and ruff pass": a check, not a finding.
# ("All three checks are green: `lint`, `test`, and `check-licenses`": the checks it names may follow.)
ROUTINE = re.compile(r"^(?:all (?:clean|good|done|green|set)|(?:fixed|done|changed) in \S+[;,]|(?:all )?(?:changes )?"
                     r"(?:(?:\d[\d,]*|two|three|four|five|six|seven|eight|nine|ten) )?"
                     r"(?:(?:verification|quality|ci|required|local) )?"
                     r"(?:tests?|checks?|gates?|lint|typecheck|builds?|ci|compiles?|everything)\b[^.;]{0,80}"
                     r"\b(?:pass(?:es|ed)?|clean|green|succeed(?:s|ed)?|ok|vet|warnings?)\b)[\s\w,.;:!`/-]{0,60}$",
                     re.IGNORECASE)


def problem(r: Reading, slips: frozenset[str] = frozenset()) -> bool:
    """Whether the turn was about something wrong: the user's words report it, or a command failed that
    was not the agent's own slip (``slips``: commands that failed on what the turn itself had just written)."""
    return any(not c.ok and c.command not in slips for c in r.commands) or gates.reports_a_problem(r.words or r.prompt)


def topic(r: Reading, taken: list[Judged], heading: str) -> str:
    """The sentence the agent's conclusion opens with, when it says what the turn was about ("The
    macOS/libgit2 CI job failed because of a timing-dependent test assertion", "The discussion reports a
    real bug in hk's no-commit-to-branch builtin"): it names the subject the cause and fix leave out."""
    final = [j for j in r.agent if j.origin == "final"]
    for j in final[:2]:
        text = statement(j.text)
        if any(j is t for t in taken) or not worth_saying(j) or len(text) > TOPIC_CHARS:
            continue
        if j.unit.heading and heading and j.unit.heading != heading and not GENERIC_HEADING.match(heading):
            continue  # another section of the answer: another subject
        said = f"{j.unit.heading}: {text}" if j.unit.label else text  # a label's value says it with its label
        if j.role == "status" or ROUTINE.match(said) or (j.role in ("noise", "change") and j.worth < 0.2):
            continue  # "Fixed in config.py; tests and ruff pass" says where it stands, not what it is about
        if _AFTER.match(text):
            continue  # "Now the user will see these on each prompt-submit …": how things are after the work
        if j.text.rstrip().endswith((":", "：")) or _INTRODUCES.match(text) or counts_a_list(j):
            continue  # "Here's a summary of the changes made to x.ts:" introduces the answer, names no subject
        if j.unit.bullet and any(t.unit.bullet and t.unit.para != j.unit.para for t in taken):
            continue  # another item of the list the memory's sentence is in: another change, not its subject
        if NAMED.search(text) and not any(same_thing(text, t.text, 0.5) for t in taken):
            return text.rstrip(".。:")
    return ""


TOPIC_CHARS = 160
# What the work made of things ("Now the user will see these …", "Now it returns …"): of the labelled sentences of
# the agent that open with "Now", 417 of 428 are noise.
_AFTER = re.compile(r"^now\b(?!\s+that\b)", re.IGNORECASE)
_INTRODUCES = re.compile(r"^(?:here(?:'s|’s| is| are)|below (?:is|are)|the following|(?:a |in )?summary\b|to sum up|"
                         r"voici|hier (?:ist|sind)|aquí (?:está|tienes)|以下|总结|まとめ|요약)", re.IGNORECASE)
# A sentence that introduces a list by counting it ("Three changes were needed for v2:", "需要做以下三处修改：",
# "다음 세 가지를 바꿔야 했습니다:"): that a list follows, not what it holds ("VAT is now rounded per line:" says it).
_COUNTS = re.compile(r"\b(?:two|three|four|five|six|seven|eight|nine|ten|\d+|several|a few|a couple of)\s+"
                     r"(?:\w+\s+){0,2}(?:changes|fixes|edits|things|issues|problems|files|steps|updates|items|bugs|"
                     r"places|parts)\b|[一二三四五六七八九十两几\d]+\s*(?:处|个|项|点|条|つの|点の?|箇所の?)\s*"
                     r"(?:修改|变更|改动|问题|变化|変更|修正|問題)|[한두세네\d]+\s*가지", re.IGNORECASE)


# A sentence that introduces what follows with a verb left without its object ("All three references in
# `SKILL.md` now say:", "The new rules are:"): a lead cut off where its substance begins.
_OBJECT_FOLLOWS = re.compile(r"\b(?:says?|said|reads?|are|is|were|was|includes?|contains?|looks? like|becomes?|"
                             r"shows?|lists?|follows?|as follows|goes|went|now)\W*$", re.IGNORECASE)


def counts_a_list(j: Judged) -> bool:
    """A sentence that introduces a list by counting it, or with a verb whose object is the list: it says that a
    list follows, not what it holds."""
    return j.unit.introduces and bool(_COUNTS.search(statement(j.text)) or _OBJECT_FOLLOWS.search(j.text))


# A link alone ("https://github.com/o/r/pull/342"): what it is, its label says ("Draft PR created: …")
_LINK_ONLY = re.compile(r"^\W{0,2}https?://\S+?[.)>]?$")


def status_said(j: Judged) -> str:
    """Where the work stands as the agent's conclusion reports it, for the session's log: a link alone with the
    label it stands under ("Draft PR created: https://…/pull/342"; of the labelled links alone in the agent's
    words, 8 of 8 have one, 6 are statuses), never a lead that introduces what follows ("Here's the comparison
    between our PR #342 and #343:": 1 of 66 labelled such leads is a status, not kept); "" when it says none."""
    text = j.text.strip()
    if _INTRODUCES.match(text) or text.endswith((":", "：")) or counts_a_list(j):
        return ""
    if _LINK_ONLY.match(text):
        label = j.unit.heading.strip().rstrip(":：")
        return f"{label}: {text}" if label and not GENERIC_HEADING.match(label) else ""
    # A row of a status table ("태그 `v0.16.1`; 푸시됨"): one item, the step and its state (the log's items are
    # split at "; ", which would leave the step without its state)
    return " — ".join(cell.strip() for cell in text.split("; ")) if j.unit.table else text


# A step said as an instruction ("Add a relay gate of its own, …", "Treat exit 1 as a detached `HEAD`"), not a noun
# that happens to open a sentence ("Update check failed", "Pass rate is 90%")
_IMPERATIVE = re.compile(
    r"^(?:add|use|change|make|move|remove|replace|set|switch|wrap|split|introduce|return|pass|guard|skip|drop|keep|"
    r"rename|create|call|bump|pin|increase|raise|lower|reduce|limit|cap|extract|delete|disable|enable|handle|"
    r"validate|catch|retry|ensure|give|update|revert|treat|gate|route|reject|accept|stop|avoid|do not|don't)\s+"
    r"(?!(?:\S+\s+){0,2}(?:is|are|was|were|has|had|fails|failed|returns|returned|breaks|broke|seems|looks)\b)",
    re.IGNORECASE)


def proposed(fix: Judged, changed: bool = True) -> bool:
    """A fix the agent recommends ("Recommended fix: …", "I'd suggest …"), not one it made; in a turn that
    ``changed`` no file, also one it says as an instruction ("Add a relay gate of its own, …")."""
    return "proposal" in cues.signals(fix.text) | cues.signals(fix.unit.heading) or \
        (not changed and bool(_IMPERATIVE.match(statement(fix.text))))


def cause_and_fix(cause: Judged | None, fix: Judged | None, lead: str = "", as_said: bool = False, *,
                   proposal: bool = False) -> str:
    """"<symptom> — cause: <cause> — fix: <fix>"; after a lead that names no symptom ("release-plz bumped
    pklr", then "That made the tests fail") the cause follows it as said, not labelled its cause; with no
    lead, a cause that only points back ("This prevents the TypeError …") follows the fix it points at."""
    if cause and fix and not lead and dangling(cause):
        return clip(f"{statement(fix.text).rstrip('.。')} — {lower_first(statement(cause.text))}", TITLE)
    parts = [lead] if lead else []
    if cause and lead and as_said:
        end = "。" if lead.rstrip().endswith("。") else "."
        parts = [f"{lead.rstrip('.。')}{end} {capitalised(_GOES_ON.sub('', statement(cause.text))).rstrip('.。')}"]
        cause = None
    if cause:
        parts.append(("cause: " if lead else "") + (lower_first(statement(cause.text)) if lead else
                                                    statement(cause.text)).rstrip(".。"))
    if fix:
        label = "workaround: " if _WORKAROUND.search(fix.text) else "proposed fix: " if proposal else "fix: "
        parts.append((label if parts else "") + (lower_first(statement(fix.text)) if parts else
                                                 statement(fix.text)).rstrip(".。"))
    return clip(" — ".join(parts), TITLE)


# A way around the problem until it is fixed ("A temporary workaround is: HK_SKIP_STEPS=… git rebase --continue"):
# not the fix, which a later change may make.
_WORKAROUND = re.compile(r"\bwork(?:-| )?arounds?\b|\bin the meantime\b|回避策|临时(?:方案|办法|解决)|变通|"
                         r"임시\s*(?:해결|우회)|우회\s*방법", re.IGNORECASE)

# Words every cause and fix may say: sharing them says nothing about sharing a subject.
_ANY_FIX = frozenset(stem(w) for w in (
    "fix", "fixed", "fixes", "cause", "caused", "causes", "error", "errors", "issue", "bug", "problem", "test", "tests",
    "change", "changed", "now", "make", "made", "use", "used", "run", "ran", "fail", "failed", "failing", "work",
    "works", "worked", "because", "instead", "should", "would", "could", "also", "still"))


def together(cause: Judged, fix: Judged, changed: bool = True) -> bool:
    """A cause and a fix that belong in one memory: said in one place (the same message and section) of a turn that
    changed files, or about the same thing (a word of substance, a name, in both). In a turn that changed nothing,
    a message says what it found, often more than one thing ("Renaming `sample.go` … produced a one-sided removal",
    then "My probe produced a false `PARAM_TYPE` edge …"): only one paragraph is."""
    if cause.message == fix.message and (cause.unit.heading == fix.unit.heading
                                         or not cause.unit.heading or not fix.unit.heading) \
            and not (cause.unit.bullet and fix.unit.bullet and cause.unit.para != fix.unit.para) \
            and (changed or cause.unit.para == fix.unit.para):
        # (two items of a list are two findings, unless a word ties them)
        return True
    if cause.message == fix.message and no_finding.heads_a_cause(cause.unit.heading) \
            and "fix" in cues.signals(fix.unit.heading):
        return True  # "**What was wrong**: …" then "**The fix**: …": the message's own cause and fix
    shared = (content_words(cause.text) & content_words(fix.text)) - _ANY_FIX
    if cause.unit.heading and fix.unit.heading and cause.unit.heading != fix.unit.heading and len(shared) < 2:
        # Under two headings of their own: one word in common is not the same thing ("value" tied a cause under "No
        # test for the force-close path" to a test strengthened under "Commit 1 — …"); a name is
        return _related(_quoted(cause.text), _quoted(fix.text))
    return bool(shared)


def _quoted(text: str) -> set[str]:
    """What a text names in code quotes, a word alone (`drain()` as `drain`, `.claude/` as `.claude`)."""
    return {m.group(1).strip().rstrip("/").removesuffix("()").lower() for m in _SPAN.finditer(text)
            if " " not in m.group(1).strip()}


def _related(mine: set[str], theirs: set[str]) -> bool:
    """Names of the same thing: equal, or one a folder of the other (`.claude/` and `.claude/settings.json`)."""
    return any(a == b or a.startswith(b + "/") or b.startswith(a + "/") for a in mine for b in theirs)


# A name in code quotes that identifies a thing (a path, a flag, an identifier), not a plain word.
_SPAN = re.compile(r"`([^`\s][^`]{2,79})`")
_NAMEISH = re.compile(r"[/._\-:]|[a-z][A-Z]")


def _names(text: str) -> set[str]:
    # (a function with or without its call parentheses is one name: `WriteCheckpointFile()`, `WriteCheckpointFile`)
    return {m.group(1).strip().rstrip("/").removesuffix("()").lower() for m in _SPAN.finditer(text)
            if _NAMEISH.search(m.group(1))}


def same_subject(text: str, facts: list[str]) -> bool:
    """The agent says more, in the same turn, about a thing a memory already names in code quotes
    ("`tmp/clones/` holds stale tests" after "bun picks up `tmp/clones/`"): the same subject."""
    mine = _names(text)
    return bool(mine) and any(mine & _names(f) for f in facts)


def same_thing(a: str, b: str, threshold: float = 0.6) -> bool:
    """Two sentences that say the same thing (most of their content words shared)."""
    return a == b or jaccard(content_words(a), content_words(b)) >= threshold
