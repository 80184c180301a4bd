"""The cue words: each signal fires on what it names, in the languages it lists, and not on text that merely
contains one of its syllables."""

from __future__ import annotations

import re

import pytest

from kenning.memory import cues

HANGUL_SYLLABLE = re.compile(r"^[\uac00-\ud7af]$")


def test_no_cjk_cue_is_a_lone_hangul_syllable() -> None:
    """A phrase of several words is joined by no-break spaces: split on a plain space, its first word ("이",
    "this") alone would fire on most Korean sentences (마이그레이션 holds it)."""
    lone = [(name, word) for name, (_latin, cjk) in cues._CUES.items() for word in cjk.split(" ")
            if HANGUL_SYLLABLE.match(word)]
    assert lone == []


@pytest.mark.parametrize("text", [
    "PR #222 MCP 2.0 마이그레이션 작업 시작해줘",      # a one-off request: start this migration
    "이 함수는 문자열을 반환합니다",                   # "this function returns a string"
])
def test_a_korean_sentence_is_not_a_convention_because_it_says_this(text: str) -> None:
    assert "convention" not in cues.signals(text)


@pytest.mark.parametrize("text", [
    "이 저장소에서는 pnpm만 사용합니다",
    "이 프로젝트에서는 탭 대신 공백을 씁니다",
    "In this repository we use pnpm, never npm.",
    "这个仓库里统一用 pnpm。",
])
def test_a_convention_is_signalled_in_korean_english_and_chinese(text: str) -> None:
    assert "convention" in cues.signals(text)


def test_a_korean_request_is_a_request() -> None:
    assert "request" in cues.signals("릴리스 노트 정리 해줘")


@pytest.mark.parametrize("text", [
    "That's on purpose: the worker restarts itself every night so leaked handles never pile up.",
    "Die Sperre ist absichtlich global, damit zwei Importe nie gleichzeitig schreiben.",
    "这里故意不加缓存，因为价格每分钟都会变。",
    "この順番は意図的で、先に認証を確認してから読み込みます。",
])
def test_a_choice_said_to_be_deliberate_is_a_decision_cue(text: str) -> None:
    """An explanation of why the code is the way it is names a choice that was made: the cue of a decision."""
    assert "decided" in cues.signals(text)


def test_a_deliberate_word_inside_a_name_is_no_cue() -> None:
    assert "decided" not in cues.signals("The intentional-failure fixture makes the second step exit 1.")


@pytest.mark.parametrize(("text", "signal"), [
    ("`cmd/entire/cli/checkpoint/temporary.go` - Filter transcripts in tree building", "tentative"),
    ("The handler waits on `ctx.Done()` before it flushes", "done"),
    ("Track the reconciliation in `TODO.md` as a line item", "todo"),
])
def test_a_cue_word_that_is_part_of_a_file_or_method_name_is_no_cue(text: str, signal: str) -> None:
    """A plan's list of files named `temporary.go` and read "provisional": a word of a dotted name is the name's."""
    assert signal not in cues.signals(text)
    plain = text.replace("temporary.go", "temporary file").replace("ctx.Done()", "done").replace("TODO.md", "TODO")
    assert signal in cues.signals(plain)


def test_a_japanese_step_is_no_decision_and_a_check_item_is_a_question() -> None:
    """An unseen Japanese session: a plan's step "source を選択中の change_id に戻し、`use_revset = false` にする。"
    ("set it to false") was read as decided, and the user's check item "…両方で不自然でないか（既存の通知と整合して
    いるか）" (whether the message reads well) as a decision."""
    assert "decided" not in cues.signals("source を現在選択中の change_id に復元し、`use_revset = false` にする。")
    assert "decided" in cues.signals("ステージングでは PostgreSQL を使うことにする。")
    assert "question" in cues.signals("通知文言が「更新あり/なし」の両方で不自然でないか（既存の通知と整合しているか）")
    assert "question" not in cues.signals("テストは全部通った。")
