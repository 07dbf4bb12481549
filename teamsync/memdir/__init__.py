"""teamsync.memdir."""
