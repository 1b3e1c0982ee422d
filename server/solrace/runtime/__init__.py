"""What every I/O layer of one process runs on: the supervisor of its background tasks."""
