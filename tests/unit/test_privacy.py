"""Privacy before the spool: ``<private>`` and echo tags are stripped, secrets are redacted.

Every detector gets a realistic fake secret of the right shape (assembled from pieces, so this
file does not itself look like it holds live credentials) and a look-alike that must survive.
The last tests measure false positives on real text: every string of the captured Claude Code
fixtures and every source file of Kenning.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from kenning.privacy.redact import ANCHORS, DETECTORS, Redactor, detector_names
from kenning.privacy.tags import ECHO_TAGS, is_entirely_private, strip_text, strip_value

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "claude-code"
MARKER = re.compile(r"\[REDACTED:([a-z_]+)\]")

# ---------------------------------------------------------------------------------- tags


@pytest.mark.parametrize(("text", "expected"), [
    ("a <private>x</private> b", "a  b"),
    ("before\n<private>\nline one\nline two\n</private>\nafter", "before\n\nafter"),
    ("a <private reason=\"pw\" level='2'>x</private> b", "a  b"),
    ("a <PRIVATE>x</Private> b", "a  b"),
    ("a <Private\n>x</private > b", "a  b"),
    ("1 <private>one</private> 2 <private>two</private> 3", "1  2  3"),
    ("x <system-reminder>Remember the todo list</system-reminder> y", "x  y"),
    ("x <kenning-context>\n# Memory of p\n#1 09:15 ok\n</kenning-context> y", "x  y"),
    ("x <claude-mem-context>old</claude-mem-context> y <persisted-output>o</persisted-output>", "x  y "),
    ("<system-reminder>a</system-reminder><private>b</private>", ""),
    ("<private>a<system-reminder>b</system-reminder>c</private>d", "d"),
    ("<system-reminder>a<private>b</private>c</system-reminder>d", "d"),
])
def test_blocks_are_removed_with_their_content(text: str, expected: str) -> None:
    assert strip_text(text) == expected


@pytest.mark.parametrize("tag", ECHO_TAGS)
def test_every_echo_tag_is_removed(tag: str) -> None:
    assert strip_text(f"keep <{tag}>echoed back</{tag}> this") == "keep  this"
    assert strip_text(f"keep <{tag.upper()} a=1>echoed back</{tag.upper()}> this") == "keep  this"


@pytest.mark.parametrize(("text", "expected"), [
    ("visible <private>hunter2 and everything after", "visible "),
    ("visible <private reason=x>\nline\nline", "visible "),
    ("<private>a</private> shown <private>not closed, hidden", " shown "),
    ("shown <private>hidden <private>also hidden</private> still hidden", "shown "),
])
def test_unclosed_private_hides_everything_after_it(text: str, expected: str) -> None:
    assert strip_text(text) == expected


def test_nested_private_blocks_never_leak_the_outer_content() -> None:
    assert strip_text("<private>a<private>b</private>LEAK</private>ok") == "ok"
    assert strip_text("<private>1<private>2<private>3</private>4</private>5</private>ok") == "ok"
    assert strip_text("x <private>a</private> <private>b</private> y") == "x   y"


@pytest.mark.parametrize("text", [
    "plain text without any tag",
    "comparisons: a < b and c > d, <div>html</div>, List<String>",
    "a <privateer>pirate</privateer> and <privacy>policy</privacy>",
    "a stray closer </private> is text",
    "a self-closing <private/> is not a block",
    "",
])
def test_text_without_our_tags_is_returned_unchanged(text: str) -> None:
    assert strip_text(text) == text


def test_tag_free_text_is_returned_as_the_same_object() -> None:
    big = "no tags here " * 10_000
    assert strip_text(big) is big
    html = "<div>" + "x" * 1000 + "</div>"
    assert strip_text(html) is html


def test_strip_value_walks_nested_json() -> None:
    value: dict[str, Any] = {
        "prompt": "fix it <private>token is hunter2</private> please",
        "tool_input": {"command": "echo hi", "list": ["a", "<system-reminder>r</system-reminder>b", 3, None, True]},
        "n": 1.5,
        "<private>keys are kept</private>": "v",
    }
    out = strip_value(value)
    assert out == {
        "prompt": "fix it  please",
        "tool_input": {"command": "echo hi", "list": ["a", "b", 3, None, True]},
        "n": 1.5,
        "<private>keys are kept</private>": "v",
    }
    assert value["prompt"].startswith("fix it <private>")  # the input is not mutated


@pytest.mark.parametrize(("text", "expected"), [
    ("<private>all of it</private>", True),
    ("  \n<private>a</private>\n<private>b</private>  ", True),
    ("<private>never closed", True),
    ("<private>a</private> but this is not", False),
    ("nothing private", False),
    ("", False),
    ("   ", False),
])
def test_is_entirely_private(text: str, expected: bool) -> None:
    assert is_entirely_private(text) is expected


# ----------------------------------------------------------------------------- redaction

A36 = "aB3dE5gH7jK9mN1pQ3sT5vW7yZ9bC2dF4gH6"  # 36 mixed characters, no word a detector knows
A40 = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLE12"
ALNUM24 = "Zx9Qw8Er7Ty6Ui5Op4As3Df2"

# (detector, text, the secret that must be gone)
POSITIVES: list[tuple[str, str, str]] = [
    ("pem_private_key",
     "key:\n-----BEGIN " + "RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA" + A36 + "\n" + A36 + "\n-----END RSA PRIVATE"
     + " KEY-----\nafter", "MIIEowIBAAKCAQEA"),
    ("pem_private_key",  # cut by truncation: redacted to the end
     "-----BEGIN " + "OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA" + A36, "b3BlbnNzaC1rZXktdjEAAAA"),
    ("aws_access_key", "export AWS_ID=" + "AKIA" + "IOSFODNN7Q2R4T6V", "AKIA" + "IOSFODNN7Q2R4T6V"),
    ("aws_secret_key", "aws_secret_access_key = " + A40, A40),
    ("github_token", "git clone https://x:" + "ghp_" + A36 + "@github.com/o/r", "ghp_" + A36),
    ("github_token", "GH=" + "github_pat_" + "11ABCDEFG0" + "_" + A36 + "x" * 20, "github_pat_11ABCDEFG0"),
    ("gitlab_token", "use " + "glpat-" + "Ab12Cd34Ef56Gh78Ij90" + " now", "glpat-Ab12Cd34Ef56Gh78Ij90"),
    ("anthropic_key", "ANTHROPIC=" + "sk-ant-" + "api03-" + A36 + "-" + A36, "api03-" + A36),
    ("openai_key", "client = OpenAI(api_key='" + "sk-" + "proj-" + A36 + "')", "proj-" + A36),
    ("slack_token", "SLACK " + "xoxb-" + "123456789012-1234567890123-" + ALNUM24, "xoxb-123456789012"),
    ("slack_webhook", "post to " + "https://hooks.slack.com/services/" + "T0A1B2C3D/B0E1F2G3H/" + ALNUM24,
     "T0A1B2C3D/B0E1F2G3H"),
    ("stripe_key", "stripe.api_key = \"" + "sk_" + "live_" + ALNUM24 + "\"", "live_" + ALNUM24),
    ("google_api_key", "maps?key=" + "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
     "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    ("npm_token", "//registry.npmjs.org/:_authToken " + "npm_" + A36, "npm_" + A36),
    ("pypi_token", "twine upload -p " + "pypi-" + "AgEIcHlwaS5vcmcCJD" + A36, "AgEIcHlwaS5vcmcCJD"),
    ("huggingface_token", "HF " + "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz12345678",
     "AbCdEfGhIjKlMnOpQrStUvWxYz12345678"),
    ("docker_token", "docker login -u me -p " + "dckr_pat_" + "A1b2C3d4E5f6G7h8I9j0K1l2", "A1b2C3d4E5f6G7h8I9j0K1l2"),
    ("jwt", "cookie " + "eyJhbGciOiJIUzI1NiJ9" + "." + "eyJzdWIiOiIxMjM0NTY3ODkwIn0" + "."
     + "dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk", "dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
    ("database_url_password", "DATABASE_URL=postgres://app:" + "S3cr3t-Pa55" + "@db.internal:5432/app", "S3cr3t-Pa55"),
    ("authorization_header", "curl -H 'Authorization: Basic " + "dXNlcjpwYXNzd29yZA==" + "' https://x",
     "dXNlcjpwYXNzd29yZA=="),
    ("bearer_token", "headers = {'X-Auth': 'Bearer " + "Qm9vdHN0cmFwVG9rZW4xMjM0NTY" + "'}",
     "Qm9vdHN0cmFwVG9rZW4xMjM0NTY"),
    ("password_assignment", "DB_PASSWORD=" + "hunter2hunter2", "hunter2hunter2"),
    ("password_assignment", '{"client_secret": "' + "q8W3e5R7t9Y1u3I5" + '"}', "q8W3e5R7t9Y1u3I5"),
    ("cli_password_flag", "mysql -u root --password " + "Tr0ub4dor-3x" + " app", "Tr0ub4dor-3x"),
]


def test_every_detector_has_a_positive_sample_and_an_anchor() -> None:
    assert {name for name, _, _ in POSITIVES} == set(detector_names())
    assert set(ANCHORS) == set(detector_names())


@pytest.mark.parametrize(("name", "text", "secret"), POSITIVES, ids=[f"{p[0]}-{i}" for i, p in enumerate(POSITIVES)])
def test_detector_redacts_its_secret(name: str, text: str, secret: str) -> None:
    out = Redactor().text(text)
    assert secret not in out, out
    assert f"[REDACTED:{name}]" in out, out
    assert MARKER.findall(out) == [name], out  # one marker, named after the detector that found it


def test_detector_keeps_the_text_around_the_secret() -> None:
    r = Redactor()
    assert (r.text("DB_PASSWORD=" + "hunter2hunter2" + " make run")
            == "DB_PASSWORD=[REDACTED:password_assignment] make run")
    assert (r.text("postgres://app:" + "S3cr3t-Pa55" + "@db:5432/x")
            == "postgres://app:[REDACTED:database_url_password]@db:5432/x")
    pem = "a\n-----BEGIN " + "EC PRIVATE KEY-----\n" + A36 + "\n-----END EC PRIVATE" + " KEY-----\nb"
    assert r.text(pem) == "a\n[REDACTED:pem_private_key]\nb"


# (the detector it resembles, text that is not a secret)
NEGATIVES: list[tuple[str, str]] = [
    ("pem_private_key", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8A\n-----END PUBLIC KEY-----"),
    ("pem_private_key", "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n"
                        "-----END CERTIFICATE-----"),
    ("aws_access_key", "AKIA is the prefix of AWS access key ids, e.g. AKIA1234 (truncated)"),
    ("aws_secret_key", "aws_secret_access_key = os.environ['AWS_SECRET_ACCESS_KEY']"),
    ("github_token", "tokens look like ghp_ followed by 36 characters; ghp_short1234 is not one"),
    ("gitlab_token", "a GitLab token starts with glpat- (see the docs)"),
    ("anthropic_key", "Anthropic keys start with sk-ant- and are long"),
    ("openai_key", "OpenAI keys start with sk- followed by random characters"),
    ("openai_key", "the task-skill risk-management-framework-document"),
    ("slack_token", "bot tokens start with xoxb- and user tokens with xoxp-"),
    ("slack_webhook", "see https://api.slack.com/messaging/webhooks for incoming webhooks"),
    ("stripe_key", "sk_test_ is how Stripe test keys begin; pk_live_ the public ones"),
    ("google_api_key", "Google API keys begin with AIza and are 39 characters long"),
    ("npm_token", "npm_config_registry=https://registry.npmjs.org/ npm_package_version=1.2.3"),
    ("pypi_token", "pip install --index-url https://pypi.org/simple pypi-simple"),
    ("huggingface_token", "path = hf_hub_download(repo_id='org/model', filename='config.json')"),
    ("docker_token", "personal access tokens are prefixed dckr_pat_ by Docker Hub"),
    ("jwt", "a JWT header such as eyJhbGciOiJIUzI1NiJ9 is only base64 of JSON"),
    ("jwt", "request 123e4567-e89b-12d3-a456-426614174000 failed at commit 3f9a1c2d4e5b6a7980c1d2e3f4a5b6c7d8e9f0a1"),
    ("database_url_password", "postgres://app@localhost:5432/db"),
    ("database_url_password", "see https://example.com:8443/docs/page?x=1 and http://user@example.com/path"),
    ("database_url_password", "<img src=\"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUl"
                              "EQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==\">"),
    ("authorization_header", "curl -H \"Authorization: Bearer $TOKEN\" https://api.example.com"),
    ("authorization_header", "Authorization: Bearer ${API_TOKEN}"),
    ("bearer_token", "Bearer tokens are described in RFC 6750 and are widely used"),
    ("password_assignment", "token = get_token()"),
    ("password_assignment", "password = os.environ[\"PW\"]"),
    ("password_assignment", "api_key = settings.api_key"),
    ("password_assignment", "self.api_key"),
    ("password_assignment", "self.api_key = api_key"),
    ("password_assignment", "client = Client(token=token, secret=secret)"),
    ("password_assignment", "password: ${DB_PASSWORD}"),
    ("password_assignment", "token=${GITHUB_TOKEN}"),
    ("password_assignment", "api_key: <your-api-key>"),
    ("password_assignment", "secret_key = None"),
    ("password_assignment", "password = \"changeme\""),
    ("password_assignment", "def get_api_key(self) -> str:"),
    ("password_assignment", "max_tokens: 4096000"),
    ("password_assignment", '{"input_tokens": 153421, "output_tokens": 2048}'),
    ("password_assignment", "keyboard=azerty123 and monkey = banana1234"),
    ("cli_password_flag", "gh auth login --token $GH_TOKEN"),
    ("cli_password_flag", "Use `--token $GH_TOKEN` for auth"),
    ("cli_password_flag", "docker login --password-stdin < ~/.docker-pass"),
    ("cli_password_flag", "docker run -p 8080:80 nginx"),
]


def test_every_detector_has_a_look_alike() -> None:
    assert {name for name, _ in NEGATIVES} == set(detector_names())


@pytest.mark.parametrize(("name", "text"), NEGATIVES, ids=[f"{n[0]}-{i}" for i, n in enumerate(NEGATIVES)])
def test_look_alikes_are_left_unchanged(name: str, text: str) -> None:
    assert Redactor().text(text) == text


@pytest.mark.parametrize("text", ["", "short", "pw=abc", "x" * 100_000])
def test_short_and_plain_text_is_returned_unchanged(text: str) -> None:
    assert Redactor().text(text) == text


def test_a_redacted_secret_keeps_the_name_of_the_detector_that_found_it() -> None:
    # The token inside a clone URL is also a URL password: the specific name must survive.
    out = Redactor().text("git clone https://x-access-token:" + "ghp_" + A36 + "@github.com/o/r.git")
    assert out == "git clone https://x-access-token:[REDACTED:github_token]@github.com/o/r.git"


def test_custom_patterns_run_first_and_are_named() -> None:
    r = Redactor(custom=[("employee_id", r"\bEMP-\d{6}\b"), ("internal_host", r"\b[a-z0-9]+\.corp\.example\b")])
    out = r.text("ask EMP-123456 on build01.corp.example about DB_PASSWORD=" + "hunter2hunter2")
    assert out == ("ask [REDACTED:employee_id] on [REDACTED:internal_host] about "
                   "DB_PASSWORD=[REDACTED:password_assignment]")


def test_disabled_detectors_do_not_run() -> None:
    text = "export AWS_ID=" + "AKIA" + "IOSFODNN7Q2R4T6V" + " DB_PASSWORD=" + "hunter2hunter2"
    out = Redactor(disabled=["aws_access_key"]).text(text)
    assert "AKIA" + "IOSFODNN7Q2R4T6V" in out
    assert "[REDACTED:password_assignment]" in out
    assert Redactor(disabled=detector_names()).text(text) == text


def test_value_redacts_nested_json_without_touching_other_types() -> None:
    payload = {"tool_input": {"command": "psql postgres://u:" + "S3cr3t-Pa55" + "@h/db"},
               "list": ["ok", "DB_PASSWORD=" + "hunter2hunter2", 7, None, False], "n": 1.0}
    out = Redactor().value(payload)
    assert out == {"tool_input": {"command": "psql postgres://u:[REDACTED:database_url_password]@h/db"},
                   "list": ["ok", "DB_PASSWORD=[REDACTED:password_assignment]", 7, None, False], "n": 1.0}


def test_redaction_is_idempotent() -> None:
    r = Redactor()
    for _name, text, _secret in POSITIVES:
        once = r.text(text)
        assert r.text(once) == once


def test_detectors_are_valid_regexes_with_their_secret_group() -> None:
    for name, pattern, group in DETECTORS:
        compiled = re.compile(pattern)
        assert 0 <= group <= compiled.groups, name


# --------------------------------------------------------------- false positives on real text


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _fixture_strings() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for path in sorted(FIXTURES.rglob("*")):
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        rel = str(path.relative_to(FIXTURES))
        if path.suffix == ".json":
            out += [(rel, s) for s in _strings(json.loads(text))]
        elif path.suffix == ".jsonl":
            out += [(rel, s) for line in text.splitlines() if line.strip() for s in _strings(json.loads(line))]
        else:
            out.append((rel, text))
    return out


def _hits(where: str, before: str, after: str) -> list[str]:
    return [f"{where}: …{after[max(0, m.start() - 50):m.end() + 20]!r}" for m in MARKER.finditer(after)
            if m.group(0) not in before]


def test_no_false_positives_on_real_claude_code_payloads() -> None:
    r = Redactor()
    strings = _fixture_strings()
    assert len(strings) > 1000  # the captures are really there
    hits = [h for where, s in strings for h in _hits(where, s, r.text(s))]
    print(f"\nfixture strings scanned: {len(strings)}, redactions: {len(hits)}")
    for h in hits:
        print("  ", h)
    assert hits == []


def test_few_false_positives_on_kennings_own_source() -> None:
    r = Redactor()
    files = sorted((REPO / "kenning").rglob("*.py"))
    assert len(files) > 20
    hits: list[str] = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        hits += _hits(str(path.relative_to(REPO)), text, r.text(text))
    print(f"\nsource files scanned: {len(files)}, redactions: {len(hits)}")
    for h in hits:
        print("  ", h)
    # Source code holds no secrets; what is flagged is prose like "secrets: nothing else …".
    assert len(hits) <= 3
