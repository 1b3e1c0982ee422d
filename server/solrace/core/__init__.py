"""The races themselves, with no I/O and no wire messages: a race, a tournament, an arena, a shared
deal, who sees which card, fair shares, and the dispatcher's decisions (rooms.py: who may do what,
new rooms within the caps) and types (effects.py).
"""
