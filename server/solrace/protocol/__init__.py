"""The wire: commands in (parsed and checked), messages out (every one built here)."""
