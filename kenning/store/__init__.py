"""SQLite storage: schema migrations, connections and repositories."""
