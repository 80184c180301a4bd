"""Secrets recognised by where they stand, not by their shape. Standard library only, no ``re``.

- ``password_assignment``: the value given to a name that names a secret, in any syntax that
  assigns (``.env``, shell, YAML, JSON, INI, TOML, HCL, XML, code, headers, command-line
  ``--flags``, ``key=value;`` connection strings, query strings), and a password stated in
  prose ("the password is …").
- ``database_url_password``: the password (or token-shaped user) inside ``scheme://user:pw@host``,
  with or without a user.
- ``url_signature``: the signature of a pre-signed or SAS URL (``sig=``, ``X-Amz-Signature=``).
- ``pem_private_key``: every armoured private block (PEM, OpenSSH, PGP, encrypted), PuTTY
  private keys, base64-wrapped PEM keys (Kubernetes ``tls.key: LS0t…``), private JWKs.
- ``bearer_token``: ``Bearer <credential>`` outside a header.
- ``kubernetes_secret``: the ``data:``/``stringData:`` values of a Kubernetes ``Secret``.
- ``credential_file``: fields of files recognised by their path (see :mod:`kenning.privacy.files`).

Each finder returns ``(start, end, detector)`` spans; :mod:`kenning.privacy.redact` merges them.
"""

from __future__ import annotations

from kenning.privacy import names, quick
from kenning.privacy.names import AUTHZ, NONE, PASSWORD, STRONG, WEAK, classify, is_reference

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

Span = tuple[int, int, str]

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
IDENT = frozenset(_ALNUM + "_.-")
QUOTES = frozenset("\"'`")  # a set: "" in QUOTES is False
# An unquoted value ends at one of these (or at whitespace).
STOP = frozenset("\"'`,;&|)}]<>([\\")
STOP_YAML = STOP - {"&", "|"}  # name: value — an ampersand inside is part of the value
# Lower-case fragments that every secret name (names.classify) contains: where to look.
ANCHORS = quick.ANCHORS
SCHEMES = frozenset(("bearer", "basic", "token", "digest", "bot", "apikey", "api-key", "key", "ssws", "oauth",
                     "negotiate", "ntlm", "hmac", "aws4-hmac-sha256", "goog4-hmac-sha256", "signature", "jwt",
                     "sharedaccesssignature", "dpop"))
PROSE_LINKS = frozenset(("is", "was", "=", ":", "to", "->", "→", "are", "be", "ist", "lautet", "war", "est", "était",
                         "es", "era", "è", "é", "jest", "är"))
# After a link, these are more of it ("the password is: …", "password = -> …"), not the value.
MORE_LINKS = frozenset((":", "=", "->", "→", "-", "—", "–", "=>", "："))
# Values after "password is" that describe it ("utf-8", "bcrypt"): read as words, not as a password.
DESCRIPTIONS = frozenset(("utf-8", "utf8", "utf-16", "base64", "sha256", "sha-256", "sha512", "sha-512", "sha1",
                          "sha-1", "md5", "bcrypt", "scrypt", "argon2", "argon2id", "pbkdf2", "aes-256", "aes256",
                          "rot13", "ascii", "latin-1", "x509", "2fa", "mfa"))
PROSE_FILLERS = frozenset(("now", "still", "currently", "just", "set", "changed", "reset", "to", "temporarily"))
DIRECTIVES = frozenset(("requirepass", "masterauth", "auth"))
TABLE_BORDERS = frozenset("│|┃║")  # tables.BORDERS: what may stand before a table row's key column


class Found:
    """Spans collected for one text, and what the scan learnt on the way."""

    __slots__ = ("anchors", "spans")

    def __init__(self) -> None:
        self.spans: list[Span] = []
        self.anchors: set[bytes] = set()


def _line_end(text: str, i: int) -> int:
    j = text.find("\n", i)
    return len(text) if j == -1 else j


def _line_start(text: str, i: int) -> int:
    return text.rfind("\n", 0, i) + 1


# ---------------------------------------------------------------- names that name a secret

def assignments(text: str, low: bytes, found: Found, literal: bool, enabled: Callable[[str], bool]) -> None:
    """``password_assignment`` (and ``authorization_header``) spans: values given to secret names."""
    n = len(text)
    seen: set[int] = set()
    spans = found.spans
    for a in ANCHORS:
        i = low.find(a)
        if i == -1:
            continue
        found.anchors.add(a)
        while i != -1:
            s = i
            while s > 0 and text[s - 1] in IDENT:
                s -= 1
            e = i + len(a)
            while e < n and text[e] in IDENT:
                e += 1
            if s not in seen:
                seen.add(s)
                span = _assignment(text, s, e, literal)
                if span is not None and enabled(span[2]):
                    spans.append(span)
            i = low.find(a, e)


def _assignment(text: str, s: int, e: int, literal: bool) -> Span | None:
    n = len(text)
    flag = 0
    while s < e and text[s] == "-":
        s += 1
        flag += 1
    while e > s and text[e - 1] in ".-":
        e -= 1
    if e - s < 2:
        return None
    ident = text[s:e]
    cls = classify(ident)
    if cls == WEAK and s >= 2 and text[s - 1] == " " and (text[s - 2].isalnum()):
        p = s - 2
        while p > 0 and text[p - 1].isalnum():
            p -= 1
        if classify(text[p:s - 1] + "_" + ident) in (STRONG, PASSWORD):
            cls = STRONG  # "API key", "access key": two words that name a secret together
    if cls == NONE or text[s - 3:s] == "://":
        return None  # (the userinfo of a URL is the URL finder's)
    if text[s - 1:s] == ":" and text[e:e + 1] == ":" and s >= 2 and text[s - 2].isalnum():
        return None  # a segment of an ARN or URN: arn:aws:secretsmanager:…
    before = text[s - flag - 1] if s - flag > 0 else ""
    if flag and before not in " \t\n\"'=([" and s - flag > 0:
        flag = 0  # a dash inside a word, not a command-line flag
    if flag and before in QUOTES and text[e:e + 1] == before:
        return None  # "--password-stdin" written as a string, not used as a flag
    opener = before if not flag and before in QUOTES else ""
    escaped = bool(opener) and s >= 2 and text[s - 2] == "\\"
    if not flag:
        pair = _name_value_pair(text, s, e, cls, opener)
        if pair is not None:
            return pair
    j = e
    if opener:
        closer = "\\" + opener if escaped else opener
        if text.startswith(closer, j):
            j += len(closer)
        elif cls == AUTHZ or text[j:j + 1] in (":", "="):
            opener = ""  # a quoted header or assignment: "Authorization: Bearer …", 'db_password=…'
        else:
            return None
    if text[j:j + 1] == "]":
        j += 1  # ENV['DB_PASSWORD'] = …, ["password"] = …
    k = j
    while k < n and text[k] in " \t":
        k += 1
    c = text[k:k + 1]
    nxt = text[k + 1:k + 2]
    spaced = k > j
    if c == "=":
        if nxt in "=~":
            return None  # a comparison
        k += 2 if nxt == ">" else 1
    elif c == ":":
        if nxt == ":":
            return None
        k += 2 if nxt == "=" else 1
    elif c in "?+" and nxt == "=":
        k += 2
    elif c == "<" and nxt == "-":
        k += 2  # R: password <- "…"
    elif c == ">" and before == "<":
        return _xml_value(text, s, k + 1, cls)
    elif c == ">" and opener and text[max(0, s - 6):s - 1].rstrip().endswith(("key=", "name=")):
        return _xml_value(text, s, k + 1, cls)  # <entry key="db.password">…</entry>
    elif opener and text.startswith("value=", k):
        k += 6  # <add key="Password" value="…" />
    elif flag and spaced and c and c not in "-\n":
        pass  # --password hunter2
    elif c == "," and opener and text[k + 1:k + 40].lstrip(" \t")[:1] in QUOTES and _first_argument(text, s - 1):
        k += 1  # define('DB_PASSWORD', '…'), setenv("TOKEN", "…")
    elif c in (" ", "\t", "\n", "\r", "") or spaced:
        if c in ("\n", "\r"):
            return None
        line_head = text[_line_start(text, s):s - (1 if opener else 0)].strip()
        if (ident.lower() in DIRECTIVES and (not line_head or line_head.lower() in ("set -x", "set", "env", "arg"))) \
                or (cls == PASSWORD and _netrc_line(text, s)):
            span = _directive(text, k, cls, strict=ident.lower() == "auth")  # at the start of its line
            if span is not None or cls != PASSWORD or ident.lower() == "pass":
                return span
            return _prose(text, e, cls)  # "login with password is …": prose after all
        if cls in (PASSWORD, STRONG) and not opener and not flag and (not line_head or line_head in TABLE_BORDERS):
            from kenning.privacy import tables  # (rare: loaded for a table's row only)

            row = tables.row(text, j, k, cls, ident)
            if row is not None:
                return row
        if cls in (PASSWORD, STRONG) and not opener and text[k:k + 1] in QUOTES and \
                text[k + 1:k + 2] != text[k] and ident.lower() != "pass":
            return _value(text, k, cls, ident, code_style=False, quoted_key=False, literal=True, flag=False)
        if cls in (PASSWORD, STRONG) and not opener and _env_style(ident) and \
                line_head.lower() in ("set -x", "set -gx", "env", "setenv", "arg", "export"):
            return _directive(text, k, cls, strict=False)  # fish: set -x DB_PASSWORD …; Dockerfile: ENV … …
        if cls in (PASSWORD, STRONG) and not flag and ident.lower() != "pass":
            return _prose(text, e, cls)  # (not the verb: "pass it to select()")
        return None
    else:
        return None
    spaced_after = k < n and text[k] in " \t"
    while k < n and text[k] in " \t":
        k += 1
    code_style = spaced and spaced_after and c == "=" and not literal
    if cls == AUTHZ:
        if text[k:k + 1] in QUOTES:
            return _authz(text, k + 1, text[k])
        if code_style or (not opener and text[k:k + 1] in ("", "\n")):
            return None  # authorization = self.headers.get(…): code
        return _authz(text, k, opener)
    return _value(text, k, cls, ident, code_style=code_style, quoted_key=bool(opener) and c == ":",
                  literal=literal, flag=bool(flag), query=c == "=")


PAIR_NAMES = names.PAIR_NAMES


def _first_argument(text: str, q: int) -> bool:
    """The quote at ``q`` opens the first argument of a call: ``define(``, ``os.environ.setdefault(``."""
    i = q - 1
    while i >= 0 and text[i] in " \t":
        i -= 1
    return i >= 1 and text[i] == "(" and (text[i - 1].isalnum() or text[i - 1] == "_")


def _name_value_pair(text: str, s: int, e: int, cls: int, opener: str) -> Span | None:
    """``- name: DB_PASSWORD`` then ``value: …``; ``{"Name": "API_KEY", "Value": "…"}``: the value beside the name."""
    j = s - (1 if opener in QUOTES and opener else 0)
    j -= 1
    while j >= 0 and text[j] in " \t":
        j -= 1
    if j < 0 or text[j] not in ":=":
        return None
    j -= 1
    while j >= 0 and text[j] in " \t\"'":
        j -= 1
    k = j
    while k >= 0 and (text[k].isalnum() or text[k] in "_-"):
        k -= 1
    if text[k + 1:j + 1].lower().replace("_", "").replace("-", "") not in PAIR_NAMES:
        return None
    window = text[e:e + 400]
    low = window.lower()
    at = low.find("value")
    while at != -1:
        v = at + 5
        while v < len(window) and window[v] in "\"' \t":
            v += 1
        if window[v:v + 1] in (":", "=") and not window[at - 1:at].isalnum():
            v += 1
            while v < len(window) and window[v] in " \t":
                v += 1
            return _value(text, e + v, cls, "value", code_style=False, quoted_key=False, literal=True, flag=False)
        at = low.find("value", at + 5)
    return None


def _value(text: str, k: int, cls: int, ident: str, *, code_style: bool, quoted_key: bool, literal: bool,
           flag: bool, query: bool = True) -> Span | None:
    n = len(text)
    if k >= n:
        return None
    q = text[k]
    if q == "\\" and text[k + 1:k + 2] in QUOTES:
        close = text[k:k + 2]
        end = text.find(close, k + 2, _line_end(text, k))
        start = k + 2
        end = _line_end(text, k) if end == -1 else end
        return _accept(text, start, end, cls, ident, quoted=True)
    if q in QUOTES:
        if text.startswith(q * 3, k):
            return None  # a docstring or heredoc-like block: too ambiguous
        eol = _line_end(text, k)
        end = text.find(q, k + 1, eol)
        if end == -1:
            end = eol  # unterminated on its line (cut by truncation): take it to the end, fail closed
        return _accept(text, k + 1, end, cls, ident, quoted=True)
    if q in "|>" and text[k + 1:k + 3].strip(" -+\t") == "" and text[k + 1:k + 2] in ("", "\n", "-", "+", " "):
        # YAML block scalar: the value is the next, more indented line.
        eol = _line_end(text, k)
        nl = eol + 1
        if nl >= n:
            return None
        start = nl
        while start < n and text[start] in " \t":
            start += 1
        end = _line_end(text, start)
        return _accept(text, start, end, cls, ident, quoted=True)
    if q == "{" and text[k + 1:k + 2] not in "{%":
        end = text.find("}", k + 1, _line_end(text, k))
        if end != -1 and ";" in text[max(0, k - 200):k]:
            return _accept(text, k + 1, end, cls, ident, quoted=True)  # PWD={…} in a connection string
    end = k
    stop = STOP if query else STOP_YAML
    while end < n and not text[end].isspace() and text[end] not in stop:
        end += 1
    if end == k:
        return None
    after = text[end:end + 1]
    value = text[k:end]
    if after in QUOTES and value.lower() in STRING_PREFIXES:
        return _value(text, end, cls, ident, code_style=False, quoted_key=False, literal=True, flag=flag)
    if after in (" ", "\t", "") and value.replace("_", "").replace(".", "").isalnum() and not literal:
        rest = text[end:_line_end(text, end)].lstrip(" \t")
        if rest.startswith("=") and rest[1:2] not in ("=", "~"):
            # a typed declaration: let secret: String = "…", api_key: str = "…"
            v = end + (len(text[end:_line_end(text, end)]) - len(rest)) + 1
            while v < n and text[v] in " \t":
                v += 1
            return _value(text, v, cls, ident, code_style=True, quoted_key=False, literal=False, flag=False)
    if after in ("(", "["):
        return _call_literal(text, end + 1, cls, ident) if after == "(" else None  # code
    if flag and value.startswith("-"):
        return None
    if not literal and value[0] == "{":
        return None  # an object or a set in code
    if not literal and not flag and not names.looks_random(value, 12) and (
            _unquoted_is_code(value, after, code_style, quoted_key) or (code_style and _expression(value))):
        return None
    if cls in (PASSWORD, STRONG) and "cred" in ident.lower() and \
            (text[end:end + 3] in (" / ", " : ") or text[end:end + 1] == "/"):
        # "creds: admin / V3XZ…", "login: bob:pw": the second part is the password
        j = end + (3 if text[end:end + 1] == " " else 1)
        k2 = j
        while k2 < n and not text[k2].isspace():
            k2 += 1
        second = _prose_value(text, j, k2, PASSWORD)
        if second is not None:
            return second
    if not literal and after in (" ", "\t"):
        rest = text[end:_line_end(text, end)].strip()
        if rest and not rest.startswith(("#", "//", "\\", "&&", "||", "|", ";", "-")) and \
                not names.looks_like_password(value) and not names.looks_random(value, 12) and \
                not (cls == PASSWORD and _human_dollar(value)):
            return None  # the first word of a sentence ("pwd: expected bytes"), not a value
    return _accept(text, k, end, cls, ident, quoted=False)


STRING_PREFIXES = frozenset(("b", "r", "u", "f", "br", "rb", "fr", "rf", "e", "n", "@", "$"))


def _call_literal(text: str, k: int, cls: int, ident: str) -> Span | None:
    """``KEY = bytes.fromhex("…")``, ``Secret("…")``: a random-looking literal passed straight to a call."""
    q = text[k:k + 1]
    if q not in QUOTES:
        return None
    end = text.find(q, k + 1, _line_end(text, k))
    if end == -1:
        return None
    value = text[k + 1:end]
    if names.looks_random(value) and value_is_secret(value, cls, ident, quoted=True):
        return (k + 1, end, "password_assignment")
    return None


def _expression(value: str) -> bool:
    """``1*tchar``, ``a+b``: an operator between two operands."""
    return any(value[i] in "*+/%^~|" and value[i - 1].isalnum() and value[i + 1].isalnum()
               for i in range(1, len(value) - 1))


def _unquoted_is_code(value: str, after: str, code_style: bool, quoted_key: bool) -> bool:
    """An unquoted value that reads as a variable or an expression in code."""
    if value.lower() in names.CODE_WORDS:
        return True
    if "." in value and all(p[:1].isalpha() or p[:1] == "_" for p in value.split(".")) and \
            all(p.replace("_", "").isalnum() for p in value.split(".")):
        return True  # self.token, settings.api_key, os.environ
    ident_like = value.replace("_", "").isalnum() and not value[0].isdigit()
    if not ident_like:
        return False
    letters_only = value.replace("_", "").isalpha()
    camel = any(value[i].islower() and value[i + 1].isupper() for i in range(len(value) - 1))
    if code_style or quoted_key:
        return True  # name = value / "name": value with a bare word on the right: a variable
    if letters_only and (camel or after in (",", "}", ")")):
        return True  # { password: userPassword }, f(token=tok)
    return letters_only and value[0].isupper() and value[1:2].islower() and camel  # a type name: SecretStr


def _accept(text: str, start: int, end: int, cls: int, ident: str, *, quoted: bool) -> Span | None:
    raw = text[start:end]
    value = raw.strip()
    if not value:
        return None
    lead = raw.find(value)
    start += lead
    end = start + len(value)
    if not value_is_secret(value, cls, ident, quoted=quoted):
        return None
    return (start, end, "password_assignment")


def value_is_secret(value: str, cls: int, ident: str, *, quoted: bool, structured: bool = False) -> bool:
    """The value given to a secret name is the secret (not a reference, placeholder, path or label)."""
    if is_reference(value) and not (cls == PASSWORD and _human_dollar(value)):
        return False
    squashed = "".join(names.words(value))
    if squashed and squashed == "".join(names.words(ident)):
        return False  # token = token, "password": "Password"
    if "://" in value:
        return False  # a URL: its credential part is the URL detector's
    if value[0] in "/~" or value.startswith(("./", "../", "C:\\", "\\\\")):
        return False  # a path
    if cls == WEAK:
        return names.looks_random(value) and not _file_like(value)
    if not any(c.isdigit() for c in value) and value.replace("_", "").replace("-", "").replace(".", "").isalpha() \
            and names.classify(value) != NONE:
        return False  # the name of another secret (a list of field names, a secretKeyRef), not a value
    digits_only = value.isdigit()
    spaced = any(c.isspace() for c in value)
    multiword = names.words(ident)
    phrase = any(w in ("passphrase", "mnemonic", "phrase", "seed") for w in multiword)
    if spaced and not phrase:
        return False  # prose, a label, a sentence
    if cls == PASSWORD:
        if len(value) < (3 if structured else 4):
            return False
        if not structured and value.isalpha() and value[:1].isupper() and value[1:].islower() and quoted:
            return False  # a label ("Passwort")
        return structured or not _file_like(value)
    # STRONG: tokens, keys, secrets
    if len(value) < 6 or digits_only:
        return False
    if _file_like(value):
        return False
    letters = value.replace("-", "").replace("_", "").replace(".", "")
    if letters.isalpha() and (letters.islower() or (letters.isupper() and len(letters) <= 12)):
        return False  # enum words and constants: "expired", "include", "client-credentials", "NONE"
    return not (not structured and letters.isalpha() and value[:1].isupper() and value[1:].islower())


def _file_like(value: str) -> bool:
    """``secrets.yaml``, ``id_rsa.pub``, ``config/key.pem``: a file name, not the secret."""
    dot = value.rfind(".")
    ext = value[dot + 1:].lower() if dot > 0 else ""
    return ext in ("pem", "key", "pub", "crt", "cer", "der", "p12", "pfx", "jks", "json", "yaml", "yml", "txt",
                   "env", "ini", "cfg", "conf", "toml", "xml", "gpg", "asc", "age", "enc", "sh", "py", "js")


def _xml_value(text: str, s: int, k: int, cls: int) -> Span | None:
    end = text.find("</", k, k + 4096)
    if end == -1:
        return None
    return _accept(text, k, end, cls, text[s:s], quoted=True)


def _authz(text: str, k: int, opener: str) -> Span | None:
    """``Authorization: <scheme> <credential>``: the scheme is kept."""
    eol = _line_end(text, k)
    stop = eol
    for q in (opener, '"', "'", "`"):
        if q:
            j = text.find(q, k, eol)
            if j != -1:
                stop = min(stop, j)
    value = text[k:stop].split("\\", 1)[0].rstrip(" \t\r,;")  # up to an escape (\r\n of a header in code)
    if not value:
        return None
    parts = value.split(None, 1)
    if len(parts) == 2 and parts[0].lower() in SCHEMES:
        start = k + value.find(parts[1], len(parts[0]))
        cred = parts[1]
    elif len(parts) == 1:
        start, cred = k, parts[0]
    else:
        return None
    if is_reference(cred) or len(cred) < 8:
        return None
    return (start, start + len(cred), "authorization_header")


def _env_style(ident: str) -> bool:
    """``DB_PASSWORD``: an environment variable's name."""
    return ident.isupper() or (ident.replace("_", "").isupper() and "_" in ident)


def _directive(text: str, k: int, cls: int, *, strict: bool) -> Span | None:
    """``requirepass <value>`` (redis.conf), ``password <value>`` in a ``.netrc``, ``AUTH <value>``."""
    n = len(text)
    while k < n and text[k] in " \t":
        k += 1
    end = k
    while end < n and not text[end].isspace():
        end += 1
    value = text[k:end].strip("\"'")
    if len(value) < 3 or is_reference(value):
        return None
    if strict and not (names.looks_like_password(value) or names.looks_random(value, 12)):
        return None
    start = text.find(value, k, end)
    return (start, start + len(value), "password_assignment")


def _netrc_line(text: str, s: int) -> bool:
    """``machine host login me password …`` or a ``password …`` line of a ``.netrc`` block."""
    ls = _line_start(text, s)
    head = text[ls:s].strip()
    if not head:
        # A ``password`` line of a block: one of the lines just above opens it (``machine``, ``default``) or is
        # its ``login <name>`` line; prose that merely says "login" somewhere above such a line is not one.
        above = [ln.strip() for ln in text[max(0, ls - 300):ls].splitlines() if ln.strip()][-3:]
        return any(ln.startswith(("machine ", "default ")) or ln == "default"
                   or (ln.startswith("login ") and len(ln.split()) == 2) for ln in above)
    return head.startswith(("machine ", "default ")) or " login " in f" {head} "


def _prose(text: str, e: int, cls: int) -> Span | None:
    """"the password is Tr0ub4dor&3", "password for the prod db: xyz": a few words, a link, a value."""
    eol = min(_line_end(text, e), e + 160)
    i = e
    n_words = fillers = 0
    linked = False
    while i < eol and n_words <= 6:
        while i < eol and text[i] in " \t":
            i += 1
        j = i
        while j < eol and text[j] not in " \t":
            j += 1
        if j == i:
            return None
        word = text[i:j]
        if linked and word.lower() in PROSE_FILLERS and fillers < 2:
            fillers += 1  # "the password is now …", "was changed to …"
            n_words += 1
            i = j
            continue
        if linked and word in MORE_LINKS:
            i = j
            continue  # "is: …", "= -> …"
        if linked:
            return _prose_value(text, i, j, cls)
        if n_words == 0 and cls == PASSWORD and any(ch.isdigit() for ch in word) and \
                names.looks_like_password(word.rstrip(".,;)")) and not word.replace("_", "").isalnum():
            return _prose_value(text, i, j, cls)  # "# password bd9Pocuaq#Llv0"
        low = word.lower()
        if low in PROSE_LINKS or (word.endswith(":") and word[:-1].isalpha()):
            linked = True
        elif not (word.isalpha() or word.strip(",").isalpha()):
            return None  # not prose before a link
        n_words += 1
        i = j
    return None


def _prose_value(text: str, i: int, j: int, cls: int) -> Span | None:
    raw = text[i:j]
    quoted = raw[:1] in QUOTES
    value = raw[1:].split(raw[0], 1)[0] if quoted else raw.rstrip(".,;:!?)\"'`")
    if not value or (is_reference(value) and not _human_dollar(value)):
        return None
    if value.endswith("'s"):
        return None  # a possessive: prose
    if value.replace("_", "").replace("-", "").isalpha() or "(" in value:
        return None  # a word, an identifier or a call, not a password
    if value.lower() in DESCRIPTIONS or _compound_adjective(value):
        return None  # "utf-8", "2FA-protected": what the password is, not the password
    ok = names.looks_like_password(value) or (cls == PASSWORD and value.isdigit() and len(value) >= 6)
    if not ok and cls == PASSWORD and len(value) >= 4 and any(c.isalpha() for c in value):
        mixed = any(c.isdigit() for c in value) or not value.isalnum()
        version = "." in value and value.replace(".", "").isalnum()  # v1.2, e.g
        ok = mixed and not version  # a short typed mix: "pa55", "x9!k"
    if quoted and not ok:
        ok = cls == PASSWORD and len(value) >= 4 and not value.isalpha()
    if not ok:
        return None
    start = text.find(value, i, j)
    return (start, start + len(value), "password_assignment")


HUMAN_SYMBOLS = frozenset("!@#$%^&*+=?~_-")


def _human_dollar(value: str) -> bool:
    """``$uperS3cret!``: a typed password that starts with ``$``, not a variable (``$PASSWORD``, ``${X}``,
    ``$this->password``, ``$HOME/.pgpass``, ``$env:TOKEN``): a digit, and only letters, digits and symbols."""
    rest = value[1:]
    return value[:1] == "$" and len(value) >= 6 and rest[:1].isalpha() and any(c.isdigit() for c in rest) and \
        not rest.replace("_", "").isalnum() and "->" not in rest and \
        all(c.isalnum() or c in HUMAN_SYMBOLS for c in rest) and not names.is_reference(rest)


def _compound_adjective(value: str) -> bool:
    """``2FA-protected``, ``bcrypt-hashed``, ``base64-encoded``: words joined by hyphens, the last a word."""
    parts = value.split("-")
    return len(parts) >= 2 and all(p.isalnum() for p in parts) and parts[-1].isalpha() and \
        parts[-1].islower() and len(parts[-1]) >= 4


# ---------------------------------------------------------------------------- URLs

URL_USER_STOP = frozenset(" \t\r\n\"'`<>()[]{}\\,;")


def urls(text: str, found: Found) -> None:
    """The password of ``scheme://user:pw@host`` (``redis://:pw@host`` too) and token-shaped users."""
    i = text.find("://")
    n = len(text)
    while i != -1:
        k = i + 3
        end = k
        while end < n and end - k < 512 and text[end] not in URL_USER_STOP:
            end += 1
        seg = text[k:end]
        at = seg.rfind("@")
        slash = seg.find("/")
        if at > 0 and (slash == -1 or slash > at or _slash_in_password(seg, at)):
            userinfo = seg[:at]
            colon = userinfo.find(":")
            if colon != -1:
                pw = userinfo[colon + 1:]
                if pw and not is_reference(pw) and pw.lower() not in ("password", "pass", "pw", "x-oauth-basic"):
                    found.spans.append((k + colon + 1, k + at, "database_url_password"))
                user = userinfo[:colon]
                if names.looks_random(user, 20):
                    found.spans.append((k, k + colon, "database_url_password"))
            elif names.looks_random(userinfo, 20):
                found.spans.append((k, k + at, "database_url_password"))
        i = text.find("://", max(end, i + 3))


def _slash_in_password(seg: str, at: int) -> bool:
    """``postgres://u:pa/ss@h``: a ``/`` inside the password, not the start of a path."""
    colon = seg.find(":")
    if colon == -1 or colon > at or "/" in seg[:colon]:
        return False
    after = seg[colon + 1:at]
    return not after.split("/", 1)[0].isdigit()  # host:8080/path@x is a port then a path


SIG_CHARS = frozenset(_ALNUM + "%+/=_-")


def signatures(text: str, low: bytes, found: Found) -> None:
    """``sig=`` of an Azure SAS, ``X-Amz-Signature=`` / ``X-Goog-Signature=`` / ``Signature=`` of signed URLs."""
    for key in (b"sig=", b"signature="):
        i = low.find(key)
        while i != -1:
            prev = text[i - 1:i]
            ok = prev in ("?", "&", ";", " ", "\"", "'", "") or (key == b"signature=" and prev == "-")
            k = i + len(key)
            end = k
            while end < len(text) and text[end] in SIG_CHARS and text[end] != "&":
                end += 1
            if ok and end - k >= 16 and not is_reference(text[k:end]):
                found.spans.append((k, end, "url_signature"))
            i = low.find(key, k)


# ---------------------------------------------------------------------- private keys

def private_keys(text: str, found: Found, putty: bool, minisign: bool = False) -> None:
    """Armoured private blocks (PEM, OpenSSH, PGP, encrypted) and PuTTY private keys."""
    i = text.find("-----BEGIN ")
    while i != -1:
        label_end = text.find("-----", i + 11, i + 120)
        if label_end == -1:
            break
        label = text[i + 11:label_end]
        if "PRIVATE KEY" in label or "SECRET KEY" in label:
            end_marker = "-----END " + label + "-----"
            end = text.find(end_marker, label_end)
            stop = len(text) if end == -1 else end + len(end_marker)
            found.spans.append((i, stop, "pem_private_key"))
            i = text.find("-----BEGIN ", stop)
            continue
        i = text.find("-----BEGIN ", label_end)
    if minisign:
        i = text.find("untrusted comment:")
        while i != -1:
            le = _line_end(text, i)
            if "secret key" in text[i:le]:
                ks = le + 1
                ke = _line_end(text, ks)
                if ke - ks >= 40:
                    found.spans.append((ks, ke, "pem_private_key"))  # a minisign / signify secret key
            i = text.find("untrusted comment:", le)
    if putty:
        i = text.find("PuTTY-User-Key-File-")
        while i != -1:
            stop = i + 20
            if text[i + 20:i + 21].isdigit() and text[i + 21:i + 22] == ":" and "Private-Lines:" in text[i:i + 8192]:
                mac = text.find("Private-MAC:", i)
                stop = len(text) if mac == -1 else _line_end(text, mac)
                found.spans.append((i, stop, "pem_private_key"))
            i = text.find("PuTTY-User-Key-File-", stop)


JWK_PRIVATE = names.JWK_PRIVATE


def jwks(text: str, found: Found) -> None:
    """The private members of a JSON Web Key written as text (``"kty": …, "d": "…"``)."""
    if '"kty"' not in text:
        return
    for member in JWK_PRIVATE:
        key = f'"{member}"'
        i = text.find(key)
        while i != -1:
            k = i + len(key)
            while k < len(text) and text[k] in " \t:":
                k += 1
            if text[k:k + 1] == '"':
                end = text.find('"', k + 1)
                if end != -1 and end - k - 1 >= 16:
                    found.spans.append((k + 1, end, "pem_private_key"))
            i = text.find(key, k)


def bearer(text: str, low: bytes, found: Found) -> None:
    """``Bearer <credential>`` wherever it is written (a header elsewhere is the name scanner's)."""
    i = low.find(b"bearer")
    n = len(text)
    chars = frozenset(_ALNUM + "._~+/-")
    while i != -1:
        k = i + 6
        if k < n and text[k] in " \t":
            while k < n and text[k] in " \t":
                k += 1
            end = k
            while end < n and text[end] in chars:
                end += 1
            while end < n and text[end] == "=":
                end += 1
            token = text[k:end]
            if len(token) >= 20 and not is_reference(token) and any(c.isdigit() for c in token):
                found.spans.append((k, end, "bearer_token"))
        i = low.find(b"bearer", k)


# ----------------------------------------------------------------- Kubernetes Secrets

def kubernetes_secrets(text: str, found: Found) -> None:
    """Values under ``data:`` / ``stringData:`` of a document whose ``kind`` is ``Secret``."""
    if not _is_secret_kind(text):
        return
    _yaml_data(text, found)
    _json_data(text, found)


def _is_secret_kind(text: str) -> bool:
    i = text.find("kind")
    while i != -1:
        k = i + 4
        while k < len(text) and text[k] in "\"': \t":
            k += 1
        if text.startswith("Secret", k) and not text[k + 6:k + 7].isalnum():
            return True
        i = text.find("kind", i + 4)
    return False


def _yaml_data(text: str, found: Found) -> None:
    for key in ("data:", "stringData:"):
        i = text.find(key)
        while i != -1:
            ls = _line_start(text, i)
            indent = i - ls
            if text[ls:i].strip(" -") == "" and text[i + len(key):_line_end(text, i)].strip() == "":
                pos = _line_end(text, i) + 1
                while pos < len(text):
                    le = _line_end(text, pos)
                    line = text[pos:le]
                    stripped = line.lstrip(" ")
                    if stripped and len(line) - len(stripped) <= indent:
                        break
                    colon = line.find(":")
                    if stripped and colon != -1:
                        v = pos + colon + 1
                        while v < le and text[v] in " \t\"'":
                            v += 1
                        ve = le
                        while ve > v and text[ve - 1] in " \t\"'\r":
                            ve -= 1
                        if ve > v and text[v:ve] not in ("|", ">", "|-", ">-"):
                            found.spans.append((v, ve, "kubernetes_secret"))
                    elif stripped:  # a line of a block scalar
                        found.spans.append((pos + len(line) - len(stripped), le, "kubernetes_secret"))
                    pos = le + 1
            i = text.find(key, i + len(key))


def _json_data(text: str, found: Found) -> None:
    for key in ('"data"', '"stringData"'):
        i = text.find(key)
        while i != -1:
            k = i + len(key)
            while k < len(text) and text[k] in " \t\r\n:":
                k += 1
            if text[k:k + 1] == "{":
                close = text.find("}", k)
                if close == -1:
                    close = len(text)
                pos = k + 1
                while True:
                    colon = text.find(":", pos, close)
                    if colon == -1:
                        break
                    v = colon + 1
                    while v < close and text[v] in " \t\r\n":
                        v += 1
                    if text[v:v + 1] == '"':
                        ve = text.find('"', v + 1, close)
                        if ve == -1:
                            break
                        if ve > v + 1:
                            found.spans.append((v + 1, ve, "kubernetes_secret"))
                        pos = ve + 1
                    else:
                        pos = v + 1
            i = text.find(key, k)
