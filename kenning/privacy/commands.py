"""Passwords given to common tools on their command line (``cli_password_flag``). No ``re``.

Long flags that name a secret (``--password x``, ``--api-key=x``, ``-storepass x``) are the
name scanner's (:mod:`kenning.privacy.structure`). This module knows the tools whose password
flag says nothing by its name: ``mysql -pSECRET``, ``docker login -p``, ``sshpass -p``,
``curl -u user:pw``, ``redis-cli -a``, ``sqlplus user/pw@db``, ``openssl -passin pass:…``,
``kubectl create secret … --from-literal=k=v``, ``fly secrets set K=V``,
``echo pw | docker login --password-stdin`` … A line is only parsed when one of these tool
names occurs in it as a word, which the caller learns from the token runs it already cut.
"""

from __future__ import annotations

from kenning.privacy import names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

Span = tuple[int, int, str]
NAME = "cli_password_flag"

MYSQL = ("mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlcheck", "mysqlpump", "mysqlsh", "mysqlshow",
         "mysqlbinlog", "mariadb", "mariadb-dump", "mariadb-admin", "mariadb-import", "mariadb-check")
# tool -> flags whose value is the password, written attached (-pSECRET) or as the next word.
ATTACHED: dict[str, tuple[str, ...]] = {**{t: ("-p",) for t in MYSQL}, "7z": ("-p",), "7za": ("-p",),
                                         "7zr": ("-p",), "rar": ("-p",), "unrar": ("-p",)}
NEXT: dict[str, tuple[str, ...]] = {
    "sshpass": ("-p",), "redis-cli": ("-a",), "keydb-cli": ("-a",), "sqlcmd": ("-P",), "bcp": ("-P",),
    "osql": ("-P",), "isql": ("-P",), "mongo": ("-p",), "mongosh": ("-p",), "mongodump": ("-p",),
    "mongorestore": ("-p",), "mongoexport": ("-p",), "mongoimport": ("-p",), "mongostat": ("-p",),
    "mongotop": ("-p",), "ldapsearch": ("-w",), "ldapadd": ("-w",), "ldapmodify": ("-w",), "ldapdelete": ("-w",),
    "ldappasswd": ("-w", "-s"), "ldapwhoami": ("-w",), "ldapcompare": ("-w",), "ldapmodrdn": ("-w",),
    "zip": ("-P",), "unzip": ("-P",), "zipcloak": ("-P",), "ssh-keygen": ("-N", "-P"), "ncftp": ("-p",),
    "ncftpput": ("-p",), "ncftpget": ("-p",), "influx": ("-password", "-p"), "cqlsh": ("-p",),
    "clickhouse-client": ("--password",), "vertica": ("-w",), "vsql": ("-w",), "hdbsql": ("-p",),
    "db2": ("using",), "xfreerdp": ("/p:",), "rdesktop": ("-p",), "wmic": ("/password:",),
}
# tools that take -p/--password only after a "login" subcommand (docker -p elsewhere is a port).
LOGIN: frozenset[str] = frozenset(("docker", "podman", "buildah", "skopeo", "nerdctl", "oras", "crane", "regctl",
                                   "helm", "oc", "az", "cf", "argocd", "kubectl", "singularity", "apptainer",
                                   "finch", "limactl", "lima", "quay", "jf", "jfrog"))
# tool -> flags whose value is user:password (the separator after the user).
USERPASS: dict[str, tuple[tuple[str, ...], str]] = {
    "curl": (("-u", "--user", "--proxy-user", "-U"), ":"), "http": (("-a", "--auth"), ":"),
    "xh": (("-a", "--auth"), ":"),
    "smbclient": (("-U", "--user"), "%"), "rpcclient": (("-U", "--user"), "%"), "smbmap": (("-u",), "%"),
    "lftp": (("-u",), ","), "wget": (("--user",), ":"), "aria2c": (("--http-user",), ":"),
}
SLASH = frozenset(("sqlplus", "sqlldr", "expdp", "impdp", "rman", "dgmgrl", "tkprof"))
SECRETS_SET = frozenset(("fly", "flyctl", "heroku", "doppler", "railway", "dokku", "netlify", "render",
                         "supabase", "wrangler", "vercel", "gh", "glab", "infisical", "akamai", "porter",
                         "convex", "deno", "npx", "bunx", "firebase", "cf", "kamal", "koyeb", "northflank"))
CONFIG_SET = frozenset(("aws", "npm", "yarn", "pnpm", "gcloud", "pip", "poetry", "conda", "composer",
                        "bundle", "gem", "cargo", "dotnet", "nuget", "az", "heroku", "pulumi", "terraform"))
STDIN_CONSUMERS = ("--password-stdin", "chpasswd", "passwd", "kinit", "cryptsetup", "--password-from-stdin",
                   "--token-stdin", "--stdin")
PREFIX_WORDS = frozenset(("sudo", "env", "time", "nohup", "exec", "command", "doas", "nice", "ionice", "xargs",
                          "timeout", "stdbuf", "unbuffer", "watch", "strace", "ltrace", "caffeinate", "!", "then",
                          "do", "else", "{", "(", "builtin", "eval", "winpty", "rlwrap", "time", "-"))

TOOLS: frozenset[str] = frozenset((*ATTACHED, *NEXT, *LOGIN, *USERPASS, *SLASH, *SECRETS_SET, *CONFIG_SET,
                                   "openssl", "htpasswd", "net", "mc", "rabbitmqctl", "vault", "kubectl", "oc",
                                   "sudo", "base64", *STDIN_CONSUMERS))


# Two words that must stand together (as written, lower case) before a "secrets set" rule runs.
SECRET_PHRASES = ("secrets set", "secret set", "secret put", "config set", "config:set", "secrets:set", "env add",
                  "variables --set", "secrets import")


def _gates(tools: Iterable[str]) -> dict[str, tuple[tuple[str, ...], ...]]:
    """For each tool, the sets of words (any one set, all its words) that make its rule worth running:
    its own name, or for everyday tools the words its password form needs (``docker`` only with
    ``login``, ``npm`` only with ``config`` and ``set``), so ``docker run -p`` or ``npm install`` cost no
    parsing. The caller's word split yields alphanumeric words."""
    out: dict[str, tuple[tuple[str, ...], ...]] = {}
    for t in tools:
        own = (max(t.lstrip("-").replace("-", " ").replace(":", " ").split(), key=len),)  # ssh-keygen: keygen
        if t in LOGIN and t not in NEXT and t not in USERPASS:
            sets: tuple[tuple[str, ...], ...] = (("login",),) + ((("literal",),) if t in ("kubectl", "oc") else ())
        elif t in SECRETS_SET:
            sets = tuple((p,) for p in SECRET_PHRASES) + ((("login",),) if t in LOGIN else ())
        elif t in CONFIG_SET:
            sets = (("config set",), ("configure set",))
        elif t == "sudo":
            sets = (("S",),)
        elif t in STDIN_CONSUMERS:
            sets = ((t.lstrip("-").replace("-", " ").split()[-1],),)  # --password-stdin: stdin
        else:
            sets = (own,)
        out[t] = sets
    return out


GATES = _gates(TOOLS)
# A phrase's first word is its gate: the phrase itself is then looked for in the lower-cased text.
_BY_WORD: dict[str, list[tuple[str, str]]] = {}
for _tool, _sets in GATES.items():
    for (_gate,) in _sets:
        _BY_WORD.setdefault(_gate.replace(":", " ").split()[0], []).append((_tool, _gate))
GATE_WORDS = frozenset(w.encode() for w in _BY_WORD)


def tools_in(words: Iterable[bytes], low: bytes) -> list[str]:
    """The tools whose rule is worth running, given the words of the text and its lower-cased bytes."""
    found: list[str] = []
    for word in GATE_WORDS.intersection(words):
        for t, gate in _BY_WORD[word.decode()]:
            if t not in found and ((" " not in gate and ":" not in gate) or gate.encode() in low):
                found.append(t)
    return found


class Token:
    __slots__ = ("end", "start", "value")

    def __init__(self, start: int, end: int, value: str) -> None:
        self.start, self.end, self.value = start, end, value


def find(text: str, tools: Iterable[str]) -> list[Span]:
    """Spans of passwords on the command lines of ``text`` that mention one of ``tools``."""
    out: list[Span] = []
    done: set[int] = set()
    for tool in tools:
        if tool in STDIN_CONSUMERS or tool in ("sudo", "base64"):
            continue
        i = text.find(tool)
        while i != -1:
            if _command_word(text, i, len(tool)) and i not in done:
                done.add(i)
                # From the tool's own word: what stands before it (sudo, env, a JSON string's quote) is not
                # needed, and a shell reading of it could pair quotes wrongly.
                end = _logical_end(text, i)
                segments = _segments(text, i, end)
                if segments:
                    out += _segment(text, segments[0])
            i = text.find(tool, i + len(tool))
    return out


def _command_word(text: str, i: int, n: int) -> bool:
    """``tool`` at ``i`` stands as a command word: a blank (or the end) after it, a separator before."""
    after = text[i + n:i + n + 1]
    if after not in ("", " ", "\t", "\n", "\\"):
        return False
    return i == 0 or text[i - 1] in " \t\n/|;&(`$\"'{!="


def _logical_end(text: str, i: int) -> int:
    """End of the command line holding ``i`` (backslash-newline continues it)."""
    while True:
        j = text.find("\n", i)
        if j == -1:
            return len(text)
        if j > 0 and text[j - 1] == "\\":
            i = j + 1
            continue
        return j


def _segments(text: str, start: int, end: int) -> list[list[Token]]:
    """Simple commands of a shell line: words split on blanks, ``|``, ``;``, ``&&``; quotes kept together."""
    segments: list[list[Token]] = []
    cur: list[Token] = []
    i = start
    while i < end:
        c = text[i]
        if c in " \t\r" or (c == "\\" and text[i + 1:i + 2] == "\n"):
            i += 2 if c == "\\" else 1
            continue
        if c == "\n":
            i += 1
            continue
        if c in "|;&":
            if cur:
                segments.append(cur)
                cur = []
            cur_sep = Token(i, i + 1, c)
            j = i + 1
            while j < end and text[j] in "|&":
                j += 1
            cur_sep.end = j
            segments.append([cur_sep])
            i = j
            continue
        j = i
        value: list[str] = []
        while j < end and text[j] not in " \t\r\n|;&":
            q = text[j]
            if q in "\"'":
                close = text.find(q, j + 1, end)
                if close == -1:
                    close = end
                value.append(text[j + 1:close])
                j = close + 1
            elif q == "\\" and j + 1 < end:
                value.append(text[j + 1])
                j += 2
            else:
                value.append(q)
                j += 1
        cur.append(Token(i, min(j, end), "".join(value)))
        i = j
    if cur:
        segments.append(cur)
    return segments


def _unquoted(text: str, start: int, end: int) -> tuple[int, int]:
    """The span inside one pair of quotes around ``text[start:end]``, if any."""
    if end - start >= 2 and text[start] in "\"'" and text[end - 1] == text[start]:
        return start + 1, end - 1
    return start, end


def _secret(text: str, start: int, end: int, out: list[Span], *, min_len: int = 3) -> None:
    start, end = _unquoted(text, start, end)
    while end > start and text[end - 1] in "`,;)":
        end -= 1  # `mysql -pSECRET`, in prose or docs
    value = text[start:end]
    if len(value) >= max(min_len, 3) and not names.is_reference(value) and value.lower() not in names.PLACEHOLDERS:
        out.append((start, end, NAME))


def _segment(text: str, seg: list[Token]) -> list[Span]:
    if len(seg) == 1 and seg[0].value in ("|", "||", "&&", "&", ";"):
        return []
    out: list[Span] = []
    k = 0
    while k < len(seg) and (seg[k].value in PREFIX_WORDS or _env_assignment(seg[k].value)
                            or (k and seg[k - 1].value == "sudo" and seg[k].value.startswith("-"))):
        k += 1
    if k >= len(seg):
        return out
    tool = seg[k].value.rsplit("/", 1)[-1]
    if tool.endswith(".exe"):
        tool = tool[:-4]
    words = [t.value for t in seg[k + 1:]]
    args = seg[k + 1:]
    if tool in ATTACHED:
        for t in args:
            for flag in ATTACHED[tool]:
                if t.value.startswith(flag) and len(t.value) > len(flag) and not t.value.startswith("--"):
                    _secret(text, t.start + len(flag), t.end, out)
    if tool in NEXT:
        _next_values(text, args, NEXT[tool], out, attached=tool in ("sshpass", "sqlcmd", "bcp", "osql", "isql"))
    if tool in LOGIN and ("login" in words or (tool in ("az",) and "login" in words)):
        _next_values(text, args, ("-p",), out, attached=False)
    if tool in USERPASS:
        flags, sep = USERPASS[tool]
        for idx, t in enumerate(args):
            val_tok = None
            for flag in flags:
                if t.value == flag and idx + 1 < len(args):
                    val_tok = args[idx + 1]
                elif t.value.startswith(flag + "=") and flag.startswith("--"):
                    val_tok = Token(t.start + len(flag) + 1, t.end, t.value[len(flag) + 1:])
                elif flag in ("-u", "-U", "-a") and t.value.startswith(flag) and len(t.value) > 2 \
                        and not t.value.startswith("--"):
                    val_tok = Token(t.start + 2, t.end, t.value[2:])
            if val_tok is not None:
                _userpass(text, val_tok, sep, out)
    if tool in SLASH:
        for t in args:
            v = t.value
            if "/" in v and not v.startswith(("/", "@", "-")) and "://" not in v:
                user, _, rest = v.partition("/")
                pw = rest.split("@", 1)[0]
                if user and pw and user.replace("_", "").replace("$", "").replace("#", "").isalnum():
                    s = text.find(pw, t.start, t.end)
                    if s != -1:
                        _secret(text, s, s + len(pw), out, min_len=1)
                break
    if tool == "openssl":
        for idx, t in enumerate(args):
            if t.value in ("-passin", "-passout", "-pass", "-password", "-k", "-kfile") and idx + 1 < len(args):
                nxt = args[idx + 1]
                if nxt.value.startswith("pass:"):
                    s = text.find("pass:", nxt.start, nxt.end) + 5
                    _secret(text, s, nxt.end, out, min_len=1)
                elif t.value == "-k":
                    _secret(text, nxt.start, nxt.end, out)
    if tool == "htpasswd":
        opts = "".join(w[1:] for w in words if w.startswith("-"))
        positional = [t for t in args if not t.value.startswith("-")]
        if "b" in opts and positional:
            last = positional[-1]
            if len(positional) >= (2 if "n" in opts else 3):
                _secret(text, last.start, last.end, out, min_len=1)
    if tool in ("kubectl", "oc"):
        for t in args:
            if t.value.startswith("--from-literal="):
                body = t.value[len("--from-literal="):]
                if "=" in body:
                    s = text.find("=", text.find("--from-literal=", t.start) + len("--from-literal=")) + 1
                    _secret(text, s, t.end, out, min_len=1)
    if tool in SECRETS_SET and _has_pair(words, (("secrets", "set"), ("secret", "set"), ("secrets:set",),
                                                 ("config:set",), ("secret", "put"), ("env", "add"),
                                                 ("secrets", "import"), ("variables", "--set"))):
        for t in args:
            if "=" in t.value and not t.value.startswith("-"):
                name, _, val = t.value.partition("=")
                if name and val:
                    s = text.find("=", t.start, t.end) + 1
                    _secret(text, s, t.end, out, min_len=1)
        for idx, t in enumerate(args):
            if t.value in ("-b", "--body") and idx + 1 < len(args):
                _secret(text, args[idx + 1].start, args[idx + 1].end, out, min_len=1)
            elif t.value.startswith("--body="):
                _secret(text, t.start + 7, t.end, out, min_len=1)
        if tool == "doppler" and "set" in words:
            pos = [t for t in args if not t.value.startswith("-") and "=" not in t.value]
            if len(pos) >= 4:
                _secret(text, pos[-1].start, pos[-1].end, out, min_len=1)
    if tool in CONFIG_SET:
        for idx, w in enumerate(words):
            if w == "set" and idx > 0 and words[idx - 1] in ("config", "configure") and idx + 2 < len(words):
                j = idx + 1
                while j < len(words) and words[j].startswith("-"):
                    j += 1
                if j + 1 < len(args):
                    key = words[j].rsplit(":", 1)[-1].rsplit("/", 1)[-1]
                    if names.classify(key) in (names.PASSWORD, names.STRONG, names.WEAK):
                        _secret(text, args[j + 1].start, args[j + 1].end, out, min_len=1)
    if tool == "net" and len(words) >= 3 and words[0].lower() == "user" and not words[2].startswith("/") \
            and words[2] != "*":
        _secret(text, args[2].start, args[2].end, out, min_len=1)
    if tool == "net" and len(words) >= 3 and words[0].lower() == "use":
        for t in args[1:]:
            v = t.value
            if v.startswith(("\\", "/")) or v == "*" or (len(v) == 2 and v[1] == ":"):
                continue  # the share, the options, the drive letter
            _secret(text, t.start, t.end, out, min_len=1)
            break
    if tool == "mc" and len(words) >= 6 and words[0] in ("alias", "config") and words[1] in ("set", "host"):
        pos = [t for t in args if not t.value.startswith("-")]
        if len(pos) >= 6:
            _secret(text, pos[5].start, pos[5].end, out, min_len=1)
    if tool == "rabbitmqctl" and len(words) >= 3 and words[0] in ("add_user", "change_password"):
        _secret(text, args[2].start, args[2].end, out, min_len=1)
    if tool == "vault" and words[:1] == ["login"]:
        for t in args[1:]:
            if not t.value.startswith("-") and "=" not in t.value and names.looks_random(t.value, 20):
                _secret(text, t.start, t.end, out)
    return out


def _next_values(text: str, args: list[Token], flags: tuple[str, ...], out: list[Span], *, attached: bool) -> None:
    for idx, t in enumerate(args):
        for flag in flags:
            if t.value == flag and idx + 1 < len(args):
                nxt = args[idx + 1]
                if not nxt.value.startswith("-") or (len(nxt.value) > 2 and nxt.value[1] != "-" and flag == "-p" \
                        and not nxt.value[1:2].isalpha()):
                    _secret(text, nxt.start, nxt.end, out, min_len=1)
            elif (flag.endswith(":") and t.value.startswith(flag)) or (
                    attached and t.value.startswith(flag) and len(t.value) > len(flag)
                    and not t.value.startswith("--")):
                _secret(text, t.start + len(flag), t.end, out, min_len=1)


def _userpass(text: str, tok: Token, sep: str, out: list[Span]) -> None:
    value = tok.value
    if sep in value:
        user, _, pw = value.partition(sep)
        if pw:
            s = text.find(sep, tok.start, tok.end) + 1
            e = tok.end
            if text[e - 1:e] in "\"'" and text[e - 1] != text[s:s + 1]:
                e -= 1
            _secret(text, s, e, out, min_len=1)
        elif names.looks_random(user, 16):  # -u sk_live_…: a key as the user, no password
            _secret(text, tok.start, text.find(sep, tok.start, tok.end), out)
    elif names.looks_random(value, 20):
        _secret(text, tok.start, tok.end, out)


def _env_assignment(word: str) -> bool:
    name, eq, _ = word.partition("=")
    return bool(eq) and bool(name) and name.replace("_", "").isalnum() and not name[0].isdigit()


def _has_pair(words: list[str], pairs: tuple[tuple[str, ...], ...]) -> bool:
    for pair in pairs:
        n = len(pair)
        for i in range(len(words) - n + 1):
            if tuple(words[i:i + n]) == pair:
                return True
    return False


def piped_stdin(text: str, tools: Iterable[str]) -> list[Span]:
    """``echo pw | docker login --password-stdin``, ``echo pw | sudo -S …``, ``sudo -S <<< 'pw'``."""
    out: list[Span] = []
    done: set[int] = set()
    for word in tools:
        if word not in STDIN_CONSUMERS and word not in ("sudo", "base64"):
            continue
        i = text.find(word)
        while i != -1:
            ls = text.rfind("\n", 0, i) + 1
            if ls not in done:
                done.add(ls)
                out += _piped_line(text, ls, _logical_end(text, i))
            i = text.find(word, i + len(word))
    return out


def here_strings(text: str) -> list[Span]:
    """``cmd <<< 'value'`` where ``cmd`` takes a secret on stdin (``wrangler secret put``, ``sudo -S``)."""
    out: list[Span] = []
    i = text.find("<<<")
    while i != -1:
        ls = text.rfind("\n", 0, i) + 1
        end = _logical_end(text, i)
        for seg in _segments(text, ls, end):
            words = [t.value for t in seg]
            if not any(w.startswith("<<<") for w in words):
                continue
            if _secret_consumer(words):
                for j, t in enumerate(seg):
                    if t.value == "<<<" and j + 1 < len(seg):
                        _secret(text, seg[j + 1].start, seg[j + 1].end, out, min_len=1)
                    elif t.value.startswith("<<<") and len(t.value) > 3:
                        _secret(text, t.start + 3, t.end, out, min_len=1)
        i = text.find("<<<", end)
    return out


def _secret_consumer(words: list[str]) -> bool:
    """A command that reads a secret on stdin."""
    if any(w in STDIN_CONSUMERS for w in words) or ("sudo" in words and "-S" in words):
        return True
    return any(w in ("secret", "secrets", "login", "password", "passwd", "token") for w in words[:4])


def _piped_line(text: str, start: int, end: int) -> list[Span]:
    segs = _segments(text, start, end)
    out: list[Span] = []
    for idx, seg in enumerate(segs):
        words = [t.value for t in seg]
        encode = words[:1] == ["base64"] and not {"-d", "--decode", "-D", "-di", "-id"} & set(words)
        # (echo -n 'pw' | base64: a secret being encoded for a Kubernetes Secret, if it looks like one)
        consumer = encode or any(w in STDIN_CONSUMERS for w in words) or ("sudo" in words and "-S" in words)
        if not consumer:
            continue
        if "<<<" in words:
            j = words.index("<<<")
            if j + 1 < len(seg):
                _secret(text, seg[j + 1].start, seg[j + 1].end, out, min_len=1)
        for t in seg:
            if t.value.startswith("<<<") and len(t.value) > 3:
                _secret(text, t.start + 3, t.end, out, min_len=1)
        if idx >= 2 and segs[idx - 1][0].value == "|":
            prev = segs[idx - 2]
            head = prev[0].value.rsplit("/", 1)[-1] if prev else ""
            if head in ("echo", "printf"):
                vals = [t for t in prev[1:] if not t.value.startswith("-") and "%" not in t.value]
                for t in vals:
                    if not encode or names.looks_like_password(t.value) or names.looks_random(t.value, 12):
                        _secret(text, t.start, t.end, out, min_len=1)
    return out
