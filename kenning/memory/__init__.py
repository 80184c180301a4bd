"""Memory that knows what matters: layers, subjects, supersession, consolidation (pure logic, no SQL)."""
