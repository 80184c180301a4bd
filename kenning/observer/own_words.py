"""What a sentence of the user says in its own words (DESIGN.md §9): the rule words and the words of work left
it says itself, not in what it quotes, not telling what happened or how a thing behaves; the shapes that only
sound like a standing rule (an assent to go on, an example, what a document is to say, what the code does not
do, a statement with a scope, "let's …"); and whether it is an order at all. The observer's gates
(kenning/observer/gates.py) and the user's memories (kenning/observer/user_said.py) read them.
"""

from __future__ import annotations

import re

from kenning.memory import cues

# Words in quotation marks are someone else's ('README.md says "CLIs almost never need code flow"'); "never" or
# "always" before a past tense tells what happened ("your colleague never wrote that down"), not how to work.
_CODE_SPAN = r"`[^`\n]{1,300}`"
_QUOTED = re.compile(r'"[^"\n]{1,300}"|“[^”\n]{1,300}”|«[^»\n]{1,300}»|「[^」\n]{1,300}」|' + _CODE_SPAN)
_TOLD = re.compile(r"\b(?:never|always)\s+(?:(?:actually|really|even|once|ever|quite|fully)\s+)?"
                   r"(?:\w+ed|wrote|did|was|were|had|made|said|got|went|saw|knew|told|thought|"
                   r"took|gave|found|ran|came|became|left|kept|meant|sent|built|brought|understood)\b|"
                   # how something behaves ("a crate it never touches", "the provider never advertises it"): an
                   # order is said to someone, in the imperative ("never touch", not "-es" / "-s")
                   r"\b(?:never|always)\s+(?!\w+(?:ss|us)\b)\w+[a-z](?<!s)s\b|"
                   # "so the patterns don't cause false negatives": things, not the one told, don't
                   r"\b(?!(?:you|we|i|please|and|but|so|just|then|also|now|ok|this|that|it|things|guys|folks|always|"
                   r"us)\b)[a-z]+s\s+(?:don['’]?t|do not)\s+\w+|"
                   # "Upstream by default only follows the initial request": how a thing behaves, not an order
                   r"\bby default\s+(?:only\s+)?(?!\w+(?:ss|us)\b)\w+[a-z](?<!s)s\b|"
                   # "you can avoid the full chain": what may be done, nothing forbidden or made a habit
                   r"\b(?:can|could|may|might)\s+(?:also\s+|still\s+)?(?:avoid|never|always)\b|"
                   # "I was assuming we use this already": what the user believed, not a convention
                   r"\b(?:assum\w*|thought|believed|figured|expected|guess(?:ed)?)\s+(?:that\s+)?we\s+\w+|"
                   # "that's just for me": whom a thing is for, not all of the user's work
                   r"\b(?:is|are|was|that['’]?s|it['’]?s)\s+(?:just|only|mainly|mostly)\s+for\s+me\b|"
                   # "we don't need the auto strategy test": what is not needed, nothing forbidden
                   r"\b(?:don['’]?t|do not|doesn['’]?t|does not)\s+need\b|"
                   # "type edges don't, so …": no verb follows, nothing is forbidden
                   r"\b(?:don'?t|doesn'?t|do not|does not)(?=\s*[,;.)]|\s*$)", re.IGNORECASE)
# Code a sentence quotes (`... generated always as (...) stored`) is the code's words, never the user's rule.
_CODE = re.compile(_CODE_SPAN)
# A reply that opens with assent ("yes, start implementing and keep reviewing after each phase", "Yeah the skill
# should use its own path then"): how to go on with the work at hand, unless it says it is for good.
_ASSENT = re.compile(r"^(?:yes|yeah|yep|yup|ok(?:ay)?|sure|alright|sounds good|go ahead|great|perfect|"
                     r"oui|d'accord|ja|sí|好的?|可以|行|はい|了解|네|좋아요?)\b[\s,.!:;—-]*", re.IGNORECASE)
FOR_GOOD = re.compile(r"\b(?:always|never|from now on|going forward|in (?:the )?future|every time|whenever|"
                       r"by default|as a rule|in (?:every|each|all|any) (?:project|repo|repository|session)s?)\b|"
                       r"以后|今后|总是|一律|始终|每次|从现在起|今後|必ず|常に|いつも|毎回|以降|앞으로|항상|반드시|매번|언제나",
                       re.IGNORECASE)
# An edit of a named document ("Update @src/skills/commit/SKILL.md to include emojis in each commit message",
# "also note in the readme.md that …"): what the document is to say, a task of this turn. Not the agent's own
# instructions file: what goes there is a rule for the agent.
_EDIT_DOC = re.compile(r"^(?:(?:also|and|then|now|please|pls)[,]?\s+)*(?:update|add|note|write|document|mention|put|"
                       r"include|change|edit|append|insert|extend)\b[^.;]{0,80}?(?:@[\w./-]+|\b[\w./-]+\.(?:md|mdx|txt|"
                       r"rst|adoc|json|ya?ml|toml)\b|\bthe (?:readme|docs|documentation|changelog)\b)", re.IGNORECASE)
_AGENT_FILE = re.compile(r"\b(?:claude|agents|gemini|copilot-instructions|conventions)\.md\b|\.cursorrules\b|"
                         r"\.windsurfrules\b", re.IGNORECASE)
# The cue signals that say how to work (a habit, a must, a ban, a preference …): what a standing rule carries.
RULE_SIGNALS = frozenset({"always", "must", "prohibit", "prefer", "user_scope", "correction", "convention"})


def unquoted(text: str) -> str:
    """A sentence without what it quotes or gives as code (the words it says itself)."""
    said = _QUOTED.sub(" ", _half_quote(text))
    if len(re.findall(r"\w+", said)) < 3:
        said = _CODE.sub(" ", text)  # the whole sentence in quotes: the user says it ('"Never edit CLAUDE.md files"')
    return said


def _half_quote(text: str) -> str:
    """A sentence that starts or ends inside a quotation (its other mark is in the next or the last sentence:
    'field always present, value 0 when no warnings" lets consumers know …'): the quoted half is cut off."""
    if text.count('"') % 2 == 0:
        return text
    i = text.index('"')
    if i > 0 and not text[i - 1].isspace() and (i + 1 == len(text) or not text[i + 1].isalnum()):
        return text[i + 1:]  # a closing mark: what comes before it was quoted
    j = text.rindex('"')
    return text[:j] if j + 1 < len(text) and not text[j + 1].isspace() else text


# A scope ("for every call", "on each push", "for any caller"): a habit in an order ("Add a test for every fix"),
# the extent of a statement otherwise ("encoder.go returns the same slice on every call").
_SCOPE = re.compile(r"\b(?:before|after|on|for|in) (?:every|each|any|all) (?!of\b)\w+", re.IGNORECASE)
SCOPE = "scope"  # the rule signal a scope alone gives: a weak one


# "follow-up" naming a step of a mechanism ("each a ref-only follow-up push", "follow-up ops stay pointed at the
# user's URL", "no follow up 'trailing transcript' commit": the step by its name), not work left to do ("a
# follow-up PR", "as a follow-up").
_FOLLOW_UP_STEP = re.compile(r"\bfollow[- ]?up\s+(?:(?:'[^']{1,40}'|\"[^\"]{1,40}\"|`[^`]{1,40}`)\s+)?"
                             r"(?:push(?:es)?|ops|operations?|requests?|calls?|fetch(?:es)?|"
                             r"commits?|messages?|quer(?:y|ies)|probes?|retr(?:y|ies)|runs?|rounds?|reads?|writes?|"
                             r"responses?|lookups?|batch(?:es)?)\b", re.IGNORECASE)


def todo_words(text: str) -> frozenset[str]:
    """The signals of work left ("todo", "blocked") a sentence says itself: not in what it quotes, not a
    follow-up step of a mechanism."""
    return cues.signals(_FOLLOW_UP_STEP.sub(" ", unquoted(text))) & {"todo", "blocked"}


def own_rule_signals(text: str) -> frozenset[str]:
    """The rule words a sentence of the user says itself: not quoted ('ensure it's "always" addressed'), not in
    code, not telling what happened ("never actually worked"); a scope alone ("on every call") is a ``scope``."""
    said = _TOLD.sub(" ", unquoted(text))
    own = cues.signals(said) & RULE_SIGNALS
    if "always" in own and not an_order(text) and "always" not in cues.signals(_SCOPE.sub(" ", said)):
        return (own - {"always"}) | {SCOPE}
    return own


def not_a_rule(text: str) -> bool:
    """A sentence of the user that is no standing rule, however much it sounds like one: its rule words are
    quoted or tell a story, it assents to go on with the work at hand, it asks, it bans a thing it only points at
    ("don't give it a number"), or it says what a document is to say."""
    said, bare, own = unquoted(text), text.strip(), own_rule_signals(text)
    if cues.signals(text) & RULE_SIGNALS and not own:
        return True
    if _ASSENT.match(bare) and not FOR_GOOD.search(said) \
            and not cues.signals(said) & {"prefer", "convention", "user_scope"}:
        return True  # (but "ok i don't want `cargo update`, we want renovate to bump it" says what they want)
    if _EXAMPLE.match(bare):
        return True  # "For example, if the .gitignore excludes a folder, entire-sem should …": it illustrates
    if _DOES_NOT.search(said) and not _HABIT_WORD.search(said) and not own - {"always", SCOPE}:
        return True  # "… the chain call doesn't propagate the failure for all hook types": what the code does
    if own == {SCOPE} and (_STATEMENT.match(bare) or _CAN_DO.search(said)):
        # "encoder.go:66 returns the same slice on every call": the extent of how things are; "for each message
        # i can expand it to the full text": what the product is to let someone do
        return True
    if _LETS.match(bare) and not FOR_GOOD.search(said):
        return True  # "yeah let's migrate to cobra": what to do now (0 of 11 labelled such sentences are rules)
    if _DISLIKE.search(said):
        return True  # "I don't like that there are turns in dual agent mode": a complaint about how things are
    if _BELIEF.match(bare):
        return True  # "I thought the pass rates are per assertion": what they believed or meant (0 of 10 is a rule)
    if pasted_config(bare):
        return True  # "dolt: auto-commit: on # Create a Dolt commit after each successful write …": a file's text
    if _REVIEWS.search(bare):
        return True  # "This causes … to always return 0", "using UTC would be more consistent …": a review's finding
    if _POINTS_BACK.search(said):
        return True  # "Also don't give it a number": about a thing of the turn, which the sentence does not name
    if asks(bare):
        return True  # "Should we always squash before merging?": it asks
    return bool(_EDIT_DOC.match(bare)) and not _AGENT_FILE.search(text)


_WHEN = re.compile(r"\s*when\b", re.IGNORECASE)


def asks(text: str) -> bool:
    """A question, with its mark or without ("Could we write down the options … (I'd take the second)"); one that
    opens on "when" states a condition ("When both files coexist, AGENTS.md is the source of truth")."""
    return cues.has(text, "question") and not _WHEN.match(text)


# A ban whose object is a bare pronoun ("Also don't give it a number and it needs no date", "Do not merge it until it
# is reconciled …", "avoid inventing our own", "不要再改它"): it points at a thing of the turn the sentence does not
# name, so a session reading it alone as a standing rule cannot tell what it is about. "Don't skip tests" names it.
_POINTS_BACK = re.compile(r"\b(?:don['’]?t|do not|dont|never|avoid|stop)\s+(?:\w+\s+){0,2}?"
                          r"(?:it|them|ours|our own|yours|your own)\b(?!['’])|"
                          r"(?:不要|别|不准|禁止|不许)[^，。,.!！？?\s]{0,4}?(?:它们?|这个|那个)(?=[，。,.!！？?\s]|$)|"
                          r"(?:それ|これ|あれ)を[^、。,.!！？?\s]{0,8}?ないで", re.IGNORECASE)
# What the user believed, meant or thinks ("I thought the pass rates in agentv are for each assertion", "I meant for
# the CLI we set up in this repo", "i don't think agentv has any use of the remote name, can you confirm"): their
# understanding, a clarification or a choice, no way of working (of 10 labelled such sentences of the user, 4 are
# decisions, none a rule)
_BELIEF = re.compile(r"^(?:(?:also|oh|ah|hmm|but|and|no|ok(?:ay)?|so)[,]?\s+)*i\s+(?:thought|meant|mean|think|"
                     r"guess|assumed|believed?|figured|suppose|was thinking|(?:don['’]?t|do not|dont)\s+th?ink)\b",
                     re.IGNORECASE)
# What a review says of the code at hand, often pasted from one: what something causes ("This causes
# estimateUserSelfModifications to always return 0, …"), what would be better ("…, using UTC would be more consistent
# with …"), what "these" or "it" should be for some end ("To fully detach telemetry output, these should be redirected
# to a discard sink …"; not "Tests: they should be hermetic"). Of the labelled sentences of the user so: noise, a cause
# and a fact, no rule.
_REVIEWS = re.compile(r"^\W*(?:this|that|it|which)\s+(?:\w+\s+)?(?:causes?|caused|will cause|would cause|means|breaks?|"
                      r"leads? to|results? in)\b|"
                      r"\bwould be (?:more |much |a lot |far )?(?:better|cleaner|safer|simpler|preferable|nicer|easier|"
                      r"consistent|appropriate|clearer)\b|"
                      r"^\W*to\s[^,]{3,120},\s*(?:these|they|this|it)\s+should(?:n['’]t| not)?\s+"
                      r"(?:be|have|use|go|stay)\b",
                      re.IGNORECASE)
# A pasted piece of configuration: "key: value" pairs with a comment, a flag's value or a block scalar ("dolt:
# auto-commit: on # Create a Dolt commit after each successful write", "agentRules: | Always run tests …"). Of the
# labelled sentences of the user so, 8, all are noise (logs, commits, config).
_KEY = re.compile(r"(?:^|\s)[A-Za-z_][\w.-]*:(?=\s|$)")
_CONFIG_MARK = re.compile(r"(?:^|\s)#\s|:\s*[|>][-+]?(?:\s|$)|:\s*(?:true|false|on|off|yes|no|null|~|\d+)(?:\s|$)",
                          re.IGNORECASE)


def pasted_config(text: str) -> bool:
    """Whether a sentence is configuration pasted in (YAML-like), not the user's own words."""
    keys = len(_KEY.findall(text))
    return bool(keys) and bool(_CONFIG_MARK.search(text)) and (keys >= 2 or bool(re.search(r":\s*[|>]", text)))


# A line of code that opens a sentence, outside code quotes ("accumulatedToNonAgentFiles := min(a, b)
# accumulatedToAgentFiles := … Calculate precisely", "retries = int(os.environ['N'])"): code pasted, no words of theirs
_CODE_LINE = re.compile(r"^\s*[A-Za-z_][\w.\[\]'\"]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*(?::=|(?<![=!<>])=(?!=))\s*"
                        r"[\w\-\"'(\[{]")


def pasted_code(text: str) -> bool:
    """Whether a sentence opens with a line of code (an assignment), as pasted, not the user's own words."""
    return bool(_CODE_LINE.match(text))


# The user's dislike of how something is ("I don't like that there are turns in dual agent mode", "I don't like how
# the banner always flickers"): a complaint or a bug report, no way of working. Not a taste ("I don't like
# semicolons"), nor what the agent does ("I don't like it when you push without asking" asks it not to).
_DISLIKE = re.compile(r"\b(?:i|we)\s+(?:don['’]?t|do not|dont)\s+(?:really\s+)?(?:like|love)\s+(?:that|how|the fact|"
                      r"it when|when)\b(?!\s+(?:you|u|claude|codex|the agent)\b)", re.IGNORECASE)


# What something does not do or is not ("the chain call doesn't propagate the failure for all hook types", a review
# finding the user pasted): a finding, unless the user also says how to work (a must, a ban, a habit word); "for
# all hook types" alone is the scope of what it says. (Of 19 labelled sentences of users that say so, one is a rule,
# and it says a ban of its own.)
_DOES_NOT = re.compile(r"\b(?:doesn['’]?t|does not|isn['’]?t|is not|aren['’]?t|are not|wasn['’]?t|was not|"
                       r"weren['’]?t|didn['’]?t|did not|won['’]?t|hasn['’]?t|haven['’]?t)\s+(?!(?:be )?(?:allowed|"
                       r"permitted|to be)\b)", re.IGNORECASE)
# A sentence that opens with what it is about (a determiner, a pronoun, a number, a file or code), not with a verb
# as an order does: a statement ("The archiver calls Flush after every file", "That is a breaking change for any
# caller"). Of the 5 labelled sentences of users whose only word of a habit is a scope, none opens so; the one rule
# among them is an order ("Raise clean pull requests for each change").
_STATEMENT = re.compile(r"^(?:(?:the|a|an|this|that|these|those|it|its|it's|they|there|our|their|one|two|three|four|"
                        r"five|six|seven|eight|nine|ten|\d+)\b|[\w-]+(?:[./][\w-]+)+|`)", re.IGNORECASE)
# What someone is to be able to do with the product ("i can expand to the full message or collapse", "users can
# filter by agent"): a feature asked for, no way of working
_CAN_DO = re.compile(r"\b(?:i|we|users?|you|they|one|people|admins?)\s+(?:can|could|should be able to|(?:am|are|is) "
                     r"able to)\s+(?!not\b)\w+", re.IGNORECASE)
_LETS = re.compile(r"^(?:(?:ok(?:ay)?|so|yeah|yes|yep|sure|now|then|and|great|alright)[,!.]?\s+)*let['’]?s\b",
                   re.IGNORECASE)
_HABIT_WORD = re.compile(r"\b(?:always|never|every time|whenever|from now on|going forward|by default|as a rule)\b",
                         re.IGNORECASE)
_EXAMPLE = re.compile(r"^(?:for (?:example|instance)|e\.g\.|par exemple|zum beispiel|z\.\s?b\.|por ejemplo|"
                      r"por exemplo|ad esempio|örneğin|например|例えば|比如|例如|举个例子|예를 들어)(?=[\s,，、:：]|$)",
                      re.IGNORECASE)


# An order ("make a PR that fixes it", "Update the parser", "请把…", "…してください", "…해 주세요"): never how things
# are. Of 93 labelled sentences of users that open with such a verb, one is a fact (after a request). A verb
# of saying carries what the user holds ("Mention that skills can carry docs, whereas standards are rules"),
# and "Keep in mind that …" brings a premise: both can be facts.
_ORDER = re.compile(r"^(?:(?:please|pls|also|and|then|now|ok(?:ay)?)[,:]?\s+)*(?!keep in mind\b)(?:add|use|"
                    r"make|update|remove|change|fix|create|write|ensure|keep|put|move|rename|check|run|show|include|"
                    r"implement|build|delete|replace|set|let's|try|look|find|give|list|display|do|"
                    r"don't|avoid|start|stop|go|open|merge|push|commit|refactor|investigate|"
                    # leave to do ("You can clone these repos into ~/Projects if they are not there already")
                    r"you can|you may|feel free to|go ahead and)\b|"
                    r"^(?:请(?!求)|帮我|麻烦)|(?:ください|してほしい|お願いします?)[。.!！]?$|(?:해\s?줘|해\s?주세요|주세요)[.!]?$",
                    re.IGNORECASE)


def an_order(text: str) -> bool:
    """The user's sentence tells the agent to do something: an order, whatever else it says."""
    return bool(_ORDER.search(text.strip()))
