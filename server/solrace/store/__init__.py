"""Where races and tournaments are kept: the interface, SQLite (one process) and Redis (several)."""
