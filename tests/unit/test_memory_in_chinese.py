"""Chinese is understood as well as English (DESIGN.md §9): a rule and its correction a session later,
a decision with its reason, a root cause the agent explains, a provisional decision, a preference for
every project. Sentences of our own, not among the role model's training sentences
(training/roles/own/zh.jsonl): what is measured here is what the model makes of Chinese it never saw.
"""

from __future__ import annotations

from tests.support.memory_story import Story, Turn, bash, edit

ROOT = "/work/ledger"


def test_a_rule_and_its_correction_a_session_later(story: Story) -> None:
    story.session("ledger", Turn("以后所有的 Python 依赖都统一用 poetry 来管理，不要手动改 requirements.txt。",
                                 last="好的，之后都用 poetry。"))
    [rule] = [r for r in story.active("ledger") if r["kind"] == "rule"]
    assert "poetry" in rule["title"] and rule["why"]["by"] == "user"
    assert "poetry" in story.context("ledger").split("## Key")[0]

    story.session("ledger", Turn("更正：依赖管理改用 uv，不要再用 poetry 了。", last="明白，已经切换到 uv。"))
    rows = story.rows("ledger")
    old = next(r for r in rows if r["id"] == rule["id"])
    assert old["status"] == "superseded", rows
    rules = [r for r in rows if r["kind"] == "rule" and r["status"] == "active"]
    assert len(rules) == 1 and "uv" in rules[0]["title"]
    ctx = story.context("ledger")
    assert "改用 uv" in ctx and "统一用 poetry" not in ctx


def test_an_unrelated_rule_is_not_replaced_by_a_correction(story: Story) -> None:
    story.session("ledger", Turn("每次发版之前都必须先跑一遍端到端测试。", last="好的。"))
    story.session("ledger", Turn("更正：依赖管理改用 uv，不要再用 poetry 了。", last="明白。"))
    rules = [r for r in story.active("ledger") if r["kind"] == "rule"]
    assert len(rules) == 2, rules


def test_a_decision_with_its_reason(story: Story) -> None:
    story.session("ledger", Turn("我们决定把报表服务迁到 ClickHouse，因为现在的 Postgres 聚合查询太慢了。",
                                 last="好的，我记下了这个决定。"))
    [d] = [r for r in story.active("ledger") if r["kind"] == "decision"]
    assert "ClickHouse" in d["title"] and "因为" in d["title"] and d["layer"] == "key"
    assert "ClickHouse" in story.context("ledger")


def test_a_root_cause_the_agent_explains(story: Story) -> None:
    story.session("ledger", Turn(
        "对账任务每天早上都报错，帮我查一下。",
        [bash("python -m jobs.reconcile", fails="ValueError: 日期超出范围"),
         edit(ROOT, "jobs/reconcile.py", "datetime.now()", "datetime.now(timezone.utc)"),
         bash("python -m jobs.reconcile", "对账完成：1203 条")],
        last="根因：对账任务用的是本地时间，而服务器在 UTC，跨天的交易被算到了前一天，所以日期超出范围。"
             "修复：改成统一使用 UTC 时间。"))
    causes = [r for r in story.active("ledger") if r["kind"] in ("rootcause", "fix")]
    assert causes and any("UTC" in r["title"] for r in causes), story.rows("ledger")
    assert causes[0]["layer"] == "key"
    assert "UTC" in story.context("ledger").split("## Recent")[0]


def test_a_provisional_decision_is_marked_tentative(story: Story) -> None:
    story.session("ledger", Turn("缓存先暂定用进程内的 LRU，等并发量上来了再换 Redis。", last="好的。"))
    [d] = [r for r in story.active("ledger") if r["kind"] in ("decision", "rule")]
    assert d["tentative"] == 1
    assert "(tentative)" in story.context("ledger")


def test_a_preference_for_every_project_and_a_project_rule(story: Story) -> None:
    story.session("ledger", Turn("不管在哪个项目里，解释的时候都先说结论，再说细节。", last="好的。"),
                  Turn("这个仓库里的 SQL 迁移脚本一律不许手动改。", last="明白。"))
    prefs = [r for r in story.active("ledger") if r["kind"] == "rule"]
    scopes = {r["scope"] for r in prefs}
    assert scopes == {"user", "project"}, prefs
    # A project nobody worked on yet is told the user's preference, and nothing of the ledger's rules.
    other = story.context("payroll")
    assert "先说结论" in other and "SQL 迁移脚本" not in other


def test_an_answer_in_chinese_is_read_sentence_by_sentence(story: Story) -> None:
    """A Chinese full stop ends a sentence with no space after it: the answer's cause is its own memory, not the
    paragraph it sits in with the agent's narration in front ("我先看了日志。") and the test run behind it."""
    story.session("ledger", Turn(
        "导出的报表每天都少一部分数据，帮我查一下。",
        [bash("python -m jobs.export", fails="KeyError: 'tenant_id'"), edit(ROOT, "jobs/export.py"),
         bash("python -m jobs.export", "导出完成：88 行")],
        last="我先看了一下日志。根因是缓存键里没有租户ID，所以不同租户的导出结果互相覆盖。"
             "修复：在 cache_key 里加上 tenant_id。测试都通过了。"))
    [cause] = [r for r in story.active("ledger") if r["kind"] == "rootcause"]
    assert cause["title"].startswith("根因是缓存键里没有租户ID"), cause
    assert "我先看了一下日志" not in cause["title"] and "测试都通过了" not in cause["title"]
