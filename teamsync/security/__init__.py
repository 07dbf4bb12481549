"""teamsync.security."""
