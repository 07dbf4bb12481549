"""teamsync.commands."""
