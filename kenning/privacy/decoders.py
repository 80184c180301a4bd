"""A secret fed to a decoder (``decoded_secret``). Standard library only, no ``re``.

A base64 or hex blob given to a decoder (``echo … | base64 -d``, ``base64 --decode <<< …``,
``openssl base64 -d``, ``openssl enc -d -a``, ``xxd -r -p``, a here-document, ``b64decode("…")``,
``atob('…')``, ``Buffer.from('…', 'base64')``, ``DecodeString("…")`` …) is judged by what it
decodes to, not by its own shape: random bytes of key length (key material), or text in which a
detector finds a secret (a service-account key's JSON, a PEM block, a ``user:password`` pair, a
random token). What decodes to ordinary text (``aGVsbG8=``), to a known media or archive format,
or is shorter than a key, is kept.
"""

from __future__ import annotations

from kenning.privacy.commands import _logical_end

Span = tuple[int, int, str]
NAME = "decoded_secret"

B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_")
HEX_CHARS = frozenset("0123456789abcdefABCDEF")
MIN_BLOB = 16  # shorter than any key: a word, a flag, a short text
MIN_KEY_BYTES = 16  # 128 bits
MAX_SITES = 256  # decoders looked at per text: a text naming thousands is not a session's command
# Shell commands that decode, and the words on their command line that make them decode.
SHELL = {"base64": (("-d",), ("--decode",), ("-D",), ("-di",), ("-id",)), "gbase64": (("-d",), ("--decode",)),
         "basenc": (("-d",), ("--decode",)), "xxd": (("-r",), ("-r", "-p"), ("-rp",), ("-pr",)),
         "openssl": (("base64", "-d"), ("enc", "-d", "-a"), ("enc", "-d", "-base64"), ("enc", "-d", "-A"),
                     ("base64", "-D"))}
# Calls that decode their first argument (the word before ``(``), and whether it is hex.
CALLS = {"b64decode": False, "urlsafe_b64decode": False, "standard_b64decode": False, "decodebytes": False,
         "a2b_base64": False, "atob": False, "decode64": False, "strict_decode64": False, "urlsafe_decode64": False,
         "DecodeString": False, "FromBase64String": False, "base64_decode": False, "decode_base64": False,
         "b32decode": False, "b85decode": False}
# ``Base64.getDecoder().decode("…")``, ``Base64.decode("…")``: a generic ``decode`` after a base64 receiver.
DECODE_RECEIVERS = ("getDecoder()", "getMimeDecoder()", "getUrlDecoder()", "Base64", "base64")
MAGIC = (b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"PK\x03\x04", b"%PDF", b"\x7fELF", b"RIFF", b"BZh", b"\x00\x00\x01\x00",
         b"<svg", b"<?xml", b"II*\x00", b"MM\x00*", b"wOF", b"OggS", b"ID3", b"\x1a\x45\xdf\xa3")
STOP = " \t\r\n|;&<>()`\"'\\"
BLANKS = frozenset(" \t\r\n\\\"'")  # what may stand between the lines of one wrapped blob


def find(text: str) -> list[Span]:
    """Spans of the blobs in ``text`` that a decoder turns into a secret."""
    out: list[Span] = []
    _shell(text, out)
    _calls(text, out)
    return out


# ------------------------------------------------------------------------------ shell

def _shell(text: str, out: list[Span]) -> None:
    done: set[int] = set()  # each command line once, however many decoders it names
    sites = 0
    for tool, forms in SHELL.items():
        i = text.find(tool)
        while i != -1 and sites < MAX_SITES:
            end = i + len(tool)
            if (i == 0 or text[i - 1] in " \t\n|;&(`$\"'/{") and text[end:end + 1] in ("", " ", "\t", "\n"):
                sites += 1
                ls = _logical_start(text, i)
                le = _logical_end(text, i)
                words = text[i:min(le, i + 400)].split()
                if ls not in done and any(all(w in words for w in form) for form in forms):
                    done.add(ls)
                    _line_blobs(text, ls, le, tool == "xxd", out)
                    _quoted_before(text, ls, i, tool == "xxd", out)
            i = text.find(tool, end)


def _line_blobs(text: str, ls: int, le: int, hexa: bool, out: list[Span]) -> None:
    """Every blob on the decoder's command line (``echo <blob> |``, ``<<< <blob>``, a wrapped blob whose
    lines are continued with ``\\`` or held in one pair of quotes) and in its here-document."""
    i = ls
    group: list[tuple[int, int]] = []  # blob-like words with only blanks, quotes or line continuations between
    while i < le:
        s = i
        while i < le and text[i] in STOP:
            i += 1
        if group and not BLANKS.issuperset(text[s:i]):
            _group(text, group, hexa, out)
            group = []
        j = i
        while j < le and text[j] not in STOP:
            j += 1
        if j > i and text[i] != "-" and (j - i >= MIN_BLOB or group) and B64_CHARS.issuperset(text[i:j]):
            group.append((i, j))
        elif group:
            _group(text, group, hexa, out)
            group = []
        i = j
    if group:
        _group(text, group, hexa, out)
    h = text.find("<<", ls, le)
    if h != -1 and text[h + 2:h + 3] != "<":
        k = h + 2 + (text[h + 2:h + 3] == "-")
        while k < le and text[k] in " \t":
            k += 1
        e = k
        while e < le and text[e] not in " \t;|&>":
            e += 1
        marker = text[k:e].strip("\"'")
        if marker:
            body = le + 1
            stop = text.find("\n" + marker, le)
            stop = len(text) if stop == -1 else stop
            blob = text[body:stop]
            first = body + len(blob) - len(blob.lstrip())
            last = body + len(blob.rstrip())
            if last - first >= MIN_BLOB and _judge("".join(blob.split()), hexa):
                out.append((first, last, NAME))


def _group(text: str, group: list[tuple[int, int]], hexa: bool, out: list[Span]) -> None:
    """A run of blob-like words: one blob when joined (a wrapped one), else each word alone."""
    if len(group) > 1 and _judge("".join(text[s:e] for s, e in group), hexa):
        out += [(s, e, NAME) for s, e in group]
        return
    out += [(s, e, NAME) for s, e in group if e - s >= MIN_BLOB and _judge(text[s:e], hexa)]


def _quoted_before(text: str, ls: int, i: int, hexa: bool, out: list[Span]) -> None:
    """``echo "<line>\\n<line>\\n…<line>" | base64 -d``: the decoder's line closes a quote opened lines before."""
    head = text[ls:i]
    for q in "\"'":
        if head.count(q) % 2:
            close = ls + head.find(q)
            start = text.rfind(q, max(0, ls - 200_000), ls)
            if start != -1 and close - start > MIN_BLOB and _judge(text[start + 1:close], hexa):
                out.append((start + 1, close, NAME))
            return


def _logical_start(text: str, i: int) -> int:
    """Start of the command line holding ``i``: earlier lines ending in ``\\`` continue into it."""
    ls = text.rfind("\n", 0, i) + 1
    while ls >= 2 and text[ls - 2] == "\\":
        ls = text.rfind("\n", 0, ls - 1) + 1
    return ls


# ------------------------------------------------------------------------------ code

def _calls(text: str, out: list[Span]) -> None:
    sites = 0
    for word, hexa in CALLS.items():
        i = text.find(word + "(")
        while i != -1 and sites < MAX_SITES:
            sites += 1
            if i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_"):
                _literal_arg(text, i + len(word) + 1, hexa, out)
            i = text.find(word + "(", i + len(word))
    i = text.find(".decode(")
    while i != -1:
        if text[max(0, i - 20):i].endswith(DECODE_RECEIVERS):
            _literal_arg(text, i + 8, False, out)
        i = text.find(".decode(", i + 8)
    i = text.find("Buffer.from(")
    while i != -1:
        lit = _literal(text, i + 12)
        if lit is not None:
            s, e = lit
            rest = text[e + 1:e + 40].lstrip(" \t,")
            if rest[:1] in "\"'`" and rest[1:].startswith(("base64", "hex")) and \
                    _judge(text[s:e], rest[1:].startswith("hex")):
                out.append((s, e, NAME))
        i = text.find("Buffer.from(", i + 12)


def _literal(text: str, k: int) -> tuple[int, int] | None:
    """The content span of the string literal that starts at ``k`` (after blanks and a b/r/u/@ prefix)."""
    n = len(text)
    while k < n and text[k] in " \t\r\n":
        k += 1
    while k < n and text[k] in "bBrRuU@":
        k += 1
    if text[k:k + 1] == "\\" and text[k + 1:k + 2] in ("\"", "'"):  # JSON text inside a string: \"…\"
        end = text.find(text[k:k + 2], k + 2, k + 20_000)
        return None if end == -1 else (k + 2, end)
    if k >= n or text[k] not in "\"'`":
        return None
    q = text[k]
    end = text.find(q, k + 1, k + 20_000)
    if end == -1:
        return None
    return k + 1, end


def _literal_arg(text: str, k: int, hexa: bool, out: list[Span]) -> None:
    lit = _literal(text, k)
    if lit is not None and lit[1] - lit[0] >= MIN_BLOB and _judge(text[lit[0]:lit[1]], hexa):
        out.append((lit[0], lit[1], NAME))


# ------------------------------------------------------------------------------ the verdict

def _judge(blob: str, hexa: bool) -> bool:
    """``blob`` decodes to a secret (or, undecodable, looks like one)."""
    blob = "".join(blob.split()).replace("\\n", "")
    if len(blob) < MIN_BLOB or len(blob) > 200_000:
        return False
    from kenning.privacy import names

    if names.is_reference(blob):
        return False
    if hexa:
        if not HEX_CHARS.issuperset(blob) or len(blob) % 2:
            return False
        data = bytes.fromhex(blob)
    else:
        if not B64_CHARS.issuperset(blob):
            return False
        import binascii

        body = blob.rstrip("=").replace("-", "+").replace("_", "/")
        try:
            data = binascii.a2b_base64(body + "=" * (-len(body) % 4))
        except (binascii.Error, ValueError):
            return names.looks_random(blob, 24)
    return _secret_bytes(data)


def _secret_bytes(data: bytes) -> bool:
    if data.startswith(MAGIC):
        return False  # an image, an archive, a document: content, not a key
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return len(data) >= MIN_KEY_BYTES  # random bytes: key material
    printable = sum(c.isprintable() or c in "\n\r\t" for c in decoded)
    if printable < len(decoded) * 0.9:
        return len(data) >= MIN_KEY_BYTES
    return _secret_text(decoded)


def _secret_text(decoded: str) -> bool:
    """Decoded text that holds a secret: any detector finds one, or it is a token or a ``user:password``."""
    from kenning.privacy import names
    from kenning.privacy.redact import Redactor

    value = decoded.strip()
    if not value:
        return False
    if Redactor().spans(decoded):
        return True
    if any(c.isspace() for c in value):
        return False  # prose, a document: ordinary text
    user, sep, pw = value.partition(":")
    if sep and user and pw and "/" not in user:
        return names.looks_like_password(pw) or names.looks_random(pw, 12)
    return names.looks_random(value, 16)
