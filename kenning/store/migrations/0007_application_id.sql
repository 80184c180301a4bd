-- Databases created before the first migration set the application id get it here
-- (0x4B4E4E47, "KNNG": kenning/store/identity.py refuses files that carry another one).
PRAGMA application_id = 1263423047;
