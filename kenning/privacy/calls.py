"""Secrets passed by position to known client constructors and login calls (``call_argument``).

No name stands beside a positional argument, so the name scanner cannot see
``server.login(user, "…")`` or ``Client("AC…", "…")``. This module knows which argument of
which call is the secret: ``login(user, password)`` (smtplib, ftplib, imaplib and most clients),
poplib's ``pass_``, LDAP binds, ``HTTPBasicAuth(user, password)`` and ``auth=(user, password)``,
JDBC's ``getConnection(url, user, password)``, Go's ``smtp.PlainAuth``, PHP's ``PDO``/``mysqli``,
Twilio's ``Client(sid, token)``, boto3's ``Session(key_id, secret)``, JWT and HMAC signing keys …
A quoted literal in the secret's place is taken unless it reads as a placeholder (``"<password>"``,
``"${PASSWORD}"``, ``"changeme"``, ``"password"``); a variable or an expression there is code, kept.
Standard library only, no ``re``.
"""

from __future__ import annotations

from kenning.privacy import names

Span = tuple[int, int, str]
NAME = "call_argument"
PASSWORD, KEY = "password", "key"

# callee (the end of its dotted name) -> (the secret's positions, its kind, words one of which the text
# must hold: the library, when the callee's own name is too common to say it).
CALLS: dict[str, tuple[tuple[int, ...], str, tuple[str, ...]]] = {
    "login": ((1,), PASSWORD, ()), "pass_": ((0,), PASSWORD, ("poplib", "POP3")),
    "simple_bind_s": ((1,), PASSWORD, ()), "simple_bind": ((1,), PASSWORD, ()), "bind_s": ((1,), PASSWORD, ()),
    "ldap_bind": ((2,), PASSWORD, ()), "ftp_login": ((2,), PASSWORD, ()), "imap_open": ((2,), PASSWORD, ()),
    "mysqli_connect": ((2,), PASSWORD, ("mysqli",)), "mysqli": ((2,), PASSWORD, ()),
    "mysql_connect": ((2,), PASSWORD, ()),
    "PDO": ((2,), PASSWORD, ()),
    "HTTPBasicAuth": ((1,), PASSWORD, ()), "HTTPDigestAuth": ((1,), PASSWORD, ()),
    "HTTPProxyAuth": ((1,), PASSWORD, ()), "BasicAuth": ((1,), PASSWORD, ()), "DigestAuth": ((1,), PASSWORD, ()),
    "getConnection": ((2,), PASSWORD, ()), "PasswordAuthentication": ((1,), PASSWORD, ()),
    "UsernamePasswordCredentials": ((1,), PASSWORD, ()), "NetworkCredential": ((1,), PASSWORD, ()),
    "UsernamePasswordAuthenticationToken": ((1,), PASSWORD, ()), "ClientSecretCredential": ((2,), KEY, ()),
    "PlainAuth": ((2,), PASSWORD, ()), "CRAMMD5Auth": ((1,), KEY, ()), "ssh.Password": ((0,), PASSWORD, ()),
    "FTP": ((2,), PASSWORD, ()), "FTP_TLS": ((2,), PASSWORD, ()), "FTP.new": ((2,), PASSWORD, ()),
    "FTP.open": ((2,), PASSWORD, ()), "SMTP.start": ((4,), PASSWORD, ()),
    "Redis": ((3,), PASSWORD, ()), "StrictRedis": ((3,), PASSWORD, ()),
    "connect": ((3,), PASSWORD, ("paramiko", "SSHClient")),
    "MySQLdb.connect": ((2,), PASSWORD, ()), "pymysql.connect": ((2,), PASSWORD, ()),
    "pymssql.connect": ((2,), PASSWORD, ()), "cx_Oracle.connect": ((1,), PASSWORD, ()),
    "oracledb.connect": ((1,), PASSWORD, ()), "Connection": ((2,), PASSWORD, ("ldap3",)),
    "Session": ((1, 2), KEY, ("boto3", "boto")), "boto3.client": ((7, 8), KEY, ()),
    "boto3.resource": ((7, 8), KEY, ()), "AWS.Credentials": ((1,), KEY, ()), "BasicAWSCredentials": ((1,), KEY, ()),
    "AwsBasicCredentials.create": ((1,), KEY, ()), "NewStaticCredentials": ((1,), KEY, ()),
    "NewStaticCredentialsProvider": ((1,), KEY, ()),
    "Client": ((1,), KEY, ("twilio", "Twilio", "@sid")), "twilio": ((1,), KEY, ()), "Twilio": ((1,), KEY, ()),
    "TwilioClient.Init": ((1,), KEY, ()), "TwilioRestClient": ((1,), KEY, ()), "Twilio.init": ((1,), KEY, ()),
    "Client.new": ((1,), KEY, ("twilio", "Twilio")), "yagmail.SMTP": ((1,), PASSWORD, ()),
    "Authenticate": ((1,), PASSWORD, ()),
    "jwt.encode": ((1,), KEY, ()), "jwt.decode": ((1,), KEY, ()), "jwt.sign": ((1,), KEY, ()),
    "jwt.verify": ((1,), KEY, ()), "createHmac": ((1,), KEY, ()), "hmac.new": ((0,), KEY, ()),
    "HMAC.new": ((0,), KEY, ()), "Fernet": ((0,), KEY, ()),
    "set_password": ((2,), PASSWORD, ()), "add_password": ((3,), PASSWORD, ()),
}


# Calls whose words are everyday ones (``login``, ``bind``, ``ssh``): found by the byte string of the call,
# looked for only in a text that holds all the words the first look cuts from it (``.login(`` where ``login``
# is a word); quick.CALL_NEEDLES holds the same (a test checks).
NEEDLES: dict[str, tuple[tuple[str, ...], tuple[bytes, ...]]] = {
    "login": (("login",), (b".login(", b">login(")), "ftp_login": (("login",), (b"ftp_login(",)),
    "bind_s": (("bind", "s"), (b"bind_s(",)), "simple_bind_s": (("bind", "s"), (b"bind_s(",)),
    "simple_bind": (("simple", "bind"), (b"simple_bind(",)), "set_password": (("set", "password"), (b"set_password(",)),
    "add_password": (("add", "password"), (b"add_password(",)),
    "ssh.Password": (("ssh", "Password"), (b"ssh.Password(",)),
    "AWS.Credentials": (("AWS", "Credentials"), (b"AWS.Credentials(",)),
    "mysql_connect": (("mysql", "connect"), (b"mysql_connect(",)),
}
# Twilio's Client needs the library's name in the text, or an Account SID as its first argument (the first
# look sees the SID as a long run starting with ``AC`` and a hex digit: quick.HEADS), or a variable named
# for one (``account_sid``, ``TWILIO_SID``, ``self.accountSid``: ``sid`` in the text, for the first look).
SID_CALLEE = "Client"


def _gate(callee: str, needs: tuple[str, ...]) -> tuple[str, ...]:
    """The words (as the first look cuts them: runs of letters and digits) one of which must occur for
    a call to be found: the library named in ``needs``, else the qualifier, else the longest piece of
    the name; none for the calls found by their byte string."""
    words = tuple(w for w in needs if not w.startswith("@"))
    if words or callee in NEEDLES:
        return words
    parts = callee.split(".")
    pieces = "".join(c if c.isalnum() else " " for c in (parts[0] if len(parts) > 1 else parts[-1])).split()
    return (max(pieces, key=len),)


GATES: dict[str, tuple[str, ...]] = {callee: _gate(callee, spec[2]) for callee, spec in CALLS.items()}
# Every gate word (quick.CALL_WORDS holds the same: a test checks).
GATE_WORDS = frozenset(w.encode() for ws in GATES.values() for w in ws)
_NEEDLE_GATES = {callee: (frozenset(w.encode() for w in ws), ns) for callee, (ws, ns) in NEEDLES.items()}
BY_LAST: dict[str, list[str]] = {}
for _callee in CALLS:
    BY_LAST.setdefault(_callee.rsplit(".", 1)[-1], []).append(_callee)
IDENT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
OPEN, CLOSE = "([{", ")]}"
AUTH_WORDS = frozenset((b"auth", b"Auth", b"AUTH"))  # auth=(…), http_auth=(…), AUTH = (…): quick's too
MAX_SITES = 256  # calls read per text (each up to MAX_ARGS characters): bounded work on any input
MAX_ARGS = 2000
AFTER_LITERAL = (".toCharArray()", ".encode()", ".getBytes()", ".encode('utf-8')", '.encode("utf-8")',
                 ".as_bytes()", ".to_vec()", ".into()")


def find(text: str, data: bytes, low: bytes, words: frozenset[bytes] | set[bytes]) -> list[Span]:
    """Spans of secrets passed by position to the known calls in ``text`` (``data``/``low``: its bytes,
    as is and lower-cased, one per character; ``words``: its cut words)."""
    out: list[Span] = []
    sites = 0
    for last, callees in BY_LAST.items():
        live = [c for c in callees if any(w.encode() in words for w in GATES[c]) or
                (c == SID_CALLEE and b"Client" in words) or _needled(c, data, words)]
        if not live:
            continue
        needle = last + "("
        i = text.find(needle)
        while i != -1 and sites < MAX_SITES:
            sites += 1
            if i == 0 or text[i - 1] not in IDENT:
                chain = _chain(text, i + len(last))
                for callee in live:
                    if chain == callee or chain.endswith("." + callee):
                        _call(text, i + len(needle), callee, words, out)
                        break
            i = text.find(needle, i + len(needle))
    if b"twilio" in words:  # require('twilio')(sid, token)
        for q in "'\"":
            needle = f"twilio{q})("
            i = text.find(needle)
            while i != -1 and sites < MAX_SITES:
                sites += 1
                _call(text, i + len(needle), "twilio", words, out)
                i = text.find(needle, i + len(needle))
    if not AUTH_WORDS.isdisjoint(words):
        _auth_tuples(text, low, out)
    return out


def _needled(callee: str, data: bytes, words: frozenset[bytes] | set[bytes]) -> bool:
    gate = _NEEDLE_GATES.get(callee)
    return gate is not None and gate[0] <= words and any(n in data for n in gate[1])


def _chain(text: str, end: int) -> str:
    """The dotted name ending at ``end`` (``Net::SMTP.start``, ``$this->client->login``), dots for ``::``/``->``."""
    i = end
    while i > 0:
        c = text[i - 1]
        if c in IDENT or c == ".":
            i -= 1
        elif (c == ":" and text[i - 2:i] == "::") or (c == ">" and text[i - 2:i] == "->"):
            i -= 2
        else:
            break
    return text[i:end].replace("::", ".").replace("->", ".").lstrip(".")


def _args(text: str, k: int) -> list[tuple[int, int]]:
    """The top-level arguments of the call whose ``(`` is just before ``k``: (start, end) each, stripped."""
    out: list[tuple[int, int]] = []
    depth = 0
    start = k
    n = min(len(text), k + MAX_ARGS)
    i = k
    while i < n:
        c = text[i]
        if c == "\\" and text[i + 1:i + 2] in ("\"", "'"):  # JSON text inside a string: \"…\"
            close = text.find(text[i:i + 2], i + 2, n)
            i = n if close == -1 else close + 2
            continue
        if c in "\"'`":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c in OPEN:
            depth += 1
        elif c in CLOSE:
            if depth == 0:
                out.append((start, i))
                break
            depth -= 1
        elif c == "," and depth == 0:
            out.append((start, i))
            start = i + 1
        i += 1
    else:
        return []  # no closing parenthesis in reach: not a call we can read
    spans = []
    for s, e in out:
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        spans.append((s, e))
    return spans


def _keyword(arg: str) -> bool:
    """``password="…"``, ``password: "…"``: a named argument (the name scanner's), not a positional one."""
    i = 0
    while i < len(arg) and arg[i] in IDENT:
        i += 1
    if i == 0:
        return False
    rest = arg[i:].lstrip()
    return (rest[:1] == "=" and rest[1:2] != "=") or (rest[:1] == ":" and rest[1:2] != ":")


def _call(text: str, k: int, callee: str, words: frozenset[bytes] | set[bytes], out: list[Span]) -> None:
    positions, kind, needs = CALLS[callee]
    args = _args(text, k)
    positional: list[tuple[int, int]] = []
    for s, e in args:
        if _keyword(text[s:e]):
            break
        positional.append((s, e))
    if needs:
        ok = any(w.encode() in words for w in needs if not w.startswith("@"))
        if not ok and "@sid" in needs and positional:
            first = text[positional[0][0]:positional[0][1]]
            lit = _literal(text, *positional[0])
            ok = _twilio_sid(text[lit[0]:lit[1]]) if lit is not None else \
                "sid" in first.lower() and first.replace("_", "").replace(".", "").isalnum()  # account_sid
        if not ok:
            return
    for p in positions:
        if p < len(positional):
            lit = _literal(text, *positional[p])
            if lit is not None and secret_literal(text[lit[0]:lit[1]], kind):
                out.append((lit[0], lit[1], NAME))


def _literal(text: str, s: int, e: int) -> tuple[int, int] | None:
    """The content of the string literal the argument ``text[s:e]`` is (``b"…"``, ``"…".toCharArray()``)."""
    while s < e and text[s] in "bBrRuU@":
        s += 1
    if text[s:s + 1] == "\\" and text[s + 1:s + 2] in ("\"", "'"):  # JSON text inside a string: \"…\"
        j = text.find(text[s:s + 2], s + 2, e)
        if j == -1:
            return None
        rest = text[j + 2:e].strip()
        return (s + 2, j) if not rest or rest in AFTER_LITERAL else None
    if s >= e or text[s] not in "\"'`":
        return None
    q = text[s]
    j = s + 1
    while j < e and text[j] != q:
        j += 2 if text[j] == "\\" else 1
    if j >= e:
        return None
    rest = text[j + 1:e].strip()
    if rest and rest not in AFTER_LITERAL:
        return None  # "prefix" + variable, a call on the string: an expression
    return s + 1, j


def _twilio_sid(value: str) -> bool:
    return len(value) == 34 and value.startswith("AC") and all(c in "0123456789abcdef" for c in value[2:])


def secret_literal(value: str, kind: str) -> bool:
    """A quoted literal in a secret's place is the secret, unless it reads as a placeholder or a name."""
    v = value
    if len(v) < 3 or names.is_reference(v) or v.lower() in names.PLACEHOLDERS:
        return False
    if any(c.isspace() for c in v) or "://" in v or v.startswith(("/", "./", "~/")):
        return False  # a label, a sentence, a URL or a path
    if v.replace("_", "").replace("-", "").replace(".", "").isalpha() and names.classify(v) != names.NONE:
        return False  # "password", "DB_PASSWORD": the name of a secret, not one
    if kind == KEY:
        from kenning.privacy import structure

        return structure.value_is_secret(v, names.STRONG, "secret", quoted=True)
    return True


def _auth_tuples(text: str, low: bytes, out: list[Span]) -> None:
    """``auth=("user", "…")``, ``http_auth = ('user', '…')``, ``auth: ["user", "…"]``: the second member."""
    i = low.find(b"auth")
    sites = 0
    while i != -1 and sites < MAX_SITES:
        sites += 1
        k = i + 4
        n = len(text)
        if k < n and text[k] in "\"'":
            k += 1  # {"basic_auth": […]}
        while k < n and text[k] in " \t":
            k += 1
        if k < n and text[k] in "=:" and text[k + 1:k + 2] not in "=:":
            k += 1
            while k < n and text[k] in " \t":
                k += 1
            if k < n and text[k] in "([":
                members = _args(text, k + 1)
                if len(members) == 2:
                    lit = _literal(text, *members[1])
                    if lit is not None and secret_literal(text[lit[0]:lit[1]], PASSWORD):
                        out.append((lit[0], lit[1], NAME))
        i = low.find(b"auth", i + 4)
