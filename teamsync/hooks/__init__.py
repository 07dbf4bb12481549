"""teamsync.hooks."""
