"""One process's races: the hub (commit, then emit), the organizer of tournaments, timers, and what
happens when the store fails.
"""
