"""What a name says about its value: is this key, variable, flag or header a secret's name?

Standard library only, no ``re`` (runs in the hook). A name is split into lower-case words
(``dbPassword``, ``DB_PASSWORD``, ``x-api-key``, ``spring.datasource.password`` all give
their words) and classified:

- ``PASSWORD``: a password or passphrase (``password``, ``passwd``, ``pwd``, ``pass``,
  ``requirepass``, ``storepass``); any literal is taken, digits included.
- ``STRONG``: another credential (``secret``, ``token``, ``api_key``, ``client_secret``,
  ``AccountKey``, ``private_key``, ``credentials``); literals that look like identifiers,
  numbers or enum words are kept.
- ``WEAK``: a name that often but not always holds a secret (``key``, ``auth``, ``cookie``);
  only a value that looks random is taken (the entropy check).
- ``AUTHZ``: an ``Authorization`` header; the scheme is kept, the credential taken.
- ``NONE``: anything else, and names that describe a secret rather than hold one
  (``token_type``, ``password_min_length``, ``secret_name``, ``api_key_header``, ``public_key``).
"""

from __future__ import annotations

NONE, WEAK, STRONG, PASSWORD, AUTHZ = 0, 1, 2, 3, 4

# The last word says the name describes a secret (its kind, size, place, rules), not holds it.
META = frozenset((
    "type", "types", "kind", "class", "name", "names", "id", "ids", "arn", "uri", "url", "urls", "endpoint",
    "path", "paths", "file", "files", "filename", "dir", "directory", "env", "var", "variable", "field", "fields",
    "param", "parameter", "header", "headers", "prefix", "suffix", "format", "length", "len", "size", "bits",
    "min", "max", "minlength", "maxlength", "count", "counts", "ttl", "expiry", "expires", "expiration",
    "expired", "lifetime", "timeout", "age", "seconds", "secs", "sec", "ms", "days", "hours", "minutes", "mins",
    "policy", "policies", "rule", "rules", "regex", "pattern", "hash", "hashed", "digest", "rounds",
    "iterations", "algorithm", "algo", "alg", "strength", "required", "enabled", "disabled", "enable",
    "mode", "provider", "backend", "manager", "store", "storage", "source", "ref", "reference", "version",
    "scope", "scopes", "location", "label", "description", "desc", "hint", "prompt", "placeholder", "help",
    "error", "errors", "message", "msg", "changed", "reset", "updated", "created", "at", "date", "time",
    "usage", "used", "spent", "limit", "limits", "quota", "budget", "index", "idx", "list", "position", "pos",
    "stdin", "fd", "fds", "cmd", "command", "helper", "callback", "fn", "func", "handler", "validator", "validation",
    "check", "strategy", "flow", "grant", "audience", "issuer", "claims", "rotation", "rotate", "lock",
    "locked", "attempts", "retries", "rate", "threshold", "ratio", "percent", "score", "total", "fingerprint",
    "alias", "service", "user", "username", "login", "account", "owner", "email", "host", "port", "region",
    "schema", "spec", "template", "example", "sample", "test", "tests", "mock", "fixture", "len", "width",
    "exists", "present", "missing", "valid", "invalid", "status", "state", "info", "metadata", "meta",
    "field_name", "label", "input", "widget", "form", "box", "button", "icon", "link", "page", "view",
    "dialog", "screen", "modal", "visible", "visibility", "shown", "show", "hidden", "toggle", "strength",
    "encoding", "charset", "delimiter", "separator", "style", "color", "colour", "hasher", "hashers", "hashing",
    "encoder", "scheme", "schemes", "manager", "managers", "reader", "writer", "loader", "parser", "generator",
    "factory", "builder", "service", "client", "module", "package", "plugin", "handler", "middleware",
    "range", "ranges", "span", "kind", "stream", "iter", "iterator", "offset", "start", "end",
))
# Words that make the whole name public or structural (``public_key``, ``publishable_key``).
PUBLIC = frozenset(("public", "pub", "publishable", "pubkey", "publickey", "anon"))
# Exact words naming a password.
PASSWORD_WORDS = frozenset(("password", "passwords", "passwd", "passwrd", "passwort", "pwd", "pw", "pass",
                            "passphrase", "passcode", "passkey", "mnemonic"))
# Exact words naming another credential.
SECRET_WORDS = frozenset(("secret", "secrets", "token", "credential", "credentials", "creds", "apikey",
                          "apikeys", "apitoken", "privatekey", "secretkey", "accesskey", "authkey",
                          "accesstoken", "authtoken", "refreshtoken", "bearertoken", "sessiontoken",
                          "clientsecret", "masterkey", "signingkey", "encryptionkey", "licensekey", "appkey",
                          "accountkey", "subscriptionkey", "servicekey", "psk", "presharedkey"))
# ``<qualifier>_key`` is a credential for these qualifiers...
KEY_STRONG = frozenset((
    "api", "access", "secret", "private", "signing", "sign", "encryption", "encrypt", "decryption", "decrypt",
    "master", "auth", "account", "app", "application", "license", "licence", "hmac", "jwt", "client", "service",
    "admin", "root", "deploy", "consumer", "webhook", "subscription", "cipher", "crypto", "aes", "shared",
    "write", "ingest", "ingestion", "integration", "server", "mac", "rsa", "ssh", "ed25519", "gpg", "pgp", "age",
    "wallet", "seed", "recovery", "sas", "storage", "session", "cookie", "csrf", "otp", "totp", "mfa", "dev",
    "prod", "live", "stripe", "openai", "anthropic", "google", "firebase", "azure", "aws", "gcp", "github",
))
# ...and structural for these (``primary_key``, ``cache_key``): everything else is WEAK.
KEY_NONE = frozenset((
    "primary", "foreign", "sort", "partition", "cache", "idempotency", "dedup", "dedupe", "object", "bucket",
    "row", "range", "hash", "lookup", "dict", "map", "unique", "composite", "natural", "surrogate", "index",
    "shard", "routing", "group", "translation", "i18n", "locale", "message", "label", "hot", "short",
    "shortcut", "keyboard", "react", "list", "item", "table", "column", "field", "sort", "order", "next",
    "prev", "last", "first", "start", "end", "config", "setting", "settings", "env", "registry", "storage_key",
    "s3", "blob", "file", "path", "json", "yaml", "dedupe", "event", "job", "task", "queue", "redis", "memcache",
    "state", "store", "node", "parent", "child", "tree", "graph", "api_version", "version", "name", "record",
))
# ``<qualifier>_token`` that is not a credential (pagination, parsers, tokenizers' special tokens).
TOKEN_NONE = frozenset((
    "next", "page", "continuation", "pagination", "cursor", "sync", "delta", "eos", "bos", "pad", "unk", "sep",
    "cls", "mask", "start", "end", "special", "stop", "current", "cur", "prev", "previous", "last", "first",
    "lexer", "parse", "parser", "peek", "lookahead", "input", "output", "word", "sub", "added", "extra",
    "image", "audio", "vision", "begin", "bracket", "paren", "operator", "string", "number", "literal",
))
# Names that hold a secret only sometimes: the value must look random.
WEAK_WORDS = frozenset(("auth", "cookie", "cookies", "cred", "bearer", "otp", "hmac", "sig", "oauth", "salt"))
# Compound words (no separator) that end like a password name but are not one.
PASS_NOT = frozenset(("bypass", "compass", "encompass", "trespass", "surpass", "overpass", "underpass",
                      "impass", "repass", "carcass", "morass", "sass", "mass", "lass", "bass", "class",
                      "glass", "grass", "brass", "subclass", "superclass", "firstpass", "multipass", "onepass",
                      "twopass", "singlepass", "hpass", "lowpass", "highpass", "bandpass", "allpass"))
# Keys that label a secret's name in a name/value pair ({"name": "API_TOKEN", "value": …}).
PAIR_NAMES = frozenset(("name", "key", "parameterkey", "parametername", "variable", "var", "env", "secretname",
                        "optionname", "option", "setting", "field", "id"))
JWK_PRIVATE = ("d", "p", "q", "dp", "dq", "qi", "k")  # the private members of a JSON Web Key
AUTHZ_NAMES = frozenset(("authorization", "proxyauthorization", "proxy_authorization"))

_cache: dict[str, int] = {}


_SEPARATORS = {ord(c): " " for c in "_-./:@$~+=#&!?[](){}<>,;'\"` \t\n\\|*%^"}


def words(name: str) -> list[str]:
    """Lower-case words of an identifier: separators, camelCase and ACRONYMWord boundaries."""
    low = name.lower()
    if low == name or name.upper() == name:  # one case: only separators split (C, no loop)
        return [w for w in low.translate(_SEPARATORS).split() if w.isalnum()] if not low.isalnum() else [low]
    out: list[str] = []
    cur: list[str] = []
    n = len(name)
    for i, c in enumerate(name):
        if not c.isalnum():
            if cur:
                out.append("".join(cur).lower())
                cur = []
            continue
        if cur and c.isupper():
            prev = cur[-1]
            nxt = name[i + 1] if i + 1 < n else ""
            if prev.islower() or prev.isdigit() or (prev.isupper() and nxt.islower()):
                out.append("".join(cur).lower())
                cur = []
        cur.append(c)
    if cur:
        out.append("".join(cur).lower())
    return out


def classify(name: str) -> int:
    """NONE, WEAK, STRONG, PASSWORD or AUTHZ for a key, variable, flag or header name."""
    found = _cache.get(name)
    if found is None:
        found = _cache[name] = _classify(words(name)) if len(name) <= 120 else NONE
        if len(_cache) > 4096:
            _cache.clear()
    return found


def _classify(ws: list[str]) -> int:
    if not ws:
        return NONE
    squashed = "".join(ws)
    if squashed in AUTHZ_NAMES or (ws[-1] == "authorization"):
        return AUTHZ
    last = ws[-1]
    if last in META or (len(ws) > 1 and last.isdigit() and ws[-2] in META):
        return NONE
    if any(w in PUBLIC for w in ws):
        return NONE
    if any(w in PASSWORD_WORDS for w in ws):
        return PASSWORD
    for w in ws:
        if _compound_password(w):
            return PASSWORD
    for i, w in enumerate(ws):
        prev = ws[i - 1] if i else ""
        if w in ("token", "tokens"):
            if prev in TOKEN_NONE or (w == "tokens" and not prev):
                continue
            if w == "tokens" and prev not in ("auth", "access", "api", "refresh", "bearer", "session", "id",
                                              "oauth", "personal", "service", "bot", "user", "app"):
                continue  # ``max_tokens``, ``input_tokens``: counts of model tokens
            return STRONG
        if w in ("key", "keys"):
            if prev in KEY_STRONG:
                return STRONG
            continue
        if w in SECRET_WORDS:
            return STRONG
        if w.startswith("secret") and not w.startswith(("secretar", "secretion")) and \
                w[7 if w.startswith("secrets") else 6:] not in META:
            return STRONG  # secretkey, secretsjson; not secretsmanager
        if len(w) > 5 and w.endswith("token") and w[:-5] not in TOKEN_NONE and not w.startswith("tokeniz"):
            return STRONG  # authtoken, npmauthtoken, idtoken
        if len(w) > 3 and w.endswith("key") and w[:-3] in KEY_STRONG:
            return STRONG  # apikey, secretkey, accountkey
    if last in ("key", "keys"):
        return NONE if len(ws) > 1 and ws[-2] in KEY_NONE else WEAK
    if any(w in WEAK_WORDS for w in ws):
        return WEAK
    return NONE


def describes(name: str) -> bool:
    """The name is about a secret or public (``*_URL``, ``*_ID``, ``*_PUBLISHABLE_KEY``), not one."""
    ws = words(name)
    return bool(ws) and (ws[-1] in META or any(w in PUBLIC for w in ws))


def _compound_password(w: str) -> bool:
    if "password" in w or "passwd" in w or "passphrase" in w or "passcode" in w:
        return True
    return len(w) > 4 and w.endswith(("pass", "pwd")) and w not in PASS_NOT and not w.endswith("class")


# --------------------------------------------------------------------------- values

PLACEHOLDERS = frozenset((
    "none", "null", "nil", "true", "false", "yes", "no", "on", "off", "undefined", "required", "optional",
    "string", "str", "int", "integer", "number", "float", "bool", "boolean", "object", "array", "any", "bytes",
    "char", "text", "secret", "password", "passwd", "pass", "pwd", "token", "key", "apikey", "api_key",
    "changeme", "change_me", "changeit", "change-me", "example", "sample", "placeholder", "redacted", "hidden",
    "masked", "dummy", "default", "empty", "blank", "tbd", "todo", "fixme", "your_password", "yourpassword",
    "your-password", "your_token", "your_api_key", "your-api-key", "yourapikey", "mypassword", "unset", "nan",
    "value", "values", "secretstr", "secretbytes", "optional[str]", "self", "this", "cls", "ctx", "os", "env",
    "environ", "getenv", "input", "getpass", "prompt", "stdin", "generated", "random", "auto", "none_",
    "required_", "missing", "unknown", "invalid", "valid", "expired", "revoked", "include", "omit", "same-origin",
    "bearer", "basic", "digest", "oauth", "oauth2", "jwt", "hmac", "sha256", "sha1", "md5", "aes", "rsa",
    "inherit", "ignore", "raise", "error", "warn", "strict", "lax", "secure", "insecure", "plain", "plaintext",
    "pw", "tok", "passw0rd", "user:pw", "user:pass", "user:password", "username:password", "secret123", "mypass",
))
CODE_WORDS = frozenset(("lambda", "await", "new", "function", "yield", "return", "async", "def", "fn", "not",
                        "typeof", "const", "let", "var", "if", "else", "and", "or", "in", "is", "of"))
# A value that begins like one of these is a reference or a template, not the secret.
REF_STARTS = ("${", "$(", "{{", "{%", "<%", "#{", "%(", "ENC[", "vault:", "op://", "secret://", "secretref:",
              "arn:aws:secretsmanager", "projects/", "sm://", "env:", "file:", "@Microsoft.KeyVault", "!vault",
              "!Ref", "!Sub", "!GetAtt", "ref+", "awssm://", "gcpsm://", "azkv://")
HEX = frozenset("0123456789abcdefABCDEF")
_NO_DIGITS = {ord(c): None for c in "0123456789"}


def is_reference(value: str) -> bool:
    """An environment variable, template, secret-manager reference or mask: not the secret itself."""
    v = value.strip()
    if not v:
        return True
    if v.startswith(REF_STARTS) or v.startswith("[REDACTED"):
        return True
    if v[0] == "$" and (len(v) == 1 or v[1].isalpha() or v[1] in "_{("):
        return True  # $VAR, ${VAR}, $(cmd)
    if v[0] == "%" and v.endswith("%") and len(v) > 2:
        return True  # %VAR%
    if v[0] == "<" and v.endswith(">"):
        return True  # <your-key>
    if _template(v):
        return True  # {token}, {attrs[2]}: an f-string or format placeholder
    if v[0] == "@" and v.endswith("@"):
        return True
    if len(set(v)) <= 2 and len(v) >= 3:
        return True  # ********, xxxxxxxx, ....., 00000000
    low = v.lower()
    if low in PLACEHOLDERS:
        return True
    if "{}" in v or "{0}" in v or "%(" in v or _printf(v):
        return True  # a format string
    for marker in ("example", "placeholder", "changeme", "your_", "your-", "yourkey", "xxxx", "****", "...", "…",
                   "redacted", "replace_me", "replace-me", "insert_", "<", "{{", "${", "process.env", "os.environ",
                   "getenv(", "env[", "environ["):
        if marker in low:
            return True
    return False


def _template(v: str) -> bool:
    """``{token}``, ``{attrs[2]}``, ``{self.key!r}``: a placeholder of an f-string or ``str.format``."""
    i = v.find("{")
    while i != -1:
        j = v.find("}", i + 1)
        if j == -1:
            return False
        inner = v[i + 1:j].replace("_", "").replace(".", "").replace("[", "").replace("]", "").replace("!r", "")
        if inner and inner.isalnum() and not inner.isdigit() and (v[i + 1].isalpha() or v[i + 1] == "_"):
            return True
        i = v.find("{", j)
    return False


def _printf(v: str) -> bool:
    i = v.find("%")
    while i != -1:
        if v[i + 1:i + 2] in ("s", "d", "r", "i", "f", "x") and not v[i + 2:i + 3].isalnum():
            return True
        i = v.find("%", i + 1)
    return False


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    if not value:
        return 0.0
    from math import log2  # an extension module (~0.5 ms to load): only when a value is weighed

    n = len(value)
    return -sum(k / n * log2(k / n) for k in map(value.count, set(value)))


def is_uuid(v: str) -> bool:
    return len(v) == 36 and v.count("-") == 4 and all(c in HEX for c in v.replace("-", "")) and \
        [len(p) for p in v.split("-")] == [8, 4, 4, 4, 12]


def _noise(part: str) -> bool:
    """A long run of mixed-case letters and digits: generated, not named."""
    return len(part) >= 12 and any(c.isdigit() for c in part) and any(c.isupper() for c in part) and \
        any(c.islower() for c in part)


def looks_random(value: str, min_len: int = 16) -> bool:
    """A machine-made credential rather than a word, identifier, path, number or hash of text."""
    v = value
    if len(v) < min_len or len(v) > 4096:
        return False
    if " " in v or "\n" in v or "\t" in v or "://" in v or v[0] in "/~.$<{%[" or v.startswith(("C:\\", "\\\\")):
        return False
    # Character classes by C string methods, not a loop: the entropy check runs on many values.
    upper = v.lower() != v
    lower = v.upper() != v
    digit = len(v.translate(_NO_DIGITS)) != len(v)
    if not digit and not (lower and upper):
        return False  # one-case words with separators: identifiers, slugs
    if digit and not (lower or upper):
        return False  # a number, a date, a version
    if is_reference(v) or is_uuid(v):
        return False
    ws = words(v)
    alpha = [w for w in ws if w.isalpha()]
    if alpha and all(len(w) >= 3 for w in alpha) and all(w.isdigit() and len(w) <= 4 for w in ws if not w.isalpha()) \
            and sum(map(len, alpha)) >= 0.75 * sum(map(len, ws)) and (not digit or len(alpha) >= 2):
        return False  # ProductUserVisibleVersion, Proxy-Authorization, ROCKET_LAUNCHER_0001: words, not noise
    if "\\x" in v or "&lt;" in v or "&amp;" in v:
        return False  # escapes and entities: text
    if "." in v and all(p[:1].isalpha() and p.replace("_", "").isalnum() and not _noise(p) for p in v.split(".")):
        return False  # win32api.RegEnumKey, settings.api_key: a dotted name in code
    if v.replace(".", "").replace("-", "").isdigit():
        return False
    return entropy(v) >= (3.0 if len(v) < 24 else 3.2)


def looks_like_password(value: str) -> bool:
    """A free-standing word that reads as a password (``Tr0ub4dor&3``), not prose or a file name."""
    v = value
    if len(v) < 6 or len(v) > 200 or is_reference(v):
        return False
    if "://" in v or v[0] in "/~" or v.count("/") > 1:
        return False
    letters = sum(c.isalpha() for c in v)
    digits = sum(c.isdigit() for c in v)
    symbols = len(v) - letters - digits
    if not letters or not (digits or symbols):
        return False  # a word, or a number
    dot = v.rfind(".")
    if dot > 0 and v[dot + 1:].isalpha() and v[dot + 1:].islower() and len(v) - dot <= 5 and not digits:
        return False  # config.yaml, notes.txt
    if v.replace(".", "").replace("-", "").replace("_", "").isdigit():
        return False
    # 1.2.3-rc1 style versions
    return not (v.count(".") >= 2 and v.replace(".", "").isalnum() and digits and letters and v[0].isdigit())
