"""What a sentence is not, whatever the role model says of it: a task of one turn or a plan as a standing
rule, a request as a decision, the agent's workflow steps or the checkout's state as findings, a first
sentence that names no symptom as the symptom of the cause after it (DESIGN.md §9; the cases a reader
marked misleading in the development set's contexts, tests/unit/test_memory_that_would_mislead.py).
"""

from __future__ import annotations

import re

from kenning.memory import cues
from kenning.memory.text import CJK_CHAR
from kenning.observer.own_words import FOR_GOOD

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from kenning.observer.roles.roles import Judged

# The agent reporting a step of its workflow with the "I" left out ("Rebased onto origin/main; it was already up
# to date.", "Replied to and resolved the review thread"): what it did in that run. The session's line and its
# git state already say where the work stands.
_NARRATED = re.compile(
    # (a verb with what it was done to: "Pushed tags trigger the release" and "Merged PRs deploy" are facts)
    r"^(?:rebased|replied|pushed|force-pushed|committed|amended|squashed|merged|re-?ran|re-?triggered|fetched|"
    r"pulled|checked out|switched)\s+(?:onto|to|into|on|from|in|the|it|them|this|that|these|those|a|an|all|both|"
    r"and|with|as|`|origin|main|master|#?\d)|"
    # that a check was made, where: "Confirmed from latest `main`.", "Verified locally against the fixture"
    r"^(?:confirmed|verified|checked|re-?checked|reproduced|re-?tested|tested|validated)\s+(?:from|on|against|in|"
    r"with|locally|again|upstream)\b|"
    # the same said of the branch ("Branch rebased onto `origin/main` and force-pushed", "The branch is pushed.": 6
    # of 6 labelled such sentences of the agent are noise)
    # ("Changes pushed to main are deployed" is a fact: without "is" / "was", the step must say where it went)
    r"^(?:the |this |my |our )?(?:branch|pr|pull request|commits?|changes)\s+(?:(?:was|were|has been|have been|is|"
    r"are) (?:now )?(?:rebased|force-pushed|pushed|merged|amended|squashed|committed)\b|"
    r"(?:rebased|force-pushed|pushed|merged|amended|squashed|committed)(?=\s+(?:onto|and|to `?origin|locally)\b|"
    r"\s*[.;]?$))|"
    r"^(?:created (?:the |a )?(?:pr|pull request|branch|commit)|opened (?:the |a )?(?:pr|pull request)|"
    r"resolved (?:the|all|both|\d+)\b[^.]{0,30}\b(?:threads?|comments?|conversations?))\b", re.IGNORECASE)
# A step going on as the agent speaks ("Launching three parallel review layers now.", "Now pushing and opening the
# draft PR."; 16 labelled sentences of the agent, all noise): not what was done
_ONGOING = re.compile(r"^\W*(?:now\s+)?(?!(?:every|no|some|any)thing\b)[a-z]+ing\b"
                      r"(?!\s+(?:is|are|was|were|has|have|will|would|can|should|must|may)\b)"
                      r"[^.]{0,120}(?<!\bfor )(?<!\buntil )(?<!\bby )\bnow\W*$|^\W*now\s+[a-z]+ing\b", re.IGNORECASE)


def ongoing(text: str) -> bool:
    return bool(_ONGOING.search(text.strip()))

# That some work is complete: no finding, but where a workstream stands (compose's status memory)
_DONE_REPORT = re.compile(
    r"^[^.;:!?。]{0,80}\b(?:is|are|has been|have been) (?:now )?(?:complete|completed|done|finished)[.!]?$|"
    r"(?:が|を|の)?(?:完了|終了)しました[。!！]?$|已(?:经)?完成了?[。!！]?$|완료(?:했습니다|되었습니다|됐습니다)[.!]?$",
    re.IGNORECASE)


# A commit's diffstat ("4 files changed, 47 insertions(+)", "4개 파일 변경(47 추가, 5 삭제)"): that run's bookkeeping
_DIFFSTAT = re.compile(r"\b\d+ files? changed\b|\b\d+ (?:insertions?|deletions?)\(|\b\d+ additions?,? (?:and )?\d+ "
                       r"deletions?\b|\d+\s*개\s*파일\s*(?:이\s*)?변경|\d+\s*(?:추가|줄 추가)\s*,\s*\d+\s*삭제|"
                       r"\d+\s*(?:個の)?ファイル(?:を|が)?変更|\d+\s*个文件(?:被)?(?:修改|更改|变更)", re.IGNORECASE)


# What the agent did not touch, or had done a step before ("The unrelated untracked file … was left untouched",
# "The struct docs were already updated in the previous round"): that run's bookkeeping.
_UNTOUCHED = re.compile(r"\b(?:(?:was|were|is|are) left (?:untouched|alone|as is|unchanged|in place)|"
                        r"(?:was|were) already \w+ in the (?:previous|last|earlier|prior) (?:round|turn|pass|step|run|"
                        r"iteration|commit))\b", re.IGNORECASE)


def narrated(text: str) -> bool:
    """The agent reporting a step of its workflow (a commit's diffstat too), or that some work is complete."""
    return bool(_NARRATED.search(text) or _DONE_REPORT.search(text) or _DIFFSTAT.search(text)
                or _UNTOUCHED.search(text) or ongoing(text))


# The agent asking the user to do something ("Run it with the `!` prefix, or unlock the GPG agent and let me know",
# "…알려주세요", "…してください", "请…"), or offering more ("say the word if you want any of them", "Want me to …",
# "If you'd like, I can …": 34 labelled sentences of the agent, all noise): a turn of the conversation, not what the
# next session should know.
_ASKS = re.compile(r"\b(?:let me know|tell me|please (?!note\b|see\b)\w+)\b|"
                   r"(?:^|[,;:]\s*)(?:could|can|would) you\b|\bsay the word\b|\bwant me to\b|"
                   r"\bwhenever you(?:['’]re| are)? ?(?:want|like|wish|ready|give the word)\b|"
                   r"\bif you(?:['’]d)? (?:want|like|prefer|rather)\b[^.;]*\bI(?:['’]ll| can| could| will)\b|"
                   r"(?:주세요|주시겠어요|주시면|ください|下さい|いただけますか)\s*[.!?。！？]?\s*$|"
                   r"^请|麻烦你", re.IGNORECASE)


def asks_the_user(text: str) -> bool:
    """Whether the agent's sentence asks the user to act or answer."""
    return bool(_ASKS.search(text))


def reports_done(text: str) -> bool:
    """Only that some work is complete ("The billing migration is done.", "R5 の修正が完了しました")."""
    return bool(_DONE_REPORT.search(text))


# An item of a list laid out in the conversation, named by its number ("Finding 1 flags a tradeoff …; Finding 2's
# mechanism is real …", "Fix 1 (fail loud) applied; fix 2 left as-is", "option 3 is probably most practical"):
# unreadable without the list (17 of 22 labelled such sentences of the agent are noise; the others say what was
# changed, which the session's line keeps). An option that says its name ("Option 4: Per-File Pool") reads alone.
_NUMBERED_ITEM = re.compile(r"\b(?:finding|fix|item|point|suggestion|proposal|recommendation|concern|comment|option|"
                            r"choice|approach|variant|alternative)\s*#?\s*\d{1,2}\b(?![.,]\d)(?!\s*[:：]\s*[A-Z*])|"
                            r"(?:方案|选项|建议|问题|指摘|コメント|提案|案)\s*[1-9１-９]|"
                            # items by their list marks alone ("The most impactful are #1 and #2 since …")
                            r"(?<![\w/])#[1-9](?:\s*(?:,|and|or|&|/)\s*#[1-9])+(?!\d)",
                            re.IGNORECASE)


def numbered_item(text: str) -> bool:
    """Whether the sentence names an item of a list the conversation laid out by its number alone."""
    return bool(_NUMBERED_ITEM.search(text))


# How the checkout stood at that moment ("`main` is checked out, but it has diverged from `origin/main`",
# "clean except for the intended change, matching origin/main at HEAD"): stale by the next session.
_REPO_STATE = re.compile(
    r"\b(?:checked out|current checkout|working tree|clean (?:status|tree|working)|clean except|up[- ]to[- ]date|"
    r"diverged|fast-forward(?:ed)?|(?:ahead of|behind) (?:`?origin|by \d))\b|\bmatch(?:es|ing) `?origin/|"
    # where a pull request or a commit stood ("PR #48 now has the two commits", "PR #1066 is open and ready for
    # review", "Empty commit `d35fea9` (…) is on `chore/…`"): 5 of 5 such labelled sentences are noise or status
    r"\b(?:(?:current(?:ly)?|the) (?:pending|uncommitted|staged) (?:diff|changes)|(?:pending|uncommitted|staged) "
    r"diff)\b|"  # "Current pending diff also includes …": the working tree then
    r"\b(?:(?:the|this|that|our|my) (?:PR|pull request)|(?:PR|pull request)\s*#?\d+)\s+(?:is|are)\s+"
    r"(?:now\s+|still\s+)?(?:conflicting|in conflict|not mergeable|"
    r"mergeable|green|red|failing|passing|pending|open|approved|in review)\b|\b(?:PR|pull request)\s*#?\d+\s+now\s+"
    r"has\b|\bcommit `?[0-9a-f]{7,40}`? (?:\([^)]{0,120}\) )?is on `|"
    r"브랜치 삭제|로컬은 fast-forward", re.IGNORECASE)


# Work said to be done already ("ContextTab.tsx was already committed in a prior commit", "The header was already
# bumped to 1.5.4 and … — those don't need further changes", "… were already committed separately (`8733497`)"):
# where the work stood, stale by the next session (8 of 8 labelled such sentences of the agent are noise; "already
# defined in checkpoint.go", "already configured as an allowed principal" say how things are, and stay).
_ALREADY_DONE = re.compile(r"\balready\s+(?:been\s+)?(?:committed|pushed|merged|published|released|tagged|bumped|"
                           r"updated|modified|staged)\b|已经(?:提交|推送|合并|发布)|既にコミット|すでにコミット",
                           re.IGNORECASE)


def repo_state(text: str) -> bool:
    """The checkout's state at one moment, and nothing that explains why or warns (no cause, no rule)."""
    return bool(_REPO_STATE.search(text)) and not cues.signals(text) & {"cause", "always", "must", "prohibit",
                                                                         "gotcha"}


def already_done(text: str) -> bool:
    """Work said to be done already, with no cause or trap said with it (what is left open because of it, "Since
    #11029 is already merged, this should be a separate follow-up PR", is work to do: the caller keeps to-dos)."""
    return bool(_ALREADY_DONE.search(text)) and not cues.signals(text) & {"cause", "gotcha"}


# A request for this turn: an imperative of a task verb, maybe after a short lead ("At the top of the report,
# find a way to …"), with nothing that makes it a habit. "Always check …", "Check X before every deploy" are.
_TASK = re.compile(
    r"^(?:(?:ok(?:ay)?|so|now|then|also|and|please|pls)[,:]?\s+)*(?:[^,;:]{3,40},\s*)?(?:please\s+)?"
    r"(?:analy[sz]e|investigate|look (?:into|at)|find (?:out|a way)|figure out|review|explain|summari[sz]e|"
    r"show me|tell me|debug|research|compare|propose|draft|try|make (?:a|an|the) (?:pr|pull request)|"
    r"enquête|analyse[zr]?|untersuche|analysiere|investiga|analiza)\b", re.IGNORECASE)

# What the product should show, asked for in a turn ('"Linked" should appear as "Linked docs"', "We should have
# distinct sections for each agent"): a change to build, not how the agent is to work.
_SPEC = re.compile(r"\bshould (?:appear|show|display|read|look|be (?:displayed|shown|labell?ed|named|called|"
                   r"rendered|visible|hidden))\b|"
                   r"^(?:(?:ok(?:ay)?|so|now|then|also|and|but)[,:]?\s+)*"
                   r"we should (?:have|add|show|display|build|create)\b|"
                   # what the program is to do ("… and I don't have kiro installed, it should tell me")
                   r"\bit should (?:tell|warn|print|say|report|show|display|log|ask|error|fail|skip|exit|throw|raise)"
                   r"\b", re.IGNORECASE)
# Work to build in this turn, said as an order or a need ("Implement mise lint:licenses task in this repository",
# "we need to initialize the licensefinder with accepted licenses", "implement but don't commit"): verbs of a
# piece of work done once, which no standing rule opens with unless it says when it applies. (Not "use", "add",
# "write", "build", "install", "rename", "merge": "Install dependencies with pnpm" is a rule. Of the user's
# labelled sentences that open so, none is a rule.)
_BUILD_TASK = re.compile(
    r"^(?:(?:ok(?:ay)?|so|now|then|also|and|please|pls|lets|let's)[,:]?\s+)*(?:(?:i|we|you) (?:need|have|want) "
    r"(?:you )?to\s+|please\s+)?(?:implement|initiali[sz]e|set up|create|refactor|migrate|port|rewrite|fix|bump|"
    r"upgrade|revert|confirm|verify)\b|"
    # the work the user has for this turn ("I have two additional charts to implement …")
    r"^(?:(?:ok(?:ay)?|so|now|then|also|and)[,:]?\s+)*(?:i|we) (?:have|got) (?:\S+\s+){1,5}?to "
    r"(?:implement|build|add|fix|create|write|make|do)\b", re.IGNORECASE)
# When an order applies, which makes it a habit ("Create a branch for each ticket", "Fix lint before pushing").
_WHEN = re.compile(r"\b(?:every|each|all|any|whenever|only|before|after|when|unless|until)\b", re.IGNORECASE)

_HABIT = re.compile(r"^(?:always|never)\b|\b(?:(?:every|each) (?:time|commit|change|push|pr|pull request|release|"
                    r"deploy\w*|run|session|file|module|function|test|step|new|one)\b|from now on|going forward|"
                    r"in (?:the )?future|whenever|(?:before|after|on|in|across) (?:every|each|any|all)\b|by default|"
                    r"as a rule|"
                    r"(?:before|after|when) (?:you |we )?(?:commit|push|merg|deploy|releas|open|tag)\w*)",
                    re.IGNORECASE)


def one_off(text: str) -> bool:
    """Whether the user's sentence asks for a task of this turn rather than saying how to work."""
    return bool(_TASK.match(text.strip()) or _SPEC.search(text)) and not _HABIT.search(text)


def builds_once(text: str) -> bool:
    """Whether the user's sentence orders a piece of work of this turn ("Implement X in this repository"), with
    nothing that makes it a habit ("always", "from now on", "before every release")."""
    # (_HABIT's words are all FOR_GOOD's or _WHEN's)
    return bool(_BUILD_TASK.match(text.strip())) and not FOR_GOOD.search(text) and not _WHEN.search(text)


# A sentence of the agent that weighs a choice rather than states one made: a condition ("If you stop sending
# `have`s, …"), a possibility ("the fork path could use it", "you may choose to keep …"), a guess. In the
# labelled real sessions, 1 of 108 of its sentences that open with a condition is a decision, 3 of 88 with
# could / might / may, 2 of 45 guesses.
_IF_OPENS = r"^(?:if|unless|whether|si|wenn|falls)\b|^(?:如果|要是|假如|もし|만약)"  # (hypothetical below: the same)
_CONDITION = re.compile(_IF_OPENS + r"|^(?:when|once|should)\b", re.IGNORECASE)
_POSSIBLE = re.compile(r"\b(?:could|might|may)\b(?!\s+not\b)|\bpourrai[ts]?\b|\bkönnte\b|\bpodría\b|"
                       r"可以考虑|也可以|かもしれ|수도 있", re.IGNORECASE)


def weighs_a_choice(text: str) -> bool:
    """The agent weighing a choice (a condition, a possibility, a guess), not saying one it made."""
    t = text.strip()
    return bool(_CONDITION.match(t) or _POSSIBLE.search(t)) or "hypothesis" in cues.signals(t)


# A sentence that speaks of decisions as a thing ("Every architectural decision maps to a file in the tree", "…
# consistent with the unidirectional data flow decision", "many standard decision categories are N/A", "The minimal
# template decision stands"): a review of choices, none made in it. Of the 28 labelled real sessions' sentences of
# the agent it takes, none is one (15 noise, 5 changes, 4 facts, 3 status, 1 cause). What it then says the
# decision is ("Decision: keep X", "py.typed decision — deferred to stable", "the decision is to …", "decided to …")
# makes one.
_DECISION_NOUN = re.compile(r"\b(?:decisions?|décisions?|entscheidung(?:en)?|decisi(?:ón|ones))\b", re.IGNORECASE)
_DECISION_SAID = re.compile(
    r"\b(?:decision|décision|entscheidung|decisión)\s*(?:[:：—–]|-\s|\(|(?:is|was|here is)\s+(?:to|that)\b|"
    r"(?:est|ist|es)\s+(?:de|dass|que)\b)|\b(?:decision|décision|entscheidung|decisión)\s+(?:to|de|zu)\b|"
    r"\bdecided\s+(?:to|that|on|against|not)\b|\b(?:we|i|you|they|user|team|was|were|been|has|have|had)\s+"
    r"(?:\w+ly\s+)?decided\b|\b(?:chose|opted|settled on|went with)\b|\b(?:we|i)(?:['’]ll| will) use\b",
    re.IGNORECASE)


def speaks_of_decisions(text: str) -> bool:
    """The agent naming decisions (or a decision) as a subject, without making or stating one."""
    return bool(_DECISION_NOUN.search(text)) and not _DECISION_SAID.search(text)


# An import the agent added, removed or renamed ("Added `goruntime "runtime"` import (aliased to avoid conflict with
# `cc-lib/v2/runtime`)", "Added `logging` and `log/slog` imports", "添加了 `os` 的 import"): an edit the code shows,
# however it is worded (5 of 5 such labelled sentences of the agent are noise). One that says what the import
# caused ("Removed the import of tkinter, which slowed start-up because …", a circular import) is a finding.
_IMPORT_EDIT = re.compile(
    r"^(?:added|removed|dropped|aliased|renamed|updated|sorted|reordered|cleaned up|moved)\s+"
    r"(?:(?:the|an?|missing|unused|needed|required|necessary|new|extra|stale|duplicate|go|python)\s+)*"
    r"(?:`[^`]+`(?:\s*(?:,|and|,\s*and)\s*`[^`]+`)*\s+)?imports?\b"
    r"(?=\s*(?:$|[.,;:(]|(?:for|of|from|in|to|and|statements?)\b))|"
    r"^(?:添加|增加|删除|移除|去掉|更新)了?[^。；]{0,40}?(?:import|导入)|^[^。]{0,40}?(?:import|インポート)\s*を(?:追加|削除|整理)|"
    r"^[^.]{0,40}?(?:import|임포트)\s*(?:추가|제거|삭제|정리)", re.IGNORECASE)
_IMPORT_TROUBLE = re.compile(r"circular|cycle|循环|循環|순환", re.IGNORECASE)


def edits_imports(text: str) -> bool:
    """The agent reporting an import it added, removed or renamed, and nothing it caused."""
    t = text.strip()
    return bool(_IMPORT_EDIT.search(t)) and not _IMPORT_TROUBLE.search(t) and "cause" not in cues.signals(t)


# A condition put to the reader ("If you do not care about wire size, omitting `have`s buys you …"), or in the mood of
# what would or could be ("If they were ever passed through `resolver.py`, they'd fail"), and an offer ("If you want,
# I can sketch …", "… istersen o da mümkün"): a hypothetical, no finding. All 11 such sentences of the agent that
# the labelled real sessions' model keeps are noise; a condition said of what does happen stays ("If the ticker
# wins, the goroutine enters …", "If `platforms` is an object, the caught error is …"), and so does a gotcha (a trap
# is a condition).
_IF = re.compile(_IF_OPENS, re.IGNORECASE)
_MOOD = re.compile(r"\b(?:you|your|would|could|might|can|may)\b|['’]d\b|\b(?:vous|tu|sie|du|würde|könnte|pourrait|"
                   r"serait|podría|usted)\b|你|您|あなた|당신", re.IGNORECASE)
_OFFER = re.compile(r"^(?:if you(?:['’]d)? (?:want|like|prefer|need)|si vous (?:voulez|le souhaitez)|"
                    r"wenn (?:du|sie) (?:willst|möchtest|möchten|wollen)|"
                    r"(?:如果|要是)(?:你|您)(?:需要|愿意|想)|需要的话|よろしければ|必要であれば|ご希望であれば|"
                    r"원하시면|원하면|필요하시면)|"
                    r"(?<!\w)(?:[iİ]stersen|dilersen)(?:iz)?(?!\w)", re.IGNORECASE)  # (Turkish: at the clause's end)


# A run at the moment it was watched: still going, going now, or without failures "so far" ("No failures so far;
# several checks are still pending", "The build is still running after finishing core", "The e2e job is running
# now."). Of the labelled sentences of the agent that say so, all 41 are noise: where that moment stood, never a
# finding. What runs *as* something or runs *something* ("the worker is running as root") is not a moment.
_IN_PROGRESS = re.compile(
    r"(?:^|\b(?:is|are)\s+|['’]s\s+)still (?:running|pending|queued|in progress|compiling|building|going|green)\b|"
    r"(?<!nothing )\b(?:is|are) (?:now )?(?:running|building|compiling|installing)(?:/\w+)?(?:\s+now)?\s*(?:[.;,]|$)|"
    r"\b(?:is|are) (?:now )?(?:pending|in progress|in flight|queued)(?![\w-])|"
    r"\b(?:no|zero|without) (?:new )?(?:failures?|errors?)\b[^.;]{0,30}\bso far\b|"
    r"\b(?:green|passing|clean|cleanly) so far\b|\bso far\b[^.;]{0,60}\b(?:pending|running|green|passing)\b|"
    # how a run goes up to that moment, the clause ending on it ("core has built successfully so far")
    r"\bso far\s*(?:[.;,!]|$)|"
    r"目前为止[^。；]{0,20}(?:没有|通过|正常)|仍在运行|还在运行|正在运行中|まだ実行中|実行中です|아직 (?:실행|진행) 중",
    re.IGNORECASE)


def in_progress(text: str) -> bool:
    """Whether the agent's sentence reports a run as it stood while still going."""
    return bool(_IN_PROGRESS.search(text))


def hypothetical(text: str) -> bool:
    """A condition put to the reader or in the would / could mood, or an offer: what might be, not what is."""
    t = text.strip()
    return bool((_IF.search(t) and _MOOD.search(t)) or _OFFER.search(t))


# What ties a sentence to a project: a name in code quotes, a path or file, an identifier, a number; in Chinese,
# Japanese or Korean text any Latin word (the project's names stay Latin there: "tij はバイナリクレート").
_NAMES = re.compile(r"`|\d|/|\.\w{2,4}\b|[a-z][A-Z]|\b[A-Za-z]+[_-][A-Za-z0-9_-]+\b|\b[A-Z]{2,}|--?\w")


_OURS = re.compile(r"\b(?:we|our|us)\b|我们|我們|私たち|弊社|우리", re.IGNORECASE)


def about_the_project(text: str, heading: str = "") -> bool:
    """Whether a sentence is tied to the project: it, or the heading or label it is said under ("**`flushAll()` →
    `flushDirty()`**: only flushes files written since"), names something of it, or it speaks of what "we" do
    ("We keep the relay to branch updates, because …"). The agent's decision, fact or to-do that does neither
    ("Keys should be unique so that components keep their identity", "overwrite is the mode's default
    behaviour") is reasoning in general terms: 1 of 15 such sentences the labelled real sessions hold is worth
    keeping. Its causes, fixes and gotchas can be said in words alone (half of its causes are worth keeping; a
    tool's trap is a gotcha: "The sed didn't expand \\t to tabs, it used a literal t")."""
    return any(bool(_NAMES.search(t) or (CJK_CHAR.search(t) and re.search(r"[A-Za-z]{2,}", t)))
               for t in (text, heading)) or bool(_OURS.search(text)) or "decided" in cues.signals(text)


# The agent retelling what a page, an issue, a comment or a document says ("The public page shows the failing step
# was …", "The comment at line 310 says …", "The discussion reports a real bug in …"): its author's word, not a
# finding of the agent's (what a command's output shows is); so is a reviewer's or an issue author's ("The verifier
# flagged that the line is not load-bearing"). All 9 such sentences of the agent in the labelled real sessions are
# noise.
_RETELLS = re.compile(r"^(?:the |this |that |its )?(?:public )?(?:page|issue|discussion|pr|pull request|thread|"
                      r"comments?|docs?|documentation|readme|changelog|review)(?:\s+#?\d+|\s*\([^)]{0,40}\)|\s+(?:at|on|in|of|for|from)\s+\S+(?:\s+\S+){0,3}?)?"
                      r"\s+(?:shows?|says?|reports?|lists?|mentions?|states?|describes?)\b(?!\s+up\b)|"
                      # a reviewer's or an issue author's word ("The verifier flagged that …", "Greptile noted …",
                      # "The author says clearing without `--profile` only …")
                      r"^(?:the |a |both |all )?(?:\w+[ -])?(?:reviewers?|verifiers?|bots?|greptile|coderabbit|"
                      r"author|reporter|maintainers?)"
                      r"(?:['’]s? (?:comment|note|review|point))?(?:\s+\w+ly)?\s+(?:flag(?:s|ged)?|not(?:es|ed)|"
                      r"points? out|pointed out|raised?|raises|suggest(?:s|ed)?|says?|said|reports?|reported|found|"
                      r"asks?|asked|wants?|thinks?|claims?|claimed|mentions?|mentioned)\b|"
                      r"^(?:评审|审查者?|审阅者|レビュアー|レビュー|리뷰어|리뷰)[^。.]{0,40}?(?:指出|提到|认为|指摘|によると|지적)|"
                      r"^(?:页面|评论|讨论|文档)[^。]{0,20}?(?:显示|提到|说)|"
                      r"^(?:ページ|コメント|ディスカッション|ドキュメント)[^。]{0,20}?(?:によると|には.{0,20}と書)|"
                      r"^(?:페이지|댓글|토론|문서)[^.]{0,20}?(?:에 따르면|에는)", re.IGNORECASE)


def retells_a_source(text: str) -> bool:
    """The agent retelling what a page, an issue, a comment or a document says, not what it found."""
    return bool(_RETELLS.search(text.strip()))


# The agent saying what it will look at next ("Now let me look at `readBinaryLevel` more carefully …", "I'll check
# the loader", "让我看看…", "確認してみます", "살펴보겠습니다").
_NEXT_STEP = re.compile(r"^(?:(?:now|ok|okay|then|first|next|also|and|but|so)[,:]?\s+)?"
                        r"(?:let me(?! know)|let['’]s|i['’]ll|i will|i need to|i['’]m going to)\b|"
                        r"^(?:让我|我来|我先|接下来我)|(?:してみます|見てみます|確認します|調べます)[。.:：]?$|(?:보겠습니다|하겠습니다)[.:：]?$",
                        re.IGNORECASE)


def ended_looking(agent: Sequence[Judged]) -> bool:
    """The turn's last message only says what the agent will look at next: it ended before a conclusion
    (interrupted, or the user stepped in). Of the labelled real sessions' causes voiced on the way in such
    turns, none is one (the guess it was following when the user redirected it)."""
    final = [j for j in agent if j.origin == "final"]
    return bool(final) and all(_NEXT_STEP.search(j.text.strip()) for j in final)


# Steps of what the user plans to build ("first of all, we run a prompt about the errors", "then we will run the
# suggestions prompt"): the design of a feature, not how the agent is to work.
_PLANNED = re.compile(r"\b(?:(?:first|second|third|next|last|final) step|"
                      r"we(?:'ll|’ll| will| are going to|'re going to|’re going to)|first of all|(?:and )?then,? we|"
                      r"we (?:first|then)|first,? we|"
                      r"after that,? we)\b", re.IGNORECASE)


def planned(text: str) -> bool:
    return bool(_PLANNED.search(text)) and not _HABIT.search(text)


# A user story ("As a developer, I want reactive stores in place, So that all components share one source of truth",
# "作为用户，我希望…，以便…"): a requirement of the product, written as a template, no decision or rule of anyone's
_USER_STORY = re.compile(r"\bas an? (?!(?:result|consequence|fallback|workaround|rule|reminder|side[- ]effect|note|"
                         r"bonus|start|first step|whole|matter of fact|precaution|test|minimum|last resort)\b)"
                         r"[^,.;]{2,40}, i (?:want|need|would like)\b[^.]{0,200}\bso (?:that|i|we)\b|"
                         r"作为[^，,。]{1,20}[，,]\s*我(?:希望|想要|需要)[^。]{0,100}(?:以便|从而|这样)|"
                         r"(?:ユーザー|開発者|管理者|利用者)として[、,]\s*[^。]{0,60}(?:したい|ほしい|欲しい)",
                         re.IGNORECASE)


def user_story(text: str) -> bool:
    return bool(_USER_STORY.search(text))


# The grammar of advice, never its nouns ("the `suggestions` prompt", "推奨バージョン" may be what broke): the
# agent saying what it recommends ("I'd suggest …", "je recommande …", "建议改用 …") or what the right thing to do
# is ("… is the way to go", "…で記述し…するフローが適切です")
_ADVICE = re.compile(r"\bi(?:['’]d| would)? (?:recommend|suggest|propose)\b|\bmy (?:recommendation|suggestion)\b|"
                     r"\bthe (?:right|best|correct|appropriate|recommended|proper) (?:approach|way|flow|fix|move|"
                     r"path|option|thing to do)\b(?: here)? (?:is|would be)|\bis the way to go\b|"
                     r"\bje (?:recommande|propose|suggère)\b|\bich (?:empfehle|schlage vor)\b|\brecomiendo\b|"
                     r"\bsugiero\b|建议(?:你|您|改|用|把|先|将|直接)|(?:比较|更|最)(?:合适|稳妥)|"
                     r"(?:が|のが|ことが|方が)(?:適切|妥当|望ましい|おすすめ|良いでしょう|よいでしょう)|"
                     r"(?:を)?(?:おすすめ|お勧め|推奨)します|(?:추천|제안|권장)합니다|적절합니다|바람직합니다",
                     re.IGNORECASE)


def recommends(text: str) -> bool:
    """The sentence recommends what to do: advice, never what caused a problem (no such unit of the agent in the
    labelled sessions and our own sentences is a root cause)."""
    return bool(_ADVICE.search(text))


# What is done once, in a turn, to the repository or a pull request ("check PRs #221, #222 and merge them").
_ACTS = r"merge|commit|push|check|review|look at|run|deploy|release|rebase|tag|open"
_ONE_TURN_ACT = re.compile(rf"\b(?:{_ACTS})\b|"
                           r"확인|머지|커밋|푸시|배포|릴리스|检查|合并|提交|推送|部署|確認|マージ|コミット|プッシュ|デプロイ",
                           re.IGNORECASE)
# An order that opens with such an act ("open an issue that …", "merge PR #12", "commit it and push")
_OPENS_WITH_ACT = re.compile(rf"^(?:(?:please|pls|also|and|then|now|ok(?:ay)?|so)[,:]?\s+)*(?:{_ACTS})\b",
                             re.IGNORECASE)


def acts_once(text: str) -> bool:
    """The sentence acts on the repository or a pull request (merge, commit, push, check …)."""
    return bool(_ONE_TURN_ACT.search(text))


def opens_with_an_act(text: str) -> bool:
    """The sentence is an order whose verb is such an act, done once ("open an issue that we need to …")."""
    return bool(_OPENS_WITH_ACT.match(text))


_PROBLEM = re.compile(r"\b(?:bugs?|errors?|fail(?:s|ed|ing|ure)?|broken|crash(?:es|ed)?|wrong|regression|"
                      r"deadlocks?|hangs?|leaks?|race conditions?|corrupt(?:ed|ion)?|"
                      r"doesn'?t work|does not work|not working|exception|panic|flaky|slow|timeouts?|warnings?|"
                      # the same in the other languages we read: French, German, Spanish, Portuguese, Italian,
                      # Turkish, Russian
                      r"erreurs?|échou\w*|échecs?|plant(?:e|é|ée)|cassée?|bogues?|ne (?:marche|fonctionne) pas|"
                      r"fehler\w*|fehlgeschlagen|schl(?:ä|a)gt fehl|kaputt|abst(?:u|ü)rz\w*|funktioniert nicht|"
                      r"errore?s?|errori|fall(?:a|an|ó|o|isce|iscono|ito)|falh(?:a|as|am|ou|ando)|roto|rotto|quebrad[oa]|"
                      r"no funciona|não funciona|non funziona|"
                      r"hata(?:lar)?\w*|başarısız|çök(?:tü|üyor)|bozuk|çalışmıyor|"
                      r"ошибк\w*|пада(?:ет|ют)|упал\w*|сломан\w*|не работает|баг\w*)\b|"
                      r"错误|报错|失败|崩溃|问题|不工作|エラー|失敗|バグ|不具合|오류|에러|실패|버그|문제",
                      re.IGNORECASE)

# A symptom said without a problem word: "v4.40.1 exists on GitHub, but npm never published it".
_AMISS = re.compile(r"\b(?:never|not|no longer|cannot|can't|won't|didn't|doesn't|don't|isn't|wasn't|aren't|"
                    r"missing|but)\b|没有|不能|无法|されていない|できない|않|없", re.IGNORECASE)

# "Yes, but only the crate's version": the answer to a question, never a symptom
_ANSWERS = re.compile(r"^(?:yes|no|yeah|yep|nope|correct|right|exactly|oui|non|ja|nein|sí)\b|"
                      r"^(?:是的|对|不是|はい|いいえ|네|아니요)", re.IGNORECASE)


def reports_a_problem(text: str) -> bool:
    """Words that say something is wrong (a bug, a failure, an error …), in any of our languages."""
    return bool(_PROBLEM.search(text))


def symptom(lead: str) -> bool:
    """Whether the sentence an answer opens with says something is wrong: what a cause after it explains."""
    return bool(lead) and not _ANSWERS.match(lead) and (reports_a_problem(lead) or bool(_AMISS.search(lead)))



def possible(text: str) -> bool:
    """Whether a sentence says what could, might or may be."""
    return bool(_POSSIBLE.search(text))
