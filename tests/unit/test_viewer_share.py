"""Where a memory lives, as the viewer says it (kenning/viewer/team.py), from a real store's team_links row."""

from __future__ import annotations

import time
from pathlib import Path

from kenning.memory_service import MemoryService
from kenning.observer.base import ObservationDraft
from kenning.store import team as tm
from kenning.store.db import open_db
from kenning.viewer.items import hydrate
from kenning.viewer.team import share_of


def test_personal_unsent_pending_approved_rejected_and_mine(tmp_path: Path) -> None:
    conn = open_db(str(tmp_path / "k.db"))
    door = MemoryService(conn, "cli")

    def save(title: str, scope: str = "project") -> int:
        return door.save(ObservationDraft(type="decision", title=title, narrative=title, created_at=time.time(),
                                          kind="rule", scope=scope), project="/src/shop").id

    personal, shared, pref = save("Deploys go out on Tuesdays"), save("Migrations are reviewed twice"), \
        save("Answer me in short sentences", scope="user")
    assert share_of(conn, personal, "project") == {"scope": "personal"}
    team = MemoryService(conn, "team")
    team.team_links([(shared, "0123456789abcdef:1", "alpha", "0000000000001.00000.0123456789abcdef", "ana"),
                     (pref, "0123456789abcdef:2", "ana_mine", "0000000000001.00001.0123456789abcdef", "ana")])
    assert share_of(conn, shared, "project")["review"] == "unsent"
    team.team_pushed(["0123456789abcdef:1", "0123456789abcdef:2"])
    got = share_of(conn, shared, "project")
    assert (got["scope"], got["author"], got["review"], got["reviewer"]) == ("team", "ana", "pending", "")
    assert team.team_reviewed("0123456789abcdef:1", "rejected", "li", 1_700_000_000.0)
    assert not team.team_reviewed("0123456789abcdef:1", "rejected", "li", 1_700_000_000.0)  # nothing new
    got = share_of(conn, shared, "project")
    assert (got["review"], got["reviewer"], got["reviewed_at"]) == ("rejected", "li", 1_700_000_000.0)
    team.team_reviewed("0123456789abcdef:2", "approved", "automatic", 1_700_000_000.0)
    assert share_of(conn, pref, "user")["scope"] == "mine"
    # The feed's items carry the same, from the same row.
    items = {it["id"]: it["share"] for it in hydrate(conn, [("observation", i) for i in (personal, shared, pref)])}
    assert items[personal] == {"scope": "personal"}
    assert items[shared]["review"] == "rejected" and items[pref]["scope"] == "mine"
    # A memory pulled from the hub is approved, by its reviewer, whatever the local column says.
    oid = team.from_hub(tm.Pulled(gid="fedcba9876543210:5", team="alpha", remote="example.com/acme/shop",
                                  layer="rule", type="decision", title="Every entity gets a migration",
                                  text="Every entity gets a CREATE TABLE migration.", author="bo", reviewer="li",
                                  reviewed_at=1_700_000_000.0, created_at=1_690_000_000.0))
    assert oid is not None
    got = share_of(conn, oid, "project")
    assert (got["scope"], got["origin"], got["author"], got["review"], got["reviewer"]) == \
        ("team", "hub", "bo", "approved", "li")
    conn.close()
