"""teamsync.server."""
