"""Every tunable of the server, in one place: each with its unit and why it is what it is.

The limits on what a client can make the server hold (frames, messages per second, queued
output, races followed, seats, lobbies, actions per racer, HTTP requests, shares of each cap)
are documented once, in docs/protocol.md "Limits"; the rest (timers, the solver's budgets,
the Redis service's leases, the stores' housekeeping) in the docstrings of the modules that
use them. Some can be changed on the command line (``solrace serve --help``).
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
#: Messages per second per connection (bursts of twice that); 0 turns the limit off. A racer
#: clicking fast makes a few a second; a bot at full speed, tens.
RATE_LIMIT = 50.0

# -------------------------------------------------------------------------------- output
#: Frames waiting for one connection; more means the client is too slow (closed, 1013).
OUT_QUEUE = 256
#: Bytes in a connection's transport buffer above which frames wait in the queue.
WRITE_LIMIT = 2**15
#: How long a race event may wait to share a frame with a reply, for batch clients (s).
EVENT_DELAY = 0.05
#: Followers of a race above which a fan-out first writes the direct replies waiting (the
#: mover's answer): a write costs 5-10 µs, so 64 copies delay a reply by under a millisecond.
CROWD = 64
#: Seconds between two board views of one race sent to spectators (the latest board wins).
BOARD_INTERVAL = 0.1
#: The same for the racers' view of their opponents: small boards beside the racer's own,
#: where 4 updates a second look live (a racer of a race of 8 would otherwise decode 70
#: boards a second besides playing).
RACER_BOARD_INTERVAL = 0.25

# --------------------------------------------------------------------------------- races
#: Race and tournament ids: lowercase letters and digits, short enough to read out, long
#: enough that two never meet without a look at the store (36^10, 3.7e15: with a million
#: races kept, a new id meets an old one once in some 3.7e9 races; the store's write of the
#: new race would then fail, and its creator try again). A tournament's races are its id, a
#: dash and a number.
ID_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
RACE_ID_LENGTH = 10
TOURNAMENT_ID_LENGTH = 10
#: Seconds from the start (or everyone ready) to the first move: time to look at the deal's
#: first cards and get ready (``--countdown``).
COUNTDOWN_S = 3.0
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
#: What one hint costs a racer in the standings: added to his time (a finisher); a racer who
#: does not finish counts one card home less per hint, and this is added to when he reached
#: his count. A hint is a move found by the solver: it must cost more than the seconds a good
#: player takes to find one himself, finish or not.
HINT_PENALTY_MS = 30_000
#: A racer who made fewer moves than this when his race ended did not commit to it: the race
#: is *aborted* for him (unrated, out of his statistics and streaks), as lichess aborts a game
#: both sides have not moved in ("playing a move is committing to play the game"). Three, not
#: one: a first move is often a safe one played without a look at the deal.
ABORT_MOVES = 3
#: A racer may end the race (``claim``) once every other racer still racing has been
#: offline this long.
CLAIM_AFTER_MS = 60_000
#: The last one racing (every other racer finished or resigned) who makes no move for this
#: long ends the race, as if its time had run out (solrace.core.last_racer). As long as a
#: claim's minute: long enough to think over a hard position, short enough that those who
#: are done (and a tournament's round, an arena's next pairing) do not wait on an open tab
#: left alone for the rest of the time limit. Stored with each race (``last_idle_ms``).
LAST_RACER_IDLE_MS = 60_000
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
#: Seconds a shutdown waits for the connections' handlers to end after their closing
#: handshakes; then those left are cancelled and logged with their stacks. Without it, a
#: TCP connection that never sends its request holds a shutdown for ``OPEN_TIMEOUT``.
SHUTDOWN_GRACE = CLOSE_TIMEOUT + 1.0
#: Seconds into a shutdown after which every thread's stack is printed to stderr and the
#: process exits at once, with status 1 (a SIGTERMed process normally goes in one or two; one
#: still there holds a rolling restart up, and what it has acknowledged is durable already).
SHUTDOWN_DEADLINE = 6.0
#: Seconds into a shutdown after which the stack of every asyncio task still pending is logged
#: (before ``SHUTDOWN_DEADLINE``): a shutdown stuck on an await that never completes leaves the
#: event loop idle, and the threads' stacks then show only the loop, not what it waits for.
SHUTDOWN_TASKS_AFTER = 4.0
#: Seconds from a connection's opening to its handshake done or its HTTP answer worked out.
OPEN_TIMEOUT = 30.0

# ------------------------------------------------------------------------ fair shares
#: The part of each cap (races, tournaments, a tournament's entrants, connections) kept for
#: client addresses that hold none of it yet (solrace.core.quotas). A flood from N addresses
#: takes at most N of the reserve: at the default race cap (1000, a reserve of 200) it takes
#: more than 200 addresses to shut newcomers out.
QUOTA_RESERVE = 0.2
#: Addresses holding fewer than this many may take from the reserve (none, so far).
QUOTA_SMALL = 1
#: Below this cap there is no reserve (a test's or a tiny server's caps of a few).
QUOTA_RESERVE_FROM = 10

# ----------------------------------------------------------------------------- solver
#: The niceness of the solver's process for hints, par and analyses (``--solver-nice``): the
#: races' own process comes first. Its answers have time budgets, so a machine kept busy at a
#: higher priority gets "unknown" for positions it would decide idle (the browser tests run it
#: at 0 beside a CPU burner for that reason). The pool's refill runs at 19 whatever this is.
SOLVER_NICE = 10
#: The niceness of the builder's process (``--builder-nice``: the replays of long races are
#: built there, solrace.runtime.builder): the races come first, and on a machine kept busy at a
#: higher priority a big replay waits its turn (the tests run it at 0 beside their CPU burner).
BUILDER_NICE = 10
#: The solver's time for one hint (s, ``--hint-seconds``): a racer waits for it.
HINT_SECONDS = 3.0
#: ... and its node budget, which keeps a hint the same on any machine when it ends in time.
HINT_NODES = 400_000
#: The solver's time for the par of a revealed deal (s, ``--par-seconds``): nobody waits.
PAR_SECONDS = 10.0
PAR_NODES = 2_000_000
#: A job that overruns its time by this much (s) kills the worker (it is replaced).
SOLVER_GRACE = 10.0
#: Hints being worked out at once for one client address.
MAX_HINTS_IN_FLIGHT = 2
#: Client addresses with a hint waiting, at most; one more gets ``unavailable``.
MAX_WAITING_CLIENTS = 256
#: The least time a hint gets when many clients wait (s): the solver's time is shared.
MIN_HINT_SECONDS = 0.3
#: Par jobs waiting, at most (a par that does not fit is left unknown).
MAX_PARS_WAITING = 32
#: Deals whose par is remembered (the solver's cache, and the pool's pars not yet dealt).
MAX_PARS = 4096
#: Hint answers kept (by race, racer and position): a hint asked again is answered at once.
MAX_ANSWERS = 2048
#: Plans kept by the solver's worker between hints (one per racer who asked lately).
MAX_PLANS = 256
#: A hint in a game with hidden cards solves a sample of them; a sample proved lost within
#: QUICK_LOSS_NODES nodes (a deadlock seen at its root) is drawn again, up to RESAMPLES times.
QUICK_LOSS_NODES = 64
RESAMPLES = 3

# ------------------------------------------------------------- post-race analyses
#: The solver's budget for one position of an analysis (nodes, and seconds): most positions
#: are decided in a few hundred nodes (a won one, or a Scotch loss proved by its Kings); one
#: that is not within it stays "unknown". A hint waits for at most this long behind one.
ANALYSIS_NODES = 50_000
ANALYSIS_POSITION_SECONDS = 3.0
#: Positions solved for one racer at most, and seconds of solver time (the sum of the
#: positions' own): a racer with many undos has many stretches to look at; past this, the
#: rest stays "unknown" and the analysis says it is incomplete.
ANALYSIS_SOLVES = 40
ANALYSIS_SECONDS = 30.0
#: Analyses being worked out at once in one process, and of those, started by one client
#: address. Each has one position at a time waiting in the solver's queue, where positions
#: take the solver's time in fair shares by address (solrace.solver.fair_queue), so being
#: admitted means being worked on: with many admitted, each goes slower, none waits for the
#: others to end. What one address can make the server hold: ANALYSES_PER_ADDRESS analyses
#: (a copy of the racer's actions and a review of them each, one position each in the queue);
#: one more is not started (202 "queued": ask again). The last fifth of MAX_ANALYSES is kept
#: for addresses that hold none (solrace.core.quotas), so a crowd of addresses cannot lock a
#: newcomer out. A room asking for the same racer's analysis shares one.
MAX_ANALYSES = 32
ANALYSES_PER_ADDRESS = 4
#: Jobs of hints and par served in a row, at most, while a position of an analysis waits;
#: then that position goes. Hints come first (a racer waits for each), but a flood of them
#: slows analyses down to one job in ANALYSIS_TURN + 1 and cannot stop them; a hint waits
#: behind at most one position.
ANALYSIS_TURN = 4
#: Jobs the solver remembers having done (kind, client, player, seconds), newest last: what
#: the fairness of its queue is checked from (tests, bench/analysis_fairness.py).
SOLVER_HISTORY = 512
#: Finished analyses kept (a few KB each: one letter per action, a few short lists).
ANALYSES_KEPT = 1024
#: Seconds the client is told to wait before asking again for an analysis being worked out.
ANALYSIS_RETRY_S = 2

# ------------------------------------------------------------ the pool of winnable deals
#: Deals kept ready per game in the store, refilled when below half (``--pool``).
POOL_SIZE = 50
#: Deals each process holds taken from the store, per game, so that creating a winnable
#: race never waits for the store.
POOL_RESERVE = 4
#: The solver's budget for one fresh deal (s, ``--pool-seconds``; and nodes): most won
#: deals are won in well under a second, and a deal not won in time is only skipped.
POOL_SECONDS = 2.0
POOL_NODES = 400_000
#: Seconds between two looks at the pool when there is nothing to do.
POOL_IDLE = 2.0

# ------------------------------------------------------------------- timers and retries
#: Seconds between two probe writes of a store that failed a write.
PROBE_INTERVAL = 1.0
#: A tournament round that does not fit in the race cap is tried again this much later (ms).
ROOM_RETRY_MS = 5000
#: A winnable round whose deals are not ready yet is tried again this much later (ms).
DEALS_RETRY_MS = 1000
#: A house bot of a solver level asks the solver for its next move as soon as it has played
#: the last one, in a lane of its own (a worker process apart from the hints', so it never
#: waits behind a racer's hint or an analysis): the search gets the time until the move is
#: due (the level's pace, the countdown for the first), at most the hint's budget. Past its
#: move's time by BOT_GRACE of its pace with no answer, the bot plays the solver's heuristic
#: move on its own guess of the hidden cards (solrace.service.house_bots).
BOT_GRACE = 0.25
#: A house bot whose question saw no win (no line within its time, or no answer) rests the
#: lane for 1, then 2, 4 … at most BOT_REST moves (fallback moves) before asking again, until
#: one sees a win: on a hard deal the next position is most likely as hard, and the lane's
#: time is better spent on the other bots.
BOT_REST = 8
#: The bots' solver runs this much nicer than the hints' (at most 19): a racer waiting for
#: a hint comes first.
BOT_NICE_ABOVE_HINTS = 5
#: A search with a deadline stops this long before it (s): the answer's way back and the
#: move's dispatch.
DEADLINE_MARGIN = 0.05
#: A search whose turn comes with less than this left before its deadline is not run (s):
#: its answer would come too late, and running it would make the next bot late too.
MIN_DEADLINE_SECONDS = 0.05
#: Moves in a row without progress after which a bot resigns (a greedy bot can shuffle
#: cards back and forth for minutes).
BOT_GIVE_UP = 150

# --------------------------------------------------------------------------- the store
#: SQLite: commits between two looks at the WAL file's size (a system call each).
CHECK_WAL_EVERY = 16
#: SQLite: journal rows after which they are copied into ``log``, clustered by race.
ARCHIVE_ROWS = 1024
#: SQLite: WAL bytes after which a worker thread checkpoints it (commits pause meanwhile).
CHECKPOINT_BYTES = 16 * 2**20
#: Redis: days a finished race's keys are kept (``--finished-ttl``).
FINISHED_TTL_DAYS = 30.0

# ------------------------------------------------------------ several processes on Redis
#: Milliseconds a unit's lease lasts unless its owner renews it: how long the races of an
#: owner that is silent but not known dead (paused, its loop stuck) wait before another
#: process takes them; a dead one is known sooner (GONE_AFTER: failover in 0.33 s at p50,
#: bench/failover_bench.py). Five renewals fit in it: a loop stalled for a second keeps its
#: leases.
LEASE_MS = 1500
#: Seconds between two renewals of a process's leases and its ``alive`` key (one round trip).
RENEW_EVERY = 0.3
#: Milliseconds a process's ``alive`` key lasts unless renewed.
ALIVE_MS = 1500
#: Seconds the event loop may go without a sign of life before the leases' keeper (a thread)
#: stops renewing its leases: a loop stuck that long lets its races go to another process.
LOOP_GRACE = 5.0
#: Renewals between two looks for processes that died (their connections forgotten).
DEAD_LOOK_EVERY = 3
#: Seconds between two looks at whether the owners that forwarded commands wait for live.
OWNER_CHECK_EVERY = 0.25
#: Seconds after which a unit whose races are all over is let go.
FINISHED_GRACE = 60.0
#: Seconds a forwarded command may wait for its owner's answer.
FORWARD_TIMEOUT = 3.0
#: Seconds between two looks for units whose owner is gone.
JANITOR_EVERY = 0.2
#: Seconds a process's inbox must have had nobody listening (at two looks that far apart, none
#: heard between) for the process to be taken for dead and its leases taken before they lapse
#: (solrace.cluster.deaths). A live process's lost link is re-made in 50 then 100 ms.
GONE_AFTER = 0.15
#: Seconds between two tries to reach Redis at start, at most.
START_RETRY_MAX = 5.0
#: Seconds a Redis command may take before it fails (an outage must not stall the loop).
REDIS_TIMEOUT = 2.0
REDIS_CONNECT_TIMEOUT = 2.0
#: Connections one Redis client may open at once (commands in flight at the same time).
MAX_REDIS_CONNECTIONS = 1024
#: Races of a tournament or an arena read from Redis at once when a process takes it over (an
#: arena of a thousand entrants has 500 under way: one after the other, the takeover took 10 s
#: on a busy machine; a bound keeps it from taking every connection of the pool).
ADOPT_LOADS = 32
#: Events kept per unit in its capped stream, for a process catching up after a lost link.
STREAM_LEN = 500
#: Seconds between two tries of a lost subscription link (then the last, again and again).
LINK_BACKOFF = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0)

# ------------------------------------------------------- players, quick races, daily deal
#: Seconds a paired racer has to take his seat; a seat not taken by then is forfeited.
SEAT_GRACE_S = 15
#: A quick-race seeker is paired with a waiting one whose rating is within this much, plus
#: PAIR_WIDEN per second the waiting one has waited; after PAIR_ANYONE_S, with anyone.
PAIR_WINDOW = 150.0
PAIR_WIDEN = 50.0
PAIR_ANYONE_S = 17.0
#: Seconds between two pairing passes over the waiting seekers of every queue: windows widen
#: as seekers wait, so two who did not fit when the second came may fit a second later.
PASS_EVERY_S = 1.0
#: Seekers waiting in one queue (a game and time limit), at most.
QUEUE_CAP = 5000
#: Milliseconds a quick-race opponent is remembered: in a rated queue, a seeker is not paired
#: with the opponent of his previous quick race while someone else fits (win trading).
LAST_OPPONENT_MS = 3_600_000
#: Seconds a player who was paired and never took his seat (while his opponent sat) may not
#: seek: he left someone waiting in vain once.
NO_SHOW_PAUSE_S = 60
#: Seconds the racer left alone by a no-show keeps his place at the head of his queue: his next
#: seek there counts as having waited PAIR_ANYONE_S (paired with the next seeker, whoever).
BACK_AT_HEAD_S = 60
#: Milliseconds a seeker taken out of a queue by a process may wait for that process to
#: create his race: past it, if that process is gone, he goes back to the queue.
MATCHED_TIMEOUT_MS = 5000
#: Seconds a quick-race seek stays in its queue after its connection closed: a page that
#: reloads comes back within it and takes the seek over (``seek`` with ``resume``), its time
#: waited kept. Past it, the seek leaves the queue (a page closed for good).
SEEK_GRACE_S = 6.0
#: A quick-race seek that names no ``bot_after`` is answered by a house bot after this many
#: seconds alone (read when the seek arrives: the browser tests' server raises it, so that a
#: loaded machine's slow page loads do not hand their seekers to bots).
SEEK_BOT_AFTER_S = 10
#: Seconds a challenge waits for its answer: one made for a named player (he sees it on any
#: page he has open, or opens), and one made as a link (it has to be sent, then opened).
CHALLENGE_NAMED_S = 120
CHALLENGE_LINK_S = 900
#: Open challenges one player may have made at once; named challenges waiting for one player
#: (nobody's screen fills with them); open challenges from one client network (its share of
#: MAX_CHALLENGES, with the reserve of solrace.core.quotas); and in all (per process, or in
#: Redis for every process).
CHALLENGES_PER_PLAYER = 3
CHALLENGES_TO_PLAYER = 10
CHALLENGES_PER_ADDRESS = 30
MAX_CHALLENGES = 10_000
#: House bots a tournament's host may enter in it (each plays every race it is seated in).
MAX_TOURNAMENT_BOTS = 8
#: House bots playing at once in one process, and for one client address.
HOUSE_BOTS = 200
HOUSE_BOTS_PER_ADDRESS = 4
#: New players (guests: a browser's key that does something) per client address: a token bucket
#: of NEW_PLAYERS_RATE a second with bursts of NEW_PLAYERS_BURST. A flood guard only: a school,
#: a café or a mobile carrier's NAT puts hundreds of people behind one address, and a guest
#: costs one row; what a guest can do that counts (rated races) needs an account, capped below.
NEW_PLAYERS_RATE = 1.0
NEW_PLAYERS_BURST = 200.0
#: Guests who become accounts (a first password) per client address per UTC day, counted in
#: the store (shared by every process). A class of 30 signs up together, and a second class
#: the same day still can; one machine cannot mint accounts by the hundred.
ACCOUNTS_PER_ADDRESS_DAY = 60
#: Sign-in failures (docs/protocol.md "Who you are"): each name at each address, each
#: address, and each name get delays that double with every failure past a few free ones
#: (2^(k - free) seconds after k failures), up to a cap; an attempt made before its delay is
#: over is refused with ``retry_after``, unchecked. A network the player signed in from (or
#: set his password from) before is delayed only by its own failures for that name: an
#: attacker elsewhere cannot lock him out. From a network new to him, other networks'
#: failures for his name delay him SIGN_IN_NAME_DELAY_S at most.
SIGN_IN_FREE_FAILURES = 3
#: ... failures from one address (any names) before it is delayed: a school's forgotten
#: passwords, not a guesser trying name after name.
SIGN_IN_ADDRESS_FREE_FAILURES = 30
#: The longest delay (s) for one name at one address, and for one address.
SIGN_IN_MAX_DELAY_S = 900
#: The longest delay (s) failures for a name make at networks that have failed none of them:
#: a guesser spread over many addresses gets a try per this many seconds for that name.
SIGN_IN_NAME_DELAY_S = 8
#: Failures are forgotten this long (s) after the last one under their key.
SIGN_IN_FORGET_S = 3600
#: Failure counters one process keeps in memory (the embedded server), at most.
SIGN_IN_KEYS = 100_000
#: Networks remembered per player (the latest ones he signed in from), and for how long.
KNOWN_NETWORKS = 20
KNOWN_NETWORK_DAYS = 90
#: Password hashing (scrypt: ~50 ms of CPU and 16 MiB each) runs in a pool of its own, off the
#: event loop: this many threads, fed in turn by client address, with at most
#: PASSWORD_WAITING_PER_ADDRESS jobs waiting per address and PASSWORD_WAITING in all. A flood
#: from N addresses delays anyone else by at most about N hashes.
PASSWORD_THREADS = 2
PASSWORD_WAITING_PER_ADDRESS = 3
PASSWORD_WAITING = 256
#: Hashes one client address may ask for: a token bucket (per second, burst): a class signing
#: in together fits; one address cannot keep the pool's threads busy for long.
PASSWORD_HASH_RATE = 0.5
PASSWORD_HASH_BURST = 40.0
#: Milliseconds a sign-in ticket is valid.
TICKET_MS = 60_000
#: Seconds between two looks for finished races not scored yet.
SCORE_SWEEP_EVERY = 60.0
#: Rated races a player needs in a game to be on its leaderboard.
LEADERBOARD_MIN_RACES = 5
#: The daily deal's time limit (seconds).
DAILY_TIME_LIMIT = 900
#: Drawing a day's deal when the pool has none ready: fresh seeds solved one after the other
#: until one is won, at most this many, in at most this many seconds (then ``unavailable``:
#: never an unchecked deal). Measured with the par budget: a deal is decided in 0.2 s or less
#: nearly always; won: Scotch ~64 %, Yukon ~90 %, Quadruple Canfield ~100 % of deals
#: (docs/winnability.md), so 20 Scotch deals with none won is a chance of 0.36^20 ≈ 1e-9, and a
#: deal the budget leaves unknown costs at most PAR_SECONDS.
DAILY_DRAW_TRIES = 20
DAILY_DRAW_SECONDS = 60.0

# ------------------------------------------------------------------ arenas (core/arena.py)
#: Unfinished arenas one player may have created (an account: see core/rooms.py);
#: they count against the tournaments' cap and each address's share of it too.
ARENAS_PER_PLAYER = 2

# ------------------------------------------------------------- fair play (core/fairplay.py)
#: A manual move made this soon (ms) after the racer's action before it is faster than a
#: person sees a move and clicks it (a drag, or two clicks, takes 300 ms and more; a
#: keyboard move four keys): the browser's auto-moves (safe moves) are not manual.
FAST_GAP_MS = 150
#: The share of manual moves that fast, and how many manual moves at least, from which a
#: result is played at machine speed.
FAST_SHARE = 0.5
MIN_MANUAL = 10
#: A finished result that follows the solver's own line from the deal for this share of it,
#: at a median gap (ms) under ENGINE_GAP_MS (quicker than the house's fastest bot, 600 ms a
#: move), is engine play.
AGREEMENT = 0.8
ENGINE_GAP_MS = 450
#: Seconds the scorer waits for the solver's line of a finished result's deal (behind
#: everyone's hints) before it scores without it (the timing rules still apply).
FAIRPLAY_LINE_WAIT = 8.0
#: ``tracking`` (core/fairplay.Tracker): where a racer's move leaves the solver's line, the
#: solver is asked for a new line from the position after it, at most FAIRPLAY_RESOLVES times
#: per result, each with FAIRPLAY_RESOLVE_NODES nodes and FAIRPLAY_RESOLVE_SECONDS (a won
#: position on the way to a finish is most often solved in about as many nodes as its line
#: has moves: a few hundred). Eight: a copied line with a few deviations on purpose is caught;
#: a person, who leaves the solver's line every few moves, spends them in his first dozen moves
#: and tracks little. The re-solves wait in the solver's queue of analyses, in one share for
#: fair play (hints come first: one waits behind one re-solve at most), and the scorer waits
#: for a race's re-solves at most FAIRPLAY_TRACK_WAIT seconds: what is not solved by then
#: counts as no match (a lower bound: a slow solver misses an engine, never flags a person).
FAIRPLAY_RESOLVES = 8
FAIRPLAY_RESOLVE_NODES = 20_000
FAIRPLAY_RESOLVE_SECONDS = 2.0
FAIRPLAY_TRACK_WAIT = 15.0
#: The moderators' order (core/fairplay.suspicion) weighs a fast finish on a hard deal: a
#: finish under PAR_PACE_MS per move of the solver's line counts the more the faster it is,
#: times the deal's difficulty: 0 when the solver found its line in about as many nodes as it
#: has moves, 1 from HARD_NODES_PER_MOVE nodes per move. No rule: see core/fairplay.py.
PAR_PACE_MS = 2000
HARD_NODES_PER_MOVE = 100
#: Rated races a player walked out of (aborted: fewer than ABORT_MOVES moves) within the
#: window, from which his rated pairing pauses PAUSE_MS, doubled for each one more (at most
#: PAUSE_MAX_MS), counted from the last one. Three, not one: a lost connection or a deal a
#: player did not want happens to anyone once; a pattern is what the pause stops.
PAUSE_AFTER_WALKOUTS = 3
WALKOUT_WINDOW_MS = 24 * 3600 * 1000
PAUSE_MS = 5 * 60 * 1000
PAUSE_MAX_MS = 6 * 3600 * 1000
#: A resign in a race meant to be rated within this long of its start is an *early resign*,
#: a walkout like an abort (even after three moves: it is still a loss). A minute, because
#: that is what looking at a deal and leaving it takes (shopping for deals, handing a win to
#: a friend), while a person who tried the deal and saw he was beaten needs longer to know it
#: (the shortest rated race lasts three minutes, and nobody's cards are decided in the first).
EARLY_RESIGN_MS = 60_000
#: Seconds between two looks of a process at which entrants of the tournaments and arenas it
#: runs had their accounts closed for fair play on another process (solrace.service.closures):
#: a moderator's decision need not show in the table at once, and one store call per unit
#: every two seconds is nothing next to its races.
CLOSED_SWEEP_S = 2.0
#: Rated races between the same two players within REPEAT_WINDOW_MS after which the next ones
#: count as casual (win trading): a rematch or two is fine, a farm is not.
REPEAT_PAIR_RATED = 3
REPEAT_WINDOW_MS = 24 * 3600 * 1000

# ------------------------------------------------------------ the garbage collector
#: Seconds between two freezes of everything the server holds (solrace.service.collector).
GC_FREEZE_EVERY = 5.0
#: Seconds between two full collections (what froze is looked at again).
GC_FULL_EVERY = 900.0

# --------------------------------------------- the home page's live figures (service/showcase)
#: Seconds between two looks at the races this process holds for the home page's figures
#: (players online, races running, the featured race): a crowd loading the home page reads
#: the figures of the last look, never a scan of its own. With several processes on Redis,
#: each publishes its figures and reads everyone's this often.
LIVE_EVERY_S = 2.0
#: Seconds a process's published figures count (three looks): a process that dies drops out
#: of the totals at most this long after its last look.
LIVE_TTL_S = 3 * LIVE_EVERY_S
