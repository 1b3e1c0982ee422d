// The settings menu in the top bar (every page), and the sound switch of the race page. Each
// choice is remembered in this browser (storage.js) and takes effect at once.

import { settings } from "../storage.js";
import { h } from "../ui.js";

const CHOICES = [
  ["autoMove", "Auto-move safe cards home", "Cards that can never be needed again go to the foundations by themselves (off by default)."],
  ["fourColour", "Four-colour deck", "♦ blue and ♣ green, so that the two red and the two black suits differ at a glance."],
  ["pileNames", "Show pile names", "t1, f1… beside your piles: the names the keys and the move box use."],
  ["sound", "Sounds", "Moves, refusals, the countdown and the finish."],
];

/** The top bar's settings menu: a disclosure with one checkbox per choice. */
export function settingsMenu() {
  const boxes = new Map();
  const list = h("div.settings-list", { role: "group", "aria-label": "Settings" },
    CHOICES.map(([name, label, hint]) => {
      const id = `setting-${name}`;
      const box = h(`input#${id}`, {
        type: "checkbox",
        checked: !!settings.get(name),
        onchange: () => settings.set(name, box.checked),
      });
      boxes.set(name, box);
      return h("div.setting", {},
        box,
        h("label", { for: id }, label, h("span.hint", {}, hint)));
    }));
  const menu = h("details.settings-menu", {},
    h("summary", { "aria-label": "Settings" }, h("span", { "aria-hidden": "true" }, "⚙"), h("span.settings-word", {}, " Settings")),
    list);
  settings.subscribe(() => {
    for (const [name, box] of boxes) box.checked = !!settings.get(name);
  });
  // Close when the player clicks elsewhere or presses Escape, as a menu does.
  document.addEventListener("click", (e) => {
    if (menu.open && !menu.contains(e.target)) menu.open = false;
  });
  menu.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && menu.open) {
      menu.open = false;
      menu.querySelector("summary").focus();
      e.stopPropagation();
    }
  });
  return menu;
}

/** A one-click mute switch (the same "sound" setting as the menu). */
export function soundSwitch() {
  const btn = h("button#sound.small", {
    type: "button",
    onclick: () => settings.set("sound", !settings.get("sound")),
  });
  const update = () => {
    const on = !!settings.get("sound");
    btn.textContent = on ? "♪ Sound on" : "♪ Sound off";
    btn.setAttribute("aria-pressed", String(on));
    btn.title = on ? "Mute sounds" : "Turn sounds on";
  };
  update();
  settings.subscribe(update);
  return btn;
}
