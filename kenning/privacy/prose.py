"""A password stated in prose in another language (``password_assignment``). No ``re``.

English ("the password is …", "pw was …", "passphrase: …") is the name scanner's
(:func:`kenning.privacy.structure._prose`), as are the languages whose word for it the scanner
knows as a name (German ``Passwort``). This module knows the others: ``mot de passe est …``,
``contraseña es …``, ``senha é …``, ``wachtwoord is …``, ``пароль: …``, ``密码是…``, ``パスワードは…``,
``비밀번호는 …`` … After the word, a link (a verb, a colon, a particle written without a space)
and then the value, judged as in English: taken when it holds a digit or a symbol, a plain word kept.
"""

from __future__ import annotations

Span = tuple[int, int, str]

# quick.FOREIGN_WORDS (ASCII, as the first look cuts them) and quick.FOREIGN_UNICODE name the same words.
PHRASES = ("mot de passe", "contraseña", "contrasena", "senha", "wachtwoord", "kennwort", "passord", "salasana",
           "adgangskode", "lösenord", "hasło", "пароль", "密码", "密碼", "口令", "パスワード", "비밀번호", "암호",
           "şifre",
           "κωδικός", "סיסמה", "كلمة المرور", "mật khẩu")
LINKS = frozenset(("is", "was", "ist", "war", "lautet", "est", "était", "etait", "es", "era", "fue", "é", "è",
                   "jest", "to", "är", "var", "er", "on", "oli", "это", "был", "είναι", "ήταν", "הוא", "היא", "هي",
                   "là", "=", ":", "：", "-", "—", "->", "→", "=>", "是", "为", "為", "は", "が", "는", "은", "이",
                   "가"))
# Links written onto the word, without a space (CJK particles and verbs, a colon).
ATTACHED = ("是", "为", "為", "：", ":", "は", "が", "는", "은", "이", "가", "=")
MAX_SITES = 256  # phrases read per text: bounded work on any input
# Punctuation that ends a value in CJK text.
CJK_STOP = frozenset("，。、；！？」』）】,")


def find(text: str) -> list[Span]:
    from kenning.privacy import structure
    from kenning.privacy.names import PASSWORD

    low = text.lower()
    if len(low) != len(text):
        low = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    out: list[Span] = []
    n = len(text)
    sites = 0
    for phrase in PHRASES:
        i = low.find(phrase)
        while i != -1 and sites < MAX_SITES:
            sites += 1
            k = i + len(phrase)
            if (i and low[i - 1].isalpha() and phrase[0].isascii()) or (k < n and low[k].isalpha()
                                                                        and phrase[-1].isascii()):
                i = low.find(phrase, k)
                continue  # inside a longer word
            linked = False
            for a in ATTACHED:
                if text.startswith(a, k):
                    k += len(a)
                    linked = True
                    break
            eol = text.find("\n", k)
            eol = min(n if eol == -1 else eol, k + 160)
            for _ in range(5):
                while k < eol and text[k] in " \t":
                    k += 1
                j = k
                while j < eol and text[j] not in " \t" and not (linked and text[j] in CJK_STOP):
                    j += 1
                if j == k:
                    break
                word = text[k:j]
                if linked:
                    if word.lower() in LINKS:
                        k = j
                        continue  # "密码是 : …", "est : …"
                    span = structure._prose_value(text, k, j, PASSWORD)
                    if span is not None:
                        out.append(span)
                    break
                if word.lower() in LINKS or word.endswith((":", "：")):
                    linked = True
                elif not word.isalpha():
                    break  # not prose before a link
                k = j
            i = low.find(phrase, i + len(phrase))
    return out
