"""Credential files recognised by their path, and commands that print a secret.

The text of a file is judged with what its name says about it. A *profile* is a set of
flags for the text detectors:

- ``literal``: every value is a literal (an ``.env``, ``.tfvars``, INI or ``.npmrc`` line is
  never code), so ``PASSWORD = hunter`` is taken even with spaces and a bare word;
- ``entropy``: any assignment whose value looks random is taken, whatever its name
  (``sql_admin = "Xk9#mP2$vLq8"`` in a ``terraform.tfvars``);
- ``whole``: a file or output that is one token is the secret itself (``.vault-token``,
  ``/run/secrets/db_password``, ``kubectl get secret … -o jsonpath=…``, ``echo $API_KEY``);
- ``pgpass`` / ``htpasswd``: the password field of each line.

Standard library only, no ``re``. The profiles are asked for every payload that names a file or a
command (quick.plain_payload): names are classified through :func:`quick.classify`, so the name
tables load only where a name could be a secret's; the per-profile finders run in the redactor,
which has them loaded.
"""

from __future__ import annotations

from kenning.privacy import quick

Profile = frozenset[str]
EMPTY: Profile = frozenset()
CONFIG: Profile = frozenset(("literal", "entropy"))
SECRET_FILE: Profile = frozenset(("literal", "entropy", "whole"))

EXACT: dict[str, Profile] = {
    ".pgpass": frozenset(("pgpass",)), "pgpass.conf": frozenset(("pgpass",)),
    ".htpasswd": frozenset(("htpasswd",)), "htpasswd": frozenset(("htpasswd",)),
    ".netrc": CONFIG, "_netrc": CONFIG, ".npmrc": CONFIG, ".yarnrc": CONFIG, ".yarnrc.yml": CONFIG,
    ".pypirc": CONFIG, ".my.cnf": CONFIG, "my.cnf": CONFIG, ".mylogin.cnf": CONFIG, ".s3cfg": CONFIG,
    ".boto": CONFIG, "credentials": CONFIG, "credentials.json": CONFIG, "credentials.toml": CONFIG,
    "credentials.yml": CONFIG, "credentials.yaml": CONFIG, "credentials.xml": CONFIG, ".git-credentials": CONFIG,
    ".dockercfg": CONFIG, "kubeconfig": CONFIG, ".envrc": CONFIG, ".flaskenv": CONFIG, "secrets.yml": CONFIG,
    "secrets.yaml": CONFIG, "secrets.json": CONFIG, "secrets.toml": CONFIG, "secret.yaml": CONFIG,
    "secret.yml": CONFIG, ".secrets": CONFIG, "secrets.env": CONFIG, "auth.json": CONFIG,
    "application_default_credentials.json": CONFIG, "service-account.json": CONFIG,
    "service_account.json": CONFIG, "terraform.tfstate": CONFIG, "terraform.tfstate.backup": CONFIG,
    "wp-config.php": CONFIG, "settings.xml": CONFIG, "gradle.properties": CONFIG, "nuget.config": CONFIG,
    ".vault-token": SECRET_FILE, "pip.conf": CONFIG, "pip.ini": CONFIG, ".gitconfig": CONFIG,
    "rclone.conf": CONFIG, "pgbouncer.ini": CONFIG, "userlist.txt": CONFIG, "redis.conf": CONFIG,
    "docker-compose.yml": frozenset(("literal",)), "docker-compose.yaml": frozenset(("literal",)),
    "compose.yml": frozenset(("literal",)), "compose.yaml": frozenset(("literal",)),
}
SUFFIXES: tuple[tuple[str, Profile], ...] = (
    (".tfvars", CONFIG), (".tfvars.json", CONFIG), (".tfstate", CONFIG), (".env", CONFIG), (".ini", CONFIG),
    (".cfg", CONFIG), (".conf", CONFIG), (".properties", CONFIG), (".htpasswd", frozenset(("htpasswd",))),
    (".pem", SECRET_FILE), (".key", SECRET_FILE), (".p8", SECRET_FILE), (".token", SECRET_FILE),
    (".secret", SECRET_FILE), (".ovpn", CONFIG), (".kdbx", SECRET_FILE), (".jks", SECRET_FILE),
)
DIRS = ("/run/secrets/", "/var/run/secrets/", "/etc/secrets/", "/.secrets/", "/secrets/", "/.aws/", "/.docker/",
        "/.kube/", "/.azure/", "/.gnupg/", "/.ssh/", "/.config/gcloud/", "/.password-store/", "/.config/gh/")

# Commands whose output is a secret when it is a single token.
SECRET_COMMANDS = (
    ("kubectl", "secret"), ("oc", "secret"), ("vault", "kv", "get"), ("vault", "read"), ("vault", "token"),
    ("aws", "secretsmanager"), ("aws", "ecr", "get-login-password"), ("aws", "sts"), ("gcloud", "secrets"),
    ("gcloud", "auth", "print-access-token"), ("gcloud", "auth", "print-identity-token"), ("op", "read"),
    ("op", "item", "get"), ("pass", "show"), ("gopass", "show"), ("security", "find-generic-password"),
    ("security", "find-internet-password"), ("az", "keyvault", "secret"), ("az", "account", "get-access-token"),
    ("doppler", "secrets", "get"), ("heroku", "auth:token"), ("heroku", "config:get"), ("gh", "auth", "token"),
    ("glab", "auth"), ("npm", "token"), ("openssl", "rand"), ("pwgen",), ("bw", "get"), ("lpass", "show"),
    ("infisical", "secrets", "get"), ("sops", "-d"), ("sops", "--decrypt"), ("ansible-vault", "view"),
    ("ansible-vault", "decrypt"), ("age", "-d"), ("gpg", "-d"), ("gpg", "--decrypt"), ("base64", "-d"),
    ("base64", "--decode"), ("chamber", "read"), ("berglas", "access"), ("keyring", "get"),
)


BY_TOOL: dict[str, list[tuple[str, ...]]] = {}
for _pattern in SECRET_COMMANDS:
    BY_TOOL.setdefault(_pattern[0], []).append(_pattern)
_seen: dict[str, Profile] = {}


def for_path(path: str) -> Profile:
    """The profile of a file, from its path (case-insensitive name, parent folders)."""
    if not path or len(path) > 4096:
        return EMPTY
    found = _seen.get(path)
    if found is None:
        if len(_seen) > 1024:
            _seen.clear()
        found = _seen[path] = _for_path(path)
    return found


def _for_path(path: str) -> Profile:
    p = path.replace("\\", "/")
    low = p.lower()
    base = low.rsplit("/", 1)[-1]
    prof: set[str] = set(EXACT.get(base, EMPTY))
    if base.startswith(".env") or base.startswith("env.") or base.endswith(".env"):
        prof |= CONFIG
    for suffix, extra in SUFFIXES:
        if base.endswith(suffix):
            prof |= extra
    if "/.docker/config.json" in low or low.endswith(".kube/config") or ("/.aws/" in low and base in (
            "credentials", "config")):
        prof |= CONFIG
    if any(d in "/" + low for d in DIRS):
        prof |= SECRET_FILE if "/secrets/" in "/" + low else CONFIG
    stem = base.split(".", 1)[0] if not base.startswith(".") else base[1:].split(".", 1)[0]
    if stem and base not in EXACT and quick.classify(stem) in (quick.PASSWORD, quick.STRONG):
        prof |= SECRET_FILE  # db_password.txt, github_token, .vault-token, api-key
    return frozenset(prof)


def for_command(command: str) -> Profile:
    """The profile of what a shell command prints: the files it reads, the secrets it fetches."""
    if not command or len(command) > 20_000:
        return EMPTY
    prof: set[str] = set()
    words = command.replace("|", " | ").replace(";", " ; ").split()
    plain = [w.strip("\"'`()") for w in words]
    for w in plain:
        # (prose in a command, a commit message or a pull request's body: "the checks pass." names no file)
        w = w.rstrip(",;:!?")
        w = w[:-1] if w.endswith(".") and not w.endswith("..") else w
        if ("/" in w or "." in w or w.startswith("_")) and not w.startswith("-") and "://" not in w:
            prof |= for_path(w)
    for i, w in enumerate(plain):
        for pattern in BY_TOOL.get(w.rsplit("/", 1)[-1], ()):
            if _in_order(pattern[1:], plain[i + 1:i + 6]):
                prof.add("whole")
    for i, w in enumerate(plain):
        # echo $API_KEY, printenv GITHUB_TOKEN, cat /run/secrets/db_password
        if w in ("echo", "printf", "printenv") and i + 1 < len(plain):
            var = plain[i + 1].lstrip("$").strip("{}")
            if var and quick.classify(var) in (quick.PASSWORD, quick.STRONG, quick.WEAK):
                prof.add("whole")
    return frozenset(prof)


def _in_order(wanted: tuple[str, ...], words: list[str]) -> bool:
    """``wanted`` occur in ``words`` in this order (``kubectl get secret``: ``secret`` after ``kubectl``)."""
    it = iter(words)
    return all(any(w == x or w.startswith(x + "=") for w in it) for x in wanted)


# ------------------------------------------------------------------ per-profile finders

def whole_token(text: str) -> tuple[int, int] | None:
    """The span of a text that is one token (a secret file's content, a fetched secret)."""
    from kenning.privacy import names  # (the redactor's: loaded already)

    value = text.strip()
    if len(value) < 8 or len(value) > 8192 or any(c.isspace() for c in value):
        return None
    if names.is_reference(value) or value.startswith(("-----", "{", "[", "<")):
        return None
    start = text.find(value)
    return start, start + len(value)


def pgpass(text: str) -> list[tuple[int, int, str]]:
    """``host:port:database:user:password`` lines: the fifth field (``\\:`` escapes a colon)."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    for line in text.split("\n"):
        stripped = line.rstrip("\r")
        if stripped and not stripped.lstrip().startswith("#"):
            colons = 0
            i = 0
            while i < len(stripped):
                if stripped[i] == "\\":
                    i += 2
                    continue
                if stripped[i] == ":":
                    colons += 1
                    if colons == 4:
                        if i + 1 < len(stripped):
                            out.append((pos + i + 1, pos + len(stripped), "credential_file"))
                        break
                i += 1
        pos += len(line) + 1
    return out


def htpasswd(text: str) -> list[tuple[int, int, str]]:
    """``user:hash`` lines: the hash (crackable offline, so a credential)."""
    out: list[tuple[int, int, str]] = []
    pos = 0
    for line in text.split("\n"):
        stripped = line.rstrip("\r")
        colon = stripped.find(":")
        if colon > 0 and not stripped.startswith("#") and len(stripped) - colon > 4:
            out.append((pos + colon + 1, pos + len(stripped), "credential_file"))
        pos += len(line) + 1
    return out


IDENT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
PASSWORD_SYMBOLS = frozenset("!@#$%^&*+=?~")


_public: dict[str, bool] = {}


def _public_or_id(name: str) -> bool:
    found = _public.get(name)
    if found is None:
        from kenning.privacy import names

        ws = names.words(name)
        found = bool(ws) and (ws[-1] in ("id", "ids", "arn", "uuid", "sha", "digest", "hash", "checksum")
                              or any(w in names.PUBLIC for w in ws))
        if len(_public) > 4096:
            _public.clear()
        _public[name] = found
    return found


def random_values(text: str) -> list[tuple[int, int, str]]:
    """In a configuration file: every ``name = value`` / ``name: value`` whose value looks random."""
    from kenning.privacy import names

    out: list[tuple[int, int, str]] = []
    pos = 0
    for line in text.split("\n"):
        start = pos
        pos += len(line) + 1
        s = line.strip()
        if len(s) < 14 or s.startswith(("#", ";", "//", "[", "-----")):
            continue
        eq, colon = line.find("="), line.find(":")
        k = eq if colon == -1 or (eq != -1 and eq < colon) else colon
        if k <= 0:
            continue
        name = line[:k].strip().strip("\"'")
        if name.startswith("export "):
            name = name[7:].lstrip()
        if not name or not name.replace("_", "").replace(".", "").replace("-", "").isalnum() or _public_or_id(name):
            continue
        k += 1
        while k < len(line) and line[k] in " \t\"'":
            k += 1
        e = len(line.rstrip(" \t\r,;"))
        while e > k and line[e - 1] in "\"'":
            e -= 1
        value = line[k:e]
        if len(value) < 8 or "://" in value:
            continue
        if names.looks_random(value, 12) or (not PASSWORD_SYMBOLS.isdisjoint(value)
                                             and names.looks_like_password(value)):
            out.append((start + k, start + e, "credential_file"))
    return out
