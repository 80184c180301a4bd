-- The file subjects only names_file can judge (stored unnormalised, or a glob): the same test as
-- _LOOSE_SUBJECT in kenning/context/file_history.py, verbatim (the planner uses a partial index only
-- for a query that repeats its condition). They are few, so a Read's rule lookup finds them here
-- instead of testing every file subject of the project's rules (~0.8 ms a Read at 10k observations).
CREATE INDEX observation_subjects_loose ON observation_subjects (project, observation_id)
    WHERE subject >= 'file:' AND subject < 'file;' AND (NOT (substr(subject, 6, 1) GLOB '[A-Za-z0-9_]' AND substr(subject, -1, 1) GLOB '[A-Za-z0-9_/]') OR instr(subject, '*') OR instr(subject, '?') OR instr(subject, '['));
