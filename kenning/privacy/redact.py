"""Secret redaction before anything is stored. Standard library only, no ``re`` (runs in the hook).

Secrets are found by structure as well as by shape: the name a value is given to (at any
depth of JSON, in any assignment syntax, on a command line), the place it stands in (a URL's
userinfo, a connection string, a Kubernetes ``Secret``), the file it comes from (``.pgpass``,
``.tfvars``, ``/run/secrets/…``), armoured private blocks, and the published formats of
vendors' credentials. Every finder returns spans; overlapping spans merge, and each becomes
``[REDACTED:<detector>]`` (the most specific detector names it), so a reader and the observer
still see that a credential was there and of which kind.

No built-in detector needs ``re``: ordinary text and code cost a few C passes (``find`` for a
dozen anchors, one ``translate`` + ``split`` for token runs) and the checks of the rare hits.
Only the user's own ``redact_custom`` patterns import ``re``.
"""

from __future__ import annotations

from kenning.privacy import fields, names, quick

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re  # typing costs ~5 ms at import; the hook cannot afford it
    from collections.abc import Iterable
    from typing import Any

Span = tuple[int, int, str]
Profile = frozenset[str]
EMPTY: Profile = frozenset()

# (detector, what it finds): the order is the priority when spans overlap.
STRUCTURAL: tuple[tuple[str, str], ...] = (
    ("pem_private_key", "every armoured private block: PEM (RSA, EC, DSA, PKCS#8, encrypted), OpenSSH, PGP "
                        "(`PRIVATE`/`SECRET KEY BLOCK`), PuTTY `.ppk` private lines, minisign/signify secret keys, "
                        "base64-wrapped PEM keys (`tls.key: LS0t…`), base64-wrapped Google service-account key files, "
                        "the private members of a JWK; an unterminated "
                        "block is taken to the end"),
    ("kubernetes_secret", "the values under `data:` / `stringData:` of a Kubernetes `Secret` (YAML or JSON text)"),
    ("credential_file", "fields of credential files recognised by path: the password of `.pgpass` lines, the "
                        "hashes of `.htpasswd`, random-looking values of `.env`, `.tfvars`, `.npmrc`, INI and "
                        "other config files, the whole content of one-token secret files (`.vault-token`, "
                        "`/run/secrets/*`, `*_password.txt`) and of commands that print a secret "
                        "(`kubectl get secret`, `vault kv get`, `echo $API_KEY`)"),
    ("authorization_header", "the credential of an `Authorization:` header or field (the scheme is kept)"),
    ("bearer_token", "a `Bearer <credential>` anywhere else"),
    ("database_url_password", "the password inside `scheme://user:password@host` (with or without a user: "
                              "`redis://:pw@host`), and a token-shaped user (`https://<token>@host`)"),
    ("url_signature", "the signature of a SAS or pre-signed URL: `sig=`, `Signature=`, `X-Amz-Signature=`"),
    ("cli_password_flag", "the password given on a command line to tools whose flag does not say so: "
                          "`mysql -p…`, `docker login -p`, `sshpass -p`, `curl -u user:pw`, `redis-cli -a`, "
                          "`sqlcmd -P`, `sqlplus user/pw@db`, `openssl -passin pass:`, `htpasswd -b`, "
                          "`kubectl … --from-literal=k=v`, `fly secrets set K=V`, `echo pw | … --password-stdin`"),
    ("decoded_secret", "a base64 or hex blob fed to a decoder (`echo … | base64 -d`, `base64 --decode <<<`, "
                       "`openssl base64 -d`, `openssl enc -d -a`, `xxd -r -p`, a here-document, `b64decode(\"…\")`, "
                       "`atob('…')`, `Buffer.from('…', 'base64')`, `DecodeString`, `FromBase64String` …) that decodes "
                       "to a secret: random bytes of key length, or text holding a secret (a service-account key, a "
                       "PEM block, `user:password`, a token); ordinary text, media and short blobs are kept"),
    ("call_argument", "a quoted literal passed by position where a known call takes its secret: `login(user, pw)` "
                      "(smtplib, ftplib, imaplib, most clients), poplib `pass_`, LDAP binds, `HTTPBasicAuth(u, p)`, "
                      "`auth=(u, p)`, JDBC `getConnection(url, u, p)`, Go `smtp.PlainAuth`, PHP `PDO`/`mysqli`, "
                      "`redis.Redis`, paramiko `connect`, Twilio `Client(sid, token)`, boto3 `Session(id, secret)`, "
                      "JWT and HMAC keys …; placeholders (`\"<password>\"`, `\"${PASSWORD}\"`, `\"changeme\"`) "
                      "and variables are kept"),
    ("password_assignment", "the value given to a name that names a secret (password, passwd, pwd, pass, secret, "
                            "token, api key, access/private/client key, credentials, AccountKey …) in any syntax "
                            "(`.env`, shell, YAML, JSON, INI, TOML, HCL, XML, code, headers, `--flags`, "
                            "`key=value;` connection strings, query strings), in the key column of a command's output "
                            "table (`vault login`, `vault token create`, `npm token create`), and in prose (\"the "
                            "password is …\", any case, and \"mot de passe\", \"Passwort\", \"contraseña\", "
                            "\"密码\" …: a value with a digit or a symbol); "
                            "names that only sometimes hold one (`key`, `auth`, `cookie`) only when the value looks "
                            "random; references, placeholders, paths, labels and code are kept"),
    ("secret_field", "the value of a JSON field (hook payloads, MCP tool input, at any depth) whose name names "
                     "a secret, by the same rules"),
)
_detectors: tuple[tuple[str, str], ...] = ()
_priority: dict[str, int] = {}
NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."
MARKER = "[REDACTED:"
PAIR_VALUES = frozenset(("value", "parametervalue", "secret", "data"))

_compiled: dict[str, re.Pattern[str]] = {}


def detectors() -> tuple[tuple[str, str], ...]:
    """Every built-in detector, ``(name, what it finds)``, most specific first (the priority of overlaps)."""
    global _detectors, _priority
    if not _detectors:
        from kenning.privacy import vendors

        listed = STRUCTURAL[:1] + tuple((n, "vendor format") for n in vendors.detector_names()) \
            + (("jwt", "JSON Web Tokens"), ("airtable_token", "vendor format")) \
            + tuple((n, "vendor format") for n, _i, _f in vendors.SHAPES) + STRUCTURAL[1:]
        seen: set[str] = set()
        _detectors = tuple(d for d in listed if not (d[0] in seen or seen.add(d[0])))  # type: ignore[func-returns-value]
        _priority = {name: i + 1 for i, (name, _d) in enumerate(_detectors)}
    return _detectors


def detector_names() -> list[str]:
    return [name for name, _d in detectors()]


def _pattern(source: str) -> re.Pattern[str]:
    pat = _compiled.get(source)
    if pat is None:
        import re  # only for the user's own patterns

        pat = _compiled[source] = re.compile(source)
    return pat


def parse_custom(item: str) -> tuple[str, str]:
    """Split and check one ``name=regex`` custom detector; ValueError says what is wrong.

    Compiles the regex (so the caller pays for ``re`` only when custom patterns exist) and
    refuses one that matches the empty string: it would fill every text with markers.
    """
    name, sep, source = item.partition("=")
    name = name.strip()
    if not sep or not name or not source:
        raise ValueError("expected name=regex")
    if len(name) > 40 or any(c not in NAME_CHARS for c in name):
        raise ValueError("the name must be 1-40 letters, digits, '_', '-' or '.'")
    import re

    try:
        pat = _pattern(source)
    except (re.error, RecursionError, OverflowError) as e:  # OverflowError: absurd repeat counts
        raise ValueError(f"invalid regex ({e})") from None
    if pat.search("") is not None:
        raise ValueError("the regex matches the empty string")
    return name, source


def _lower(text: str) -> str:
    """Lower-cased with the same length (``find`` positions must map back)."""
    low = text.lower()
    if len(low) == len(text):
        return low
    return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)  # İ, ẞ …: keep them


class Redactor:
    """Finds and replaces secrets in strings, JSON-like values and agents' hook payloads."""

    def __init__(self, disabled: Iterable[str] = (), custom: Iterable[tuple[str, str]] = ()) -> None:
        self._off = frozenset(disabled)
        self._custom = [(n, s) for n, s in custom]

    def enabled(self, name: str) -> bool:
        return name not in self._off

    # ------------------------------------------------------------------------ text

    def text(self, value: str, profile: Profile = EMPTY) -> str:
        """Redact one string. A finder that fails (a bug) costs the string, never a leak or a crash."""
        try:
            spans = self.spans(value, profile)
        except Exception:  # never let a redaction bug crash the hook or let the text through unchecked
            return "[REDACTED:redaction_error]" if value.strip() else value
        return _apply(value, spans) if spans else value

    def spans(self, text: str, profile: Profile = EMPTY) -> list[Span]:
        """Every secret in ``text`` as ``(start, end, detector)``, overlapping spans merged."""
        if len(text) < 8 and not self._custom and not profile:
            return []  # no built-in secret is that short (a short password field is secret_field's)
        spans: list[Span] = []
        for name, source in self._custom:
            spans += [(m.start(), m.end(), name) for m in _pattern(source).finditer(text) if m.end() > m.start()]
        look = quick.first_look(text) if len(text) >= 8 else None
        if look is not None:  # only now load the detectors (the vendor table, the parsers)
            spans += self._detect(text, look, profile)
        if profile and self.enabled("credential_file"):
            spans += self._profile_spans(text, profile)
        if not spans:
            return []
        if MARKER in text:
            spans = _outside_markers(text, spans)
        return _merge(spans)

    def _detect(self, text: str, look: quick.Look, profile: Profile) -> list[Span]:
        # Each family of detectors is loaded only when the first look saw a reason for it: ordinary
        # code that names a ``key`` costs the name scanner, not the vendor table or the tool rules.
        from kenning.privacy import structure

        on = self.enabled
        found = structure.Found()
        spans = found.spans
        data, low, words = look.data, look.low, look.words
        if look.vendors:
            from kenning.privacy import vendors

            vendor_spans, _seen = vendors.find(text, data, words, on)
            spans += vendor_spans
            for name, infix, finder in vendors.SHAPES:
                if infix in data and on(name):
                    spans += finder(text)
        if on("pem_private_key"):
            structure.private_keys(text, found, b"PuTTY" in words, b"untrusted" in words)
            structure.jwks(text, found)
        structure.assignments(text, low, found, "literal" in profile, on)
        if on("database_url_password"):
            structure.urls(text, found)
        if on("url_signature") and b"sig" in low:
            structure.signatures(text, low, found)
        if on("bearer_token"):
            structure.bearer(text, low, found)
        if on("kubernetes_secret") and b"secret" in found.anchors:
            structure.kubernetes_secrets(text, found)
        if on("cli_password_flag") and look.commands:
            from kenning.privacy import commands

            tools = commands.tools_in(words, low)
            if tools:
                spans += commands.find(text, tools)
                spans += commands.piped_stdin(text, tools)
            if b"<<<" in data:
                spans += commands.here_strings(text)
        if look.decoders and on("decoded_secret"):
            from kenning.privacy import decoders

            spans += decoders.find(text)
        if look.calls and on("call_argument"):
            from kenning.privacy import calls

            spans += calls.find(text, data, low, words)
        if look.prose and on("password_assignment"):
            from kenning.privacy import prose

            spans += prose.find(text)
        return spans

    def _profile_spans(self, text: str, profile: Profile) -> list[Span]:
        from kenning.privacy import files

        out: list[Span] = []
        if "whole" in profile:
            whole = files.whole_token(text)
            if whole:
                return [(whole[0], whole[1], "credential_file")]
        if "pgpass" in profile:
            out += files.pgpass(text)
        if "htpasswd" in profile:
            out += files.htpasswd(text)
        if "entropy" in profile:
            out += files.random_values(text)
        return out

    # ------------------------------------------------------------------ structures

    def value(self, value: Any, profile: Profile = EMPTY, key: str = "") -> Any:
        """Redact every string inside a JSON-like value; a field named for a secret loses its value."""
        if isinstance(value, str):
            return self._field(value, key, profile)
        if isinstance(value, dict):
            special = self._special(value)
            return {k: special[k] if k in special else self.value(v, profile, k if isinstance(k, str) else "")
                    for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v, profile, key) for v in value]
        if isinstance(value, int | float) and not isinstance(value, bool) and key and self.enabled("secret_field") \
                and names.classify(key) == names.PASSWORD and len(str(value)) >= 4:
            return "[REDACTED:secret_field]"
        return value

    def payload(self, payload: dict[str, Any], agent: str | None) -> dict[str, Any]:
        """Redact an agent's hook payload: its own metadata fields stay as they are."""
        exempt = fields.metadata(agent)
        profile = self.profile(payload)
        return {k: v if k in exempt else self.value(v, profile, k) for k, v in payload.items()}

    def profile(self, payload: Any) -> Profile:
        """The union of the profiles of the files and commands a payload names (any depth)."""
        return fields.profile(payload)

    def _field(self, s: str, key: str, profile: Profile) -> str:
        if key and self.enabled("secret_field"):
            cls = names.classify(key)
            if cls != names.NONE:
                from kenning.privacy import structure

                if cls == names.AUTHZ and self.enabled("authorization_header"):
                    parts = s.split(None, 1)
                    if len(parts) == 2 and parts[0].lower() in structure.SCHEMES and \
                            not names.is_reference(parts[1]):
                        return s[:s.find(parts[1])] + "[REDACTED:authorization_header]"
                    if len(parts) == 1 and len(s) >= 8 and not names.is_reference(s):
                        return "[REDACTED:authorization_header]"
                elif cls != names.AUTHZ and s.strip() and structure.value_is_secret(
                        s.strip(), cls, key, quoted=True, structured=True):
                    return "[REDACTED:secret_field]"
        if key in fields.PATH_FIELDS or key in fields.COMMAND_FIELDS:
            profile = profile - {"whole"}  # a path or a command is not the secret it names
        return self.text(s, profile)

    def _special(self, value: dict[Any, Any]) -> dict[Any, Any]:
        """Kubernetes ``Secret`` objects and private JWKs given as structures."""
        out: dict[Any, Any] = {}
        if value.get("kind") == "Secret" and self.enabled("kubernetes_secret"):  # (a rare dict: cheap test first)
            for part in ("data", "stringData"):
                data = value.get(part)
                if isinstance(data, dict):
                    out[part] = {k: "[REDACTED:kubernetes_secret]" if isinstance(v, str) and v else v
                                 for k, v in data.items()}
        if self.enabled("secret_field"):
            # {"name": "API_TOKEN", "value": "…"}: a secret's name and value side by side (ECS, k8s, CI APIs)
            label = next((v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)
                          and k.lower().replace("_", "") in names.PAIR_NAMES), None)
            cls = names.classify(label) if label else names.NONE
            if cls != names.NONE and label:
                from kenning.privacy import structure

                for k, v in value.items():
                    if isinstance(k, str) and k.lower() in PAIR_VALUES and isinstance(v, str) and v.strip() and \
                            structure.value_is_secret(v.strip(), cls, label, quoted=True, structured=True):
                        out[k] = "[REDACTED:secret_field]"
        if isinstance(value.get("kty"), str) and self.enabled("pem_private_key"):
            for member in names.JWK_PRIVATE:
                v = value.get(member)
                if isinstance(v, str) and len(v) >= 16:
                    out[member] = "[REDACTED:pem_private_key]"
        return out


def _outside_markers(text: str, spans: list[Span]) -> list[Span]:
    """Drop spans that touch a marker already in the text (redaction is idempotent)."""
    marks: list[tuple[int, int]] = []
    i = text.find(MARKER)
    while i != -1:
        end = text.find("]", i)
        end = len(text) if end == -1 else end + 1
        marks.append((i, end))
        i = text.find(MARKER, end)
    return [s for s in spans if not any(s[0] < e and b < s[1] for b, e in marks)]


def _merge(spans: list[Span]) -> list[Span]:
    """Sort, and join overlapping spans under the most specific detector's name."""
    spans.sort()
    out: list[Span] = []
    detectors()
    rank = _priority.get
    for s, e, name in spans:
        if e <= s:
            continue
        if out and s < out[-1][1]:
            ps, pe, pname = out[-1]
            keep = pname if rank(pname, 0) <= rank(name, 0) else name
            out[-1] = (ps, max(pe, e), keep)
        else:
            out.append((s, e, name))
    return out


def _apply(text: str, spans: list[Span]) -> str:
    parts: list[str] = []
    pos = 0
    for s, e, name in spans:
        parts.append(text[pos:s])
        parts.append(f"[REDACTED:{name}]")
        pos = e
    parts.append(text[pos:])
    return "".join(parts)
