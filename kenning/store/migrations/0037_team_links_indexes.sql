-- What a team sync looks up in team_links, by index rather than by reading every link: a machine that
-- pulled 400,000 teammates' memories would otherwise read all of them for each memory it stores (the
-- memories an edge said the new one replaces) and on every round (what is left to push, what was changed).
-- Partial: each holds only the few links it is for.
CREATE INDEX team_links_edge ON team_links (edge) WHERE edge != '';
CREATE INDEX team_links_unpushed ON team_links (team, observation_id) WHERE origin = 'local' AND pushed = 0;
CREATE INDEX team_links_changed ON team_links (team, observation_id) WHERE edited = 1 OR pinned = 1;
