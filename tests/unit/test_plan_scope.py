"""The numbered parts of an accepted plan the user set aside by asking for only some of them, said where the work
stands (kenning/observer/plan_scope.py). The shape is that of a real session (a plan of numbered optimisations,
interrupted, then "focus only" two of them); the words are our own."""

from __future__ import annotations

from kenning.observer.plan_scope import PlanScope, parts_of
from tests.support.memory_story import Story, Turn, edit

PLAN = """Implement the following plan:

# Invoice Export Speed-up

## Context

Exports of large tenants time out.

## Step 1: Stream rows instead of loading the whole table

Use a server-side cursor.

## Step 2: Cache the currency table

```
# Not a heading: a comment in the code the plan quotes
```

## Step 3: Compress the CSV on the fly

## Verification

Run the export of the largest tenant.
"""


def test_a_plans_parts_are_its_numbered_sections() -> None:
    assert parts_of(PLAN) == ["Step 1: Stream rows instead of loading the whole table",
                              "Step 2: Cache the currency table", "Step 3: Compress the CSV on the fly"]
    assert parts_of("# Fix\n\n## Root Cause\n\nx\n\n## Fix\n\ny") == []  # unnumbered: "only the fix" names no part


def test_asking_for_only_some_parts_leaves_the_others_not_done() -> None:
    scope = PlanScope()
    scope.accepted(PLAN, "Invoice Export Speed-up")
    assert scope.left_out("I reverted it. Only do step 1 and \"Compress the CSV on the fly\" for now.") == (
        "Not done from the plan “Invoice Export Speed-up” (asked for only 2 of its 3 parts): "
        "Step 2: Cache the currency table")


def test_words_that_name_no_part_or_every_part_or_do_not_narrow_leave_nothing() -> None:
    for words in ("Only run the tests again.", "Just do step 1, step 2 and step 3.", "Do step 1 first.",
                  "commit"):
        scope = PlanScope()
        scope.accepted(PLAN, "Invoice Export Speed-up")
        assert scope.left_out(words) == "", words
    scope = PlanScope()
    scope.accepted(PLAN, "Invoice Export Speed-up", carried_out=True)  # all of it was done in its turn
    assert scope.left_out("Only keep step 1, it's enough.") == ""


def test_the_parts_set_aside_are_where_the_session_stands(story: Story) -> None:
    root = story.root("shop")
    story.session("shop", Turn(PLAN, [], last="Starting with step 1.", origin="plan"),
                  Turn("Only do step 1 and step 3, leave the rest.", [edit(root, "shop/export.py")],
                       last="Streaming and compression are in."))
    context = story.context("shop")
    assert "Not done from the plan “Invoice Export Speed-up” (asked for only 2 of its 3 parts): Step 2: Cache " \
           "the currency table" in context, context
