// The host's tools on the tournament page (only in the browser that holds the host token): open
// or close entry, add a house bot (before the start: it plays every race it is seated in),
// start, start the next round now, pause or resume, re-deal the current round, finish early,
// remove an entrant. What cannot be undone asks first, in place (a question with
// "Yes" and "Cancel", focus on Cancel, Escape cancels, focus goes back where it was); refusals
// are said next to the controls.

import { h, replace, sentence, toast } from "../ui.js";
import { LEVELS } from "./player-parts.js";

/** House bots a host may add to one tournament (docs/protocol.md, `tournament_add_bot`). */
const MAX_BOTS = 8;

export class HostPanel {
  constructor(session) {
    this.session = session;
    this.msg = h("p.form-msg.host-msg", { role: "alert" });
    this.note = h("p.hint.host-note");
    this.confirmBox = h("div.confirm-box", { hidden: true, role: "group", "aria-label": "Confirm" });
    const btn = (id, label, onclick, cls = "") => h(`button#${id}${cls}`, { type: "button", onclick }, label);
    this.startBtn = btn("t-start", "Start tournament", () => this.run("start", {}, "Tournament started"), ".primary");
    this.entryBtn = btn("t-entry", "Close entry", () => {
      const open = !this.session.model.view.entry_open;
      this.run("entry", { open }, open ? "Entry open" : "Entry closed");
    });
    this.nextBtn = btn("t-next", "Start next round now", () => this.run("next", {}, "Next round started"), ".primary");
    this.pauseBtn = btn("t-pause", "Pause", () => {
      const paused = !this.session.model.view.paused;
      this.run("pause", { paused }, paused ? "Paused: no round starts by itself" : "Resumed");
    });
    this.redealBtn = btn("t-redeal", "Re-deal this round", () => this.redeal(), ".danger");
    this.finishBtn = btn("t-finish", "Finish now", () => this.ask(
      "End the tournament now? The table as it stands becomes final; races under way no longer count.",
      "Yes, finish it", () => this.run("finish", {}, "Tournament finished")), ".danger");
    this.botLevel = h("select#t-bot-level", { name: "bot-level" }, LEVELS.map((l) =>
      h("option", { value: l.level, selected: l.level === 2 }, `${l.level} ${l.name} (${l.rating})`)));
    this.botBtn = btn("t-add-bot", "Add a bot", () => {
      const level = LEVELS.find((l) => l.level === Number(this.botLevel.value)) || LEVELS[0];
      this.run("add_bot", { level: level.level }, `${level.name} bot added`);
    });
    this.botRow = h("div.host-bots", { role: "group", "aria-labelledby": "t-bots-label" },
      h("label#t-bots-label", { for: "t-bot-level" }, "House bot"), this.botLevel, this.botBtn,
      h("p.hint", {}, `Entered like anyone and played by the server, in every race it is seated in (at most ${MAX_BOTS}).`));
    this.buttons = h("div.host-buttons");
    this.title = h("h2#host-title", { tabindex: -1 }, "Host tools");
    this.opener = null;
    this.el = h("section.panel.host-panel", { "aria-labelledby": "host-title" },
      this.title,
      this.buttons, this.note, this.botRow, this.confirmBox, this.msg,
      h("p.hint", {}, "You hold this tournament's host token (kept in this browser only)."));
  }

  /** Send a host command; `done` is said when the server accepts it. */
  async run(action, fields, done) {
    this.closeConfirm();
    this.msg.textContent = "";
    try {
      await this.session.host(action, fields);
      if (done) toast(done, "good", 2500);
    } catch (err) {
      this.msg.textContent = sentence(err.message || err.code);
    }
  }

  redeal() {
    const cur = currentRound(this.session.model.view);
    if (!cur) return;
    this.ask(`Deal round ${cur.round} again? Its races end now and no longer count; every entrant gets a new ` +
      "race on a new deal.", `Yes, re-deal round ${cur.round}`, () => this.run("redeal", { round: cur.round },
      `Round ${cur.round} dealt again`));
  }

  /** Ask before removing an entrant (from the lists' Remove buttons). */
  remove(row) {
    this.ask(`Remove ${row.name} from the tournament? ${row.name} will not be seated in any later race ` +
      "(a race under way goes on).", `Yes, remove ${row.name}`,
    () => this.run("remove", { entrant: row.entrant }, `${row.name} removed`));
  }

  /** A question in place of a dialog: "Yes" runs `action`, "Cancel" (focused) does nothing. */
  ask(question, yes, action) {
    this.msg.textContent = "";
    if (this.confirmBox.hidden) this.opener = document.activeElement;
    const cancel = h("button#t-cancel", { type: "button", onclick: () => this.closeConfirm() }, "Cancel");
    replace(this.confirmBox,
      h("p.confirm-question", {}, question),
      h("div.buttons", {}, h("button#t-confirm.danger", { type: "button", onclick: action }, yes), cancel));
    this.confirmBox.hidden = false;
    cancel.focus();
    this.confirmBox.onkeydown = (e) => {
      if (e.key === "Escape") this.closeConfirm();
    };
  }

  closeConfirm() {
    if (this.confirmBox.hidden) return;
    this.confirmBox.hidden = true;
    replace(this.confirmBox);
    // Back to the button that asked; if it is gone (a list redrawn), to the panel's title.
    (this.opener?.isConnected ? this.opener : this.title).focus();
    this.opener = null;
  }

  update(model) {
    const view = model.view;
    const active = (view.entrants || []).filter((e) => !e.removed).length;
    const cur = currentRound(view);
    const waiting = view.status === "running" && (!cur || cur.status === "over");
    let buttons = [];
    let note = "";
    const bots = (view.entrants || []).filter((e) => !e.removed && e.level).length;
    this.botRow.hidden = view.status !== "entry";
    this.botBtn.disabled = bots >= MAX_BOTS;
    if (view.status === "entry") {
      this.entryBtn.textContent = view.entry_open ? "Close entry" : "Open entry";
      this.startBtn.disabled = active < 2;
      buttons = [this.startBtn, this.entryBtn, this.finishBtn];
      note = active < 2 ? "A tournament needs at least two entrants to start." :
        "Starting closes entry and deals round 1.";
    } else if (view.status === "running") {
      this.pauseBtn.textContent = view.paused ? "Resume" : "Pause";
      this.pauseBtn.setAttribute("aria-pressed", String(!!view.paused));
      this.nextBtn.disabled = !waiting;
      this.nextBtn.textContent = view.format === "knockout" ? "Start the next games now" : "Start next round now";
      this.redealBtn.hidden = view.format !== "rounds" || !cur || cur.status === "over";
      this.redealBtn.textContent = cur ? `Re-deal round ${cur.round}` : "Re-deal";
      buttons = [this.nextBtn, this.pauseBtn, this.redealBtn, this.finishBtn];
      note = waiting ? (view.paused ? "Paused: the next round starts only when you start it or resume."
        : view.next_at ? "The next round starts by itself at the end of the gap, or now with the button."
          : "The next round starts when you start it.")
        : `${view.format === "knockout" ? "These games are" : `Round ${cur?.round} is`} under way: the next one can ` +
          "start once every race has ended.";
    } else {
      note = "The tournament is over.";
    }
    if (buttons.length !== this.buttons.children.length || buttons.some((b, i) => this.buttons.children[i] !== b)) {
      this.buttons.replaceChildren(...buttons);
      if (view.status === "finished") this.closeConfirm();
    }
    if (this.note.textContent !== note) this.note.textContent = note;
  }
}

/** The round being played or last played, or null before the first. */
export function currentRound(view) {
  const rounds = view?.rounds || [];
  return rounds.length ? rounds[rounds.length - 1] : null;
}
