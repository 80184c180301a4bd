"""A corpus of realistic secrets where they occur in a coding session, and of look-alikes.

Every secret is synthetic and our own: random characters from a seeded generator, joined to
the published prefix or shape of its kind at run time, so this file holds no credential (and
no scanner mistakes it for a leak). Each sample is placed where it would really be met: a
prompt, a Bash command, a command's output, a file the agent reads, writes or edits, an MCP
tool's input or output. Look-alikes are what must stay: hashes, UUIDs, public keys, policy
constants, prose about secrets, ordinary code that handles them, references to secrets.

Measured through the hook's own path: :meth:`Redactor.payload` over a Claude Code payload.

    .venv/bin/python -m tests.security.corpus      # recall, false-positive rate, misses
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass, field
from typing import Any

from kenning.privacy import vendors
from kenning.privacy.redact import Redactor
from kenning.privacy.vendors import ALPHABETS

ALNUM = string.ascii_letters + string.digits
LOWER = string.ascii_lowercase + string.digits
UPPER = string.ascii_uppercase + string.digits
HEXL = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
BECH32 = "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"
SYMBOLS = "!#%&*+-=?@^_"
ALPHABETS_FOR_TESTS = {k: "".join(sorted(v)) for k, v in ALPHABETS.items()}


def rnd(tag: str, n: int, alphabet: str = ALNUM) -> str:
    """``n`` random characters, the same every run, different for every ``tag``."""
    rng = random.Random("kenning-corpus:" + tag)
    return "".join(rng.choice(alphabet) for _ in range(n))


def password(tag: str, n: int = 14) -> str:
    """A human-set password: letters, digits and a symbol or two."""
    rng = random.Random("kenning-pw:" + tag)
    core = [rng.choice(string.ascii_letters) for _ in range(n - 3)] + [rng.choice(string.digits) for _ in range(2)]
    core.append(rng.choice(SYMBOLS))
    rng.shuffle(core)
    if not core[0].isalpha():
        core.insert(0, rng.choice(string.ascii_letters))
    return "".join(core)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def pem(label: str, tag: str, lines: int = 6) -> str:
    body = "\n".join(rnd(f"{tag}{i}", 64, B64) for i in range(lines))
    return f"-----BEGIN {label}-----\n{body}\n{rnd(tag + 'end', 24, B64)}==\n-----END {label}-----"


@dataclass
class Sample:
    """One text placed somewhere in a session; ``secrets`` must not survive, a look-alike must not change."""

    kind: str
    place: str  # prompt, command, output, read, write, edit, mcp_input, mcp_output
    content: Any  # the text (or, for mcp_input, the tool input)
    secrets: tuple[str, ...] = ()
    path: str = ""
    command: str = ""
    tool: str = "mcp__tools__call"
    notes: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def payload(s: Sample, sid: str = "corpus-session") -> dict[str, Any]:
    """The Claude Code hook payload that carries the sample (shapes of the real CLI's payloads)."""
    base: dict[str, Any] = {"session_id": sid, "transcript_path": f"/home/dev/.claude/projects/-repo/{sid}.jsonl",
                            "cwd": "/home/dev/repo", "permission_mode": "bypassPermissions",
                            "prompt_id": "5f0c2a9e-1b7d-4c3e-9a8f-2d6b4e1c7a90"}
    if s.place == "prompt":
        return {**base, "hook_event_name": "UserPromptSubmit", "prompt": s.content}
    tool = {"hook_event_name": "PostToolUse", "tool_use_id": "toolu_01CorpusSample"}
    if s.place == "command":
        return {**base, **tool, "tool_name": "Bash", "tool_input": {"command": s.content, "description": "Run it"},
                "tool_response": {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}}
    if s.place == "output":
        return {**base, **tool, "tool_name": "Bash",
                "tool_input": {"command": s.command or f"cat {s.path}", "description": "Show it"},
                "tool_response": {"stdout": s.content, "stderr": "", "interrupted": False, "isImage": False}}
    if s.place == "read":
        lines = s.content.count("\n") + 1
        return {**base, **tool, "tool_name": "Read", "tool_input": {"file_path": s.path},
                "tool_response": {"type": "text", "file": {"filePath": s.path, "content": s.content,
                                                           "numLines": lines, "startLine": 1, "totalLines": lines}}}
    if s.place == "write":
        return {**base, **tool, "tool_name": "Write", "tool_input": {"file_path": s.path, "content": s.content},
                "tool_response": {"type": "create", "filePath": s.path, "content": s.content,
                                  "structuredPatch": [], "originalFile": None}}
    if s.place == "edit":
        old = s.extra.get("old", "# settings")
        return {**base, **tool, "tool_name": "Edit",
                "tool_input": {"file_path": s.path, "old_string": old, "new_string": s.content,
                               "replace_all": False},
                "tool_response": {"filePath": s.path, "oldString": old, "newString": s.content,
                                  "structuredPatch": [{"lines": ["-" + old, "+" + s.content]}],
                                  "userModified": False, "replaceAll": False}}
    if s.place == "mcp_input":
        return {**base, **tool, "tool_name": s.tool, "tool_input": s.content,
                "tool_response": [{"type": "text", "text": "ok"}]}
    if s.place == "mcp_output":
        return {**base, **tool, "tool_name": s.tool, "tool_input": s.extra.get("input", {}),
                "tool_response": [{"type": "text", "text": s.content}]}
    raise ValueError(s.place)


# ------------------------------------------------------------------------------ secrets

def _secrets() -> list[Sample]:
    S = Sample
    out: list[Sample] = []
    add = out.append

    # --- names that name a secret, in every syntax that assigns ----------------------------
    p = password("env1")
    add(S("name/env", "write", f"NODE_ENV=production\nDB_HOST=db.internal\nDB_PASSWORD={p}\n", (p,), path=".env"))
    p = password("env2")
    add(S("name/env", "read", f"SMTP_HOST=smtp.mailgun.org\nSMTP_USER=postmaster\nSMTP_PASS={p}\n", (p,),
          path="/srv/app/.env.production"))
    t = rnd("env3", 40)
    add(S("name/shell", "command", f"export API_TOKEN={t} && ./deploy.sh", (t,)))
    p = password("yaml1")
    add(S("name/yaml", "read", f"database:\n  host: db.internal\n  port: 5432\n  username: app\n  password: {p}\n",
          (p,), path="config/database.yml"))
    p = password("yaml2")
    add(S("name/yaml", "write", f"smtp:\n  credentials:\n    user: ops\n    passwd: \"{p}\"\n", (p,),
          path="deploy/values.yaml"))
    t = rnd("json1", 32, HEXL)
    add(S("name/json", "read", json.dumps({"service": {"name": "billing", "auth": {"apiKey": t}}}, indent=2), (t,),
          path="config/services.json"))
    p = password("ini1")
    add(S("name/ini", "read", f"[client]\nuser = root\npassword = {p}\nhost = 127.0.0.1\n", (p,), path="/root/.my.cnf"))
    t = rnd("toml1", 32)
    add(S("name/toml", "read", f"[registry]\ntoken = \"{t}\"\n", (t,), path="/home/dev/.cargo/credentials.toml"))
    t = rnd("py1", 48)
    add(S("name/python", "write", f"import acme\n\nclient = acme.Client(api_key=\"{t}\", timeout=30)\n", (t,),
          path="scripts/sync.py"))
    t = rnd("js1", 36, URLSAFE)
    add(S("name/js", "edit", f"const clientSecret = '{t}';\nexport default {{ clientSecret }};", (t,),
          path="src/auth/config.js"))
    p = password("prop1")
    add(S("name/properties", "read", f"spring.datasource.url=jdbc:postgresql://db:5432/app\n"
                                     f"spring.datasource.username=app\nspring.datasource.password={p}\n", (p,),
          path="src/main/resources/application-prod.properties"))
    p = password("xml1")
    add(S("name/xml", "read", f"<settings>\n  <servers>\n    <server>\n      <id>nexus</id>\n"
                              f"      <username>deploy</username>\n      <password>{p}</password>\n"
                              f"    </server>\n  </servers>\n</settings>\n", (p,), path="/home/dev/.m2/settings.xml"))
    p = password("nuget1")
    add(S("name/xml-attr", "read", f"<configuration>\n  <packageSourceCredentials>\n    <feed>\n"
                                   f"      <add key=\"Username\" value=\"ci\" />\n"
                                   f"      <add key=\"ClearTextPassword\" value=\"{p}\" />\n"
                                   f"    </feed>\n  </packageSourceCredentials>\n</configuration>\n", (p,),
          path="NuGet.Config"))
    p = password("hcl1")
    add(S("name/hcl", "write", f"resource \"aws_db_instance\" \"main\" {{\n  engine   = \"postgres\"\n"
                               f"  username = \"app\"\n  password = \"{p}\"\n}}\n", (p,), path="infra/db.tf"))
    p = password("php1")
    add(S("name/php", "read", f"<?php\ndefine('DB_NAME', 'wordpress');\ndefine('DB_USER', 'wp');\n"
                              f"define('DB_PASSWORD', '{p}');\n", (p,), path="/var/www/html/wp-config.php"))
    p = password("go1")
    add(S("name/go", "edit", f"cfg := Config{{\n\tUser:     \"svc\",\n\tPassword: \"{p}\",\n}}", (p,),
          path="cmd/server/main.go"))
    t = rnd("rails1", 128, HEXL)
    add(S("name/ruby", "read", f"Rails.application.configure do\n  config.secret_key_base = '{t}'\nend\n", (t,),
          path="config/environments/production.rb"))
    p = password("cs1")
    add(S("name/connection-string", "read",
          json.dumps({"ConnectionStrings": {"Default": f"Server=sql01;Database=app;User Id=sa;Password={p};"}},
                     indent=2), (p,), path="appsettings.Production.json"))
    p = password("compose1")
    add(S("name/compose", "read", f"services:\n  db:\n    image: postgres:16\n    environment:\n"
                                  f"      - POSTGRES_USER=app\n      - POSTGRES_PASSWORD={p}\n", (p,),
          path="docker-compose.yml"))
    p = password("k8senv1")
    add(S("name/name-value", "read", f"containers:\n  - name: api\n    env:\n      - name: DB_PASSWORD\n"
                                     f"        value: \"{p}\"\n", (p,), path="k8s/deployment.yaml"))
    t = rnd("gha1", 40)
    add(S("name/yaml-env", "write", f"jobs:\n  deploy:\n    runs-on: ubuntu-latest\n    env:\n"
                                    f"      DEPLOY_TOKEN: {t}\n", (t,), path=".github/workflows/deploy.yml"))
    p = password("tfvars1")
    add(S("name/tfvars", "read", f"region      = \"eu-west-1\"\ndb_password = \"{p}\"\n", (p,),
          path="envs/prod/terraform.tfvars"))
    t = rnd("npmrc1", 40)
    add(S("name/npmrc", "read", f"registry=https://npm.internal.example/\n//npm.internal.example/:_authToken={t}\n",
          (t,), path="/home/dev/.npmrc"))
    p = password("pypirc1")
    add(S("name/pypirc", "read", f"[distutils]\nindex-servers = internal\n\n[internal]\n"
                                 f"repository = https://pypi.internal.example/\nusername = ci\npassword = {p}\n",
          (p,), path="/home/dev/.pypirc"))
    a, k = "AKIA" + rnd("awscred-id", 16, UPPER), rnd("awscred-secret", 40, B64)
    add(S("name/aws-credentials", "read", f"[default]\naws_access_key_id = {a}\naws_secret_access_key = {k}\n"
                                          f"region = us-east-1\n", (a, k), path="/home/dev/.aws/credentials"))
    t = rnd("kube1", 52, LOWER)
    add(S("name/kubeconfig", "read", f"users:\n- name: ci\n  user:\n    token: {t}\n", (t,),
          path="/home/dev/.kube/config"))
    k = b64(rnd("wg1", 32).encode())
    add(S("name/wireguard", "read", f"[Interface]\nAddress = 10.0.0.2/24\nPrivateKey = {k}\n", (k,),
          path="/etc/wireguard/wg0.conf"))
    t = "django-insecure-" + rnd("dj1", 40, LOWER + "!@#$%^&*(-_=+)")
    add(S("name/python-settings", "read", f"DEBUG = False\nSECRET_KEY = '{t}'\nALLOWED_HOSTS = ['app.example.com']\n",
          (t,), path="mysite/settings/prod.py"))
    t = "base64:" + b64(rnd("laravel", 32).encode())
    add(S("name/env", "read", f"APP_NAME=Shop\nAPP_ENV=production\nAPP_KEY={t}\n", (t,), path="/srv/shop/.env"))
    t = rnd("flask1", 32, HEXL)
    add(S("name/python-dict", "edit", f"app.config['SECRET_KEY'] = '{t}'", (t,), path="app/__init__.py"))
    t = rnd("environ1", 48)
    add(S("name/python-environ", "command", f"python -c \"import os; os.environ['OPENAI_API_KEY'] = '{t}'\"", (t,)))
    t = rnd("slacksig", 32, HEXL)
    add(S("name/env", "prompt", f"add this to the env: SLACK_SIGNING_SECRET={t}", (t,)))
    t = rnd("twilio", 32, HEXL)
    add(S("name/env", "output", f"TWILIO_ACCOUNT_SID=AC{rnd('twsid', 32, HEXL)}\nTWILIO_AUTH_TOKEN={t}\n", (t,),
          command="heroku config -a shop"))
    t = rnd("dd1", 32, HEXL)
    add(S("name/env", "command", f"DD_API_KEY={t} datadog-agent run", (t,)))
    t = rnd("jwtsecret", 48, URLSAFE)
    add(S("name/yaml", "read", f"auth:\n  jwt_secret: \"{t}\"\n  jwt_ttl: 3600\n", (t,), path="config/auth.yaml"))
    t = rnd("enckey", 44, B64)
    add(S("name/code", "write", f"ENCRYPTION_KEY = \"{t}\"\n", (t,), path="app/crypto.py"))
    t = "1//0" + rnd("refresh", 100, URLSAFE)
    add(S("name/json", "read", json.dumps({"client_id": "1234-abc.apps.googleusercontent.com", "refresh_token": t,
                                           "type": "authorized_user"}, indent=2), (t,),
          path="/home/dev/.config/gcloud/application_default_credentials.json"))
    p = password("mongoroot")
    add(S("name/compose", "write", f"services:\n  mongo:\n    environment:\n      MONGO_INITDB_ROOT_USERNAME: root\n"
                                   f"      MONGO_INITDB_ROOT_PASSWORD: {p}\n", (p,), path="compose.yaml"))
    p = password("redis-env")
    add(S("name/shell", "command", f"docker run -d -e REDIS_PASSWORD={p} -p 6379:6379 bitnami/redis", (p,)))
    c1, c2 = rnd("cookie1", 32, HEXL), rnd("cookie2", 32)
    add(S("name/header", "command", f"curl -s https://app.example.com/api/me -H 'Cookie: sessionid={c1}; "
                                    f"csrftoken={c2}'", (c1, c2)))
    t = rnd("xapikey", 32)
    add(S("name/header", "command", f"curl -H \"X-API-Key: {t}\" https://api.example.com/v2/orders", (t,)))
    t = rnd("apim", 32, HEXL)
    add(S("name/header", "output", f"GET /translate HTTP/1.1\nHost: api.cognitive.example\n"
                                   f"Ocp-Apim-Subscription-Key: {t}\n", (t,), command="cat request.http"))
    t = rnd("whsecret", 40)
    add(S("name/env", "read", f"WEBHOOK_SECRET={t}\n", (t,), path="services/hooks/.env.local"))
    t = rnd("hmac1", 64, HEXL)
    add(S("name/code", "edit", f"HMAC_KEY = bytes.fromhex(\"{t}\")", (t,), path="app/signing.py"))
    t = rnd("pgpw-env", 16)
    add(S("name/shell", "command", f"PGPASSWORD={t} psql -h db.internal -U app -c 'select 1'", (t,)))
    t = rnd("auth-basic", 24)
    add(S("name/header", "read", "GET /v1/status HTTP/1.1\nHost: api.example.com\nAuthorization: Basic "
          + b64(f"svc:{t}".encode()) + "\n", (b64(f"svc:{t}".encode()),), path="tests/http/status.http"))
    t = rnd("bearer-hdr", 40, URLSAFE)
    add(S("name/header", "command", f"curl -H 'Authorization: Bearer {t}' https://api.example.com/v1/me", (t,)))
    t = rnd("camel1", 40)
    add(S("name/json", "output", json.dumps({"accessKeyId": "AKIA" + rnd("camel-id", 16, UPPER),
                                             "secretAccessKey": t, "sessionToken": rnd("camel-st", 300, B64)}),
          (t, "AKIA" + rnd("camel-id", 16, UPPER), rnd("camel-st", 300, B64)), command="aws sts assume-role …"))
    p = password("ruby-sym")
    add(S("name/ruby", "edit", f"Mail.defaults do\n  delivery_method :smtp, user_name: 'ops', password: '{p}'\nend",
          (p,), path="config/initializers/mail.rb"))
    t = rnd("query-token", 40)
    add(S("name/query", "output", f"GET https://api.example.com/export?format=csv&access_token={t} 200\n", (t,),
          command="tail -n1 logs/access.log"))
    p = password("jdbc1")
    add(S("name/jdbc", "write", f"url: jdbc:postgresql://db:5432/app?user=app&password={p}&ssl=true\n", (p,),
          path="conf/datasource.yml"))
    p = password("libpq1")
    add(S("name/libpq", "command", f"psql \"host=db.internal dbname=app user=app password={p} sslmode=require\"",
          (p,)))
    p = password("odbc1")
    add(S("name/odbc", "read", "DRIVER={ODBC Driver 18 for SQL Server};SERVER=sql01;UID=sa;PWD={" + p + "};\n",
          (p,), path="conf/odbc.txt"))
    p = password("mount1")
    add(S("name/mount", "command", f"sudo mount -t cifs //nas/share /mnt/share -o username=backup,password={p}",
          (p,)))
    p = password("ansible1")
    add(S("name/ansible", "command", f"ansible-playbook site.yml -e ansible_become_pass={p}", (p,)))
    p = password("javaprop")
    add(S("name/java-sysprop", "command", f"java -Djavax.net.ssl.keyStorePassword={p} -jar server.jar", (p,)))
    p = password("helmset")
    add(S("name/helm", "command", f"helm upgrade --install db bitnami/postgresql --set auth.password={p}", (p,)))
    p = password("tfvar-cli")
    add(S("name/terraform", "command", f"terraform apply -var 'admin_password={p}' -auto-approve", (p,)))
    p = password("gitlabvar")
    add(S("name/name-value", "output", json.dumps([{"key": "DEPLOY_PASSWORD", "value": p, "protected": True}]),
          (p,), command="glab variable list --output json"))

    # --- MCP tool input: structured fields at any depth ------------------------------------
    p = password("mcp1")
    add(S("mcp/field", "mcp_input", {"host": "db.internal", "user": "admin", "passwd": p}, (p,),
          tool="mcp__postgres__connect"))
    t = rnd("mcp2", 40, URLSAFE)
    add(S("mcp/header", "mcp_input", {"url": "https://api.example.com/v1/items", "method": "GET",
                                      "headers": {"Authorization": f"Bearer {t}"}}, (t,), tool="mcp__http__request"))
    t = rnd("mcp3", 32)
    add(S("mcp/header", "mcp_input", {"url": "https://api.example.com", "headers": {"X-Api-Key": t}}, (t,),
          tool="mcp__http__request"))
    p = password("mcp4")
    add(S("mcp/nested", "mcp_input", {"path": "secret/data/app", "data": {"db_password": p, "db_user": "app"}}, (p,),
          tool="mcp__vault__write"))
    a, k = "AKIA" + rnd("mcp5a", 16, UPPER), rnd("mcp5k", 40, B64)
    add(S("mcp/aws", "mcp_input", {"profile": "prod", "aws_access_key_id": a, "aws_secret_access_key": k}, (a, k),
          tool="mcp__aws__configure"))
    k = b64(pem("PRIVATE KEY", "mcp6").encode())
    add(S("mcp/k8s-secret", "mcp_input", {"manifest": {"apiVersion": "v1", "kind": "Secret",
                                                       "metadata": {"name": "tls"}, "type": "kubernetes.io/tls",
                                                       "data": {"tls.crt": b64(b"cert"), "tls.key": k}}}, (k,),
          tool="mcp__k8s__apply"))
    p = password("mcp7")
    add(S("mcp/nested", "mcp_input", {"to": "ops@example.com", "smtp": {"host": "smtp.example.com", "pass": p}}, (p,),
          tool="mcp__email__send"))
    t = rnd("mcp8", 40)
    add(S("mcp/field", "mcp_input", {"repo": "acme/api", "token": t}, (t,), tool="mcp__git__clone"))
    k = pem("OPENSSH PRIVATE KEY", "mcp9")
    add(S("mcp/private-key", "mcp_input", {"host": "bastion", "user": "ops", "private_key": k},
          (k.splitlines()[1],), tool="mcp__ssh__connect"))
    t = rnd("mcp10", 40, URLSAFE)
    add(S("mcp/nested", "mcp_input", {"provider": "okta", "credentials": {"client_id": "0oa1b2c3",
                                                                          "client_secret": t}}, (t,),
          tool="mcp__auth__configure"))
    t = rnd("mcp11", 40)
    add(S("mcp/name-value", "mcp_input", {"service": "api", "env": [{"name": "API_TOKEN", "value": t},
                                                                    {"name": "LOG_LEVEL", "value": "info"}]}, (t,),
          tool="mcp__ecs__register_task"))
    t = rnd("mcp12", 40, B64)
    add(S("mcp/camel", "mcp_input", {"region": "us-east-1", "secretAccessKey": t}, (t,), tool="mcp__s3__list"))
    p = password("mcp13")
    add(S("mcp/connection-string", "mcp_input", {"connection_string": f"Server=db;Database=app;User Id=sa;"
                                                                      f"Password={p};"}, (p,),
          tool="mcp__mssql__query"))
    p = "correct horse " + rnd("mcp14", 6, LOWER) + " staple"
    add(S("mcp/passphrase", "mcp_input", {"key_file": "~/.ssh/id_ed25519", "passphrase": p}, (p,),
          tool="mcp__ssh__add_key"))
    p = password("mcp15")
    add(S("mcp/nested", "mcp_input", {"auth": {"username": "u", "password": p}}, (p,), tool="mcp__registry__login"))
    t = rnd("mcp16", 40)
    add(S("mcp/field", "mcp_input", {"apiKey": t, "query": "open invoices"}, (t,), tool="mcp__billing__search"))
    p = "48" + rnd("mcp17", 4, string.digits)
    add(S("mcp/numeric-password", "mcp_input", {"device": "door-3", "password": int(p)}, (p,),
          tool="mcp__iot__unlock"))
    t = rnd("mcp18", 40)
    add(S("mcp/output", "mcp_output", json.dumps({"name": "ci-token", "token": t, "expires": "2027-01-01"}), (t,),
          tool="mcp__ci__create_token"))

    # --- connection strings and URLs --------------------------------------------------------
    p = password("url1")
    add(S("url/postgres", "command", f"psql postgres://app:{p}@db.internal:5432/app -c '\\dt'", (p,)))
    p = password("url2")
    add(S("url/mysql", "read", f"DATABASE_URL=mysql://shop:{p}@10.0.3.7:3306/shop\n", (p,), path=".env.staging"))
    p = password("url3")
    add(S("url/mongo", "output", f"MONGO_URI=mongodb+srv://svc:{p}@cluster0.ab1cd.mongodb.net/app?retryWrites=true\n",
          (p,), command="kubectl exec api -- env"))
    p = rnd("url4", 20)
    add(S("url/redis-no-user", "write", f"REDIS_URL=redis://:{p}@cache.internal:6379/0\n", (p,), path=".env"))
    p = password("url5")
    add(S("url/amqp", "prompt", f"the worker can't connect to amqp://jobs:{p}@mq.internal:5672/vhost, why?", (p,)))
    p = password("url6")
    add(S("url/https", "command", f"git clone https://deploy:{p}@git.internal.example/acme/api.git", (p,)))
    p = password("url7")
    add(S("url/smtp", "read", f"email:\n  url: smtp://alerts:{p}@smtp.example.com:587\n", (p,),
          path="config/alerts.yml"))
    t = rnd("url8", 32, HEXL)
    add(S("url/sentry-dsn", "read", f"SENTRY_DSN=https://{t}@o123456.ingest.sentry.io/4504\n", (t,),
          path="frontend/.env"))
    t = rnd("url9", 40)
    add(S("url/token-user", "command", f"git remote set-url origin https://{t}@github.com/acme/api.git", (t,)))
    k = b64(rnd("azure-acct", 64).encode())
    add(S("conn/azure-storage", "read",
          f"AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acmeprod;AccountKey={k};"
          f"EndpointSuffix=core.windows.net\n", (k,), path="functions/local.settings.env"))
    k = b64(rnd("azure-sb", 32).encode())
    add(S("conn/service-bus", "output",
          f"Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
          f"SharedAccessKey={k}\n", (k,), command="az servicebus namespace authorization-rule keys list …"))
    sig = rnd("sas1", 43, B64).replace("+", "%2B").replace("/", "%2F") + "%3D"
    add(S("url/sas", "prompt", "download https://acmeprod.blob.core.windows.net/backups/db.bak?sv=2022-11-02&ss=b"
          f"&srt=o&sp=r&se=2026-12-31T00:00:00Z&spr=https&sig={sig} and restore it", (sig,)))
    s1, s2 = rnd("presign", 64, HEXL), rnd("presign-tok", 200, B64)
    add(S("url/presigned", "output", "https://acme-exports.s3.amazonaws.com/report.csv?X-Amz-Algorithm=AWS4-HMAC-SHA256"
          f"&X-Amz-Credential=ASIA{rnd('presign-id', 16, UPPER)}%2F20261201%2Fus-east-1%2Fs3%2Faws4_request"
          f"&X-Amz-Date=20261201T120000Z&X-Amz-Expires=3600&X-Amz-Security-Token={s2}&X-Amz-Signature={s1}\n",
          (s1, s2, "ASIA" + rnd("presign-id", 16, UPPER)), command="aws s3 presign s3://acme-exports/report.csv"))
    p = password("ftp1")
    add(S("url/ftp", "command", f"curl -T backup.tgz ftp://backup:{p}@ftp.example.com/incoming/", (p,)))

    # --- passwords on command lines -----------------------------------------------------------
    p = password("mysql1")
    add(S("cli/mysql", "command", f"mysql -h db.internal -u root -p{p} shop < dump.sql", (p,)))
    p = password("mysql2")
    add(S("cli/mysql", "command", f"mysqldump -u backup --password={p} --all-databases > all.sql", (p,)))
    p = password("mysql3")
    add(S("cli/mysql", "command", f"mysql -uroot -p'{p}' -e 'show databases'", (p,)))
    p = password("docker1")
    add(S("cli/docker", "command", f"docker login -u ci -p {p} registry.example.com", (p,)))
    p = password("podman1")
    add(S("cli/podman", "command", f"podman login quay.io --username bot --password {p}", (p,)))
    p = password("helm1")
    add(S("cli/helm", "command", f"helm registry login registry.example.com -u ci -p {p}", (p,)))
    p = password("sshpass1")
    add(S("cli/sshpass", "command", f"sshpass -p '{p}' ssh -o StrictHostKeyChecking=no ops@10.0.0.12 uptime", (p,)))
    p = password("curl1")
    add(S("cli/curl", "command", f"curl -u admin:{p} https://jenkins.internal/api/json", (p,)))
    p = password("curl2")
    add(S("cli/curl", "command", f"curl --user 'deploy:{p}' -X POST https://nexus.internal/service/rest/v1/components",
          (p,)))
    t = "sk_live_" + rnd("curl3", 24)
    add(S("cli/curl", "command", f"curl https://api.stripe.com/v1/charges -u {t}:", (t,)))
    p = password("redis1")
    add(S("cli/redis", "command", f"redis-cli -h cache.internal -a {p} INFO keyspace", (p,)))
    p = password("sqlcmd1")
    add(S("cli/sqlcmd", "command", f"sqlcmd -S sql01 -U sa -P {p} -Q \"SELECT @@VERSION\"", (p,)))
    p = password("mongosh1")
    add(S("cli/mongo", "command", f"mongosh --host mongo.internal -u admin -p {p} --authenticationDatabase admin",
          (p,)))
    p = password("ldap1")
    add(S("cli/ldap", "command", f"ldapsearch -x -H ldap://ldap.internal -D 'cn=admin,dc=acme,dc=org' -w {p} uid=bob",
          (p,)))
    p = password("smb1")
    add(S("cli/smbclient", "command", f"smbclient //fs01/finance -U backup%{p} -c 'ls'", (p,)))
    p = password("zip1")
    add(S("cli/zip", "command", f"zip -r -P {p} export.zip reports/", (p,)))
    p = password("7z1")
    add(S("cli/7z", "command", f"7z x archive.7z -p{p} -o./out", (p,)))
    p = password("openssl1")
    add(S("cli/openssl", "command", f"openssl pkcs12 -export -in cert.pem -inkey key.pem -out bundle.p12 "
                                    f"-passout pass:{p}", (p,)))
    p = password("htpasswd1")
    add(S("cli/htpasswd", "command", f"htpasswd -bc /etc/nginx/.htpasswd admin {p}", (p,)))
    p = password("sqlplus1")
    add(S("cli/sqlplus", "command", f"sqlplus system/{p}@//db01:1521/ORCLPDB1 @migrate.sql", (p,)))
    p = password("kubectl1")
    add(S("cli/kubectl", "command", f"kubectl create secret generic db-creds --from-literal=username=app "
                                    f"--from-literal=password={p}", (p,)))
    t = rnd("fly1", 40)
    add(S("cli/fly", "command", f"fly secrets set STRIPE_WEBHOOK_KEY={t} SENTRY_ENV=prod -a shop", (t,)))
    t = rnd("ghsecret", 40)
    add(S("cli/gh", "command", f"gh secret set NPM_PUBLISH --body {t} --repo acme/web", (t,)))
    p = password("stdin1")
    add(S("cli/stdin", "command", f"echo '{p}' | docker login ghcr.io -u bot --password-stdin", (p,)))
    p = password("sudo1")
    add(S("cli/sudo", "command", f"echo {p} | sudo -S systemctl restart nginx", (p,)))
    p = password("keytool1")
    add(S("cli/keytool", "command", f"keytool -importkeystore -srckeystore a.p12 -srcstorepass {p} "
                                    f"-destkeystore b.jks -deststorepass {p}", (p,)))
    k = rnd("awsset", 40, B64)
    add(S("cli/aws-configure", "command", f"aws configure set aws_secret_access_key {k} --profile ci", (k,)))
    t = rnd("npmset", 36)
    add(S("cli/npm-config", "command", f"npm config set //npm.internal.example/:_authToken {t}", (t,)))
    p = password("wget1")
    add(S("cli/wget", "command", f"wget --user=ci --password={p} https://artifacts.internal/app.tgz", (p,)))
    p = password("netuser")
    add(S("cli/windows", "command", f"net user deploy {p} /add", (p,)))
    a, k = rnd("mc-ak", 20, UPPER), rnd("mc-sk", 40)
    add(S("cli/minio", "command", f"mc alias set prod https://s3.internal {a} {k}", (k,)))
    p = password("generic-flag")
    add(S("cli/flag", "command", f"./manage.py createsuperuser --username admin --password {p}", (p,)))
    t = rnd("generic-flag2", 40)
    add(S("cli/flag", "command", f"terraform login --token={t} app.terraform.io", (t,)))
    p = password("rabbit1")
    add(S("cli/rabbitmq", "command", f"rabbitmqctl add_user jobs {p}", (p,)))

    # --- vendor formats -----------------------------------------------------------------------
    vendor = [
        ("github", "ghp_" + rnd("v-ghp", 36), "output"), ("github", "github_pat_" + rnd("v-ghpat", 22) + "_" +
                                                           rnd("v-ghpat2", 59), "prompt"),
        ("github", "gho_" + rnd("v-gho", 36), "read"), ("github", "ghs_" + rnd("v-ghs", 36), "mcp_output"),
        ("gitlab", "glpat-" + rnd("v-glpat", 20, URLSAFE), "command"), ("gitlab", "glrt-" + rnd("v-glrt", 20), "read"),
        ("slack", "xoxb-" + rnd("v-xoxb1", 12, string.digits) + "-" + rnd("v-xoxb2", 13, string.digits) + "-"
         + rnd("v-xoxb3", 24), "write"),
        ("slack", "xoxp-" + rnd("v-xoxp1", 12, string.digits) + "-" + rnd("v-xoxp2", 12, string.digits) + "-"
         + rnd("v-xoxp3", 13, string.digits) + "-" + rnd("v-xoxp4", 32, HEXL), "prompt"),
        ("slack", "xapp-1-A0" + rnd("v-xapp1", 9, UPPER) + "-" + rnd("v-xapp2", 13, string.digits) + "-"
         + rnd("v-xapp3", 64, HEXL), "read"),
        ("slack", "xoxe.xoxp-1-" + rnd("v-xoxe1", 160, ALNUM), "output"),
        ("slack", "xoxe-1-" + rnd("v-xoxe2", 146, ALNUM), "output"),
        ("slack-webhook", "https://hooks.slack.com/services/T0" + rnd("v-sw1", 8, UPPER) + "/B0"
         + rnd("v-sw2", 8, UPPER)
         + "/" + rnd("v-sw3", 24), "read"),
        ("stripe", "sk_live_" + rnd("v-sk", 99), "write"), ("stripe", "rk_live_" + rnd("v-rk", 99), "prompt"),
        ("stripe", "whsec_" + rnd("v-whsec", 32), "read"),
        ("shopify", "shpat_" + rnd("v-shpat", 32, HEXL), "command"), ("shopify", "shpss_" + rnd("v-shpss", 32, HEXL),
                                                                      "read"),
        ("digitalocean", "dop_v1_" + rnd("v-dop", 64, HEXL), "output"),
        ("mailgun", "key-" + rnd("v-mailgun", 32, LOWER), "read"),
        ("linear", "lin_api_" + rnd("v-linear", 40), "mcp_input"),
        ("sendgrid", "SG." + rnd("v-sg1", 22, URLSAFE) + "." + rnd("v-sg2", 43, URLSAFE), "write"),
        ("vault", "hvs." + rnd("v-hvs", 90, URLSAFE), "command"),
        ("anthropic", "sk-ant-api03-" + rnd("v-ant", 93, URLSAFE) + "AA", "prompt"),
        ("openai", "sk-proj-" + rnd("v-oai", 156, URLSAFE), "read"),
        ("openai", "sk-" + rnd("v-oai-legacy1", 20) + "T3BlbkFJ" + rnd("v-oai-legacy2", 20), "output"),
        ("google", "AIza" + rnd("v-aiza", 35, URLSAFE), "read"), ("google", "GOCSPX-" + rnd("v-gocspx", 28, URLSAFE),
                                                                   "read"),
        ("google", "ya29." + rnd("v-ya29", 150, URLSAFE), "output"),
        ("aws", "AKIA" + rnd("v-akia", 16, UPPER), "prompt"), ("aws", "ASIA" + rnd("v-asia", 16, UPPER), "output"),
        ("npm", "npm_" + rnd("v-npm", 36), "read"), ("pypi", "pypi-AgEIcHlwaS5vcmc" + rnd("v-pypi", 70, URLSAFE),
                                                     "command"),
        ("huggingface", "hf_" + rnd("v-hf", 34), "command"), ("docker", "dckr_pat_" + rnd("v-dckr", 27, URLSAFE),
                                                              "command"),
        ("databricks", "dapi" + rnd("v-dapi", 32, HEXL), "read"), ("atlassian", "ATATT3xFfGF0" + rnd("v-atl", 180,
                                                                                                     URLSAFE), "read"),
        ("notion", "ntn_" + rnd("v-ntn", 46), "mcp_input"), ("postman", "PMAK-" + rnd("v-pmak1", 24, HEXL) + "-"
                                                             + rnd("v-pmak2", 34, HEXL), "read"),
        ("newrelic", "NRAK-" + rnd("v-nrak", 27, UPPER), "read"), ("sentry", "sntryu_" + rnd("v-sntry", 64, HEXL),
                                                                   "command"),
        ("grafana", "glsa_" + rnd("v-glsa1", 32) + "_" + rnd("v-glsa2", 8, HEXL), "read"),
        ("pulumi", "pul-" + rnd("v-pul", 40, HEXL), "command"), ("doppler", "dp.pt." + rnd("v-dp", 43), "output"),
        ("planetscale", "pscale_pw_" + rnd("v-pscale", 43, URLSAFE), "read"),
        ("supabase", "sbp_" + rnd("v-sbp", 40, HEXL), "command"), ("supabase", "sb_secret_" + rnd("v-sbs", 31, URLSAFE),
                                                                   "read"),
        ("vercel", "vcp_" + rnd("v-vcp", 56), "command"), ("tailscale", "tskey-auth-k" + rnd("v-ts1", 10) + "CNTRL-"
                                                          + rnd("v-ts2", 33), "read"),
        ("groq", "gsk_" + rnd("v-gsk", 52), "read"), ("xai", "xai-" + rnd("v-xai", 80), "write"),
        ("replicate", "r8_" + rnd("v-r8", 37), "command"), ("square", "sq0csp-" + rnd("v-sq", 43, URLSAFE), "read"),
        ("terraform", rnd("v-tfc1", 14) + ".atlasv1." + rnd("v-tfc2", 67, URLSAFE), "read"),
        ("azure-ad", rnd("v-aad1", 3) + "8Q~" + rnd("v-aad2", 34, URLSAFE + "~."), "output"),
        ("telegram", rnd("v-tg1", 10, string.digits) + ":AA" + rnd("v-tg2", 33, URLSAFE), "prompt"),
        ("discord-webhook", "https://discord.com/api/webhooks/" + rnd("v-dw1", 19, string.digits) + "/"
         + rnd("v-dw2", 68, URLSAFE), "read"),
        ("fly", "fo1_" + rnd("v-fo1", 43, URLSAFE), "command"),
        ("rubygems", "rubygems_" + rnd("v-gem", 48, HEXL), "read"),
        ("age", "AGE-SECRET-KEY-1" + rnd("v-age", 58, BECH32), "read"),
        ("jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9." + b64(json.dumps({"sub": rnd("v-jwt-sub", 8),
                                                                        "iat": 1767225600}).encode()).rstrip("=")
         + "." + rnd("v-jwt-sig", 43, URLSAFE), "output"),
    ]
    places_text = {
        "output": lambda v: (f"Created token:\n  {v}\n", "tool create-token"),
        "prompt": lambda v: (f"use this one: {v}", ""),
        "read": lambda v: (f"# do not commit\nintegration:\n  credential: \"{v}\"\n", "config/integration.yml"),
        "write": lambda v: (f"const client = new Client(\"{v}\");\n", "src/client.ts"),
        "command": lambda v: (f"./bin/sync --remote prod {v}", ""),
        "mcp_output": lambda v: (json.dumps({"result": {"value": v}}), ""),
        "mcp_input": lambda v: ({"config": {"value": v, "team": "core"}}, ""),
    }
    for kind, value, place in vendor:
        content, where = places_text[place](value)
        if place == "read":
            add(S("vendor/" + kind, place, content, (value,), path=where))
        elif place == "output":
            add(S("vendor/" + kind, place, content, (value,), command=where))
        elif place == "write":
            add(S("vendor/" + kind, place, content, (value,), path=where))
        else:
            add(S("vendor/" + kind, place, content, (value,)))

    # --- private blocks ------------------------------------------------------------------------
    for label, place, where in (("RSA PRIVATE KEY", "read", "/home/dev/.ssh/id_rsa"),
                                ("EC PRIVATE KEY", "output", "cat certs/server.key"),
                                ("PRIVATE KEY", "write", "certs/service.key"),
                                ("ENCRYPTED PRIVATE KEY", "read", "certs/enc.pem"),
                                ("OPENSSH PRIVATE KEY", "prompt", ""),
                                ("PGP PRIVATE KEY BLOCK", "output", "gpg --export-secret-keys --armor ops@acme")):
        block = pem(label, "pem-" + label)
        secret = block.splitlines()[2]
        if place == "read":
            add(S("private/" + label, place, block + "\n", (secret,), path=where))
        elif place == "output":
            add(S("private/" + label, place, block + "\n", (secret,), command=where))
        elif place == "write":
            add(S("private/" + label, place, block + "\n", (secret,), path=where))
        else:
            add(S("private/" + label, place, "why does ssh reject this key?\n" + block, (secret,)))
    pp = rnd("putty", 64, B64)
    add(S("private/putty", "read", "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ops\n"
                                   f"Public-Lines: 2\n{rnd('putty-pub', 64, B64)}\nAAAA\nPrivate-Lines: 1\n{pp}\n"
                                   f"Private-MAC: {rnd('putty-mac', 64, HEXL)}\n", (pp,), path="keys/ops.ppk"))
    k = b64(pem("RSA PRIVATE KEY", "k8s-tls").encode())
    add(S("private/base64-pem", "read", f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: oops\ndata:\n"
                                        f"  tls.key: {k}\n", (k,), path="k8s/misplaced.yaml"))
    d = rnd("jwk-d", 86, URLSAFE)
    add(S("private/jwk", "read", json.dumps({"keys": [{"kty": "RSA", "kid": "2026-12", "n": rnd("jwk-n", 342, URLSAFE),
                                                        "e": "AQAB", "d": d, "p": rnd("jwk-p", 171, URLSAFE)}]},
                                            indent=2), (d,), path="secrets/jwks.private.json"))

    # --- prose ---------------------------------------------------------------------------------
    p = rnd("prose1", 6, LOWER) + "42"
    add(S("prose/password", "prompt", f"the password is {p}, log in and check the dashboard", (p,)))
    t = rnd("prose2", 32)
    add(S("prose/api-key", "prompt", f"My API key is {t} — set it up in the config please", (t,)))
    p = password("prose3")
    add(S("prose/password", "prompt", f"db password for staging: {p}", (p,)))
    p = password("prose4")
    add(S("prose/password", "prompt", f"I changed the root password to {p} yesterday", (p,)))
    t = rnd("prose5", 40, HEXL)
    add(S("prose/token", "mcp_output", f"Your new access token was {t}. Store it safely.", (t,),
          tool="mcp__admin__rotate"))
    p = password("prose6")
    add(S("prose/password", "prompt", f"wifi password = \"{p}\"", (p,)))

    # --- credential files recognised by path, commands that print a secret ---------------------
    p = password("pgpass1")
    add(S("file/pgpass", "read", f"db.internal:5432:app:app_user:{p}\n*:*:*:replicator:{password('pgpass2')}\n",
          (p, password("pgpass2")), path="/home/dev/.pgpass"))
    p = password("netrc1")
    add(S("file/netrc", "read", f"machine api.heroku.com\n  login ops@acme.org\n  password {p}\n", (p,),
          path="/home/dev/.netrc"))
    p = password("netrc2")
    add(S("file/netrc", "output", f"machine artifacts.internal login ci password {p}\n", (p,), command="cat ~/.netrc"))
    t = "hvs." + rnd("vault-token-file", 24, URLSAFE)
    add(S("file/vault-token", "read", t + "\n", (t,), path="/home/dev/.vault-token"))
    t = rnd("docker-secret", 24)
    add(S("file/docker-secret", "output", t + "\n", (t,), command="cat /run/secrets/db_password"))
    a = b64(f"ci:{password('dockercfg')}".encode())
    add(S("file/docker-config", "read", json.dumps({"auths": {"registry.example.com": {"auth": a}}}, indent=2), (a,),
          path="/home/dev/.docker/config.json"))
    p = "Xk9#" + rnd("tfvars-any", 10) + "$q"
    add(S("file/tfvars", "read", f"environment = \"prod\"\nbreak_glass_value = \"{p}\"\ninstance_count = 3\n", (p,),
          path="envs/prod/secrets.auto.tfvars"))
    h = "$apr1$" + rnd("htp-salt", 8) + "$" + rnd("htp-hash", 22, B64.replace("+", "."))
    add(S("file/htpasswd", "read", f"admin:{h}\n", (h,), path="/etc/nginx/.htpasswd"))
    t = b64(password("jsonpath").encode())
    add(S("command/k8s-jsonpath", "output", t, (t,),
          command="kubectl get secret db-creds -o jsonpath='{.data.password}'"))
    t = rnd("echo-env", 40)
    add(S("command/echo-env", "output", t + "\n", (t,), command="echo $STRIPE_API_KEY"))
    t = rnd("vault-field", 32)
    add(S("command/vault", "output", t + "\n", (t,), command="vault kv get -field=password secret/app/db"))
    t = rnd("ecr", 200, B64)
    add(S("command/ecr", "output", t + "\n", (t,), command="aws ecr get-login-password --region us-east-1"))
    t = rnd("envfile-any", 32)
    add(S("file/env", "output", f"APP_ENV=prod\nSESSION_SIGNER={t}\n", (t,), command="cat .env"))

    # --- Kubernetes Secrets ---------------------------------------------------------------------
    u, p = b64(b"app"), b64(password("k8s1").encode())
    add(S("k8s/secret-yaml", "read", f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-creds\ntype: Opaque\n"
                                     f"data:\n  username: {u}\n  token: {p}\n", (p,), path="k8s/db-secret.yaml"))
    p = password("k8s2")
    add(S("k8s/string-data", "write", f"apiVersion: v1\nkind: Secret\nmetadata:\n  name: smtp\nstringData:\n"
                                      f"  SMTP_LOGIN: ops\n  SMTP_CODE: {p}\n", (p,), path="k8s/smtp.yaml"))
    p = b64(password("k8s3").encode())
    add(S("k8s/secret-json", "output", json.dumps({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "api"},
                                                   "data": {"apikey": p, "region": b64(b"eu")}}, indent=2), (p,),
          command="kubectl get secret api -o json"))

    out += _held_out_classes()
    return out


def _held_out_classes() -> list[Sample]:
    """Issue 26's held-out shapes as classes: a secret fed to a decoder, a secret passed by position to a
    known call, a token in a command's output table, a password typed in prose (any case, other languages)."""
    S = Sample
    out: list[Sample] = []
    add = out.append

    # --- a secret fed to a decoder ----------------------------------------------------------------
    sa = json.dumps({"type": "service_account", "project_id": "acme-prod", "private_key_id": rnd("sa-kid", 40, HEXL),
                     "private_key": pem("PRIVATE KEY", "sa-b64").replace("\n", "\\n") + "\n",
                     "client_email": "deployer@acme-prod.iam.gserviceaccount.com"}, indent=2)
    t = b64(sa.encode())
    add(S("decoder/shell", "command", f"echo {t} | base64 -d > /tmp/sa.json && gcloud auth activate-service-account "
                                      f"--key-file /tmp/sa.json", (t,)))
    t = b64(random.Random("dec-master").randbytes(32))
    add(S("decoder/shell", "command", f"base64 --decode <<< '{t}' > config/master.key", (t,)))
    t = b64(random.Random("dec-openssl").randbytes(48))
    add(S("decoder/openssl", "command", f"printf '%s' \"{t}\" | openssl base64 -d -A > signing.key", (t,)))
    t = base64.urlsafe_b64encode(random.Random("dec-fernet").randbytes(32)).decode()
    add(S("decoder/python", "write", f"import base64\n\nRAW = base64.urlsafe_b64decode(\"{t}\")\n", (t,),
          path="app/keys.py"))
    t = b64(json.dumps({"user": "svc-sync", "password": password("dec-atob")}).encode())
    add(S("decoder/js", "write", f"const creds = JSON.parse(atob(\"{t}\"));\n", (t,), path="web/sync.js"))
    t = random.Random("dec-xxd").randbytes(32).hex()
    add(S("decoder/xxd", "command", f"echo {t} | xxd -r -p > aes256.key", (t,)))
    raw = b64(random.Random("dec-heredoc").randbytes(96))
    lines = [raw[i:i + 64] for i in range(0, len(raw), 64)]
    add(S("decoder/heredoc", "read", "#!/bin/sh\nset -e\nbase64 -d > /etc/app/deploy.key <<'EOF'\n" + "\n".join(lines)
          + "\nEOF\nchmod 600 /etc/app/deploy.key\n", tuple(lines), path="scripts/bootstrap.sh"))
    t = b64(f"ci-bot:{password('dec-buffer')}".encode())
    add(S("decoder/node", "edit", f"const basic = Buffer.from('{t}', 'base64').toString();", (t,),
          path="src/registry.ts"))
    t = b64(random.Random("dec-go").randbytes(32))
    add(S("decoder/go", "edit", f"key, _ := base64.StdEncoding.DecodeString(\"{t}\")", (t,), path="internal/crypt.go"))
    wrapped = base64.encodebytes(sa.replace("acme-prod", "acme-stage").encode()).decode().split()  # 76 a line
    add(S("decoder/wrapped", "prompt", "restore the key with this:\necho \"" + "\n".join(wrapped)
          + "\" | base64 --decode > sa.json", tuple(wrapped)))
    wrapped = base64.encodebytes(random.Random("dec-cont").randbytes(90)).decode().split()
    add(S("decoder/continued", "command", "echo " + " \\\n  ".join(wrapped) + " | base64 -d > hmac.key",
          tuple(wrapped)))
    t = b64(sa.replace("acme-prod", "acme-ci").encode())
    add(S("decoder/standalone", "read", f"APP_ENV=ci\nGCP_SA_JSON_B64={t}\n", (t,), path="ci/settings.txt"))
    t = b64(rnd("dec-prompt", 40).encode())
    add(S("decoder/prompt", "prompt", f"decode this and save it: echo {t} | base64 --decode > ~/.config/app/token",
          (t,)))

    # --- a secret passed by position to a known call ---------------------------------------------------
    t = rnd("call-twilio", 32, HEXL)
    sid = "AC" + rnd("call-sid", 32, HEXL)
    add(S("call/twilio", "write", f"from twilio.rest import Client\n\nclient = Client(\"{sid}\", "
                                  f"\"{t}\")\n", (t,), path="notify/sms.py"))
    t = rnd("call-twilio-var", 32, HEXL)
    add(S("call/twilio", "edit", f"sms = Client(ACCOUNT_SID, \"{t}\")", (t,), path="notify/tasks.py"))
    t = rnd("call-twilio-node", 32, HEXL)
    add(S("call/twilio", "write", f"const client = require('twilio')('AC{rnd('call-sid2', 32, HEXL)}', '{t}');\n",
          (t,), path="src/sms.js"))
    p = password("call-yag")
    add(S("call/yagmail", "command", f"python -c \"import yagmail; yagmail.SMTP('ops@gmail.com', '{p}').send('x')\"",
          (p,)))
    p = password("call-smtp")
    add(S("call/smtplib", "edit", f"with smtplib.SMTP_SSL(\"smtp.gmail.com\", 465) as server:\n"
                                  f"    server.login(\"alerts@acme.io\", \"{p}\")", (p,), path="ops/alert.py"))
    p = password("call-ftp")
    add(S("call/ftplib", "read", f"ftp = FTP(\"ftp.acme.io\")\nftp.login(\"backup\", \"{p}\")\nftp.cwd(\"/in\")\n",
          (p,), path="jobs/upload.py"))
    p = password("call-imap")
    add(S("call/imaplib", "mcp_input", {"language": "python", "code": "imap = imaplib.IMAP4_SSL('imap.acme.io')\n"
                                                                      f"imap.login('ops', '{p}')\n"}, (p,),
          tool="mcp__sandbox__run"))
    p = password("call-pop")
    add(S("call/poplib", "command", f"python -c \"import poplib; m = poplib.POP3_SSL('pop.acme.io'); m.user('ops'); "
                                    f"m.pass_('{p}')\"", (p,)))
    p = password("call-requests")
    add(S("call/requests", "write", f"resp = requests.get(url, auth=(\"admin\", \"{p}\"), timeout=10)\n", (p,),
          path="tools/export.py"))
    p = password("call-jdbc")
    add(S("call/jdbc", "edit", f"Connection c = DriverManager.getConnection(\"jdbc:postgresql://db/app\", \"app\", "
                               f"\"{p}\");", (p,), path="src/main/java/Db.java"))
    p = password("call-go")
    add(S("call/go-smtp", "write", f"auth := smtp.PlainAuth(\"\", \"alerts@acme.io\", \"{p}\", \"smtp.acme.io\")\n",
          (p,), path="cmd/mailer/main.go"))
    p = password("call-paramiko")
    add(S("call/paramiko", "read", "ssh = paramiko.SSHClient()\n"
                                   "ssh.set_missing_host_key_policy(paramiko.AutoAddPolicy())"
                                   f"\nssh.connect(\"10.0.4.2\", 22, \"deploy\", \"{p}\")\n", (p,),
          path="fabfile.py"))
    p = password("call-pdo")
    add(S("call/php", "write", f"$pdo = new PDO(\"mysql:host=db;dbname=shop\", \"shop\", \"{p}\");\n", (p,),
          path="src/db.php"))
    p = password("call-ldap")
    add(S("call/ldap", "prompt", f"why does l.simple_bind_s('cn=admin,dc=acme,dc=org', '{p}') raise "
                                 f"INVALID_CREDENTIALS?", (p,)))
    k = rnd("call-boto", 40, B64)
    add(S("call/boto3", "edit", f"session = boto3.Session(\"AKIA{rnd('call-boto-id', 16, UPPER)}\", \"{k}\")", (k,),
          path="scripts/backup.py"))
    p = password("call-basic")
    add(S("call/basic-auth", "mcp_output", f"Suggested fix:\n    auth = HTTPBasicAuth('svc', '{p}')\n", (p,),
          tool="mcp__review__suggest"))

    # --- vendor tokens in a command's output table --------------------------------------------------------
    t = "s." + rnd("tab-vault", 24)
    add(S("table/vault-login", "output", "Success! You are now authenticated.\n\nKey                  Value\n"
                                         f"---                  -----\ntoken                {t}\n"
                                         f"token_accessor       {rnd('tab-acc', 24)}\ntoken_duration       768h\n"
                                         "token_renewable      true\ntoken_policies       [\"default\" \"ops\"]\n"
                                         "policies             [\"default\" \"ops\"]\ntoken_meta_username  ops\n", (t,),
          command="vault login -method=userpass username=ops"))
    t = "s." + rnd("tab-vault2", 24)
    add(S("table/vault-token", "output", "Key                  Value\n---                  -----\n"
                                         f"token                {t}\n"
                                         "token_duration       24h\ntoken_renewable      false\n", (t,),
          command="vault token create -policy=ci -ttl=24h"))
    t = "3f9e1c72-5a4b-4d8e-9c61-" + rnd("tab-npm", 12, HEXL)
    add(S("table/npm-token", "output", "┌────────────────┬──────────────────────────────────────┐\n"
                                       f"│ token          │ {t} │\n"
                                       "├────────────────┼──────────────────────────────────────┤\n"
                                       "│ readonly       │ false                                │\n"
                                       "│ created        │ 2026-12-04T10:11:12.000Z             │\n"
                                       "└────────────────┴──────────────────────────────────────┘\n", (t,),
          command="npm token create"))
    t = rnd("tab-md", 40)
    add(S("table/markdown", "output", "| field   | value |\n|---------|-------|\n| name    | ci-bot |\n"
                                      f"| Token   | {t} |\n",
          (t,), command="acme tokens create --format table"))
    t = "s." + rnd("tab-lookup", 24)
    add(S("table/vault-lookup", "output", "Key                 Value\n---                 -----\naccessor            "
                                          f"{rnd('tab-lookup-acc', 24)}\ndisplay_name        token\n"
                                          f"id                  {t}\n"
                                          "policies            [default]\nttl                 767h59m\n", (t,),
          command="vault token lookup"))
    t = "ya29." + rnd("tab-gcloud", 160, URLSAFE)
    add(S("table/gcloud", "output", t + "\n", (t,), command="gcloud auth print-access-token"))
    t = "-".join(rnd(f"tab-heroku{i}", n, HEXL) for i, n in enumerate((8, 4, 4, 4, 12)))
    add(S("table/heroku", "output", t + "\n", (t,), command="heroku auth:token"))
    k, st = rnd("tab-sts-k", 40, B64), rnd("tab-sts-t", 300, B64)
    add(S("table/aws-sts", "output", json.dumps({"Credentials": {"AccessKeyId": "ASIA" + rnd("tab-sts-id", 16, UPPER),
                                                                 "SecretAccessKey": k, "SessionToken": st,
                                                                 "Expiration": "2026-12-05T10:00:00Z"}}, indent=4),
          (k, st), command="aws sts get-session-token --duration-seconds 3600"))
    t = "gho_" + rnd("tab-gh", 36)
    add(S("table/gh", "output", t + "\n", (t,), command="gh auth token"))

    # --- a password typed in prose, any case, other languages ---------------------------------------------
    for tag, text_of, place in (
            ("pr-upper", "The PASSWORD IS {p} for the staging box", "prompt"),
            ("pr-dollar", "my old password was ${p}, try that first", "prompt"),
            ("pr-pw", "pw is {p}", "prompt"),
            ("pr-phrase", "Passphrase: {p}", "mcp_output"),
            ("pr-login", "login with password is {p} and user admin", "prompt"),
            ("pr-fr", "le mot de passe est {p} pour le wifi", "prompt"),
            ("pr-de", "das Passwort ist {p}", "prompt"),
            ("pr-es", "la contraseña es {p}", "prompt"),
            ("pr-pt", "a senha é {p}", "prompt"),
            ("pr-zh", "数据库密码是{p}，记得改", "prompt"),
            ("pr-ja", "パスワードは {p} です", "prompt"),
            ("pr-ru", "пароль: {p}", "prompt")):
        p = password(tag, 11)
        add(S("prose/" + tag, place, text_of.format(p=p), (p,)))
    p = "pa55" + rnd("pr-short", 2, string.digits)
    add(S("prose/short", "prompt", f"password was {p}", (p,)))
    return out


# --------------------------------------------------------------------------- look-alikes

def _lookalikes() -> list[Sample]:
    S = Sample
    out: list[Sample] = []
    add = out.append

    # hashes and ids
    add(S("hash/commit", "output", f"commit {rnd('la-c1', 40, HEXL)}\nAuthor: Dev <dev@example.com>\n\n    fix retry\n",
          command="git log -1"))
    add(S("hash/lockfile", "read", f"\"node_modules/left-pad\": {{\n  \"version\": \"1.3.0\",\n  \"resolved\": "
                                   f"\"https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz\",\n  \"integrity\": "
                                   f"\"sha512-{rnd('la-int', 86, B64)}==\"\n}}", path="package-lock.json"))
    add(S("hash/digest", "output", f"sha256:{rnd('la-dig', 64, HEXL)}",
          command="docker inspect --format '{{.Id}}' api"))
    add(S("hash/checksum", "read", f"{rnd('la-sum', 64, HEXL)}  kenning-1.0.0.tar.gz\n", path="SHA256SUMS"))
    add(S("hash/etag", "output", f"HTTP/2 200\netag: \"{rnd('la-etag', 32, HEXL)}\"\ncontent-type: text/html\n",
          command="curl -I https://example.com"))
    add(S("hash/md5", "command", f"echo {rnd('la-md5', 32, HEXL)} > .build-hash"))
    add(S("hash/pin", "read", f"    steps:\n      - uses: actions/checkout@{rnd('la-pin', 40, HEXL)} # v4\n",
          path=".github/workflows/ci.yml"))
    add(S("hash/code", "write", "digest = hashlib.sha256(password.encode()).hexdigest()\n", path="app/util.py"))
    add(S("code/edit", "edit", "    token = self._token or await self.refresh_token()\n", path="app/client.py",
          extra={"old": "    token = self._token"}))
    add(S("code/edit", "edit", "DB_PASSWORD = os.environ[\"DB_PASSWORD\"]\nAPI_KEY = env(\"API_KEY\", default=None)\n",
          path="app/settings.py", extra={"old": "DB_PASSWORD = None"}))
    add(S("id/uuid", "output", "request_id=3f2c9e4a-8b1d-4e6f-a2c3-9d8e7f6a5b4c status=500 path=/api/orders\n",
          command="grep 500 logs/app.log"))
    add(S("id/uuid-json", "mcp_output", json.dumps({"id": "0b8e5f2a-6c4d-4a1e-9f3b-7d2c1e0a9b8f", "state": "done"})))
    add(S("id/trace", "read", "trace_id: 4bf92f3577b34da6a3ce929d0e0e4736\nspan_id: 00f067aa0ba902b7\n",
          path="fixtures/trace.yaml"))
    add(S("id/arn", "read", "role_arn = \"arn:aws:iam::123456789012:role/deploy\"\nkms_key_id = "
                            "\"1234abcd-12ab-34cd-56ef-1234567890ab\"\n", path="infra/iam.tf"))
    add(S("id/secret-arn", "read",
          "db_secret_arn = \"arn:aws:secretsmanager:eu-west-1:123456789012:secret:prod/db-AbCdEf\"\n",
          path="infra/outputs.tf"))
    add(S("id/private-key-id", "read", json.dumps({"type": "service_account", "project_id": "acme-prod",
                                                   "private_key_id": rnd("la-pkid", 40, HEXL)}), path="sa-meta.json"))
    add(S("id/key-id", "mcp_input", {"key_id": "a3f1c2d4-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "action": "describe"}))
    add(S("id/idempotency", "write", "headers = {\"Idempotency-Key\": str(uuid.uuid4())}\n", path="app/pay.py"))

    # public keys and certificates
    add(S("public/ssh", "read", f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{rnd('la-ssh', 43, B64)} dev@laptop\n",
          path="/home/dev/.ssh/id_ed25519.pub"))
    add(S("public/ssh-rsa", "output", f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{rnd('la-rsa', 300, B64)} ops@bastion\n",
          command="cat ~/.ssh/authorized_keys"))
    add(S("public/pem", "read", pem("PUBLIC KEY", "la-pub") + "\n", path="keys/jwt-public.pem"))
    add(S("public/cert", "output", pem("CERTIFICATE", "la-cert") + "\n", command="openssl s_client -showcerts …"))
    add(S("public/age", "read", "# recipients\nage1" + rnd("la-age", 58, BECH32.lower()) + "\n",
          path=".sops/recipients.txt"))
    add(S("public/pgp", "read", pem("PGP PUBLIC KEY BLOCK", "la-pgp") + "\n", path="keys/release.asc"))
    add(S("public/stripe", "write", f"const stripe = Stripe('pk_live_{rnd('la-pk', 24)}');\n", path="web/checkout.js"))
    add(S("public/supabase", "read", f"NEXT_PUBLIC_SUPABASE_URL=https://abcd.supabase.co\n"
                                     f"NEXT_PUBLIC_SUPABASE_PUBLISHABLE_KEY=sb_publishable_{rnd('la-sbp', 30)}\n",
          path="web/.env.example"))
    add(S("public/jwk", "read", json.dumps({"keys": [{"kty": "RSA", "kid": "2026-12", "use": "sig", "e": "AQAB",
                                                        "n": rnd("la-jwkn", 342, URLSAFE)}]}, indent=2),
          path="public/.well-known/jwks.json"))
    add(S("public/known-hosts", "read", f"github.com ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAI"
                                        f"{rnd('la-kh', 120, B64)}=\n", path="/home/dev/.ssh/known_hosts"))

    # policy constants and settings that describe secrets
    add(S("policy/constants", "read", "PASSWORD_MIN_LENGTH = 12\nPASSWORD_MAX_AGE_DAYS = 90\nTOKEN_TTL_SECONDS = 3600\n"
                                      "SECRET_ROTATION_DAYS = 30\nMAX_LOGIN_ATTEMPTS = 5\n", path="app/policy.py"))
    add(S("policy/yaml", "read", "auth:\n  token_type: Bearer\n  token_endpoint: https://login.example.com/oauth2/token\n"
                                 "  auth_mode: oidc\n  password_policy: strong\n  secret_name: prod/api\n",
          path="config/auth.yaml"))
    add(S("policy/model", "read", "model: claude-sonnet-4-5\nmax_tokens: 4096\ntemperature: 0.2\n", path="agent.yaml"))
    add(S("policy/jwt", "write",
          "JWT_ALGORITHM = \"RS256\"\nKEY_ALGORITHM = \"RS256\"\nPASSWORD_HASHER = \"argon2id\"\n",
          path="app/security.py"))
    add(S("policy/header-name", "write", "API_KEY_HEADER = \"X-API-Key\"\nTOKEN_PREFIX = \"Bearer \"\n",
          path="app/headers.py"))
    add(S("policy/grant", "mcp_input", {"grant_type": "client_credentials", "scope": "read:orders", "audience": "api"}))
    add(S("policy/fetch", "write", "fetch(url, { credentials: 'include', mode: 'cors' })\n", path="web/api.ts"))
    add(S("policy/schema", "read", json.dumps({"type": "object", "properties": {
        "password": {"type": "string", "minLength": 12, "format": "password"},
        "token": {"type": "string", "description": "an API token"}}}, indent=2), path="schemas/login.json"))
    add(S("policy/tf-var", "read", "variable \"db_password\" {\n  type      = string\n  sensitive = true\n}\n",
          path="infra/variables.tf"))
    add(S("policy/session", "read",
          "SESSION_COOKIE_SECURE = True\nSESSION_COOKIE_AGE = 1209600\nCSRF_COOKIE_HTTPONLY = True\n",
          path="mysite/settings/base.py"))
    add(S("policy/k8s-ref", "read", "env:\n  - name: DB_PASSWORD\n    valueFrom:\n      secretKeyRef:\n"
                                    "        name: db-creds\n        key: password\n", path="k8s/deployment.yaml"))
    add(S("policy/configmap", "read", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n"
                                      "  LOG_LEVEL: debug\n  FEATURE_FLAGS: search,export\n",
          path="k8s/configmap.yaml"))
    add(S("policy/token-counts", "mcp_output", json.dumps({"usage": {"input_tokens": 153421, "output_tokens": 2048,
                                                                     "cache_read_input_tokens": 90000}})))
    add(S("policy/limits", "write", "RATE_LIMIT_TOKENS_PER_MINUTE = 40000\nTOKEN_BUCKET_SIZE = 100\n",
          path="app/limits.py"))

    # prose about secrets
    prose = [
        "Rotate the API key every 90 days and never commit it.",
        "The password must be at least 12 characters and include a digit.",
        "the token is valid for one hour, then the client refreshes it",
        "Store secrets in Vault, not in the repository.",
        "Why does the login page say the password is incorrect?",
        "Add a reset-password flow and a 'forgot password' link",
        "The secret key is read from the environment at startup.",
        "make sure the auth token is not logged anywhere",
        "Use a strong passphrase for the SSH key.",
        "Credentials are injected by the CI runner as environment variables.",
        "The key is the user id and the value is the session.",
        "If the token expired, the API answers 401 and we retry once.",
    ]
    for i, text in enumerate(prose):
        add(S("prose", "prompt" if i % 2 else "mcp_output", text))
    add(S("prose/docs", "read", "## Authentication\n\nPass your API key in the `X-API-Key` header. Keys start with "
                                "`sk_` and are shown once. If you lose the key, create a new one; the old password "
                                "reset link expires after 24 hours.\n", path="docs/auth.md"))

    # ordinary code that handles secrets
    code = [
        ("app/auth.py", "def verify_password(password: str, hashed: str) -> bool:\n"
                        "    return bcrypt.checkpw(password.encode(), hashed)\n"),
        ("app/views.py", "password = request.form[\"password\"]\nuser = authenticate(username, password)\n"),
        ("app/client.py", "token = self._token or get_token()\nheaders = {\"Authorization\": f\"Bearer {token}\"}\n"),
        ("app/cache.py", "key = cache_key(request)\nfor key, value in items.items():\n    store[key] = value\n"),
        ("app/config.py", "api_key = os.environ[\"API_KEY\"]\nsecret_key = settings.SECRET_KEY\n"),
        ("app/lexer.py", "token = tokens[i]\nnext_token = tokens[i + 1]\nif token.type == TokenType.STRING:\n"),
        ("web/auth.ts", "const token = await getToken();\nconst { password } = req.body;\n"),
        ("cmd/main.go", "token := os.Getenv(\"GITHUB_TOKEN\")\nif token == \"\" {\n\tlog.Fatal(\"no token\")\n}\n"),
        ("src/main.rs", "let api_key = std::env::var(\"API_KEY\")?;\nlet client = Client::new(&api_key);\n"),
        ("app/models.py", "class User(Model):\n    password_hash = CharField(max_length=128)\n"
                          "    api_key_id = UUIDField()\n"),
        ("app/secret.py", "self.secret = secret\nself.password = password\nself.token = None\n"),
        ("web/login.html", "<input type=\"password\" name=\"password\" autocomplete=\"current-password\">\n"),
        ("app/forms.py", "fields = [\"username\", \"password\", \"confirm_password\"]\n"),
        ("app/kw.py", "client = Client(token=token, secret=secret, api_key=api_key)\n"),
        ("scripts/gen.sh", "#!/bin/sh\nmkdir -p build\ndocker run -p 8080:80 nginx\nssh -p 2222 ops@host\n"),
        ("web/i18n/de.json", json.dumps({"login": {"password": "Passwort", "token": "Zugangstoken",
                                                   "secret": "Geheimnis"}})),
        ("app/types.py", "def connect(host: str, password: SecretStr, token: Optional[str] = None) -> Conn:\n"),
        ("app/tokenize.py", "tokenizer = AutoTokenizer.from_pretrained(name)\npad_token = \"<pad>\"\n"
                            "eos_token = \"</s>\"\n"),
        ("app/pg.py", "conn = psycopg.connect(host=host, password=password, dbname=db)\n"),
        ("Makefile", "deploy:\n\tdocker login -u $(REGISTRY_USER) -p $(REGISTRY_PASSWORD) $(REGISTRY)\n"),
    ]
    for path, text in code:
        add(S("code", "read" if len(out) % 2 else "write", text, path=path))

    # references, templates, placeholders
    refs = [
        (".env.example", "DB_PASSWORD=changeme\nAPI_KEY=your-api-key-here\nSECRET_KEY=\nJWT_SECRET=<replace-me>\n"),
        (".github/workflows/ci.yml", "env:\n  GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}\n"
                                     "  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}\n"),
        ("docker-compose.yml", "environment:\n  POSTGRES_PASSWORD: ${POSTGRES_PASSWORD}\n  API_TOKEN: $API_TOKEN\n"),
        ("config/app.yaml", "database:\n  password: \"{{ vault_db_password }}\"\n  token: !vault |\n"),
        ("values.yaml", "auth:\n  password: \"\"\n  existingSecret: db-creds\n"),
        ("README.md", "Set `OPENAI_API_KEY=sk-...` and `ANTHROPIC_API_KEY=sk-ant-...` before running.\n"),
        ("docs/setup.md", "export DB_PASSWORD=********\ncurl -H \"Authorization: Bearer $TOKEN\" https://api\n"),
        ("config/sops.yaml", "password: ENC[AES256_GCM,data:" + rnd("la-sops", 24, B64) + ",iv:" + rnd("la-iv", 16, B64)
         + ",type:str]\n"),
        ("app.tfvars", "db_password = var.db_password\nregion = \"eu-west-1\"\ninstance_type = \"t3.medium\"\n"),
        ("conf/redis.conf", "# requirepass foobared\nport 6379\nbind 127.0.0.1\n"),
    ]
    for path, text in refs:
        add(S("reference", "read", text, path=path))
    add(S("reference/cli", "command", "mysql -u root -p app < schema.sql"))
    add(S("reference/cli", "command", "docker login -u \"$CI_USER\" -p \"$CI_TOKEN\" registry.example.com"))
    add(S("reference/cli", "command", "curl -u \"$USER:$API_TOKEN\" https://api.example.com/v1"))
    add(S("reference/cli", "command", "echo \"$REGISTRY_PASSWORD\" | docker login ghcr.io -u bot --password-stdin"))
    add(S("reference/cli", "command", "gh auth login --with-token < ~/.config/gh-token"))
    add(S("reference/cli", "command", "kubectl get secrets -n prod"))
    add(S("reference/cli", "output", "NAME          TYPE     DATA   AGE\ndb-creds      Opaque   2      41d\n",
          command="kubectl get secrets -n prod"))

    # URLs without credentials, ordinary output
    urls = ["postgres://localhost:5432/app", "https://user@example.com/profile", "git@github.com:acme/api.git",
            "http://localhost:8080/api/v1/keys?page=2", "https://example.com/reset-password?token=",
            "ssh://git@git.internal:2222/acme/api.git", "https://host:8443/path@section"]
    for u in urls:
        add(S("url/plain", "output", f"fetching {u} ...\n", command="./fetch.sh"))
    add(S("data/base64", "mcp_output", json.dumps({"content": b64(b"Hello, world! This is a README file."),
                                                   "encoding": "base64"})))
    add(S("data/image", "read", "<img src=\"data:image/png;base64," + rnd("la-png", 120, B64) + "==\">\n",
          path="web/logo.html"))
    add(S("data/version", "output", "kenning 1.4.2 (python 3.11.7, sqlite 3.45.1)\n", command="kenning --version"))
    add(S("data/long-identifier", "write",
          "def test_redaction_can_be_turned_off_and_then_stores_the_text():\n    ...\n",
          path="tests/test_x.py"))
    add(S("data/env-dump", "output", "HOME=/home/dev\nPWD=/home/dev/repo\nSHELL=/bin/bash\nTERM=xterm-256color\n",
          command="env | head -4"))
    add(S("data/css", "write", ".btn { color: #1f6feb; background: #ffffff; }\n", path="web/app.css"))
    add(S("data/jwt-header", "prompt", "a JWT header such as eyJhbGciOiJIUzI1NiJ9 is only base64 of JSON"))
    add(S("data/ip", "output", "inet 10.0.3.7/24 brd 10.0.3.255 scope global eth0\n", command="ip a"))
    add(S("data/slug", "prompt", "rename the branch sk-2024-annual-report-final-v2 and the key-value-store module"))
    add(S("data/numbers", "read", "port: 5432\ntimeout_ms: 30000\nretries: 3\nversion: 1.2.3\n",
          path="config/db.yml"))
    add(S("data/claude-permission", "prompt", "why is permission_mode bypassPermissions in the payload?"))

    # the held-out classes' look-alikes: decoders of ordinary data, calls with variables and placeholders,
    # tables without a secret, prose about passwords, hashes
    add(S("decoder/text", "command", "echo aGVsbG8gd29ybGQK | base64 -d"))
    add(S("decoder/text", "command", "echo " + b64(b"Hello, world! This is a README file.") + " | base64 --decode"))
    add(S("decoder/file", "command", "base64 -d secrets.b64 > secrets.json && wc -c secrets.json"))
    add(S("decoder/variable", "command", "echo \"$SA_KEY_B64\" | base64 -d > /tmp/sa.json"))
    add(S("decoder/code", "write", "data = base64.b64decode(payload[\"content\"])\n", path="app/blobs.py"))
    add(S("decoder/image", "write", "LOGO = base64.b64decode(\"" + b64(b"\x89PNG\r\n\x1a\n" + bytes(range(96)))
          + "\")\n", path="app/logo.py"))
    add(S("decoder/hexdump", "output", "00000000: 4865 6c6c 6f2c 2077 6f72 6c64 0a         Hello, world.\n",
          command="xxd notes.txt"))
    add(S("call/variables", "edit", "server.login(user, password)\n", path="ops/alert.py",
          extra={"old": "server.login(USER, PASS)"}))
    add(S("call/environ", "write", "server.login(os.environ[\"SMTP_USER\"], os.environ[\"SMTP_PASSWORD\"])\n",
          path="ops/mail.py"))
    add(S("call/placeholder", "read", "```python\nserver.login(\"me@example.com\", \"<password>\")\n"
                                      "ftp.login(\"anonymous\", \"\")\n```\n", path="docs/mail.md"))
    add(S("call/variables", "write", "resp = requests.get(url, auth=(user, token))\nclient = Client(account_sid, "
                                     "auth_token)\nfn.bind(this, 'click')\n", path="app/clients.py"))
    add(S("call/keywords", "write", "client.login(username=user, password=settings.PASSWORD)\n", path="app/reg.py"))
    add(S("table/no-secret", "output", "Key                  Value\n---                  -----\n"
                                       "token_duration       768h\n"
                                       "token_renewable      true\ntoken_policies       [\"default\"]\n",
          command="vault token lookup -format=table"))
    add(S("table/box", "output", "│ readonly │ false │\n│ cidr_whitelist │ null │\n", command="npm token list"))
    add(S("table/short-s", "output", "s.getItem('x') and s.a1 are code; s.ThisIsNotAToken is prose\n",
          command="grep -rn 's\\.' src | head -1"))
    add(S("decoder/sa-public", "read", "SA_META_B64=" + b64(json.dumps({"type": "service_account", "project_id": "acme",
                                                                      "client_email": "ci@acme.iam.example"},
                                                                     indent=2).encode()) + "\n", path="ci/meta.txt"))
    for i, text in enumerate(("password is required", "the password: ********", "set the password is $PASSWORD",
                              "the password is os.environ['DB_PASSWORD']", "the password is <password>",
                              "the password is bcrypt-hashed and 12 characters long", "le mot de passe est incorrect",
                              "密码是必填项", "Password is e.g. hunter")):
        add(S("prose/about-passwords", "prompt" if i % 2 else "mcp_output", text))
    add(S("hash/commits", "output", "\n".join(f"{rnd(f'la-log{i}', 7, HEXL)} fix: retry {i}" for i in range(5))
          + f"\n{rnd('la-head', 40, HEXL)}\n", command="git log --oneline -5 && git rev-parse HEAD"))
    return out


def vendor_token(row: tuple[str, str, str, int, int, str], tag: str = "") -> str:
    """A token of a vendor row's format: its prefix, then its alphabet at its minimum length."""
    name, prefix, alpha, lo, _hi, flags = row
    body = rnd(f"{name}{prefix}{tag}", max(lo, 1), ALPHABETS_FOR_TESTS[alpha])
    if "m" in flags and not (any(c.isdigit() for c in body) and any(c.isalpha() for c in body)):
        body = "a1" + body[2:]
    return prefix + body[:-1] + "Z" if alpha in "dBbek" else prefix + body  # tokens do not end in '.', '-', '/'



STRUCTURAL_SAMPLES: dict[str, tuple[str, str]] = {
    "pem_private_key": (pem("RSA PRIVATE KEY", "u-pem") + "\n", rnd("u-pem1", 64, B64)),
    "jwt": ("cookie eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." + rnd("u-jwt", 43),
            rnd("u-jwt", 43)),
    "airtable_token": ("AIRTABLE=pat" + rnd("u-at1", 14) + "." + rnd("u-at2", 64, HEXL), rnd("u-at2", 64, HEXL)),
    "azure_client_secret": ("secret: " + rnd("u-az1", 3) + "8Q~" + rnd("u-az2", 34), rnd("u-az2", 34)),
    "terraform_token": ("tfe " + rnd("u-tf1", 14) + ".atlasv1." + rnd("u-tf2", 67), rnd("u-tf2", 67)),
    "telegram_token": ("bot " + rnd("u-tg1", 10, "0123456789") + ":AA" + rnd("u-tg2", 33), rnd("u-tg2", 33)),
    "kubernetes_secret": ("apiVersion: v1\nkind: Secret\ndata:\n  password: " + rnd("u-k8s", 24, B64) + "\n",
                          rnd("u-k8s", 24, B64)),
    "authorization_header": ("curl -H 'Authorization: Basic " + rnd("u-basic", 28) + "==' https://api",
                             rnd("u-basic", 28)),
    "bearer_token": ("headers = {'X-Upstream': 'Bearer " + rnd("u-bearer", 32) + "'}", rnd("u-bearer", 32)),
    "database_url_password": ("DATABASE_URL=postgres://app:" + password("u-url") + "@db:5432/app", password("u-url")),
    "url_signature": ("GET https://a.blob.core.windows.net/c/b?sv=2022-11-02&sig=" + rnd("u-sig", 43) + "%3D",
                      rnd("u-sig", 43)),
    "cli_password_flag": ("mysql -u root -p" + password("u-cli") + " shop", password("u-cli")),
    "password_assignment": ("SMTP_PASSWORD=" + password("u-pa"), password("u-pa")),
    "decoded_secret": ("echo " + b64(rnd("u-dec", 40).encode()) + " | base64 -d > token.txt",
                       b64(rnd("u-dec", 40).encode())),
    "call_argument": ("server.login(\"ops@example.com\", \"" + password("u-call") + "\")", password("u-call")),
}


def detector_samples() -> dict[str, tuple[str, str]]:
    """One sample per detector: the structural ones above and one token per vendor detector."""
    out = dict(STRUCTURAL_SAMPLES)
    for row in vendors.VENDORS:
        if row[0] not in out:
            tok = vendor_token(row)
            out[row[0]] = (f"use {tok} for it", tok)
    return out


SECRETS: list[Sample] = _secrets()
LOOKALIKES: list[Sample] = _lookalikes()


def _leaks(redacted: Any, secret: str) -> bool:
    text = json.dumps(redacted, ensure_ascii=False)
    escaped = json.dumps(secret, ensure_ascii=False)[1:-1]
    return secret in text or escaped in text


def _changed(before: Any, after: Any) -> list[str]:
    """The strings that redaction changed (as they came out)."""
    if isinstance(before, dict) and isinstance(after, dict):
        return [c for k in before for c in _changed(before[k], after.get(k))]
    if isinstance(before, list) and isinstance(after, list):
        return [c for b, a in zip(before, after, strict=False) for c in _changed(b, a)]
    return [] if before == after else [repr(after)]


def evaluate(redactor: Redactor | None = None) -> dict[str, Any]:
    """Recall over SECRETS, false-positive rate over LOOKALIKES, and what was missed or wrongly taken."""
    r = redactor or Redactor()
    total = caught = 0
    missed: list[tuple[str, str, str]] = []
    for s in SECRETS:
        out = r.payload(payload(s), "claude-code")
        for secret in s.secrets:
            total += 1
            if _leaks(out, secret):
                missed.append((s.kind, s.place, secret))
            else:
                caught += 1
    wrong: list[tuple[str, str, str]] = []
    for s in LOOKALIKES:
        original = payload(s)
        out = r.payload(original, "claude-code")
        if out != original:
            wrong.append((s.kind, s.place, "; ".join(_changed(original, out))[:300]))
    return {"secrets": total, "samples": len(SECRETS), "caught": caught, "recall": caught / total,
            "lookalikes": len(LOOKALIKES), "false_positives": len(wrong), "fp_rate": len(wrong) / len(LOOKALIKES),
            "missed": missed, "wrong": wrong}


def main() -> None:
    res = evaluate()
    print(f"secrets: {res['caught']}/{res['secrets']} redacted in {res['samples']} samples "
          f"(recall {res['recall']:.1%})")
    print(f"look-alikes: {res['false_positives']}/{res['lookalikes']} changed (false-positive rate "
          f"{res['fp_rate']:.1%})")
    for kind, place, secret in res["missed"]:
        print(f"  missed  {kind:28} {place:11} {secret[:60]}")
    for kind, place, out in res["wrong"]:
        print(f"  changed {kind:28} {place:11} {out}")


if __name__ == "__main__":
    main()
