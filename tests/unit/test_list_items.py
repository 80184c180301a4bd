"""Items of one list are separate things: a fix said in one item is not about the change said in the item
before it (titles read "Updated the batch size in config.yaml — fix: fixed the path issue in eval.py", the
first change passed off as what the fix was about), in every language. Real SQLite file, offline observer."""

from __future__ import annotations

import pytest

from tests.support.memory_story import Story, Turn, bash, edit, read

ROOT = "/work/trainer"

LISTS = {
    "en": ("Made the following changes:\n1. Updated the batch size in `config.yaml`\n"
           "2. Fixed the path issue in `eval.py`", "Updated the batch size"),
    "zh": ("已完成以下修改：\n1. 更新了 `config.yaml` 中的 batch size\n2. 修复了 `eval.py` 中的路径问题", "更新了"),
    "ja": ("以下の変更を行いました：\n1. `config.yaml` のバッチサイズを更新\n2. `eval.py` のパスの問題を修正",
           "バッチサイズ"),
}


@pytest.mark.parametrize("lang", sorted(LISTS))
def test_a_fix_in_one_item_is_not_about_the_item_before(story: Story, lang: str) -> None:
    said, other = LISTS[lang]
    story.session("trainer", Turn("fix the training run", [
        read(ROOT, "train.py"), bash("python train.py", fails="FileNotFoundError: data/eval"),
        edit(ROOT, "config.yaml"), edit(ROOT, "eval.py"), bash("python train.py", "ok")], last=said))
    fixes = [r["title"] for r in story.active("trainer") if r["kind"] == "fix"]
    assert fixes and not [t for t in fixes if other in t], story.active("trainer")
