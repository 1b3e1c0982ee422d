// Sounds, synthesized with WebAudio (no audio files): a move, a refusal, a finish, the countdown.
// Off by default; one switch (settings "sound") mutes them all. Browsers only let a page make a
// sound after the player did something on it, so the audio context starts on the first gesture.

import { settings } from "./storage.js";

let ctx = null;
export const played = []; // the last sounds asked for, for tests (a headless browser hears nothing)

function audio() {
  if (!ctx) {
    const Ctx = window.AudioContext || window.webkitAudioContext;
    if (!Ctx) return null;
    ctx = new Ctx();
  }
  if (ctx.state === "suspended") ctx.resume().catch(() => {});
  return ctx;
}

// Unlock on the first gesture, so that the first sound of a race is not lost.
for (const type of ["pointerdown", "keydown"]) {
  window.addEventListener(type, () => {
    if (settings.get("sound")) audio();
  }, { capture: true, passive: true });
}

/** One tone: `freq` Hz for `dur` s starting `at` s from now, with a short attack and decay. */
function tone(ac, { freq, dur = 0.08, at = 0, type = "sine", gain = 0.18, slide = 0 }) {
  const t0 = ac.currentTime + at;
  const osc = ac.createOscillator();
  const amp = ac.createGain();
  osc.type = type;
  osc.frequency.setValueAtTime(freq, t0);
  if (slide) osc.frequency.exponentialRampToValueAtTime(freq * slide, t0 + dur);
  amp.gain.setValueAtTime(0.0001, t0);
  amp.gain.exponentialRampToValueAtTime(gain, t0 + 0.008);
  amp.gain.exponentialRampToValueAtTime(0.0001, t0 + dur);
  osc.connect(amp).connect(ac.destination);
  osc.start(t0);
  osc.stop(t0 + dur + 0.02);
}

const SOUNDS = {
  move: (ac) => tone(ac, { freq: 520, dur: 0.06, type: "triangle", gain: 0.14, slide: 0.7 }),
  home: (ac) => {
    tone(ac, { freq: 660, dur: 0.07, type: "triangle", gain: 0.14 });
    tone(ac, { freq: 990, dur: 0.09, at: 0.05, type: "triangle", gain: 0.1 });
  },
  refused: (ac) => tone(ac, { freq: 150, dur: 0.16, type: "square", gain: 0.06, slide: 0.8 }),
  tick: (ac) => tone(ac, { freq: 880, dur: 0.09, gain: 0.12 }),
  go: (ac) => tone(ac, { freq: 1320, dur: 0.22, gain: 0.14 }),
  finish: (ac) => [523, 659, 784, 1047].forEach((freq, i) =>
    tone(ac, { freq, dur: 0.18, at: i * 0.09, type: "triangle", gain: 0.14 })),
  lowtime: (ac) => tone(ac, { freq: 440, dur: 0.12, type: "sine", gain: 0.1 }),
};

/** Play a named sound unless muted. */
export function play(name) {
  if (!settings.get("sound") || !SOUNDS[name]) return;
  played.push(name);
  if (played.length > 50) played.shift();
  const ac = audio();
  if (!ac) return;
  try {
    SOUNDS[name](ac);
  } catch {
    // A sound is never worth breaking the page.
  }
}
