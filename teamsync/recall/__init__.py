"""teamsync.recall."""
