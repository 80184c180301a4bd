"""Credentials recognised by their published format: a vendor prefix, an alphabet and a length.

Standard library only, no ``re``. Formats are the vendors' own (their docs, and the public
rule sets of secret scanners); the code and the table are ours. Each row is
``(detector, prefix, alphabet, min, max, flags)``: the prefix must start a token (the
character before it is not part of a token), then ``min``..``max`` characters of the alphabet
follow (``max`` 0: no upper bound). Flag ``m``: the rest must mix letters and digits (for
prefixes that also begin ordinary words, such as ``sk-`` or ``key-``); ``x``: a longer run
of the alphabet is a different thing, not this credential.

Finding them costs one pass in C: the text is cut into runs of token characters
(``bytes.translate`` + ``split``) and only runs that start with a known prefix are looked at.
"""

from __future__ import annotations

from kenning.privacy import quick

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
ALPHABETS: dict[str, frozenset[str]] = {
    "A": frozenset(_ALNUM),
    "a": frozenset("abcdefghijklmnopqrstuvwxyz0123456789"),
    "U": frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"),
    "h": frozenset("abcdef0123456789"),
    "H": frozenset("abcdefABCDEF0123456789"),
    "w": frozenset(_ALNUM + "_-"),
    "W": frozenset(_ALNUM + "_"),
    "d": frozenset(_ALNUM + "_-."),
    "b": frozenset(_ALNUM + "+/="),
    "B": frozenset(_ALNUM + "+/=_-"),
    "s": frozenset(_ALNUM + "-"),
    "e": frozenset(_ALNUM + "_-="),
    "x": frozenset("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"),  # bech32, upper case (age)
    "k": frozenset(_ALNUM + "-_/"),
}

# (detector, prefix, alphabet, min, max, flags)
VENDORS: tuple[tuple[str, str, str, int, int, str], ...] = (
    ("anthropic_key", "sk-ant-", "w", 20, 0, ""),
    ("openrouter_key", "sk-or-v1-", "h", 32, 0, ""),
    ("openai_key", "sk-proj-", "w", 20, 0, ""),
    ("openai_key", "sk-svcacct-", "w", 20, 0, ""),
    ("openai_key", "sk-admin-", "w", 20, 0, ""),
    ("openai_key", "sk-", "A", 32, 0, "m"),
    ("aws_access_key", "AKIA", "U", 16, 16, "x"),
    ("aws_access_key", "ASIA", "U", 16, 16, "x"),
    ("aws_access_key", "ABIA", "U", 16, 16, "x"),
    ("aws_access_key", "ACCA", "U", 16, 16, "x"),
    ("aws_access_key", "A3T", "U", 17, 17, "x"),
    ("github_token", "ghp_", "A", 30, 255, ""),
    ("github_token", "gho_", "A", 30, 255, ""),
    ("github_token", "ghu_", "A", 30, 255, ""),
    ("github_token", "ghs_", "A", 30, 255, ""),
    ("github_token", "ghr_", "A", 30, 255, ""),
    ("github_token", "github_pat_", "W", 40, 255, ""),
    ("gitlab_token", "glpat-", "d", 20, 0, ""),
    ("gitlab_token", "gldt-", "d", 20, 0, ""),
    ("gitlab_token", "glrt-", "d", 20, 0, ""),
    ("gitlab_token", "glcbt-", "d", 20, 0, ""),
    ("gitlab_token", "glptt-", "d", 20, 0, ""),
    ("gitlab_token", "glft-", "d", 20, 0, ""),
    ("gitlab_token", "glimt-", "d", 20, 0, ""),
    ("gitlab_token", "glagent-", "d", 20, 0, ""),
    ("gitlab_token", "gloas-", "d", 20, 0, ""),
    ("gitlab_token", "glsoat-", "d", 20, 0, ""),
    ("gitlab_token", "glffct-", "d", 20, 0, ""),
    ("gitlab_token", "GR1348941", "w", 20, 0, ""),
    ("slack_token", "xoxb-", "s", 16, 0, ""),
    ("slack_token", "xoxp-", "s", 16, 0, ""),
    ("slack_token", "xoxa-", "s", 16, 0, ""),
    ("slack_token", "xoxr-", "s", 16, 0, ""),
    ("slack_token", "xoxs-", "s", 16, 0, ""),
    ("slack_token", "xoxo-", "s", 16, 0, ""),
    ("slack_token", "xoxc-", "s", 16, 0, ""),
    ("slack_token", "xoxd-", "B", 16, 0, ""),
    ("slack_token", "xoxe.xoxb-", "s", 16, 0, ""),
    ("slack_token", "xoxe.xoxp-", "s", 16, 0, ""),
    ("slack_token", "xoxe-", "s", 16, 0, ""),
    ("slack_token", "xapp-", "s", 16, 0, ""),
    ("slack_webhook", "hooks.slack.com/services/", "k", 20, 0, ""),
    ("slack_webhook", "hooks.slack.com/workflows/", "k", 20, 0, ""),
    ("slack_webhook", "hooks.slack.com/triggers/", "k", 20, 0, ""),
    ("discord_webhook", "discord.com/api/webhooks/", "k", 30, 0, ""),
    ("discord_webhook", "discordapp.com/api/webhooks/", "k", 30, 0, ""),
    ("stripe_key", "sk_live_", "A", 16, 0, ""),
    ("stripe_key", "sk_test_", "A", 16, 0, ""),
    ("stripe_key", "sk_prod_", "A", 16, 0, ""),
    ("stripe_key", "rk_live_", "A", 16, 0, ""),
    ("stripe_key", "rk_test_", "A", 16, 0, ""),
    ("stripe_key", "rk_prod_", "A", 16, 0, ""),
    ("stripe_key", "whsec_", "A", 24, 0, ""),
    ("google_api_key", "AIza", "w", 35, 35, "x"),
    ("google_oauth", "ya29.", "d", 30, 0, ""),
    ("google_oauth", "GOCSPX-", "w", 24, 0, ""),
    ("npm_token", "npm_", "A", 36, 36, "x"),
    ("pypi_token", "pypi-", "w", 50, 0, ""),
    ("huggingface_token", "hf_", "A", 30, 0, "m"),
    ("huggingface_token", "api_org_", "A", 30, 0, "m"),
    ("docker_token", "dckr_pat_", "w", 20, 0, ""),
    ("docker_token", "dckr_oat_", "w", 20, 0, ""),
    ("shopify_token", "shpat_", "H", 32, 32, "x"),
    ("shopify_token", "shpca_", "H", 32, 32, "x"),
    ("shopify_token", "shppa_", "H", 32, 32, "x"),
    ("shopify_token", "shpss_", "H", 32, 32, "x"),
    ("digitalocean_token", "dop_v1_", "h", 64, 64, "x"),
    ("digitalocean_token", "doo_v1_", "h", 64, 64, "x"),
    ("digitalocean_token", "dor_v1_", "h", 64, 64, "x"),
    ("mailgun_key", "key-", "a", 32, 32, "mx"),
    ("mailgun_key", "pubkey-", "a", 32, 32, "mx"),
    ("linear_key", "lin_api_", "A", 32, 0, ""),
    ("linear_key", "lin_oauth_", "A", 32, 0, ""),
    ("sendgrid_key", "SG.", "d", 60, 0, "m"),
    ("sendinblue_key", "xkeysib-", "s", 64, 0, ""),
    ("sendinblue_key", "xsmtpsib-", "s", 64, 0, ""),
    ("vault_token", "hvs.", "w", 24, 0, ""),
    ("vault_token", "hvb.", "w", 24, 0, ""),
    ("vault_token", "hvr.", "w", 24, 0, ""),
    ("square_token", "sq0atp-", "w", 22, 0, ""),
    ("square_token", "sq0csp-", "w", 40, 0, ""),
    ("square_token", "EAAA", "w", 60, 0, ""),
    ("facebook_token", "EAAC", "A", 90, 0, ""),
    ("facebook_token", "EAAM", "A", 90, 0, ""),
    ("databricks_token", "dapi", "h", 32, 32, "mx"),
    ("atlassian_token", "ATATT3", "e", 100, 0, ""),
    ("atlassian_token", "ATCTT3", "e", 100, 0, ""),
    ("atlassian_token", "ATBB", "A", 28, 0, "m"),
    ("notion_token", "ntn_", "A", 40, 0, ""),
    ("notion_token", "secret_", "A", 43, 43, "mx"),
    ("postman_key", "PMAK-", "s", 50, 0, ""),
    ("newrelic_key", "NRAK-", "U", 27, 27, "x"),
    ("newrelic_key", "NRII-", "s", 32, 0, ""),
    ("newrelic_key", "NRJS-", "h", 19, 19, "x"),
    ("sentry_token", "sntryu_", "h", 64, 64, "x"),
    ("sentry_token", "sntrys_", "b", 60, 0, ""),
    ("grafana_token", "glc_", "b", 32, 0, ""),
    ("grafana_token", "glsa_", "W", 40, 0, ""),
    ("grafana_token", "eyJrIjoi", "b", 60, 0, ""),
    ("pulumi_token", "pul-", "h", 40, 40, "x"),
    ("doppler_token", "dp.pt.", "A", 40, 0, ""),
    ("doppler_token", "dp.st.", "d", 40, 0, ""),
    ("doppler_token", "dp.sa.", "A", 40, 0, ""),
    ("doppler_token", "dp.ct.", "A", 40, 0, ""),
    ("doppler_token", "dp.scim.", "A", 40, 0, ""),
    ("doppler_token", "dp.audit.", "A", 40, 0, ""),
    ("planetscale_token", "pscale_tkn_", "d", 32, 0, ""),
    ("planetscale_token", "pscale_pw_", "d", 32, 0, ""),
    ("planetscale_token", "pscale_oauth_", "d", 32, 0, ""),
    ("supabase_key", "sbp_", "h", 40, 0, ""),
    ("supabase_key", "sb_secret_", "w", 20, 0, ""),
    ("vercel_token", "vcp_", "A", 20, 0, ""),
    ("vercel_token", "vci_", "A", 20, 0, ""),
    ("vercel_token", "vca_", "A", 20, 0, ""),
    ("vercel_token", "vcr_", "A", 20, 0, ""),
    ("vercel_token", "vck_", "A", 20, 0, ""),
    ("tailscale_key", "tskey-", "w", 20, 0, "m"),
    ("groq_key", "gsk_", "A", 40, 0, ""),
    ("xai_key", "xai-", "A", 60, 0, ""),
    ("perplexity_key", "pplx-", "A", 40, 0, ""),
    ("replicate_token", "r8_", "A", 30, 0, "m"),
    ("pinecone_key", "pcsk_", "w", 40, 0, ""),
    ("langsmith_key", "lsv2_pt_", "w", 30, 0, ""),
    ("langsmith_key", "lsv2_sk_", "w", 30, 0, ""),
    ("rubygems_token", "rubygems_", "h", 48, 48, "x"),
    ("nuget_key", "oy2", "a", 43, 43, "mx"),
    ("crates_token", "cio", "A", 32, 32, "mx"),
    ("clojars_token", "CLOJARS_", "A", 60, 60, "x"),
    ("artifactory_token", "AKCp", "A", 60, 0, ""),
    ("artifactory_token", "cmVmdGtuOjAxOj", "A", 40, 0, ""),
    ("dynatrace_token", "dt0c01.", "d", 80, 0, ""),
    ("easypost_key", "EZAK", "A", 54, 54, "x"),
    ("easypost_key", "EZTK", "A", 54, 54, "x"),
    ("flutterwave_key", "FLWSECK_TEST-", "s", 12, 0, ""),
    ("flutterwave_key", "FLWSECK-", "s", 12, 0, ""),
    ("frameio_token", "fio-u-", "e", 60, 0, ""),
    ("fly_token", "fo1_", "w", 40, 0, ""),
    ("fly_token", "fm1r_", "b", 60, 0, ""),
    ("fly_token", "fm1a_", "b", 60, 0, ""),
    ("fly_token", "fm2_", "b", 60, 0, ""),
    ("infracost_key", "ico-", "A", 32, 32, "mx"),
    ("prefect_key", "pnu_", "A", 36, 36, "x"),
    ("readme_key", "rdme_", "a", 70, 70, "x"),
    ("scalingo_token", "tk-us-", "w", 48, 48, "x"),
    ("shippo_token", "shippo_live_", "H", 40, 40, "x"),
    ("shippo_token", "shippo_test_", "H", 40, 40, "x"),
    ("typeform_token", "tfp_", "d", 50, 0, ""),
    ("mapbox_token", "sk.eyJ", "d", 60, 0, ""),
    ("heroku_key", "HRKU-", "w", 50, 0, ""),
    ("onepassword_token", "ops_eyJ", "b", 100, 0, ""),
    ("age_secret_key", "AGE-SECRET-KEY-1", "x", 58, 58, ""),
    ("cloudflare_key", "v1.0-", "s", 170, 0, ""),
    ("alibaba_key", "LTAI", "A", 20, 20, "mx"),
    ("razorpay_key", "rzp_live_", "A", 14, 0, ""),
    ("razorpay_key", "rzp_test_", "A", 14, 0, ""),
    ("netlify_token", "nfp_", "A", 30, 0, ""),
    ("render_key", "rnd_", "A", 24, 0, "m"),
    ("buildkite_token", "bkua_", "h", 40, 40, "x"),
    ("circleci_token", "CCIPAT_", "w", 30, 0, ""),
    ("sourcegraph_token", "sgp_", "w", 40, 0, ""),
    ("figma_token", "figd_", "w", 30, 0, ""),
    ("contentful_token", "CFPAT-", "w", 40, 0, ""),
    ("harness_token", "pat.", "d", 60, 0, "m"),
    ("harness_token", "sat.", "d", 60, 0, "m"),
    ("duffel_token", "duffel_live_", "e", 40, 0, ""),
    ("duffel_token", "duffel_test_", "e", 40, 0, ""),
    ("openshift_token", "sha256~", "w", 43, 43, "x"),
    ("adobe_secret", "p8e-", "A", 32, 32, "mx"),
    ("authress_key", "authress_", "d", 40, 0, "m"),
)

RUN_CHARS = frozenset(_ALNUM + "_.-")
_RUN_MAP = quick._RUN_MAP
# Base64 bodies (Grafana's eyJrIjoi…, base64-wrapped PEM) may hold + / = early: a second, wider cut.
_B64_MAP = bytes.maketrans(b"+/=", b"aaa").translate(_RUN_MAP)
B64_HEADS = ("eyJ", "LS0", "cmV")
_WORD_MAP = quick._WORD_MAP
LONG = 20  # every prefix-less-separator credential is at least this long
_LONG_RUN = b"a" * LONG

Row = tuple[str, str, str, int, int, str]


def _lead(prefix: str) -> str:
    for i, c in enumerate(prefix):
        if not (c.isascii() and c.isalnum()):
            return prefix[:i]
    return prefix


def _index() -> tuple[dict[bytes, list[Row]], dict[str, list[Row]]]:
    """Rows by the word their prefix starts with (``sk`` of ``sk-ant-``), or by their first three
    characters when the prefix has no separator (``AKIA``: the credential is one long word)."""
    by_lead: dict[bytes, list[Row]] = {}
    solid: dict[str, list[Row]] = {}
    for row in VENDORS:
        prefix = row[1]
        lead = _lead(prefix)
        if lead != prefix:
            by_lead.setdefault(lead.encode(), []).append(row)
        else:
            solid.setdefault(prefix[:3], []).append(row)
    return by_lead, solid


BY_LEAD, SOLID = _index()
# A JSON-escaped text reads ``\\nghp_…``: the word is ``nghp``, the token still starts after the escape.
LEADS = frozenset(BY_LEAD) | {b"PuTTY", b"untrusted"} | {c + lead for lead in BY_LEAD for c in (b"n", b"t", b"r")}
SOLID_EXTRA = ("eyJ", "pat", "LS0", "ewo")  # JWTs, Airtable tokens, base64-wrapped PEM and service-account keys
# A Google service-account key file as base64 (pretty-printed, compact, compact with a space): its JSON
# always opens with "type": "service_account".
SERVICE_ACCOUNT_B64 = ("ewogICJ0eXBlIjogInNlcnZpY2VfYWNjb3VudCIs", "eyJ0eXBlIjoic2VydmljZV9hY2NvdW50Ii",
                       "eyJ0eXBlIjogInNlcnZpY2VfYWNjb3VudCI")


def detector_names() -> list[str]:
    seen: list[str] = []
    for r in VENDORS:
        if r[0] not in seen:
            seen.append(r[0])
    return seen


def prepare(text: str) -> bytes:
    """One byte per character (non-ASCII becomes ``?``), so positions in it are positions in ``text``."""
    return text.encode("ascii", "replace")


def words(data: bytes) -> list[bytes]:
    """The alphanumeric words of the text (C: ``translate`` + ``split``)."""
    return data.translate(_WORD_MAP).split()


def boundary_before(text: str, i: int) -> bool:
    """True when the token at ``i`` is not the tail of a longer word (``\\n`` escapes count as a break)."""
    if i == 0:
        return True
    c = text[i - 1]
    if c in RUN_CHARS:
        return c in "ntr" and i >= 2 and text[i - 2] == "\\"
    return True


def _match(text: str, i: int, row: Row) -> int:
    """End of the credential of ``row`` starting at ``i``, or -1."""
    _name, prefix, alpha, lo, hi, flags = row
    chars = ALPHABETS[alpha]
    j = i + len(prefix)
    end = j
    n = len(text)
    while end < n and text[end] in chars:
        end += 1
    if alpha == "d":
        while end > j and text[end - 1] in ".-":
            end -= 1
    run = end - j
    if run < lo or (hi and run > hi and "x" in flags):  # longer without x: take it all (fail closed)
        return -1
    if "x" in flags and end < n and text[end].isalnum():
        return -1
    if "m" in flags:
        body = text[j:end]
        if not (any(c.isdigit() for c in body) and any(c.isalpha() for c in body)):
            return -1
    return end


def find(text: str, data: bytes, leads: set[bytes] | frozenset[bytes],
         enabled: Callable[[str], bool]) -> tuple[list[Span], set[str]]:
    """Spans of every vendor credential in ``text`` (``leads``: the words of LEADS it holds), and the
    shapes seen for other finders (``PuTTY``)."""
    out: list[Span] = []
    seen: set[str] = set()
    if b"PuTTY" in leads:
        seen.add("putty")
    if b"untrusted" in leads:
        seen.add("minisign")
    for lead in {w if w in BY_LEAD else w[1:] for w in leads if w in LEADS}:
        for row in BY_LEAD.get(lead, ()):
            name, prefix = row[0], row[1]
            if not enabled(name):
                continue
            i = text.find(prefix)
            while i != -1:
                if boundary_before(text, i):
                    end = _match(text, i, row)
                    if end != -1:
                        out.append((i, end, name))
                i = text.find(prefix, i + len(prefix))
    mapped = data.translate(_RUN_MAP)
    i = mapped.find(_LONG_RUN)
    n = len(mapped)
    while i != -1:
        s = mapped.rfind(b" ", 0, i) + 1
        e = mapped.find(b" ", i)
        e = n if e == -1 else e
        if text[s] in "ntr" and s and text[s - 1] == "\\":
            s += 1  # after a JSON escape
        head = text[s:s + 3]
        for row in SOLID.get(head, ()):
            if text.startswith(row[1], s) and enabled(row[0]):
                end = _match(text, s, row)
                if end != -1:
                    out.append((s, end, row[0]))
                    break
        if head in SOLID_EXTRA:
            out += _extra(text, s, e, head, enabled)
        elif head[:2] == "s." and enabled("vault_token"):
            out += _vault_legacy(text, s)
        i = mapped.find(_LONG_RUN, e)
    if b"eyJrIjoi" in data or b"LS0tLS1CRUdJTi" in data or b"cmVmdGtuOjAxOj" in data:
        found = {sp[0] for sp in out}
        wide = data.translate(_B64_MAP)
        i = wide.find(_LONG_RUN)
        while i != -1:
            s = wide.rfind(b" ", 0, i) + 1
            e = wide.find(b" ", i)
            e = n if e == -1 else e
            if text[s] in "ntr" and s and text[s - 1] == "\\":
                s += 1  # after a JSON escape
            head = text[s:s + 3]
            if head in B64_HEADS and s not in found:
                for row in SOLID.get(head, ()):
                    if text.startswith(row[1], s) and enabled(row[0]):
                        end = _match(text, s, row)
                        if end != -1:
                            out.append((s, end, row[0]))
                            break
                if head == "LS0":
                    out += _extra(text, s, e, head, enabled)
            i = wide.find(_LONG_RUN, e)
    return out, seen


def _vault_legacy(text: str, s: int) -> list[Span]:
    """``s.`` and 24 letters and digits (all three kinds): a HashiCorp Vault service token before 1.10."""
    end = s + 2
    while end < len(text) and text[end].isascii() and text[end].isalnum():
        end += 1
    body = text[s + 2:end]
    if len(body) == 24 and not body.isalpha() and not body.isdigit() and body.lower() != body and \
            body.upper() != body and not (end < len(text) and text[end] in "_-"):
        return [(s, end, "vault_token")]
    return []


def _service_account(text: str, s: int) -> list[Span]:
    """A service-account key file as one base64 run: taken when it decodes to a private key."""
    import binascii

    end = s
    while end < len(text) and text[end] in B64:
        end += 1
    blob = text[s:end].rstrip("=")
    try:
        decoded = binascii.a2b_base64(blob[:len(blob) // 4 * 4])
    except (binascii.Error, ValueError):
        return []
    return [(s, end, "pem_private_key")] if b"PRIVATE KEY" in decoded or b'"private_key"' in decoded else []


def _extra(text: str, s: int, e: int, head: str, enabled: Callable[[str], bool]) -> list[Span]:
    if head in ("eyJ", "ewo") and text.startswith(SERVICE_ACCOUNT_B64, s) and enabled("pem_private_key"):
        return _service_account(text, s)
    if head == "eyJ" and enabled("jwt"):
        parts = text[s:e].rstrip(".").split(".")
        if len(parts) >= 3 and len(parts[0]) >= 10 and len(parts[1]) >= 10 and parts[1].startswith("eyJ"):
            end = s + sum(len(p) + 1 for p in parts[:5]) - 1
            return [(s, min(end, e), "jwt")]
    if head == "pat" and enabled("airtable_token"):
        body = text[s + 3:e]
        if len(body) >= 79 and body[14:15] == "." and all(c in ALPHABETS["A"] for c in body[:14]) and \
                all(c in ALPHABETS["h"] for c in body[15:79]):
            return [(s, s + 82, "airtable_token")]
    if head == "LS0" and text.startswith("LS0tLS1CRUdJTi", s) and enabled("pem_private_key"):
        import binascii

        end = s
        while end < len(text) and text[end] in B64:
            end += 1
        head64 = text[s:s + 80]
        try:
            decoded = binascii.a2b_base64(head64[:len(head64) // 4 * 4])
        except (binascii.Error, ValueError):
            decoded = b""
        if b"PRIVATE KEY" in decoded or b"SECRET KEY" in decoded or (b"PRIVATE" in decoded and end - s >= 80):
            return [(s, end, "pem_private_key")]
    return []


B64 = ALPHABETS["b"]
Span = tuple[int, int, str]


# Infix shapes: credentials with a fixed middle instead of a prefix (one ``find`` each).
def _azure_client_secret(text: str) -> list[tuple[int, int, str]]:
    """Three characters, a digit, ``Q~``, 31-34 more: an Azure AD (Entra) client secret."""
    out: list[tuple[int, int, str]] = []
    chars = frozenset(_ALNUM + "_~.-")
    i = text.find("Q~")
    while i != -1:
        start = i - 4
        if start >= 0 and text[i - 1].isdigit() and all(c in chars for c in text[start:i]) \
                and boundary_before(text, start):
            end = i + 2
            while end < len(text) and text[end] in chars:
                end += 1
            if 31 <= end - i - 2 <= 34:
                out.append((start, end, "azure_client_secret"))
        i = text.find("Q~", i + 2)
    return out


def _terraform(text: str) -> list[tuple[int, int, str]]:
    """14 characters ``.atlasv1.`` 60-70 more: a Terraform Cloud / Enterprise API token."""
    out: list[tuple[int, int, str]] = []
    alnum, tail = ALPHABETS["A"], ALPHABETS["e"]
    i = text.find(".atlasv1.")
    while i != -1:
        start = i - 14
        if start >= 0 and all(c in alnum for c in text[start:i]) and boundary_before(text, start):
            end = i + 9
            while end < len(text) and text[end] in tail:
                end += 1
            if end - i - 9 >= 60:
                out.append((start, end, "terraform_token"))
        i = text.find(".atlasv1.", i + 9)
    return out


def _telegram(text: str) -> list[tuple[int, int, str]]:
    """8-10 digits ``:AA`` 33 more: a Telegram bot token."""
    out: list[tuple[int, int, str]] = []
    tail = ALPHABETS["w"]
    i = text.find(":AA")
    while i != -1:
        start = i
        while start > 0 and text[start - 1].isdigit():
            start -= 1
        end = i + 1
        while end < len(text) and text[end] in tail:
            end += 1
        if 8 <= i - start <= 10 and end - i - 1 >= 35 and boundary_before(text, start):
            out.append((start, end, "telegram_token"))
        i = text.find(":AA", i + 3)
    return out


def _openai_marker(text: str) -> list[tuple[int, int, str]]:
    """``T3BlbkFJ`` (base64 of "OpenAI") inside a long alphanumeric run: an OpenAI key, prefix or not."""
    out: list[tuple[int, int, str]] = []
    alnum = ALPHABETS["w"]
    i = text.find("T3BlbkFJ")
    while i != -1:
        s, e = i, i + 8
        while s > 0 and text[s - 1] in alnum:
            s -= 1
        while e < len(text) and text[e] in alnum:
            e += 1
        if i - s >= 16 and e - i - 8 >= 16:
            out.append((s, e, "openai_key"))
        i = text.find("T3BlbkFJ", e)
    return out


SHAPES: tuple[tuple[str, bytes, Callable[[str], list[tuple[int, int, str]]]], ...] = (
    ("openai_key", b"T3BlbkFJ", _openai_marker),
    ("azure_client_secret", b"Q~", _azure_client_secret),
    ("terraform_token", b".atlasv1.", _terraform),
    ("telegram_token", b":AA", _telegram),
)
