"""The redactor's first look decides ordinary code without the detectors, and never costs a secret.

``quick.first_look`` says which families of detectors a text needs (the name scanner, the vendor
table, the tool rules) and None when it needs none. Whatever it decides, the spans must be
exactly those of every detector run on the text: checked on the secrets corpus and its
look-alikes, every line and every file of this repository and a sample of the standard library,
and on texts assembled from the pieces secrets and ordinary code are made of. Through real hook
processes: a Read of ordinary source code loads neither ``re`` nor the vendor table nor the tool
rules, and a secret written into that same code is still redacted before it reaches the spool.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.privacy import quick
from kenning.privacy.redact import EMPTY, MARKER, Redactor, _merge, _outside_markers
from tests.conftest import REPO, Home
from tests.security.corpus import LOOKALIKES, SECRETS, password, payload, rnd

R = Redactor()
ORDINARY = REPO / "kenning" / "context" / "prompt.py"  # ~20 KB of ordinary Python


def full_spans(text: str) -> list[tuple[int, int, str]]:
    """Every built-in detector on ``text``, whatever the first look would say."""
    if len(text) < 8:
        return []
    lk = quick.look(text)
    lk.vendors = lk.commands = lk.decoders = lk.calls = lk.prose = True
    spans = R._detect(text, lk, EMPTY)
    if not spans:
        return []
    if MARKER in text:
        spans = _outside_markers(text, spans)
    return _merge(spans)


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [*strings(k), *strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def assert_same(texts: list[str]) -> None:
    wrong = [t for t in texts if R.spans(t) != full_spans(t)]
    assert not wrong, "the first look lost what the detectors find in:\n" + "\n---\n".join(w[:300] for w in wrong[:5])


def test_the_corpus_gets_the_spans_of_every_detector() -> None:
    texts = [t for s in SECRETS + LOOKALIKES for t in strings(payload(s))]
    texts += [line for t in texts for line in t.splitlines()]
    assert_same(texts)


def source_files() -> list[Path]:
    ours = sorted(p for d in ("kenning", "tests", "bench", "docs") for p in (REPO / d).rglob("*")
                  if p.suffix in (".py", ".md", ".json", ".toml", ".js", ".html", ".css", ".sh"))
    stdlib = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))[::15]
    return [*ours, REPO / "README.md", REPO / "SECURITY.md", REPO / "BENCHMARKS.md", *stdlib]


def test_every_file_and_line_of_real_code_gets_the_spans_of_every_detector() -> None:
    texts: list[str] = []
    for path in source_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        lines = text.splitlines()
        texts += [text, *lines, *("\n".join(lines[i:i + 3]) for i in range(0, len(lines), 3))]
    assert len(texts) > 30_000
    assert_same(texts)


NAMES = ["password", "DB_PASSWORD", "passwd", "pass", "pwd", "apiKey", "api_key", "API key", "key", "auth", "AUTH",
         "token", "secret", "client_secret", "Authorization", "cookie", "requirepass", "credentials", "--password",
         "-password", "PASSWORD-", "password.", "x-api-key", "AccountKey", "mnemonic", "otp_secret", "hmac"]
GLUE = ["=", " = ", ":", ": ", "?=", "+=", " <- ", ">", "<", ",", " ", "\t", "\n", "\r\n", "]", "[", '"', "'", "`",
        '\\"', "value=", "(", ")", ".", "-", "/", "@", "://", "|", ";", "&", " is ", " was now ", "=>", "==", "::",
        "</", "{", "}", "#", "export ", "set -x ", "ENV ", "machine h login u ", "- name: ", "value: ", "kind: ",
        "Secret", "data:\n  ", "stringData:", "<<< ", "echo ", "printf ", " | ", "-S", "-p", "-P", "-a", "-u"]
WORDS = ["mysql", "zip", "docker", "login", "sudo", "redis-cli", "curl", "http", "sshpass", "literal",
         "--from-literal=", "kubectl", "base64", "--password-stdin", "stdin", "fly secrets set", "npm config set",
         "https", "redis", "postgres", "host", "user", "admin", "x", "self.key", "os.environ", "None", "for", "in",
         "return", "def", "Bearer", "sig=", "ghp_", "sk-", "AKIA", "eyJ", "xoxb-", "-----BEGIN ", "PuTTY", "kty",
         "\\n", "ntoken", "tpassword"]
VALUES = [rnd("v1", 24), rnd("v2", 40), password("p1"), password("p2", 9), "hunter2", "Tr0ub4dor&3", "changeme",
          "${DB_PASSWORD}", "self.token", "get_key(name)", rnd("v3", 16).upper(), "0123456789abcdef0123",
          "user:" + password("p3"), ":" + password("p4") + "@db.example.com", rnd("v4", 36, "abcdef0123456789")]


@settings(max_examples=1200, deadline=None)
@given(st.lists(st.sampled_from(NAMES + GLUE + WORDS + VALUES), min_size=1, max_size=12))
def test_texts_made_of_the_pieces_of_secrets_get_the_spans_of_every_detector(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert R.spans(text) == full_spans(text)


def test_the_first_looks_tables_are_the_detectors_own() -> None:
    from kenning.privacy import calls, commands, decoders, prose, structure, tables

    piped_tools = {*commands.STDIN_CONSUMERS, "sudo", "base64"}
    for word in quick.PIPED:
        assert {t for t, _g in commands._BY_WORD[word.decode()]} <= piped_tools, word
    assert {g.encode() for t in piped_tools for (g,) in commands.GATES[t]} <= quick.PIPED
    assert quick.DIRECTIVES == structure.DIRECTIVES
    assert set(quick.URL_USER_STOP.decode()) == structure.URL_USER_STOP
    assert quick.QUOTES == structure.QUOTES
    assert frozenset(tables.BORDERS) == structure.TABLE_BORDERS
    assert quick.CALL_WORDS == calls.GATE_WORDS
    needles: dict[frozenset[bytes], set[bytes]] = {}
    for ws, ns in calls.NEEDLES.values():
        needles.setdefault(frozenset(w.encode() for w in ws), set()).update(ns)
    assert {k: set(v) for k, v in quick.CALL_NEEDLES.items()} == needles
    for gate, ns in quick.CALL_NEEDLES.items():
        for needle in ns:
            assert gate <= quick.look(needle.decode()).words, needle  # a needle is looked for under its own words
    assert quick.AUTH_WORDS == calls.AUTH_WORDS
    assert {"AC" + c for c in "0123456789abcdef"} <= quick.HEADS  # a Twilio SID makes the first look's vendors
    for word in [*decoders.SHELL, *decoders.CALLS, "Buffer.from", *decoders.DECODE_RECEIVERS]:
        assert quick.DECODER_WORDS & set(quick.look(word + "(").words), word  # each decoder has a word of the gate
    ascii_phrases = {p for p in prose.PHRASES if p.isascii()}
    for phrase in prose.PHRASES:
        if phrase in ascii_phrases:
            assert quick.FOREIGN_WORDS & set(quick.look(phrase).words), phrase
        else:
            assert any(n.lower() == phrase or n == phrase for n in quick.FOREIGN_UNICODE) or \
                quick.FOREIGN_WORDS & set(quick.look(phrase).words), phrase


def test_ordinary_code_is_decided_by_the_first_look() -> None:
    """The code of this module, and code like it, needs no detector at all."""
    for text in ("for key in sorted(d):\n    pass\n", "zip(a, b)", "import http.client", "sys.stdin.read()",
                 "def login(self, user):\n    return self._auth(user)\n", "# see https://example.com/x @decorator",
                 "if token.kind == 'name':\n    pass\n", "return [key for key in keys if key]"):
        assert quick.first_look(text) is None, text
    lk = quick.first_look(ORDINARY.read_text(encoding="utf-8"))
    assert lk is None or not (lk.vendors or lk.commands)


# ------------------------------------------------------------------ through real hook processes

def read_payload(home: Home, path: str, content: str, sid: str) -> dict[str, Any]:
    lines = content.count("\n") + 1
    return {"session_id": sid, "transcript_path": f"/tmp/{sid}.jsonl", "cwd": str(home.project),
            "permission_mode": "bypassPermissions", "hook_event_name": "PostToolUse", "tool_name": "Read",
            "tool_input": {"file_path": path}, "tool_use_id": f"toolu_{sid}",
            "tool_response": {"type": "text", "file": {"filePath": path, "content": content, "numLines": lines,
                                                       "startLine": 1, "totalLines": lines}}, "duration_ms": 3}


def run_hook(home: Home, body: dict[str, Any]) -> tuple[set[str], dict[str, Any]]:
    """One PostToolUse hook as installed (``-I``, the entry function), timed imports on; the modules it
    loaded and the record it spooled."""
    before = set(os.listdir(home.paths.spool)) if os.path.isdir(home.paths.spool) else set()
    proc = subprocess.run([sys.executable, "-I", "-X", "importtime", "-c", "from kenning.hook.main import cli; cli()",
                           "claude-code", "PostToolUse"], input=json.dumps(body).encode(), env=home.env,
                          capture_output=True, timeout=60, cwd=str(home.project))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() in (b"", b"{}") or isinstance(json.loads(proc.stdout), dict)
    modules = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.decode().splitlines() if "|" in line}
    new = sorted(set(os.listdir(home.paths.spool)) - before - {"tmp", "corrupt"})
    assert len(new) == 1, new
    record = json.loads((Path(home.paths.spool) / new[0]).read_text())
    return modules, record


@pytest.mark.parametrize("source", [ORDINARY, Path(sysconfig.get_paths()["stdlib"]) / "argparse.py"],
                         ids=["kenning-module", "stdlib-module"])
def test_a_read_of_ordinary_code_loads_no_detector_and_a_secret_in_it_is_caught(home: Home, source: Path) -> None:
    code = source.read_text(encoding="utf-8")[:20_000]
    path = str(home.project / "src" / source.name)
    modules, record = run_hook(home, read_payload(home, path, code, "fast-1"))
    assert record["payload"]["tool_response"]["file"]["content"] == code  # nothing of ordinary code redacted
    assert not {"re", "enum", "kenning.privacy.vendors", "kenning.privacy.commands"} & modules, sorted(modules)

    secret, token = password("in-code", 16), "ghp_" + rnd("in-code", 36)
    cut = code.find("\n\n", len(code) // 2)
    planted = (f"{code[:cut]}\n\nDB_PASSWORD = \"{secret}\"\nclient = Client(token=\"{token}\")\n"
               f"# mysql -u app -p{secret[::-1]} prod\n{code[cut:]}")
    _modules, record = run_hook(home, read_payload(home, path, planted, "fast-2"))
    stored = json.dumps(record)
    for s in (secret, token, secret[::-1]):
        assert s not in stored
    assert stored.count("[REDACTED:") >= 3


# ------------------------------------------------------------------ the whole payload, before any detector loads

PAYLOAD_AGENTS = ("claude-code", "codex", None)
FIXTURE_EVENTS = REPO / "tests" / "fixtures" / "claude-code"


def assert_plain_is_unchanged(body: dict[str, Any]) -> bool:
    """``plain_payload`` may say True only where the full redactor changes nothing."""
    plain = False
    for agent in PAYLOAD_AGENTS:
        if quick.plain_payload(body, agent):
            plain = True
            assert R.payload(body, agent) == body, (agent, json.dumps(body)[:400])
    return plain


def fixture_payloads() -> list[dict[str, Any]]:
    return [json.loads(p.read_text())["stdin"] for p in sorted(FIXTURE_EVENTS.rglob("*.json"))
            if isinstance(json.loads(p.read_text()).get("stdin"), dict)]


def test_a_payload_is_called_plain_only_when_the_redactor_leaves_it_as_it_is() -> None:
    corpus = [payload(s) for s in SECRETS]
    assert not any(quick.plain_payload(p, a) for p in corpus for a in PAYLOAD_AGENTS)  # every secret is seen
    for p in corpus + [payload(s) for s in LOOKALIKES]:
        assert_plain_is_unchanged(p)
    # Structures the redactor takes whole, whatever their strings look like.
    structured = [{"kind": "Secret", "data": {"x": "hi"}}, {"kty": "oct", "k": "0123456789abcdef0123"},
                  {"name": "DB_PASSWORD", "value": password("pair")}, [{"kind": "Secret", "stringData": {"a": "b"}}]]
    for inner in structured:
        body = {"session_id": "s", "tool_name": "mcp__k8s__get", "tool_response": {"result": inner}}
        assert R.payload(body, "claude-code") != body
        assert not quick.plain_payload(body, "claude-code")
    real = fixture_payloads()
    assert len(real) > 20
    # Claude Code's own payloads are mostly plain: the gate is worth its cost, not a formality.
    assert sum(assert_plain_is_unchanged(p) for p in real) >= len(real) // 2


def test_every_file_of_real_code_read_or_written_is_judged_as_the_redactor_judges_it() -> None:
    base = {"session_id": "s", "cwd": "/repo", "permission_mode": "bypassPermissions", "tool_use_id": "t"}
    plain = 0
    files = source_files()
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        name = f"/repo/{path.name}"
        for body in ({**base, "tool_name": "Read", "tool_input": {"file_path": name},
                      "tool_response": {"type": "text", "file": {"filePath": name, "content": text}}},
                     {**base, "tool_name": "Bash", "tool_input": {"command": f"cat {name}", "description": "Show"},
                      "tool_response": {"stdout": text[:4000], "stderr": ""}}):
            plain += assert_plain_is_unchanged(body)
    assert plain > len(files) // 4


KEYS = ["command", "description", "stdout", "file_path", "content", "name", "value", "key", "password", "token",
        "kind", "kty", "data", "stringData", "Authorization", "level", "items", "env", "id", "d", "pw", "secret_name",
        "prompt", "path", "cmd", "x"]
SCALARS = st.one_of(st.sampled_from(NAMES + WORDS + VALUES + ["Secret", "RSA", "echo hi", "hi", "", ".env",
                                                                "/run/secrets/db", "cat ~/.pgpass", "a:bcde",
                                                                "kubectl get secret x", "pwgen"]),
                    st.lists(st.sampled_from(NAMES + GLUE + WORDS + VALUES), min_size=1, max_size=6).map("".join),
                    st.integers(), st.booleans(), st.none())
JSON = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                     st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)),
                    max_leaves=12)


@settings(max_examples=1500, deadline=None)
@given(st.dictionaries(st.sampled_from([*KEYS, "tool_input", "tool_response", "permission_mode", "session_id",
                                        "cwd", "tool_name"]), JSON, min_size=1, max_size=6))
def test_payloads_made_of_the_pieces_of_secrets_are_plain_only_when_nothing_is_redacted(body: dict[str, Any]) -> None:
    assert_plain_is_unchanged(body)


# ------------------------------------------------------------------ names classified without the name tables

def _vocabulary() -> list[str]:
    from kenning.privacy import names

    words = set()
    for table in (names.META, names.PUBLIC, names.PASSWORD_WORDS, names.SECRET_WORDS, names.KEY_STRONG, names.KEY_NONE,
                  names.TOKEN_NONE, names.WEAK_WORDS, names.PASS_NOT, names.AUTHZ_NAMES, names.PAIR_NAMES):
        words |= set(table)
    return sorted(words | {"token", "tokens", "key", "keys", "secretsmanager", "secretary", "tokenizer", "sig",
                           "bearer", "signal", "design", "hi", "echo", "x", "9", "\u212aey", "PASS", "Pass",
                           "ＰＡＳＳ"})


VOCABULARY = _vocabulary()
NAME_GLUE = ["_", "-", ".", "", " ", "/", "$", ":", "__"]


def test_quick_classify_uses_names_classes() -> None:
    from kenning.privacy import names

    assert (quick.NONE, quick.WEAK, quick.STRONG, quick.PASSWORD) == (names.NONE, names.WEAK, names.STRONG,
                                                                      names.PASSWORD)
    # Every secret's word alone, as a compound and in every case: the anchors are in each.
    for w in VOCABULARY:
        for name in (w, w.upper(), w.capitalize(), "my" + w, w + "s", "db_" + w, w + "_2", "x" + w.capitalize()):
            assert quick.classify(name) == names.classify(name), name


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(VOCABULARY), st.sampled_from(["lower", "upper", "title"]),
                          st.sampled_from(NAME_GLUE)), min_size=1, max_size=4))
def test_a_name_is_classified_as_names_classifies_it(parts: list[tuple[str, str, str]]) -> None:
    from kenning.privacy import names

    name = "".join(getattr(w, case)() + glue for w, case, glue in parts)
    for n in (name, name.strip("_-. /$:")):
        assert quick.classify(n) == names.classify(n), n


def test_a_bash_call_is_judged_without_the_name_tables() -> None:
    """The real Bash payload is plain with names never loaded; a payload with a secret's name loads them."""
    bash = json.loads((FIXTURE_EVENTS / "interactive" / "events" / "PostToolUse.Bash.json").read_text())["stdin"]
    code = ("import json,sys;sys.path.append(sys.argv[1]);from kenning.privacy import quick;"
            "p=json.loads(sys.stdin.read());print(json.dumps([quick.plain_payload(p,'claude-code'),"
            "'kenning.privacy.names' in sys.modules]))")
    for body, want in ((bash, [True, False]),
                       ({**bash, "tool_input": {"command": "echo $API_TOKEN", "description": "Print it"}},
                        [False, True])):
        out = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(REPO)], input=json.dumps(body), text=True,
                             capture_output=True, check=True, timeout=60)
        assert json.loads(out.stdout) == want, body
