"""Fan-out of race events to the connections that follow a race: in memory, or across processes on
Redis.
"""
