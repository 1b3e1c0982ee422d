"""solrace: a real-time race server for patience (solitaire) games.

One package of subpackages in layers, each importing only those below it (docs/architecture.md,
"The layers"; tests/test_layout.py checks it): ``settings`` < ``core`` (the races, sans-I/O) <
``protocol`` (the wire, and the dispatcher) < ``runtime`` < ``store`` < ``bus`` < ``solver`` <
``service`` (one process's races) < ``cluster`` (several processes on Redis) < ``net`` (sockets,
HTTP, the app) < ``tools`` (the command line, the Python client, bots). This module imports
nothing: every module of the package runs it first.
"""

__version__ = "0.1.0"
