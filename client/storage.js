// What this browser remembers in localStorage: racer and host tokens, the races it took part
// in, tournament host and entrant tokens, the player's name, and the player's settings. Nothing
// here is sent anywhere but the server.

const racerKey = (race) => `solrace:racer:${race}`;
const hostKey = (race) => `solrace:host:${race}`;
const tHostKey = (tid) => `solrace:thost:${tid}`;
const entrantKey = (tid) => `solrace:entrant:${tid}`;
const RECENT_MAX = 12;

function readJSON(key) {
  try {
    return JSON.parse(localStorage.getItem(key) || "null");
  } catch {
    return null;
  }
}

export const store = {
  racer: (race) => readJSON(racerKey(race)),
  setRacer: (race, value) => localStorage.setItem(racerKey(race), JSON.stringify(value)),
  forgetRacer: (race) => localStorage.removeItem(racerKey(race)),
  host: (race) => localStorage.getItem(hostKey(race)),
  setHost: (race, token) => localStorage.setItem(hostKey(race), token),
  name: () => localStorage.getItem("solrace:name") || "",
  setName: (name) => localStorage.setItem("solrace:name", name),
  /** Races this browser created or joined, newest first (for the home page). */
  recent: () => readJSON("solrace:recent") || [],
  remember(race, game, what) {
    const old = this.recent();
    const prev = old.find((r) => r.race === race);
    const list = old.filter((r) => r.race !== race);
    // "raced" (and "daily") outranks "created": the home page shows the place of a race we raced.
    const kind = prev?.what === "raced" || prev?.what === "daily" ? prev.what : what;
    list.unshift({ race, game: game || prev?.game || null, what: kind, at: Date.now() });
    localStorage.setItem("solrace:recent", JSON.stringify(list.slice(0, RECENT_MAX)));
  },
  // Tournaments: the host token, the entrant ({entrant, token, name}), and those this browser
  // created or entered (for the home page).
  tournamentHost: (tid) => localStorage.getItem(tHostKey(tid)),
  setTournamentHost: (tid, token) => localStorage.setItem(tHostKey(tid), token),
  entrant: (tid) => readJSON(entrantKey(tid)),
  setEntrant: (tid, value) => localStorage.setItem(entrantKey(tid), JSON.stringify(value)),
  forgetEntrant: (tid) => localStorage.removeItem(entrantKey(tid)),
  tournaments: () => readJSON("solrace:tournaments") || [],
  rememberTournament(tid, name, what) {
    const old = this.tournaments();
    const prev = old.find((t) => t.tournament === tid);
    const list = old.filter((t) => t.tournament !== tid);
    list.unshift({ tournament: tid, name: name || prev?.name || tid, what: prev?.what === "entered" ? "entered" : what,
      at: Date.now() });
    localStorage.setItem("solrace:tournaments", JSON.stringify(list.slice(0, RECENT_MAX)));
  },
};

// --- settings: the player's choices, remembered; pages subscribe to redraw on a change ---

const DEFAULTS = {
  autoMove: false, // play the server's `safe` foundation moves for the player
  fourColour: false, // ♦ blue and ♣ green: colour is the whole rule of Scotch
  sound: false, // one mute switch for every sound
  pileNames: true, // t1, f1… beside the piles of the player's own board
};
const SETTINGS_KEY = "solrace:settings";
const listeners = new Set();

export const settings = {
  get(name) {
    const saved = readJSON(SETTINGS_KEY) || {};
    return name in saved ? saved[name] : DEFAULTS[name];
  },
  set(name, value) {
    const saved = readJSON(SETTINGS_KEY) || {};
    saved[name] = value;
    localStorage.setItem(SETTINGS_KEY, JSON.stringify(saved));
    applyDocumentSettings();
    for (const fn of listeners) fn(name, value);
  },
  /** Call `fn(name, value)` after every change; returns the function that stops it. */
  subscribe(fn) {
    listeners.add(fn);
    return () => listeners.delete(fn);
  },
};

/** Settings that are a matter of the whole page's look: classes on <html>. */
export function applyDocumentSettings() {
  document.documentElement.classList.toggle("four-colour", !!settings.get("fourColour"));
  document.documentElement.classList.toggle("pile-names", !!settings.get("pileNames"));
}

// Another tab changed a setting: follow it here too.
window.addEventListener("storage", (e) => {
  if (e.key !== SETTINGS_KEY) return;
  applyDocumentSettings();
  for (const fn of listeners) fn(null, null);
});
