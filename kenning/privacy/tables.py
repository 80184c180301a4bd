"""A secret in the key column of a command's output table (``password_assignment``). No ``re``.

Command-line tools print what they create or fetch as a table: ``vault login`` and
``vault token create`` (``token   s.…``/``hvs.…``, whitespace-aligned), ``vault write … secret-id``
(``secret_id   …``), ``npm token create`` and other box-drawn tables (``│ token │ … │``),
Markdown-like ``| token | … |``. A row whose first column names a secret and whose second column is
one machine-made value (random-looking, a UUID) or, for a password, a typed one, loses that value;
``token_duration 768h``, ``token_renewable false`` and ``token_policies ["default"]`` stay.
"""

from __future__ import annotations

from kenning.privacy import names

Span = tuple[int, int, str]
BORDERS = "│|┃║"


def row(text: str, j: int, k: int, cls: int, ident: str) -> Span | None:
    """The value of the row whose key column ends at ``j`` (its next character at ``k``), if it is a secret."""
    gap = text[j:k]
    n = len(text)
    if k < n and text[k] in BORDERS:
        k += 1
        while k < n and text[k] in " \t":
            k += 1
    elif not ("\t" in gap or len(gap) >= 2):
        return None  # one space: prose ("token expired"), not a column
    end = k
    while end < n and not text[end].isspace() and text[end] not in BORDERS:
        end += 1
    eol = text.find("\n", end)
    rest = text[end:n if eol == -1 else eol].strip(" \t\r" + BORDERS)
    if end == k or rest:
        return None  # nothing, or more than one value: prose or a wider table
    value = text[k:end]
    if names.is_reference(value):
        return None
    from kenning.privacy import structure

    if not structure.value_is_secret(value, cls, ident, quoted=True):
        return None
    if names.looks_random(value, 16) or names.is_uuid(value) or \
            (cls == names.PASSWORD and names.looks_like_password(value)):
        return (k, end, "password_assignment")
    return None
