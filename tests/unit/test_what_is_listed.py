"""What the session-start index lists, shapes found in sessions nobody here trained on: items of one list are
separate things (a fix said in one item is not about the change in the item before it: "Updated the batch size in
config.yaml — fix: fixed the path issue in eval.py", in every language), and a session in which nothing happened is
not recent work. Real SQLite file, offline observer, the real index."""

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


def test_a_session_in_which_nothing_happened_is_not_recent_work(story: Story) -> None:
    """An unseen project's "Recent work" listed "test prompt → Received. What would you like me to do?" and "show
    me your version → claude-opus-4-7": no work, nothing learnt. A question answered in so many words stays."""
    story.session("trainer", Turn("fix the training run", [edit(ROOT, "train.py"), bash("python train.py", "ok")],
                                  last="The data path was relative to the wrong folder; it is now resolved from "
                                       "the config file's folder."))
    story.session("trainer", Turn("test prompt", last="Received. What would you like me to do?"))
    story.session("trainer", Turn("show me your version", last="model-x-2 (1M context)"))
    story.session("trainer", Turn("where do the evaluation datasets live?",
                                  last="They live in the shared bucket under eval/, mounted read-only at /data/eval "
                                       "on every training node."))
    story.session("trainer", Turn("resume the training run", [edit(ROOT, "config.yaml")], last="Resumed from step 40."))
    context = story.context("trainer")
    assert "test prompt" not in context and "show me your version" not in context, context
    assert "where do the evaluation datasets live" in context, context


@pytest.mark.parametrize("said", ["PR #48 now has the two commits: the follow-up fixes (`13642bf`) and this marker.",
                                  "Empty commit `d35fea9` (\"chore: wrap up the session\") is on `chore/review-fixes`.",
                                  "PR #1066 is open and ready for review, with the regression test first."])
def test_where_a_pull_request_stood_is_no_key_memory(story: Story, said: str) -> None:
    """How a pull request or a commit stood at that moment (an unseen project listed "PR #48 now has the two
    commits: …" as an open to-do): stale by the next session, as the checkout's state is."""
    from kenning.observer import gates

    assert gates.repo_state(said)
    story.session("trainer", Turn("push the review fixes", [edit(ROOT, "eval.py"), bash("git push", "ok")],
                                  last=said))
    assert not [r for r in story.active("trainer") if r["layer"] == "key"], story.active("trainer")
