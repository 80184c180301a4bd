"""The first look: can this text hold a secret at all? Standard library only, no tables loaded.

Most strings a hook sees (``echo hi``, ``git status``, a test run's output, a short edit) hold
nothing a detector could take. This module proves that with a few C passes and the name
classifier, so that the detectors themselves (their vendor table, the assignment parser, the
command-line rules: a few milliseconds of module loading on the hook path) are only imported
for a text that could need them, and each family only for its own signal: ordinary code that
names a ``key`` loads the name scanner, not the vendor table or the tool rules. It is
conservative by construction: every detector of :mod:`kenning.privacy.redact` starts from one
of the signals below (a name only counts where a value could follow it, a tool only where it
stands as a command, a URL only with an ``@`` where its user goes); tests check that the word
lists here are the detectors' own and that the spans are always those of every detector.
"""

from __future__ import annotations

from kenning.privacy import fields

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Lower-case fragments every secret name contains (names.classify): where a name can stand.
ANCHORS = (b"pass", b"pw", b"secret", b"token", b"cred", b"key", b"auth", b"cookie", b"mnemonic", b"psk", b"otp",
           b"hmac", b"salt")
# The same for a key or a bare name: ANCHORS and the two weak words a text's first look finds by their mark
# (LOW_MARKS: ``bearer``, ``sig=``). A name holding none of them is NONE without loading names' tables.
NAME_ANCHORS = (*ANCHORS, b"bearer", b"sig")
NONE, WEAK, STRONG, PASSWORD = 0, 1, 2, 3  # names' classes (a test checks)
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
                   "LTA", "cio", "cmV", "dap", "eyJ", "oy2", "pat", "LS0", "ewo"]
                  + ["AC" + c for c in "0123456789abcdef"]
                  + ["s." + c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"])
# ("AC" and a hex digit: a Twilio Account SID, the first argument that tells calls.py a Client is Twilio's;
# "ewo": a pretty-printed JSON file as base64, a service-account key; "s.": a legacy Vault token)
SEPARATORS = "_-.~ "
# Each lead with the separators that follow it in a prefix (the tails are made on a hit). This module
# loads on every hook: the tables are built with C loops (map, split, join), ~0.1 ms less than comprehensions.
_items = LEAD_WORDS.encode().split()
_leads = list(map(bytes.rstrip, _items, [SEPARATORS.encode()] * len(_items)))
LEADS: dict[bytes, bytes] = dict(zip(_leads, map(bytes.removeprefix, _items, _leads), strict=True))
LEADS.update(dict.fromkeys([lead for lead, seps in LEADS.items() if not seps], b" "))  # "untrusted comment:"
# A JSON-escaped text reads ``\nghp_…``: the word is ``nghp`` (its tails are those of ``ghp``).
_spaced = b" " + b" ".join(LEADS)
ESCAPED = frozenset((_spaced.replace(b" ", b" n") + _spaced.replace(b" ", b" t") + _spaced.replace(b" ", b" r"))
                    .split()) - LEADS.keys()


def tails(word: bytes) -> tuple[bytes, ...]:
    """The starts of a prefix ``word`` (a lead, or an escaped one) can begin: ``npm_``, ``sk-``, ``sk_`` …"""
    lead = word if word in LEADS else word[1:] if word in ESCAPED else b""
    seps = LEADS.get(lead, b"")
    return tuple(lead + seps[i:i + 1] for i in range(len(seps)))


TOOLS = frozenset(TOOL_WORDS.encode().split())
# Decoders (decoders.SHELL, decoders.CALLS, decoders.DECODE_RECEIVERS: a blob fed to one may be a secret)
# and the callees whose positional arguments hold a secret (calls.GATE_WORDS, calls.ALL_NEEDLES).
DECODER_WORDS = frozenset(b"base64 gbase64 basenc xxd openssl b64decode decodebytes a2b atob decode64 DecodeString "
                          b"FromBase64String b32decode b85decode Buffer getDecoder getMimeDecoder getUrlDecoder "
                          b"Base64".split())
CALL_WORDS = frozenset(
    b"AwsBasicCredentials BasicAWSCredentials BasicAuth CRAMMD5Auth ClientSecretCredential DigestAuth FTP Fernet HMAC "
    b"HTTPBasicAuth HTTPDigestAuth HTTPProxyAuth MySQLdb NetworkCredential NewStaticCredentials "
    b"NewStaticCredentialsProvider Oracle PDO PasswordAuthentication PlainAuth Redis SMTP SSHClient StrictRedis Twilio "
    b"TwilioClient TwilioRestClient UsernamePasswordAuthenticationToken UsernamePasswordCredentials boto boto3 "
    b"createHmac getConnection hmac imap jwt ldap ldap3 mysqli oracledb paramiko poplib POP3 pymssql pymysql "
    b"twilio yagmail Authenticate".split())
# The byte strings of calls whose words are everyday ones (calls.NEEDLES), under the words the cut gives for
# them, all of which must occur: a needle costs a scan (~10 µs for 20 KB), a word nothing.
CALL_NEEDLES: dict[frozenset[bytes], tuple[bytes, ...]] = {
    frozenset((b"login",)): (b".login(", b">login(", b"ftp_login("), frozenset((b"bind", b"s")): (b"bind_s(",),
    frozenset((b"simple", b"bind")): (b"simple_bind(",), frozenset((b"set", b"password")): (b"set_password(",),
    frozenset((b"add", b"password")): (b"add_password(",), frozenset((b"ssh", b"Password")): (b"ssh.Password(",),
    frozenset((b"AWS", b"Credentials")): (b"AWS.Credentials(",),
    frozenset((b"mysql", b"connect")): (b"mysql_connect(",)}
_NEEDLE_WORDS = frozenset(w for ws in CALL_NEEDLES for w in ws)
AUTH_WORDS = frozenset((b"auth", b"Auth", b"AUTH"))  # calls.AUTH_WORDS
# "Password" in other languages (prose.PHRASES): the ASCII ones as the first look cuts them (``contraseña``
# gives ``contrase``), in three cases; the others are looked for only in a text that is not ASCII.
_FOREIGN = b"passe contrase contrasena senha wachtwoord kennwort passord salasana adgangskode senord".split()
FOREIGN_WORDS = frozenset(_FOREIGN + [w.capitalize() for w in _FOREIGN] + [w.upper() for w in _FOREIGN])
# (lower case: a text that is not ASCII is lowered before they are looked for)
FOREIGN_UNICODE = ("пароль", "密码", "密碼", "口令", "パスワード", "비밀번호", "암호", "hasło", "şifre", "κωδικός",
                   "סיסמה", "كلمة المرور", "mật khẩu", "lösenord", "contraseña")
FOREIGN_CHARS = frozenset(c for w in FOREIGN_UNICODE for c in w + w.upper() if not c.isascii())
# The first letter of each that is not ASCII, in both cases.
FOREIGN_KEYS = tuple(sorted({k for w in FOREIGN_UNICODE for c in [next(c for c in w if not c.isascii())]
                             for k in (c, c.upper())}))
WORDS = frozenset(LEADS) | ESCAPED | TOOLS | DECODER_WORDS | CALL_WORDS | FOREIGN_WORDS | _NEEDLE_WORDS | \
    {b"auth", b"Auth", b"AUTH", b"Client"}
PHRASE_WORDS = frozenset(p.replace(b":", b" ").split()[0] for p in TOOL_PHRASES)
# Tool words whose rule only reads a secret piped in (``echo pw | sudo -S``, ``… | docker login
# --password-stdin``, ``| base64``): commands.piped_stdin needs a pipe from echo or printf.
PIPED = frozenset(b"S base64 stdin passwd chpasswd kinit cryptsetup".split())
# What may follow a tool's word where it stands as a command (``mysql -p``, ``redis-cli``,
# ``--from-literal=``, a quoted ``"login"``, a JSON escape): ``zip(`` or ``http://`` is code or a URL.
AFTER_TOOL = frozenset(b" \t\r\n\\\"'|;&=-")
# What may follow a secret's name in an assignment (structure._assignment): ``=``, ``:``, ``?=``,
# ``+=``, ``<-``, ``>`` (XML), ``,`` (``define('DB_PASSWORD', …)``), ``value=`` (a quoted key).
OPERATORS = frozenset("=:?+<>,v")
QUOTES = frozenset("\"'`")
DIRECTIVES = frozenset(("requirepass", "masterauth", "auth"))  # structure.DIRECTIVES
URL_USER_STOP = b" \t\r\n\"'`<>()[]{}\\,;"  # structure.URL_USER_STOP

_ALNUM = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_OTHER = bytes(range(256)).translate(None, _ALNUM)  # (tables built in C: this module loads on every hook)
_WORD_MAP = bytes.maketrans(_OTHER, b" " * len(_OTHER))
_NOT_RUN = _OTHER.translate(None, b"_.-")
_RUN_MAP = bytes.maketrans(_ALNUM + b"_.-" + _NOT_RUN, b"a" * (len(_ALNUM) + 3) + b" " * len(_NOT_RUN))
B64_HEADS = (b"eyJrIjoi", b"LS0tLS1CRUdJTi", b"cmVmdGtuOjAxOj")  # bodies that may hold + / = early
_LONG = b"a" * 20
_URL_MAP = bytes.maketrans(URL_USER_STOP, b" " * len(URL_USER_STOP))
IDENT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


class Look:
    """What the first look computed, handed on to the detectors so they do not compute it again,
    and which families of detectors it found a reason to run: ``vendors`` (a vendor's prefix or
    shape, a long token, an armoured block), ``commands`` (a known tool standing as a command),
    ``decoders`` (a decoder's name), ``calls`` (a call whose positional argument may be a secret),
    ``prose`` (the word "password" in another language)."""

    __slots__ = ("calls", "commands", "data", "decoders", "low", "prose", "vendors", "words")

    def __init__(self, data: bytes, low: bytes, words: frozenset[bytes]) -> None:
        self.data, self.low, self.words = data, low, words
        self.vendors = self.commands = self.decoders = self.calls = self.prose = False


def look(text: str) -> Look:
    """The look at ``text`` every detector starts from, whatever it holds."""
    data = text.encode("ascii", "replace")  # one byte per character: positions map back
    low = data.lower()
    cut = data.translate(_WORD_MAP).split()
    words = WORDS.intersection(cut)
    starts = PHRASE_WORDS.intersection(cut)
    return Look(data, low, words | starts if starts else words)


_recent: tuple[tuple[str, Look | None], ...] = ()  # the last long texts looked at, by identity


def first_look(text: str) -> Look | None:
    """A Look when ``text`` may hold a secret; None when no detector can find anything in it."""
    global _recent
    for seen, lk in _recent:
        if seen is text:  # the hook's plain_payload looked first, the redactor looks again (~1 ms for 20 KB)
            return lk
    found = _first_look(text)
    if len(text) >= 1024:
        _recent = ((text, found), *_recent[:3])  # (one tuple rebound: safe across threads)
    return found


def _first_look(text: str) -> Look | None:
    lk = look(text)
    data, low, words = lk.data, lk.low, lk.words
    lk.commands = _tools(data, low, words)
    lk.vendors = _vendor_marks(text, data, words)
    lk.decoders = not DECODER_WORDS.isdisjoint(words)
    lk.calls = not CALL_WORDS.isdisjoint(words) or _call_needle(data, words) or \
        (not AUTH_WORDS.isdisjoint(words) and _auth_tuple(low)) or \
        (b"Client" in words and (lk.vendors or b"sid" in low))  # a Twilio Account SID (HEADS), or its variable
    lk.prose = not FOREIGN_WORDS.isdisjoint(words) or (not text.isascii() and _foreign(text, data))
    if lk.commands or lk.vendors or lk.decoders or lk.calls or lk.prose:
        return lk
    for m in LOW_MARKS:
        if m in low:
            return lk
    if b"://" in low and b"@" in data and _url_userinfo(data):
        return lk
    if b"Secret" in data and b"kind" in data and b"data" in low:
        return lk  # a Kubernetes Secret (structure.kubernetes_secrets)
    if _named(text, low):
        return lk
    return None


def plain_payload(payload: dict[str, Any], agent: str | None) -> bool:
    """True when :meth:`Redactor.payload <kenning.privacy.redact.Redactor.payload>` provably returns
    ``payload`` unchanged (with no ``redact_custom`` patterns), decided without loading it or any
    detector: no file or command it names has a profile, no key names a secret, no nested object is
    a ``Secret``, a JWK or a name/value pair naming a secret, and no string gives the first look a
    reason. False whenever in doubt (the redactor then runs in full): only a cost, never a leak.
    """
    try:
        if fields.profile(payload):
            return False
        exempt = fields.metadata(agent)
        return all(k in exempt or (classify(k) == NONE and _plain(v)) for k, v in payload.items())
    except Exception:  # (RecursionError, a bug): the redactor decides, with its own error handling
        return False


def _plain(value: Any) -> bool:
    """What Redactor.value would leave as it is, for a value under a key that names no secret."""
    if isinstance(value, str):
        return len(value) < 8 or first_look(value) is None
    if isinstance(value, dict):
        if value.get("kind") == "Secret" or isinstance(value.get("kty"), str):
            return False  # Redactor._special: a Kubernetes Secret, a JSON Web Key
        for k, v in value.items():
            if not isinstance(k, str) or classify(k) != NONE:
                return False
            if isinstance(v, str) and classify(v) != NONE and _pair_name(k):
                return False  # {"name": "API_TOKEN", "value": …}
            if not _plain(v):
                return False
        return True
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return True  # a number is redacted only under a password's name, None and booleans never


def classify(name: str) -> int:
    """:func:`names.classify <kenning.privacy.names.classify>`, its tables (~0.25 ms of loading) read only
    for a name that holds one of NAME_ANCHORS: every name they take for a secret's does (a test checks),
    so ``command``, ``stdout`` or ``hi`` is NONE without them."""
    if len(name) > 120:
        return NONE  # (names.classify's own limit)
    low = name.lower().encode("ascii", "replace")  # (lower first: the Kelvin sign lowers to "k")
    for a in NAME_ANCHORS:
        if a in low:
            from kenning.privacy import names

            return names.classify(name)
    return NONE


def _pair_name(key: str) -> bool:
    """``key`` labels a secret's name in a name/value pair (asked once its value named a secret)."""
    from kenning.privacy import names

    return key.lower().replace("_", "") in names.PAIR_NAMES


def _tools(data: bytes, low: bytes, words: frozenset[bytes]) -> bool:
    """A tool whose password flag is known stands as a command, or a phrase of one (``secrets set``)."""
    if b"<<<" in data:
        return True
    hits = words & TOOLS
    if hits:
        if hits & PIPED and b"|" in data and _piped(data):
            return True
        for w in hits - PIPED:
            n = len(w)
            i = data.find(w)
            while i != -1:
                if i + n == len(data) or data[i + n] in AFTER_TOOL:
                    return True
                i = data.find(w, i + n)
    return bool(words & PHRASE_WORDS) and any(p in low for p in TOOL_PHRASES)


def _piped(data: bytes) -> bool:
    """``echo``/``printf`` then a pipe on the same command line (backslash-newline continues it)."""
    for word in (b"echo", b"printf"):
        i = data.find(word)
        while i != -1:
            end = data.find(b"\n", i)
            while end > 0 and data[end - 1] == 92:  # a backslash: the line goes on
                end = data.find(b"\n", end + 1)
            if b"|" in data[i:end if end != -1 else len(data)]:
                return True
            i = data.find(word, i + len(word))
    return False


def _vendor_marks(text: str, data: bytes, words: frozenset[bytes]) -> bool:
    """A vendor's prefix with its separator (``npm_…``, ``sk-…``), a shape's mark, a long token
    starting as a prefix-less credential does."""
    for w in words:
        if (w in LEADS or w in ESCAPED) and any(t in data for t in tails(w)):
            return True  # the lead with its separator: npm_…, sk-…
    for m in MARKS:
        if m in data:
            return True
    for m in B64_HEADS:
        if m in data:
            return True
    mapped = data.translate(_RUN_MAP)
    i = mapped.find(_LONG)
    while i != -1:
        s = mapped.rfind(b" ", 0, i) + 1
        e = mapped.find(b" ", i)
        head = text[s:s + 3]
        if head in HEADS or (text[s:s + 1] in ("n", "t", "r") and text[s + 1:s + 4] in HEADS):
            return True
        if e == -1:
            break
        i = mapped.find(_LONG, e)
    return False


def _call_needle(data: bytes, words: frozenset[bytes]) -> bool:
    if _NEEDLE_WORDS.isdisjoint(words):
        return False
    return any(gate <= words and any(n in data for n in needles) for gate, needles in CALL_NEEDLES.items())


def _foreign(text: str, data: bytes) -> bool:
    """One of FOREIGN_UNICODE in a text that is not ASCII. Searching a wide string costs ~40 µs per word
    for 20 KB, so first the letters: code with a few characters that are not ASCII (``?`` in ``data``)
    shows them in a few ``find`` steps; a text mostly not ASCII is asked for the first letter of each
    word (one ``in`` each). Only a text holding one of them is searched for the words."""
    i = data.find(b"?")
    seen = 0
    while i != -1:
        c = text[i]
        if c != "?":
            if c in FOREIGN_CHARS:
                return _foreign_words(text)
            seen += 1
            if seen > 32:
                return any(k in text for k in FOREIGN_KEYS) and _foreign_words(text)
        i = data.find(b"?", i + 1)
    return False


def _foreign_words(text: str) -> bool:
    lowered = text.lower()
    return any(n in lowered for n in FOREIGN_UNICODE)


def _auth_tuple(low: bytes) -> bool:
    """``auth=(``, ``http_auth = [``: a user and password pair (calls._auth_tuples)."""
    i = low.find(b"auth")
    while i != -1:
        rest = low[i + 4:i + 14].translate(None, b" \t\"'")
        if rest[:1] in (b"=", b":") and rest[1:2] in (b"(", b"["):
            return True
        i = low.find(b"auth", i + 4)
    return False


def _url_userinfo(data: bytes) -> bool:
    """``scheme://…@``: an ``@`` in the part of a URL that can hold a user (structure.urls)."""
    i = data.find(b"://")
    while i != -1:
        if b"@" in data[i + 3:i + 515].translate(_URL_MAP).split(b" ", 1)[0]:
            return True
        i = data.find(b"://", i + 3)
    return False


def _named(text: str, low: bytes) -> bool:
    """A word that names a secret stands somewhere as a value could follow it (``DB_PASSWORD=``,
    ``apiKey:``, ``the password is``; not ``passed``, ``for key in``, Python's ``pass``)."""
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
            ident = text[s:e].strip(".-")
            cls = classify(ident)
            if cls != NONE and _may_assign(text, s, e, cls, ident):
                return True
            i = low.find(a, e)
    return False


def _may_assign(text: str, s: int, e: int, cls: int, ident: str) -> bool:
    """False where structure._assignment provably finds no value for the name at ``text[s:e]``.

    Its first steps, loosened where they depend on more than a few characters: the name is the
    value of a ``name:``/``key=`` field (the value then stands beside it), or what follows the name
    (its closing quote, a subscript's ``]``, blanks) is an operator, or, after blanks, a word: a
    ``--flag``'s value, a directive's (``requirepass …``, ``AUTH …``) or prose for a password or a
    credential. A name at the end of its line (``pass``) or followed by ``(``, ``)``, ``.``, ``[``
    (code) assigns nothing.
    """
    d = s
    while d < e and text[d] == "-":
        d += 1
    flag = d > s
    if cls == WEAK and d >= 2 and text[d - 1] == " " and text[d - 2].isalnum():
        p = d - 2
        while p > 0 and text[p - 1].isalnum():
            p -= 1
        if classify(text[p:d - 1] + "_" + ident) in (STRONG, PASSWORD):
            cls = STRONG  # "API key", "access key"
    if not flag:
        p = d - 1
        if p >= 0 and text[p] in QUOTES:
            p -= 1
        while p >= 0 and text[p] in " \t":
            p -= 1
        if p >= 0 and text[p] in ":=":
            return True  # - name: DB_PASSWORD / value: …
    n = len(text)
    j = e
    if text[j:j + 1] == "\\" and text[j + 1:j + 2] in QUOTES:
        j += 2
    elif text[j:j + 1] in QUOTES:
        j += 1
    if text[j:j + 1] == "]":
        j += 1
    k = j
    while k < n and text[k] in " \t":
        k += 1
    c = text[k:k + 1]
    if c in ("", "\n", "\r"):
        return False
    if c in OPERATORS:
        return True
    if k == j:
        return False
    return flag or cls in (PASSWORD, STRONG) or ident.lower() in DIRECTIVES
