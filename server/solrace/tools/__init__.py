"""Programs around the server: the command line, the Python race client, the bots."""
