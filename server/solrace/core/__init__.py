"""The races themselves, with no I/O: a race, a tournament, a shared deal, who sees which card,
fair shares, and the dispatcher (command in, effects out).
"""
