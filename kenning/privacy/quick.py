"""The first look: can this text hold a secret at all? Standard library only, no tables loaded.

Most strings a hook sees (``echo hi``, ``git status``, a test run's output, a short edit) hold
nothing a detector could take. This module proves that with a few C passes and the name
classifier, so that the detectors themselves (their vendor table, the assignment parser, the
command-line rules: a few milliseconds of module loading on the hook path) are only imported
for a text that could need them. It is conservative by construction: every detector of
:mod:`kenning.privacy.redact` starts from one of the signals below, and a test checks that the
word lists here are the detectors' own.
"""

from __future__ import annotations

from kenning.privacy.names import NONE, classify

# Lower-case fragments every secret name contains (names.classify): where a name can stand.
ANCHORS = (b"pass", b"pw", b"secret", b"token", b"cred", b"key", b"auth", b"cookie", b"mnemonic", b"psk", b"otp",
           b"hmac", b"salt")
# Case-sensitive starts of blocks and shapes; lower-case marks of URLs, signatures, bearers, here-strings.
MARKS = (b"-----BEGIN ", b"PuTTY-User-Key-File-", b"untrusted comment:", b'"kty"', b"Q~", b".atlasv1.", b":AA",
         b"T3BlbkFJ")
LOW_MARKS = (b"sig=", b"signature=", b"bearer", b"<<<")
# The words vendor prefixes start with (vendors.BY_LEAD) and the tools whose flags are known
# (commands.GATE_WORDS); the heads of prefixes without a separator (vendors.SOLID, shapes).
# Each vendor lead with the separators that follow it in a prefix (``npm_``, ``sk-``/``sk_``/``sk.``):
# ``npm install`` is not a token, ``npm_…`` may be.
LEAD_WORDS = (
    "AGE- CCIPAT_ CFPAT- CLOJARS_ FLWSECK-_ GOCSPX- HRKU- NRAK- NRII- NRJS- PMAK- PuTTY- SG. api_ authress_ bkua_ "
    "dckr_ discord. discordapp. doo_ dop_ dor_ dp. dt0c01. duffel_ figd_ fio- fm1a_ fm1r_ fm2_ fo1_ gho_ ghp_ ghr_ "
    "ghs_ ghu_ github_ glagent- glc_ glcbt- gldt- glffct- glft- glimt- gloas- glpat- glptt- glrt- glsa_ glsoat- gsk_ "
    "hf_ hooks. hvb. hvr. hvs. ico- key- lin_ lsv2_ nfp_ npm_ ntn_ ops_ p8e- pat. pcsk_ pnu_ pplx- pscale_ pubkey- "
    "pul- pypi- r8_ rdme_ rk_ rnd_ rubygems_ rzp_ sat. sb_ sbp_ secret_ sgp_ sha256~ shippo_ shpat_ shpca_ shppa_ "
    "shpss_ sk-._ sntrys_ sntryu_ sq0atp- sq0csp- tfp_ tk- tskey- untrusted  v1. vca_ vci_ vck_ vcp_ vcr_ whsec_ xai- "
    "xapp- xkeysib- xoxa- xoxb- xoxc- xoxd- xoxe-. xoxo- xoxp- xoxr- xoxs- xsmtpsib- ya29.")
TOOL_WORDS = (
    "7z 7za 7zr S aria2c base64 bcp chpasswd clickhouse cqlsh cryptsetup curl db2 dgmgrl expdp hdbsql htpasswd http "
    "impdp influx isql keydb keygen kinit ldapadd ldapcompare ldapdelete ldapmodify ldapmodrdn ldappasswd ldapsearch "
    "ldapwhoami lftp literal login mariadb mc mongo mongodump mongoexport mongoimport mongorestore mongosh mongostat "
    "mongotop mysql mysqladmin mysqlbinlog mysqlcheck mysqldump mysqlimport mysqlpump mysqlsh mysqlshow ncftp "
    "ncftpget ncftpput net openssl osql passwd rabbitmqctl rar rdesktop redis rman rpcclient smbclient smbmap sqlcmd "
    "sqlldr sqlplus sshpass stdin tkprof unrar unzip vault vertica vsql wget wmic xfreerdp xh zip zipcloak")
# Phrases of everyday words ("secrets set", "config set"): a signal only when written together.
TOOL_PHRASES = (b"secrets set", b"secret set", b"secret put", b"config set", b"config:set", b"secrets:set",
                b"env add", b"variables --set", b"secrets import", b"configure set")
HEADS = frozenset(["A3T", "ABI", "ACC", "AIz", "AKC", "AKI", "ASI", "ATA", "ATB", "ATC", "EAA", "EZA", "EZT", "GR1",
                   "LTA", "cio", "cmV", "dap", "eyJ", "oy2", "pat", "LS0"])
SEPARATORS = "_-.~ "
_lead_seps = {w.rstrip(SEPARATORS).encode(): w[len(w.rstrip(SEPARATORS)):] for w in LEAD_WORDS.split()}
LEADS: dict[bytes, tuple[bytes, ...]] = {}
for _lead, _seps in _lead_seps.items():
    _tails = tuple(_lead + s.encode() for s in (_seps or " "))
    LEADS[_lead] = _tails
    for _c in (b"n", b"t", b"r"):  # a JSON-escaped text reads ``\nghp_…``: the word is ``nghp``
        LEADS.setdefault(_c + _lead, _tails)
TOOLS = frozenset(w.encode() for w in TOOL_WORDS.split())
WORDS = frozenset(LEADS) | TOOLS
PHRASE_WORDS = frozenset(p.replace(b":", b" ").split()[0] for p in TOOL_PHRASES)

_ALNUM = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_OTHER = bytes(range(256)).translate(None, _ALNUM)  # (tables built in C: this module loads on every hook)
_WORD_MAP = bytes.maketrans(_OTHER, b" " * len(_OTHER))
_NOT_RUN = _OTHER.translate(None, b"_.-")
_RUN_MAP = bytes.maketrans(_ALNUM + b"_.-" + _NOT_RUN, b"a" * (len(_ALNUM) + 3) + b" " * len(_NOT_RUN))
B64_HEADS = (b"eyJrIjoi", b"LS0tLS1CRUdJTi", b"cmVmdGtuOjAxOj")  # bodies that may hold + / = early
_LONG = b"a" * 20
IDENT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


class Look:
    """What the first look computed, handed on to the detectors so they do not compute it again."""

    __slots__ = ("data", "low", "words")

    def __init__(self, data: bytes, low: bytes, words: frozenset[bytes]) -> None:
        self.data, self.low, self.words = data, low, words


def first_look(text: str) -> Look | None:
    """A Look when ``text`` may hold a secret; None when no detector can find anything in it."""
    data = text.encode("ascii", "replace")  # one byte per character: positions map back
    low = data.lower()
    cut = data.translate(_WORD_MAP).split()
    words = WORDS.intersection(cut)
    starts = PHRASE_WORDS.intersection(cut)
    if starts:
        words = words | starts
    look = Look(data, low, words)
    if words & TOOLS or (starts and any(p in low for p in TOOL_PHRASES)):
        return look
    for w in words:
        tails = LEADS.get(w)
        if tails and any(t in data for t in tails):
            return look  # the lead with its separator: npm_…, sk-…
    for m in MARKS:
        if m in data:
            return look
    for m in B64_HEADS:
        if m in data:
            return look
    for m in LOW_MARKS:
        if m in low:
            return look
    if b"://" in low and b"@" in data:
        return look
    if _named(text, low):
        return look
    mapped = data.translate(_RUN_MAP)
    i = mapped.find(_LONG)
    while i != -1:
        s = mapped.rfind(b" ", 0, i) + 1
        e = mapped.find(b" ", i)
        head = text[s:s + 3]
        if head in HEADS or (text[s:s + 1] in ("n", "t", "r") and text[s + 1:s + 4] in HEADS):
            return look
        if e == -1:
            break
        i = mapped.find(_LONG, e)
    return None


def _named(text: str, low: bytes) -> bool:
    """A word that names a secret stands somewhere (``DB_PASSWORD``, ``apiKey``; not ``passed``)."""
    n = len(text)
    for a in ANCHORS:
        i = low.find(a)
        while i != -1:
            s = i
            while s > 0 and text[s - 1] in IDENT:
                s -= 1
            e = i + len(a)
            while e < n and text[e] in IDENT:
                e += 1
            if classify(text[s:e].strip(".-")) != NONE:
                return True
            i = low.find(a, e)
    return False
