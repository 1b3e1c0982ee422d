"""What every I/O layer of one process runs on: the supervisor of its background tasks, the
connection to Redis and its key names, the builder's side process for heavy pure work."""
