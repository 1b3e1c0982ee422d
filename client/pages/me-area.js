// The player's corner of the top bar (every page): his name, a link to his page, and a menu with
// his ratings and what he may do with his identity: change his name, set or change a password,
// sign in on this device as another player (name + password), sign out.

import { GAME_TITLES, gameTitle } from "../cards.js";
import { me } from "../me.js";
import { h, replace } from "../ui.js";
import { dailyPath, leaderboardPath, playerPath, ratingChip } from "./player-parts.js";

const SHORT_TITLES = { scotch: "Scotch", "quadruple-canfield": "Canfield", yukon: "Yukon" };

/** Messages for the server's refusals, in the player's words. */
function reason(err, what) {
  if (err.code === "name_taken") return "That name belongs to another player: choose another.";
  if (err.code === "name_reserved") return "That name is kept for the site: choose another.";
  // The server says how long to wait (failed sign-ins, new accounts from one network).
  if (err.code === "rate_limited" && err.message) return `${err.message[0].toUpperCase()}${err.message.slice(1)}.`;
  if (err.code === "rate_limited") return "Too many tries: wait a while before trying again.";
  if (err.code === "forbidden") return what === "password" ? "The current password is wrong." : "Wrong name or password.";
  return err.message || "That did not work: try again.";
}

export function meArea() {
  const nameLink = h("a.me-name", { "data-link": true });
  const guest = h("span.me-name.muted", {}, "Guest");
  const chips = h("div.me-ratings");
  const head = h("p.me-head");
  const msg = h("p.form-msg", { role: "alert" });
  const done = h("p.me-done", { role: "status" });
  const links = h("nav.me-links", { "aria-label": "Your pages" });

  // --- the forms, one open at a time ---
  const nameInput = h("input#me-name-input", { type: "text", maxlength: 32, required: true, autocomplete: "nickname" });
  const nameForm = form("me-name-form", "Save name", async () => {
    const name = nameInput.value.trim();
    if (!name) return;
    await me.setName(name);
    said(`You are ${me.name} now.`);
  }, h("div.field", {}, h("label", { for: "me-name-input" }, "Name"), nameInput));

  const oldPassword = h("input#me-old-password", { type: "password", autocomplete: "current-password", maxlength: 128 });
  const oldField = h("div.field", {}, h("label", { for: "me-old-password" }, "Current password"), oldPassword);
  const newPassword = h("input#me-password", { type: "password", autocomplete: "new-password", minlength: 8,
    maxlength: 128, required: true });
  const passwordForm = form("me-password-form", "Save password", async () => {
    await me.setPassword(newPassword.value, oldPassword.value);
    oldPassword.value = newPassword.value = "";
    said("Password saved: sign in with it on another device.");
  }, oldField,
  h("div.field", {}, h("label", { for: "me-password" }, "New password (8 characters or more)"), newPassword),
  "password");

  const signinName = h("input#signin-name", { type: "text", maxlength: 32, required: true, autocomplete: "username" });
  const signinPassword = h("input#signin-password", { type: "password", maxlength: 128, required: true,
    autocomplete: "current-password" });
  const signinWarning = h("p.signin-warning.warn");
  const signinForm = form("me-signin-form", "Sign in", async () => {
    await me.signIn(signinName.value.trim(), signinPassword.value);
  }, h("p.hint", {}, "Play here as a player who set a password on another device."), signinWarning,
  h("div.field", {}, h("label", { for: "signin-name" }, "Name"), signinName),
  h("div.field", {}, h("label", { for: "signin-password" }, "Password"), signinPassword));

  const signoutWarning = h("p.signout-warning");
  const signoutForm = form("me-signout-form", "Sign out", () => me.signOut(), signoutWarning);
  signoutForm.querySelector("button[type=submit]").classList.replace("primary", "danger");

  const forms = { name: nameForm, password: passwordForm, signin: signinForm, signout: signoutForm };
  const actions = {
    name: h("button.small#me-rename", { type: "button" }, "Change name"),
    password: h("button.small#me-set-password", { type: "button" }, "Set a password"),
    signin: h("button.small#me-sign-in", { type: "button" }, "Sign in on this device"),
    signout: h("button.small#me-sign-out", { type: "button" }, "Sign out"),
  };
  for (const [key, btn] of Object.entries(actions)) btn.addEventListener("click", () => open(key));

  function open(key) {
    msg.textContent = done.textContent = "";
    for (const [k, f] of Object.entries(forms)) f.hidden = k !== key || !f.hidden;
    for (const [k, b] of Object.entries(actions)) b.setAttribute("aria-expanded", String(!forms[k].hidden));
    if (key === "name") nameInput.value = me.name;
    if (key === "signin") signinName.value = "";
    if (!forms[key].hidden) {
      const first = [...forms[key].querySelectorAll("input, button[type=submit]")].find((x) => !x.closest("[hidden]"));
      first?.focus();
    }
  }

  function closeForms() {
    for (const f of Object.values(forms)) f.hidden = true;
    for (const b of Object.values(actions)) b.setAttribute("aria-expanded", "false");
  }

  function said(text) {
    closeForms();
    done.textContent = text;
  }

  /** A small form whose submit runs `action`; a refusal is said under it. */
  function form(id, label, action, ...fields) {
    const what = typeof fields[fields.length - 1] === "string" ? fields.pop() : "";
    const submit = h("button.small.primary", { type: "submit" }, label);
    return h(`form.me-form#${id}`, {
      hidden: true,
      onsubmit: async (e) => {
        e.preventDefault();
        msg.textContent = "";
        submit.disabled = true;
        try {
          await action();
        } catch (err) {
          msg.textContent = reason(err, what);
        } finally {
          submit.disabled = false;
        }
      },
    }, fields, h("div.buttons", {}, submit, h("button.small", { type: "button", onclick: closeForms }, "Close")));
  }

  const panel = h("div.me-panel", { role: "group", "aria-label": "Your account" },
    head, chips, links,
    h("div.me-actions", {}, Object.values(actions)),
    Object.values(forms), msg, done);
  const summary = h("summary", { "aria-label": "Your account" }, h("span", { "aria-hidden": "true" }, "▾"));
  const menu = h("details.me-menu", {}, summary, panel);
  const el = h("div.me-area", { hidden: true }, nameLink, guest, menu);

  function render() {
    el.hidden = !me.loaded || me.anonymous;
    const p = me.player;
    nameLink.hidden = !p;
    guest.hidden = !!p;
    if (p) {
      nameLink.textContent = p.name;
      nameLink.href = playerPath(p.name);
      nameLink.title = "Your page: ratings, races, statistics";
    }
    replace(head, p ? ["You race as ", h("strong", {}, p.name), p.password ? "" : h("span.muted", {}, " · no password yet")]
      : "You have no name yet: pick one, or just race (you get a guest name).");
    const rated = Object.keys(GAME_TITLES).filter((g) => p?.ratings?.[g]);
    replace(chips, rated.map((g) => ratingChip(p.ratings[g], { label: SHORT_TITLES[g] || gameTitle(g) })));
    chips.hidden = !rated.length;
    replace(links,
      p ? h("a", { href: playerPath(p.name), "data-link": true }, "Your page") : null,
      h("a", { href: dailyPath(), "data-link": true }, "Today's deal"),
      h("a", { href: leaderboardPath("scotch"), "data-link": true }, "Leaderboards"));
    actions.name.textContent = p ? "Change name" : "Pick a name";
    actions.password.hidden = !p;
    actions.password.textContent = p?.password ? "Change password" : "Set a password";
    oldField.hidden = !p?.password;
    oldPassword.required = !!p?.password;
    actions.signout.hidden = !p;
    signoutWarning.textContent = p?.password
      ? "This browser forgets you; sign in again with your name and password."
      : `You have no password: once signed out, nobody can come back as ${p?.name ?? "this player"}, ` +
        "with his ratings and races. Set a password first to keep them.";
    signoutWarning.classList.toggle("warn", !p?.password);
    signinWarning.hidden = !p || p.password;
    signinWarning.textContent = p && !p.password ? `This browser then leaves ${p.name}, who has no password: ` +
      "nobody could come back as him. Set a password first to keep him." : "";
  }

  // Close when the player clicks elsewhere or presses Escape, as a menu does.
  document.addEventListener("click", (e) => {
    if (menu.open && !menu.contains(e.target)) menu.open = false;
  });
  menu.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && menu.open) {
      menu.open = false;
      summary.focus();
      e.stopPropagation();
    }
  });
  menu.addEventListener("toggle", () => {
    if (!menu.open) {
      closeForms();
      msg.textContent = done.textContent = "";
    }
  });
  // Following a link of the menu closes it.
  links.addEventListener("click", () => {
    menu.open = false;
  });
  me.addEventListener("change", render);
  render();
  return el;
}
