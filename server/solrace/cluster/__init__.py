"""Several server processes on one Redis: who owns which race, forwarding, failover."""
