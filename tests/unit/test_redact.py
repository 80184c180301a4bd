"""Secret redaction: every detector finds its kind, names it, keeps the text around it, and lets look-alikes be.

Secrets are assembled at run time from a published prefix and seeded random characters
(``tests.security.corpus.rnd``), so this file holds no credential. The corpus-wide targets
(recall, false-positive rate) are enforced in ``tests/security/test_redaction_corpus.py``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kenning.privacy import names, vendors
from kenning.privacy.files import for_command, for_path
from kenning.privacy.redact import Redactor, detector_names, detectors
from tests.security.corpus import B64, HEXL, detector_samples, password, pem, rnd, vendor_token

REPO = Path(__file__).resolve().parents[2]
MARKER = re.compile(r"\[REDACTED:([a-z0-9_]+)\]")


SAMPLES = detector_samples()


def test_every_text_detector_has_a_sample() -> None:
    text_detectors = set(detector_names()) - {"secret_field", "credential_file"}  # structures and paths below
    assert set(SAMPLES) == text_detectors


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_detector_finds_its_secret_and_names_it(name: str) -> None:
    text, secret = SAMPLES[name]
    out = Redactor().text(text)
    assert secret not in out, out
    assert MARKER.findall(out) == [name], out


@pytest.mark.parametrize("row", vendors.VENDORS, ids=[r[1] for r in vendors.VENDORS])
def test_every_vendor_format_is_found_wherever_it_stands(row: tuple[str, str, str, int, int, str]) -> None:
    tok = vendor_token(row, "w")
    r = Redactor()
    for text in (tok, f"TOKEN={tok}", f'"{tok}"', f"x {tok}.", f"\\n{tok}", f"key: '{tok}'\n"):
        out = r.text(text)
        assert tok not in out, (text, out)
        assert row[0] in MARKER.findall(out) or "password_assignment" in MARKER.findall(out), out


def test_a_vendor_prefix_inside_a_word_or_too_short_is_not_a_token() -> None:
    r = Redactor()
    for text in ("the task-skill risk-management-framework-document", "disk-" + "a1" * 20,
                 "path = hf_hub_download(repo_id='org/model')", "ghp_short1234", "xAKIA" + "B" * 16,
                 "key-value-store-implementation", "sk-2024-annual-report-final-v2"):
        assert r.text(text) == text


def test_text_around_a_secret_is_kept() -> None:
    r = Redactor()
    assert r.text("DB_PASSWORD=" + password("k1") + " make run") == \
        "DB_PASSWORD=[REDACTED:password_assignment] make run"
    assert r.text("postgres://app:" + password("k2") + "@db:5432/x") == \
        "postgres://app:[REDACTED:database_url_password]@db:5432/x"
    assert r.text("redis://:" + password("k3") + "@cache:6379") == "redis://:[REDACTED:database_url_password]@cache:6379"
    assert r.text("a\n" + pem("EC PRIVATE KEY", "k4") + "\nb") == "a\n[REDACTED:pem_private_key]\nb"
    assert r.text("curl -u admin:" + password("k5") + " https://x") == "curl -u admin:[REDACTED:cli_password_flag] https://x"


def test_the_most_specific_detector_names_overlapping_finds() -> None:
    tok = "ghp_" + rnd("spec", 36)
    out = Redactor().text(f"git clone https://x-access-token:{tok}@github.com/o/r.git")
    assert out == "git clone https://x-access-token:[REDACTED:github_token]@github.com/o/r.git"
    assert Redactor().text(f"GITHUB_TOKEN={tok}") == "GITHUB_TOKEN=[REDACTED:github_token]"


@pytest.mark.parametrize("text", [
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n-----END CERTIFICATE-----",
    "AKIA is the prefix of AWS access key ids, e.g. AKIA1234 (truncated)",
    "aws_secret_access_key = os.environ['AWS_SECRET_ACCESS_KEY']",
    "a JWT header such as eyJhbGciOiJIUzI1NiJ9 is only base64 of JSON",
    "request 123e4567-e89b-12d3-a456-426614174000 failed at commit 3f9a1c2d4e5b6a7980c1d2e3f4a5b6c7d8e9f0a1",
    "postgres://app@localhost:5432/db and http://user@example.com/path and git@github.com:o/r.git",
    "curl -H \"Authorization: Bearer $TOKEN\" https://api.example.com",
    "Bearer tokens are described in RFC 6750 and are widely used",
    "token = get_token()", "password = os.environ[\"PW\"]", "api_key = settings.api_key", "self.api_key = api_key",
    "client = Client(token=token, secret=secret)", "password: ${DB_PASSWORD}", "api_key: <your-api-key>",
    "secret_key = None", "password = \"changeme\"", "def get_api_key(self) -> str:", "max_tokens: 4096000",
    '{"input_tokens": 153421, "output_tokens": 2048}', "keyboard=azerty123 and monkey = banana1234",
    "gh auth login --token $GH_TOKEN", "docker login --password-stdin < ~/.docker-pass", "docker run -p 8080:80 nginx",
    "token_type = 'mailbox'", "PASSWORD_MIN_LENGTH = 12", "permission_mode: bypassPermissions",
    "pk_live_" + rnd("pk", 24) + " is a publishable key", "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + rnd("ssh", 43),
    "digest = hashlib.sha256(password.encode()).hexdigest()", "mkdir -p build && ssh -p 2222 host",
    "Password: ********", "the token is valid for one hour",
    "fields = [\"username\", \"password\", \"confirm_password\"]",
])
def test_look_alikes_are_left_unchanged(text: str) -> None:
    assert Redactor().text(text) == text


@pytest.mark.parametrize("text", ["", "short", "pw=abc", "x" * 100_000])
def test_short_and_plain_text_is_returned_unchanged(text: str) -> None:
    assert Redactor().text(text) == text


def test_custom_patterns_run_first_and_are_named() -> None:
    r = Redactor(custom=[("employee_id", r"\bEMP-\d{6}\b"), ("internal_host", r"\b[a-z0-9]+\.corp\.example\b")])
    pw = password("custom")
    out = r.text(f"ask EMP-123456 on build01.corp.example about DB_PASSWORD={pw}")
    assert out == ("ask [REDACTED:employee_id] on [REDACTED:internal_host] about "
                   "DB_PASSWORD=[REDACTED:password_assignment]")


def test_disabled_detectors_do_not_run() -> None:
    key = "AKIA" + rnd("dis", 16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    text = f"export AWS_ID={key} DB_PASSWORD={password('dis')}"
    out = Redactor(disabled=["aws_access_key"]).text(text)
    assert key in out and "[REDACTED:password_assignment]" in out
    assert Redactor(disabled=detector_names()).text(text) == text


# ------------------------------------------------------------------- structures and payloads

def test_fields_named_for_a_secret_lose_their_value_at_any_depth() -> None:
    pw, tok = password("f1"), rnd("f2", 40)
    value: dict[str, Any] = {"host": "db", "passwd": pw, "nested": {"deeper": [{"apiKey": tok, "n": 3}]},
                             "headers": {"Authorization": "Bearer " + tok}, "pin": 4812, "password": 123456,
                             "token_type": "Bearer", "max_tokens": 4096, "public_key": "ssh-ed25519 AAAA" + tok,
                             "description": "the password is rotated weekly", "ok": True, "none": None}
    out = Redactor().value(value)
    assert out["passwd"] == "[REDACTED:secret_field]"
    assert out["nested"]["deeper"][0] == {"apiKey": "[REDACTED:secret_field]", "n": 3}
    assert out["headers"]["Authorization"] == "Bearer [REDACTED:authorization_header]"
    assert out["password"] == "[REDACTED:secret_field]"
    for same in ("host", "pin", "token_type", "max_tokens", "public_key", "description", "ok", "none"):
        assert out[same] == value[same], same
    assert value["passwd"] == pw  # the input is not mutated


def test_name_and_value_side_by_side_and_kubernetes_secrets_as_structures() -> None:
    tok = rnd("nv", 40)
    out = Redactor().value({"env": [{"name": "API_TOKEN", "value": tok}, {"name": "LOG_LEVEL", "value": "info"}],
                            "manifest": {"kind": "Secret", "data": {"tls.key": "LS0tLS1" + rnd("k", 40)}},
                            "jwk": {"kty": "EC", "crv": "P-256", "x": rnd("x", 43), "d": rnd("d", 43)}})
    assert out["env"][0]["value"] == "[REDACTED:secret_field]" and out["env"][1]["value"] == "info"
    assert out["manifest"]["data"]["tls.key"] == "[REDACTED:kubernetes_secret]"
    assert out["jwk"]["d"] == "[REDACTED:pem_private_key]" and out["jwk"]["x"] == rnd("x", 43)


def test_the_agents_own_metadata_fields_are_not_scanned() -> None:
    looks_secret = "tok_" + rnd("meta", 40)
    payload = {"session_id": looks_secret, "transcript_path": f"/home/u/.claude/{looks_secret}.jsonl",
               "permission_mode": "bypassPermissions", "tool_use_id": looks_secret, "cwd": "/repo",
               "tool_input": {"command": f"export API_TOKEN={looks_secret}"}}
    out = Redactor().payload(payload, "claude-code")
    for k in ("session_id", "transcript_path", "permission_mode", "tool_use_id", "cwd"):
        assert out[k] == payload[k]
    assert out["tool_input"]["command"] == "export API_TOKEN=[REDACTED:password_assignment]"
    # Without an agent every field is content.
    assert Redactor().payload({"x_token": looks_secret}, None) == {"x_token": "[REDACTED:secret_field]"}


def test_credential_files_are_recognised_by_path_and_commands_that_print_secrets() -> None:
    assert "pgpass" in for_path("/home/u/.pgpass")
    assert {"literal", "entropy"} <= for_path("envs/prod/terraform.tfvars")
    assert "whole" in for_path("/run/secrets/db_password") and "whole" in for_path("/home/u/.vault-token")
    assert "whole" in for_path("config/github_token.txt")
    assert for_path("src/app.py") == frozenset() and for_path("README.md") == frozenset()
    assert "whole" in for_command("kubectl get secret db -o jsonpath='{.data.password}' | base64 -d")
    assert "whole" in for_command("echo $STRIPE_API_KEY")
    assert for_command("ls -la") == frozenset()
    r = Redactor()
    pw = password("pgp")
    read = {"tool_name": "Read", "tool_input": {"file_path": "/home/u/.pgpass"},
            "tool_response": {"file": {"filePath": "/home/u/.pgpass", "content": f"db:5432:app:me:{pw}\n"}}}
    out = r.payload(read, "claude-code")
    assert out["tool_response"]["file"]["content"] == "db:5432:app:me:[REDACTED:credential_file]\n"
    assert out["tool_input"]["file_path"] == "/home/u/.pgpass"  # the path itself is not the secret
    tok = rnd("whole", 24)
    bash = {"tool_input": {"command": "cat /run/secrets/db_password"}, "tool_response": {"stdout": tok + "\n"}}
    assert r.payload(bash, "claude-code")["tool_response"]["stdout"] == "[REDACTED:credential_file]\n"


@pytest.mark.parametrize("prose", ["Once the checks pass.", "Keep the token, drop the rest:", "Is it a secret?"])
def test_a_word_of_prose_in_a_command_is_no_credential_file(prose: str) -> None:
    """A pull request's body or a commit message holds sentences: "pass." or "token," end a sentence, they name
    no file, and what the command printed (the pull request's address) is kept."""
    command = f"gh pr create --title 'feat: argv' --body '{prose}'"
    assert for_command(command) == frozenset()
    out = Redactor().payload({"tool_name": "Bash", "tool_input": {"command": command},
                              "tool_response": {"stdout": "https://github.com/o/r/pull/1067\n"}}, "claude-code")
    assert out["tool_response"]["stdout"] == "https://github.com/o/r/pull/1067\n"
    assert "pgpass" in for_command("cat ~/.pgpass.") and "whole" in for_command("cat ./db_password.")


def test_names_are_classified_by_their_words() -> None:
    for name in ("password", "DB_PASSWORD", "dbPassword", "spring.datasource.password", "--password", "pgpassword",
                 "requirepass", "storepass", "smtp_pass", "passphrase"):
        assert names.classify(name) == names.PASSWORD, name
    for name in ("api_key", "apiKey", "X-API-Key", "client_secret", "AccountKey", "SharedAccessKey", "secretKeyRef_x",
                 "aws_secret_access_key", "auth_token", "npmAuthToken", "refresh_tokens", "credentials", "psk"):
        assert names.classify(name) == names.STRONG, name
    for name in ("key", "auth", "cookie", "session_key_x"):
        assert names.classify(name) in (names.WEAK, names.STRONG), name
    for name in ("token_type", "password_min_length", "secret_name", "api_key_header", "public_key", "primary_key",
                 "max_tokens", "input_tokens", "next_page_token", "tokenizer", "bypass", "compass", "author",
                 "secretsmanager_arn", "key_id", "password_hash", "permission_mode", "session_id"):
        assert names.classify(name) == names.NONE, name
    assert names.classify("Authorization") == names.AUTHZ


def test_looks_random_tells_machine_made_values_from_words_and_ids() -> None:
    for v in (rnd("lr1", 32, HEXL), rnd("lr2", 40), rnd("lr3", 24, B64) + "==", "a8f5f167f44f4964e6c998dee827110c"):
        assert names.looks_random(v), v
    for v in ("ProductUserVisibleVersion", "ROCKET_LAUNCHER_0001", "my_cache_key_prefix",
              "550e8400-e29b-41d4-a716-446655440000", "2026-12-01T10:00:00Z", "/usr/local/bin/python3",
              "https://example.com/a/b", "${SECRET}", "1.2.3.4"):
        assert not names.looks_random(v), v


# ------------------------------------------------------------------------------ robustness

def test_redaction_is_idempotent_and_markers_are_never_redacted_again() -> None:
    r = Redactor()
    for text, _secret in SAMPLES.values():
        once = r.text(text)
        assert r.text(once) == once


def test_a_finder_that_fails_costs_the_string_never_a_crash_or_a_leak(monkeypatch: pytest.MonkeyPatch) -> None:
    from kenning.privacy import structure

    def broken(*_a: Any, **_k: Any) -> None:
        raise IndexError("bug")

    monkeypatch.setattr(structure, "assignments", broken)
    assert Redactor().text("DB_PASSWORD=" + password("broken")) == "[REDACTED:redaction_error]"


def test_detectors_table_names_each_detector_once() -> None:
    names_ = [n for n, _d in detectors()]
    assert len(names_) == len(set(names_))


# ------------------------------------------------------------------------------- fast path

FAST_PATH = r"""
import sys
sys.path.insert(0, sys.argv[1])
from kenning import fastjson
from kenning.privacy.redact import Redactor
payloads = [fastjson.loads(l) for l in sys.stdin.read().splitlines()]
r = Redactor()
out = [r.payload(p, "claude-code") for p in payloads]
assert out == payloads, "a look-alike was redacted"
sys.stdout.write(fastjson.dumps(sorted(m for m in ("re", "enum", "json", "typing") if m in sys.modules)))
"""


def test_ordinary_payloads_and_source_code_are_decided_without_importing_re() -> None:
    """The hook pays no ``import re`` (+``enum``, ~15 ms) for real payloads and a Read of ordinary code."""
    fixtures = REPO / "tests" / "fixtures" / "claude-code"
    import json

    lines = [json.dumps(json.loads(p.read_text())["stdin"]) for p in sorted(fixtures.rglob("events/*.json"))]
    for src in ("kenning/hook/main.py", "kenning/search/service.py", "kenning/observer/session.py", "README.md"):
        path = REPO / src
        if path.exists():
            content = path.read_text()[:20_000]
            lines.append(json.dumps({"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Read",
                                     "permission_mode": "bypassPermissions", "tool_input": {"file_path": str(path)},
                                     "tool_response": {"type": "text", "file": {"filePath": str(path),
                                                                                "content": content}}}))
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", FAST_PATH, str(REPO)], input="\n".join(lines),
                          text=True, capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == [], proc.stdout


def test_the_first_look_knows_every_detectors_words() -> None:
    """quick.py's word lists are the detectors' own: a new vendor lead or tool cannot be missed by it."""
    from kenning.privacy import commands, quick, structure

    assert set(quick.WORDS) | set(quick.PHRASE_WORDS) >= set(vendors.LEADS) | set(commands.GATE_WORDS)
    for lead, rows in vendors.BY_LEAD.items():
        assert {lead + r[1][len(lead)].encode() for r in rows} <= set(quick.tails(lead)), lead
    phrases = {g for sets in commands.GATES.values() for (g,) in sets if " " in g or ":" in g}
    assert {p.decode() for p in quick.TOOL_PHRASES} == phrases
    singles = {g for sets in commands.GATES.values() for (g,) in sets if " " not in g and ":" not in g}
    assert {w.decode() for w in quick.WORDS} >= singles
    assert set(vendors.SOLID) | {"eyJ", "pat", "LS0", "cmV"} <= quick.HEADS
    assert structure.ANCHORS == quick.ANCHORS
    for name in ("psk", "otp_secret", "hmac", "apiKey", "credentials", "Cookie", "mnemonic", "passcode"):
        low = name.lower().encode()
        assert any(a in low for a in quick.ANCHORS) or names.classify(name) == names.NONE, name


def test_the_first_look_lets_ordinary_text_through_without_loading_the_detectors() -> None:
    from kenning.privacy import quick

    for text in ("echo hi", "5 passed, 1 skipped in 0.31s", "git status --short", "On branch main\nnothing to commit",
                 "docker run -p 8080:80 nginx", "npm install --save-dev typescript", "ssh -p 2222 ops@host uptime",
                 "def add(a, b):\n    return a + b\n", "https://example.com/docs/page?x=1"):
        assert quick.first_look(text) is None, text
    for text in ("DB_PASSWORD=x", "ghp_" + rnd("fl", 36), "postgres://u:p@h/db", "mysql -pX", "-----BEGIN X"):
        assert quick.first_look(text) is not None, text


def test_a_password_line_is_a_netrc_one_only_under_its_machine_or_login_line() -> None:
    """A ``.netrc`` block's password is taken whatever it looks like; prose that says "login" somewhere above a
    line opening with "password" is prose (a README: "one login per member …\\npassword from the vault")."""
    from tests.security.corpus import password

    r = Redactor()
    secret = password("netrc-unit")
    for block in (f"machine db.example.org\n  login ops\n  password {secret}\n", f"login ops\npassword {secret}\n",
                  f"default\n  login anon\n  password {secret}\n"):
        assert secret not in r.text(block), block
    prose = ("The admin makes one login per member; each member runs `kenning team join` and is asked for the\n"
             "password from the vault or KENNING_HUB_PASSWORD.")
    assert r.text(prose) == prose
