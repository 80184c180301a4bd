"""Secret redaction before the spool. Standard library only (runs in the hook).

Each detector is a named regex; a match is replaced by ``[REDACTED:<name>]`` so a reader
(and the observer) still sees that a credential was there and of which kind. Detectors
whose secret is only one group of the match (``password=...``) keep the rest of the text.
All patterns are compiled once into a single alternation, so a clean string costs one scan.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re  # typing costs ~5 ms at import; the hook cannot afford it
    from collections.abc import Iterable
    from typing import Any

# (name, pattern, group holding the secret or 0 for the whole match)
DETECTORS: tuple[tuple[str, str, int], ...] = (
    # An unterminated key (cut by truncation) is redacted to the end: fail closed.
    ("pem_private_key",
     r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|\Z)", 0),
    ("aws_access_key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b", 0),
    ("aws_secret_key", r"(?i)aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})\b", 1),
    ("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{60,255})\b", 0),
    ("gitlab_token", r"\bglpat-[A-Za-z0-9_\-]{20,}\b", 0),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", 0),
    ("openai_key", r"\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", 0),
    ("slack_token", r"\bxox[abprs]-[A-Za-z0-9\-]{10,}", 0),
    ("slack_webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]+", 0),
    ("stripe_key", r"\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16,}\b", 0),
    ("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}\b", 0),
    ("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b", 0),
    ("pypi_token", r"\bpypi-[A-Za-z0-9_\-]{50,}", 0),
    ("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}\b", 0),
    ("docker_token", r"\bdckr_pat_[A-Za-z0-9_\-]{20,}", 0),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", 0),
    ("database_url_password", r"\b[a-z][a-z0-9+.\-]*://[^\s:/@'\"\[\]]+:([^\s@'\"/]{3,})@[^\s'\"]+", 1),
    ("authorization_header", r"(?i)\bauthorization\s*:\s*(?:bearer|basic|token)\s+([A-Za-z0-9._~+/=\-]{8,})", 1),
    ("bearer_token", r"(?i)\bbearer\s+([A-Za-z0-9._~+/\-]{20,}=*)", 1),
    ("password_assignment",
     r"(?i)\b[\w.\-]*(?:password|passwd|pwd|secret|token|api_?key|apikey|access_?key|auth_?key|private_?key)"
     # [ \t]* not \s*: a value is on the same line as its key (``key:\n    return x`` is code).
     r"[\w.\-]*[\"']?[ \t]*(?:=|:|:=|=>)[ \t]*[\"']?([^\s\"'`,;{}()<>\[\]]{6,})", 1),
    ("cli_password_flag", r"(?i)(?:--password|--passwd|--token|--api-key|--secret)[= ]([^\s\"'`-][^\s\"'`]{5,})", 1),
)


# Cheap literal tests that must appear (lower-cased) before a detector's regex is even
# compiled: a hook pays for the regexes only when the text could hold that secret.
ANCHORS: dict[str, tuple[str, ...]] = {
    "pem_private_key": ("private key-----",),
    "aws_access_key": ("akia", "asia", "abia", "acca"),
    "aws_secret_key": ("secret",),
    "github_token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "gitlab_token": ("glpat-",),
    "anthropic_key": ("sk-ant-",),
    "openai_key": ("sk-",),
    "slack_token": ("xox",),
    "slack_webhook": ("hooks.slack.com",),
    "stripe_key": ("_live_", "_test_"),
    "google_api_key": ("aiza",),
    "npm_token": ("npm_",),
    "pypi_token": ("pypi-",),
    "huggingface_token": ("hf_",),
    "docker_token": ("dckr_pat_",),
    "jwt": ("eyj",),
    "database_url_password": ("://",),
    "authorization_header": ("authorization",),
    "bearer_token": ("bearer",),
    "password_assignment": ("pass", "pwd", "secret", "token", "key"),
    "cli_password_flag": ("--pass", "--token", "--api-key", "--secret"),
}
_compiled: dict[str, re.Pattern[str]] = {}


def _pattern(name: str, source: str) -> re.Pattern[str]:
    # Keyed by source, not name: a custom pattern may reuse a built-in detector's name.
    pat = _compiled.get(source)
    if pat is None:
        import re  # only when a string could hold this kind of secret (saves the hook ~5 ms)

        pat = _compiled[source] = re.compile(source)
    return pat


NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-."


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
        pat = _pattern(name, source)
    except (re.error, RecursionError, OverflowError) as e:  # OverflowError: absurd repeat counts
        raise ValueError(f"invalid regex ({e})") from None
    if pat.search("") is not None:
        raise ValueError("the regex matches the empty string")
    return name, source


class Redactor:
    """Replaces secrets in strings and JSON-like values."""

    def __init__(self, disabled: Iterable[str] = (), custom: Iterable[tuple[str, str]] = ()) -> None:
        off = set(disabled)
        # Custom patterns run first (user knowledge beats our guesses); anchors none = always.
        self._detectors: list[tuple[str, str, int, tuple[str, ...]]] = [
            (name, pattern, 0, ()) for name, pattern in custom]
        self._custom = len(self._detectors)
        self._detectors += [(n, p, g, ANCHORS.get(n, ())) for n, p, g in DETECTORS if n not in off]

    def _sub(self, name: str, secret_group: int, m: re.Match[str]) -> str:
        marker = f"[REDACTED:{name}]"
        whole = m.group(0)
        if not secret_group or m.group(secret_group) is None:
            return marker
        if m.group(secret_group).startswith("[REDACTED:"):
            return whole  # already redacted by a more specific detector: keep its name
        if name in _ASSIGNMENTS and _looks_like_code(m, secret_group):
            return whole
        start = m.start(secret_group) - m.start(0)
        end = m.end(secret_group) - m.start(0)
        return whole[:start] + marker + whole[end:]

    def text(self, value: str) -> str:
        """Redact one string."""
        # No built-in secret is shorter than 8 characters; a custom one may be.
        detectors = self._detectors if len(value) >= 8 else self._detectors[:self._custom]
        if not detectors:
            return value
        lower = value.lower()
        for name, source, group, anchors in detectors:
            if anchors and not any(a in lower for a in anchors):
                continue
            pat = _pattern(name, source)
            new = pat.sub(_Replacer(self, name, group), value)
            if new is not value and new != value:
                value = new
                lower = value.lower()
        return value

    def value(self, value: Any) -> Any:
        """Redact every string inside a JSON-like value."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.value(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.value(v) for v in value]
        return value


class _Replacer:
    """A bound replacement callback (a lambda in a loop would capture the wrong detector)."""

    __slots__ = ("group", "name", "owner")

    def __init__(self, owner: Redactor, name: str, group: int) -> None:
        self.owner, self.name, self.group = owner, name, group

    def __call__(self, m: re.Match[str]) -> str:
        return self.owner._sub(self.name, self.group, m)


_ASSIGNMENTS = {"password_assignment", "cli_password_flag"}
# Key endings that describe a token rather than hold one (``token_type``, ``token_count``).
_TOKEN_META = ("token_type", "tokentype", "token_kind", "token_class", "token_count", "token_len", "token_length")
_CODE_REF_SOURCE = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|\$\{?\w+\}?|\[REDACTED\S*"
_PLACEHOLDERS = {"none", "null", "true", "false", "undefined", "required", "optional", "string", "changeme",
                 "xxxxxx", "********", "redacted", "example", "placeholder", "your_password", "password"}


def _looks_like_code(m: re.Match[str], group: int) -> bool:
    """An assignment whose value is a code reference (``self.token``, ``get_token()``, ``$TOKEN``)."""
    value = m.group(group)
    if value.lower().strip("<>") in _PLACEHOLDERS or _pattern("_code_ref", _CODE_REF_SOURCE).fullmatch(value):
        return True
    # The key as written (``self.api_key``, ``"max_tokens"``), up to the assignment sign.
    key = m.string[m.start(0):m.start(group)].strip(" \t\"'=:>").rsplit(".", 1)[-1].lower()
    if value.lower().strip("_") == key.strip("_"):  # ``self._api_key = api_key``: passing a variable on
        return True
    if value.replace("_", "").isdigit() and "token" in key and not any(w in key for w in ("pass", "pwd", "secret")):
        return True  # ``max_tokens: 4096000``, ``"input_tokens": 153421``: a count, not a credential
    if not any(w in key for w in ("pass", "pwd", "secret", "key")) and (
            "tokeniz" in key or key.endswith(_TOKEN_META) or ("tokens" in key and value.replace("_", "").isalpha())):
        # ``tokenize = 'trigram'``, ``token_type = 'mailbox'``, ``tokens_spent=tokens``: tokenizers, kinds
        # of token, model-token counts
        return True
    after = m.string[m.end(group):m.end(group) + 1]
    return after in ("(", "[")


def detector_names() -> list[str]:
    return [d[0] for d in DETECTORS]
