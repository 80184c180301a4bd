"""Context builders: what memory is handed back to the agent, and when."""
