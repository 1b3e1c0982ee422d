"""Every limit of the server, in one place (documented once, in docs/protocol.md "Limits").

What a client can make the server hold is bounded per client: frames, messages per second,
queued output, races followed, seats, lobbies, actions per racer, HTTP requests.
"""

from __future__ import annotations

# ------------------------------------------------------------------- frames and messages
#: Largest frame a client may send; beyond it a `bad_message` reply.
MAX_FRAME = 64 * 1024
#: Frames beyond this close the connection (1009) without being read.
MAX_FRAME_HARD = 4 * MAX_FRAME
MAX_NAME = 32
MAX_ID = 64
MAX_MOVE = 32
MAX_RID = 64
MAX_SEED = 2**64
#: Messages per second per connection (bursts of twice that); 0 turns the limit off.
RATE_LIMIT = 50.0

# -------------------------------------------------------------------------------- output
#: Frames waiting for one connection; more means the client is too slow (closed, 1013).
OUT_QUEUE = 256
#: Bytes in a connection's transport buffer above which frames wait in the queue.
WRITE_LIMIT = 2**15
#: How long a race event may wait to share a frame with a reply, for batch clients (s).
EVENT_DELAY = 0.05
#: Seconds between two board views of one race sent to spectators (the latest board wins).
BOARD_INTERVAL = 0.1
#: The same for the racers' view of their opponents: small boards beside the racer's own,
#: where 4 updates a second look live (a racer of a race of 8 would otherwise decode 70
#: boards a second besides playing).
RACER_BOARD_INTERVAL = 0.25

# --------------------------------------------------------------------------------- races
#: Racers in one race (the contract's `players` is 1..8).
MAX_RACERS = 8
#: Races one connection may follow at once (as racer or spectator).
MAX_FOLLOWED = 16
#: Unfinished races on one server process (a tournament's races included).
MAX_RACES = 1000
#: Unfinished races created from one client address (see solrace.core.quotas: its share).
RACES_PER_ADDRESS = 50
#: A lobby nobody starts within this time after its creation is closed.
LOBBY_TTL_MS = 3600 * 1000
#: A lobby nobody has joined within this time after its creation is closed.
EMPTY_LOBBY_TTL_MS = 600 * 1000
#: Lobbies (races not started) one client may have open at once: per address and per
#: connection (``--max-lobbies``).
MAX_LOBBIES = 10
#: Actions (moves and undos) one racer may make in one race: a race's log is bounded.
MAX_ACTIONS = 10_000
#: A running race every racer still racing has left (no connection) this long ends.
ABANDON_MS = 120_000
#: What one hint costs a racer in the standings: added to his time (a finisher) or to when
#: he reached his count of cards home (everyone else). A hint is a move found by the
#: solver: it must cost more than the seconds a good player takes to find one himself.
HINT_PENALTY_MS = 30_000
#: A racer may end the race (``claim``) once every other racer still racing has been
#: offline this long.
CLAIM_AFTER_MS = 60_000
#: Finished races kept in memory for the API and late watchers.
FINISHED_CACHE = 256

# --------------------------------------------------------------------------- tournaments
#: Entrants of one tournament (``max_entrants`` may be set lower).
MAX_ENTRANTS = 512
#: Tournaments not finished on one server process.
MAX_TOURNAMENTS = 100
#: Tournaments not finished created from one client address.
TOURNAMENTS_PER_ADDRESS = 3
#: Entrants of one tournament joined from one client address (a club enters together; one
#: connection enters once).
ENTRANTS_PER_ADDRESS = 32
#: A tournament nobody starts within this time after its creation closes ("expired")...
TOURNAMENT_ENTRY_TTL_MS = 3600 * 1000
#: ... and within this time if nobody entered it.
EMPTY_TOURNAMENT_TTL_MS = 600 * 1000

# ---------------------------------------------------------------------------------- HTTP
#: API requests per second per client address; 0: off (``--http-rate``; the budgets below
#: scale with it).
HTTP_RATE = 25.0
#: ... in bursts of up to this many. Sized for a room of 30 players behind one address (a
#: club, a school) opening the results of one race of 8 together: 30 x (1 summary + 8
#: cached replays) = 270, and building those 8 replays once costs 8 x REPLAY_COST more.
HTTP_BURST = 320.0
#: What building a replay costs of that budget (a cached one costs 1).
REPLAY_COST = 5.0
#: Client files (``/static/``) have their own budget: a page load fetches some thirty, and
#: that room of 30 loads about a thousand at once; each is a 304 or a few KiB from memory.
STATIC_RATE = 250.0
STATIC_BURST = 1500.0
#: Client addresses whose HTTP rate is tracked at once (the least recent are forgotten).
HTTP_CLIENTS = 10_000
#: Bytes of built replays kept for the next request of the same replay.
REPLAY_CACHE_BYTES = 64 * 2**20

# ---------------------------------------------------------------------------- connections
#: Open WebSocket connections from one client address (a room of 30 players with a few
#: tabs each).
CONNECTIONS_PER_ADDRESS = 100
#: File descriptors kept free when ``--max-connections`` is derived from the limit.
FD_RESERVE = 64
#: Seconds a closing handshake may take (at shutdown, or when a client is dropped).
CLOSE_TIMEOUT = 1.0
