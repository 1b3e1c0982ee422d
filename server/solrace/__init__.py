"""solrace: a real-time race server for patience (solitaire) games.

Modules: ``room`` (sans-I/O race rooms), ``codec`` (wire format), ``bus``/``memory_bus`` (event
fan-out), ``storage`` (SQLite), ``app`` (WebSocket + HTTP server), ``client`` (async client),
``bot`` and ``cli``.
"""

__version__ = "0.1.0"
