"""Messages to agents and what the channel back to an agent says (pure)."""
