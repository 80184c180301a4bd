"""The four shapes a held-out red team found missing (issue 26), tested as classes, not as strings.

Each test is generated from the detector's own table or from a grid of forms, so it breaks when
one entry of the class does: every decoder fed a key (and fed ordinary text), every known call
given a literal in its secret's place (and a placeholder or a variable), every layout of a
command's output table, every phrase of "the password is" in any case and the languages we list.
Then the corpus samples of these classes go through real hook processes, and the spool is searched.
"""

from __future__ import annotations

import base64
import json
import random

import pytest

from kenning.privacy import calls, decoders, prose
from kenning.privacy.redact import Redactor
from tests.conftest import Home
from tests.security import files_containing, hook_json, tree_bytes
from tests.security.corpus import HEXL, LOOKALIKES, SECRETS, password, rnd
from tests.security.corpus import payload as corpus_payload

R = Redactor()
KEY = base64.b64encode(random.Random("classes-key").randbytes(32)).decode()
HEX_KEY = random.Random("classes-hex").randbytes(32).hex()
TEXT = base64.b64encode(b"Hello, world! This is an ordinary sentence, not a key.").decode()
HEX_TEXT = b"Hello, world! This is an ordinary sentence.".hex()


def marker(text: str) -> set[str]:
    out = R.text(text)
    return {part.split("]", 1)[0] for part in out.split("[REDACTED:")[1:]}


# ------------------------------------------------------------------------------ decoders

def shell_forms() -> list[tuple[str, bool]]:
    """Each decoding form of each shell decoder, written as a command line (hex for xxd)."""
    out = []
    for tool, forms in decoders.SHELL.items():
        for form in forms:
            out.append((f"{tool} {' '.join(form)}", tool == "xxd"))
    return out


@pytest.mark.parametrize(("decoder", "hexa"), shell_forms(), ids=[f for f, _h in shell_forms()])
def test_a_blob_piped_or_given_to_any_shell_decoder_is_judged_by_what_it_decodes_to(decoder: str, hexa: bool) -> None:
    key, text = (HEX_KEY, HEX_TEXT) if hexa else (KEY, TEXT)
    for line in (f"echo {key} | {decoder} > master.key", f"printf '%s' \"{key}\" | {decoder} -o out.bin",
                 f"{decoder} <<< '{key}' > k.bin", f"{decoder} > k.bin <<'EOF'\n{key[:40]}\n{key[40:]}\nEOF\n"):
        out = R.text(line)
        assert key not in out and key[:40] not in out, (decoder, out)
        assert "decoded_secret" in marker(line), line
    for line in (f"echo \"{key[:20]}\n{key[20:]}\" | {decoder} > k.bin",
                 f"echo {key[:20]} \\\n  {key[20:]} | {decoder}"):
        out = R.text(line)  # wrapped over two lines: in one pair of quotes, or continued with a backslash
        assert key[:20] not in out and key[20:] not in out, (decoder, out)
    for line in (f"echo {text} | {decoder}", f"{decoder} < notes.b64 > notes.txt", f"echo \"$BLOB\" | {decoder}",
                 f"echo {key[:12]} | {decoder}"):
        assert R.text(line) == line, line


@pytest.mark.parametrize("call", [*decoders.CALLS, "Base64.getDecoder().decode", "Base64.decode"])
def test_a_literal_given_to_any_decoding_call_is_judged_by_what_it_decodes_to(call: str) -> None:
    for quote in ('"', "'"):
        line = f"key = {call}({quote}{KEY}{quote})"
        assert KEY not in R.text(line) and "decoded_secret" in marker(line), line
        kept = f"msg = {call}({quote}{TEXT}{quote})"
        assert R.text(kept) == kept
    assert R.text(f"data = {call}(payload['content'])") == f"data = {call}(payload['content'])"
    node = f"const k = Buffer.from('{KEY}', 'base64');"
    assert KEY not in R.text(node)
    assert R.text(f"const t = Buffer.from('{TEXT}', 'base64');") == f"const t = Buffer.from('{TEXT}', 'base64');"


def test_what_a_blob_decodes_to_decides() -> None:
    """A service-account key's JSON, a user:password pair and a token are secrets; an image is not."""
    sa = json.dumps({"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\n" + rnd("cls-sa", 64)
                     + "\n-----END PRIVATE KEY-----\n"})
    for secret in (sa, "deploy:" + password("cls-pair"), rnd("cls-token", 40)):
        blob = base64.b64encode(secret.encode()).decode()
        assert blob not in R.text(f"echo {blob} | base64 -d > out"), secret[:20]
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + random.Random("cls-png").randbytes(64)).decode()
    assert R.text(f"echo {png} | base64 -d > logo.png") == f"echo {png} | base64 -d > logo.png"


# ------------------------------------------------------------------------------ calls

def call_text(callee: str, secret_value: str, *, placeholder: str | None = None) -> str:
    """A call of ``callee`` with its secret's positions holding ``secret_value`` (or ``placeholder``,
    written as is), the library it needs imported, the other positions ordinary literals."""
    positions, _kind, needs = calls.CALLS[callee]
    args = []
    for i in range(max(positions) + 1):
        if i in positions:
            args.append(placeholder if placeholder is not None else f'"{secret_value}"')
        else:
            args.append('"AC' + rnd("cls-sid", 32, HEXL) + '"' if i == 0 else f'"arg{i}.example"')
    head = "".join(f"import {w}\n" for w in needs[:1] if not w.startswith("@"))
    receiver = "" if "." in callee else "lib."
    return f"{head}x = {receiver}{callee}({', '.join(args)})\n"


@pytest.mark.parametrize("callee", sorted(calls.CALLS))
def test_every_known_call_gives_up_the_literal_in_its_secrets_place(callee: str) -> None:
    secret = rnd("cls-call-" + callee, 28)
    text = call_text(callee, secret)
    out = R.text(text)
    assert secret not in out, (callee, out)
    assert "call_argument" in marker(text), (callee, out)
    for kept in ("password", 'os.environ["SMTP_PASSWORD"]', '"<password>"', '"${SMTP_PASSWORD}"', '"changeme"',
                 '"********"', "settings.PASSWORD", '""'):
        text = call_text(callee, "", placeholder=kept)
        assert R.text(text) == text, (callee, kept)


def test_auth_pairs_give_up_their_second_member() -> None:
    p = password("cls-auth")
    for text in (f'requests.get(url, auth=("admin", "{p}"))', f"es = Elasticsearch(h, http_auth=('elastic', '{p}'))",
                 f'session.auth = ("svc", "{p}")', f'opts = {{"basic_auth": ["ci", "{p}"]}}'):
        assert p not in R.text(text), text
    for text in ("requests.get(url, auth=(user, token))", 'auth = ("admin", "<password>")', "if auth == (a, b):"):
        assert R.text(text) == text, text


# ------------------------------------------------------------------------------ output tables

@pytest.mark.parametrize("name", ["token", "Token", "client_token", "password", "secret", "api_key"])
def test_a_secret_in_a_command_output_tables_key_column(name: str) -> None:
    value = "s." + rnd("cls-table-" + name, 24)
    uuid = "3f9e1c72-5a4b-4d8e-9c61-" + rnd("cls-uuid-" + name, 12, HEXL)
    for row in (f"{name}                {value}", f"{name}\t{value}", f"│ {name}          │ {value} │",
                f"| {name} | {value} |", f"│ {name} │ {uuid} │"):
        text = f"Key                  Value\n---                  -----\n{row}\nrenewable            true\n"
        out = R.text(text)
        assert value not in out and uuid not in out, (name, row, out)
    for row in (f"{name}_duration       768h", f"{name}_renewable      false", f"{name}_policies       [\"default\"]",
                f"│ {name} │ ******** │", f"{name}    expired", f"{name}\t$VAULT_TOKEN"):
        assert R.text(row + "\n") == row + "\n", row


# ------------------------------------------------------------------------------ prose

# Phrases whose value may be a short mix ("pa55") or start with "$"; after "password:" or "password =" a
# value is an assignment's, where a bare identifier-like word is code (SECURITY.md, "Code that reads like code").
ENGLISH = ("the password is", "my password was", "pw is", "the passphrase is", "login with password is",
           "password is:", "PW WAS")
ASSIGNING = ("password:", "root password =", "Passphrase:")
FOREIGN = {"mot de passe": "est", "contraseña": "es", "senha": "é", "wachtwoord": "is", "kennwort": "ist",
           "passord": "er", "salasana": "on", "adgangskode": "er", "lösenord": "är", "hasło": "to",
           "пароль": ":", "密码": "是", "密碼": "是", "口令": "：", "パスワード": "は", "비밀번호": "는", "암호": ":",
           "şifre": ":", "κωδικός": "είναι", "סיסמה": ":", "كلمة المرور": ":", "mật khẩu": "là"}


def cases(phrase: str) -> list[str]:
    return sorted({phrase, phrase.upper(), phrase.capitalize(), phrase.title()})


@pytest.mark.parametrize("phrase", ENGLISH + ASSIGNING)
def test_a_password_typed_in_english_prose_in_any_case(phrase: str) -> None:
    for i, form in enumerate(cases(phrase)):
        values = [password(f"cls-{phrase}-{i}", 12), "$uperN0va#" + rnd(f"cls-dollar-{i}", 6)]
        if phrase in ENGLISH:
            values.append("pa55" + rnd(f"cls-short-{i}", 2, "0123456789"))
        for value in values:
            text = f"{form} {value} for the staging box"
            assert value not in R.text(text), text
        kept_values = ["********", "$PASSWORD", "<password>", "os.environ['DB_PASSWORD']"]
        if phrase in ENGLISH:  # (after "password:" a plain word is an assignment's value: taken, by design)
            kept_values += ["required", "incorrect", "bcrypt-hashed", "tulip", "12 characters long", "utf-8"]
        for kept in kept_values:
            text = f"{form} {kept}"
            assert R.text(text) == text, text


def test_the_foreign_words_are_the_first_looks_and_have_links() -> None:
    assert set(FOREIGN) == set(prose.PHRASES) - {"contrasena"}


@pytest.mark.parametrize(("phrase", "link"), sorted(FOREIGN.items()))
def test_a_password_typed_in_another_languages_prose(phrase: str, link: str) -> None:
    value = password("cls-" + phrase, 12)
    for form in cases(phrase):
        texts = [f"{form} {link} {value}", f"le {form} {link} {value} ok"]
        if link in prose.ATTACHED:
            texts.append(f"{form}{link}{value}")  # CJK: the particle or verb written onto the word
        for text in texts:
            out = R.text(text)
            assert value not in out, (text, out)
        for kept in (f"{form} {link} incorrect", f"{form} {link} ********", f"{form} {link} $PASSWORD"):
            assert R.text(kept) == kept, kept


# ------------------------------------------------------------------------------ through real hooks

CLASSES = ("decoder/", "call/", "table/", "prose/pr-", "prose/short")
CLASS_LOOKALIKES = ("decoder/", "call/", "table/", "prose/about-passwords", "hash/commits")


def test_the_class_samples_never_reach_the_spool_through_real_hooks(home: Home) -> None:
    """Every corpus sample of the four classes through a real hook process; the raw spool searched."""
    home.paths.ensure()
    chosen = [s for s in SECRETS if s.kind.startswith(CLASSES)]
    assert len(chosen) >= 40
    for i, sample in enumerate(chosen):
        body = corpus_payload(sample, sid=f"classes-{i}")
        body["cwd"] = str(home.project)
        hook_json(home.hook(body["hook_event_name"], body))
    spool = tree_bytes(home.paths.spool)
    assert len(spool) == len(chosen)
    for sample in chosen:
        for secret in sample.secrets:
            assert not files_containing(spool, secret), (sample.kind, sample.place)
    stored = b"".join(spool.values())
    for name in (b"decoded_secret", b"call_argument", b"password_assignment"):
        assert b"[REDACTED:" + name + b"]" in stored


def test_the_class_lookalikes_are_stored_unchanged_through_real_hooks(home: Home) -> None:
    home.paths.ensure()
    chosen = [s for s in LOOKALIKES if s.kind.startswith(CLASS_LOOKALIKES)]
    assert len(chosen) >= 20
    for i, sample in enumerate(chosen):
        body = corpus_payload(sample, sid=f"classes-la-{i}")
        body["cwd"] = str(home.project)
        hook_json(home.hook(body["hook_event_name"], body))
    spool = tree_bytes(home.paths.spool)
    assert len(spool) == len(chosen)
    assert not files_containing(spool, "[REDACTED:")


def test_a_foreign_password_deep_in_a_long_text_is_found() -> None:
    """The first look's shortcuts for texts that are not ASCII (a few such characters in code, a text
    mostly in another script) still reach a password stated far into it."""
    value = password("cls-deep", 12)
    chinese = "请帮我看看这个函数为什么报错，数据库连接一直失败。" * 200
    code = "def f(x):\n    return x  # → the next step…\n" * 300
    for text in (f"{chinese}\n数据库密码是{value}，谢谢", f"{code}\n# пароль: {value}\n",
                 f"{code}\nPASSWORT ist {value}"):
        out = R.text(text)
        assert value not in out, text[-60:]
    assert R.text(chinese) == chinese and R.text(code) == code


def test_legacy_vault_tokens_and_base64_service_account_keys_are_found_anywhere() -> None:
    """Two shapes of the red team's samples found by themselves, wherever they stand: a Vault token
    before 1.10 (``s.`` and 24 letters and digits) and a service-account key file as base64."""
    token = "s." + rnd("cls-legacy", 24)
    for text in (f"id                  {token}", f"export VAULT_TOKEN={token}", f"use {token} for now",
                 json.dumps({"auth": {"client_token": token}}), f"\\n{token}\\n"):
        assert token not in R.text(text), text
    for text in ("s.getItem('k')", "s." + "a" * 24, "s." + rnd("cls-legacy-short", 20), "s.ThisIsNotATokenAtAll",
                 "x = s." + rnd("cls-legacy", 24) + "_suffix"):
        assert R.text(text) == text, text
    sa = {"type": "service_account", "project_id": "acme", "private_key_id": rnd("cls-sa-kid", 40, HEXL),
          "private_key": "-----BEGIN PRIVATE KEY-----\n" + rnd("cls-sa-pk", 64) + "\n-----END PRIVATE KEY-----\n"}
    for dumped in (json.dumps(sa, indent=2), json.dumps(sa), json.dumps(sa, separators=(",", ":"))):
        blob = base64.b64encode(dumped.encode()).decode()
        for text in (f"GCP_SA_B64={blob}", f"  key.json: {blob}", f'{{"credentials": "{blob}"}}'):
            assert blob not in R.text(text), text
    public = base64.b64encode(json.dumps({"type": "service_account", "project_id": "acme"}).encode()).decode()
    assert R.text(f"SA_META={public}") == f"SA_META={public}"
