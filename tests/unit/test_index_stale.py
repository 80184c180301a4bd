"""The session log's check for restatements of memories no longer true (kenning.context.index.Stale):
its prefix-filtered index gives exactly the answers of the plain definition."""

from __future__ import annotations

import math
import random
import sqlite3

from kenning.context.index import _SHORT_WORDS, _WORD, Stale, _words


class _Conn:
    """Just the query Stale runs: (title, superseded_at) rows of one status."""

    def __init__(self, rows: dict[str, list[tuple[str, float | None]]]) -> None:
        self.rows = rows

    def execute(self, sql: str, args: tuple[object, ...]) -> sqlite3.Cursor:
        class Rows(list):  # type: ignore[type-arg]
            def fetchall(self) -> list[tuple[str, float | None]]:
                return list(self)

        return Rows(self.rows[str(args[1])][: int(str(args[2]))])  # type: ignore[return-value]


def plain(items: list[tuple[str, float | None]], text: str, written_at: float) -> bool:
    for title, at in items:
        w = _words(title)
        if len(w) >= 2 and len(w & _words(text)) >= 0.75 * len(w) and written_at <= (math.inf if at is None else at):
            return True
    return False


def test_the_indexed_check_answers_as_the_definition_does() -> None:
    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(40)] + ["deploy", "npm", "pnpm", "tests", "make"]
    for _ in range(60):
        sup = [(" ".join(rng.choices(vocab[: rng.randint(5, 45)], k=rng.randint(1, 9))),
                rng.choice([None, float(rng.randint(0, 100))])) for _ in range(rng.randint(0, 30))]
        ret = [(" ".join(rng.choices(vocab, k=rng.randint(1, 6))), None) for _ in range(rng.randint(0, 5))]
        stale = Stale(_Conn({"superseded": sup, "retracted": ret}), "p")  # type: ignore[arg-type]
        for _ in range(40):
            text = " ".join(rng.choices(vocab, k=rng.randint(0, 14)))
            at = float(rng.randint(0, 120))
            assert stale.echoed(text, at) == plain(sup + ret, text, at), (sup, ret, text, at)


def test_a_restatement_written_before_the_change_is_an_echo_and_after_it_is_not() -> None:
    stale = Stale(_Conn({"superseded": [("Use npm for the frontend build", 50.0)], "retracted": []}), "p")  # type: ignore[arg-type]
    assert stale.echoed("Frontend build: use npm", 40.0)
    assert not stale.echoed("Frontend build: use npm", 60.0)
    assert not stale.echoed("Use pnpm for everything", 40.0)


def test_words_are_the_same_for_ascii_and_other_text() -> None:
    texts = ("Use NPM for the Frontend build", "src/App.tsx and README.md", "", "the a of")
    for text in texts:
        expected = frozenset(w.lower() for w in _WORD.findall(text)) - _SHORT_WORDS
        assert _words(text) == expected, text
    # other scripts have words too (not "stra" and "e" of "Straße"); Chinese by character pairs
    assert _words("Straße: use NPM") == {"straße", "npm"}
    assert _words("Всегда используй poetry") == {"всегда", "используй", "poetry"}
    assert _words("依赖用 poetry") == {"依赖", "赖用", "poetry"}


def test_a_restatement_in_russian_or_chinese_is_an_echo_too() -> None:
    """The restatement check read ASCII words only: a session line that restated a corrected rule in Russian or
    Chinese had no words to match and was listed as current."""
    stale = Stale(_Conn({"superseded": [("Всегда управляем зависимостями через poetry", 50.0),  # type: ignore[arg-type]
                                        ("以后依赖统一用 poetry 管理", 50.0)], "retracted": []}), "p")
    assert stale.echoed("управляем зависимостями через poetry", 40.0)
    assert stale.echoed("依赖统一用 poetry 管理", 40.0)
    assert not stale.echoed("управляем релизами через changelog", 40.0)
