"""The wire: commands in (parsed and checked), turned into calls on the core by the dispatcher
(command in, effects out), messages out (every one built here), events encoded once.
"""
