// A player's rating over time as an inline SVG, drawn here (no chart library): the rating as a
// line with a dot per rated race, its uncertainty (rating ± 2 × deviation) as a band, a few
// gridlines with their values, the first and last day. It is drawn at the width it has (a
// ResizeObserver draws it again), so that its text stays readable on a phone.

import { h } from "../ui.js";

const NS = "http://www.w3.org/2000/svg";
const HEIGHT = 170;
const PAD = { top: 12, right: 12, bottom: 24, left: 42 };

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) el.setAttribute(k, String(v));
  for (const c of children) if (c !== null && c !== undefined) el.append(c);
  return el;
}

const day = (ms) => new Date(ms).toLocaleDateString(undefined, { day: "numeric", month: "short" });
const when = (ms) => new Date(ms).toLocaleString(undefined, { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });

/** The chart of `history` ([[at, rating, deviation], …], oldest first) for `title`'s rating:
 * {el, destroy()}. */
export function ratingChart(history, title) {
  const points = (history || []).filter((p) => Array.isArray(p) && p.length >= 2)
    .map(([at, rating, deviation]) => ({ at, rating, deviation: deviation ?? 0 }));
  const first = points[0];
  const last = points[points.length - 1];
  const label = !points.length ? `${title}: no rated race yet`
    : `${title} rating over time: ${points.length} point${points.length === 1 ? "" : "s"}, from ` +
      `${Math.round(first.rating)} on ${day(first.at)} to ${Math.round(last.rating)} on ${day(last.at)}`;
  const el = h("div.rating-chart", { role: "img", "aria-label": label });
  if (!points.length) return { el, destroy() {} };

  let width = 0;
  function draw() {
    const w = Math.max(200, Math.round(el.clientWidth || 320));
    if (w === width) return;
    width = w;
    el.replaceChildren(svg(points, w));
  }
  const observer = new ResizeObserver(() => draw());
  observer.observe(el);
  requestAnimationFrame(draw);
  return { el, destroy: () => observer.disconnect() };
}

function svg(points, width) {
  const innerW = width - PAD.left - PAD.right;
  const innerH = HEIGHT - PAD.top - PAD.bottom;
  // Vertical range: every rating and its band, on a grid of 100 points at least 300 tall.
  let lo = Math.min(...points.map((p) => p.rating - 2 * p.deviation));
  let hi = Math.max(...points.map((p) => p.rating + 2 * p.deviation));
  const mid = (lo + hi) / 2;
  if (hi - lo < 300) [lo, hi] = [mid - 150, mid + 150];
  const step = Math.max(100, Math.ceil((hi - lo) / 4 / 100) * 100);
  lo = Math.floor(lo / step) * step;
  hi = Math.ceil(hi / step) * step;
  // Horizontal: by time; races within a few minutes of each other (or one) are spread evenly.
  const t0 = points[0].at;
  const t1 = points[points.length - 1].at;
  const byTime = t1 - t0 > 60_000 * points.length;
  const x = (p, i) => PAD.left + (points.length === 1 ? innerW / 2
    : byTime ? ((p.at - t0) / (t1 - t0)) * innerW : (i / (points.length - 1)) * innerW);
  const y = (r) => PAD.top + (1 - (r - lo) / (hi - lo)) * innerH;

  const grid = [];
  for (let v = lo; v <= hi; v += step) {
    grid.push(s("line", { class: "grid", x1: PAD.left, x2: width - PAD.right, y1: y(v), y2: y(v) }),
      s("text", { class: "axis", x: PAD.left - 6, y: y(v) + 4, "text-anchor": "end" }, String(v)));
  }
  const upper = points.map((p, i) => `${x(p, i).toFixed(1)},${y(p.rating + 2 * p.deviation).toFixed(1)}`);
  const lower = points.map((p, i) => `${x(p, i).toFixed(1)},${y(p.rating - 2 * p.deviation).toFixed(1)}`).reverse();
  const band = points.length > 1 ? s("polygon", { class: "band", points: [...upper, ...lower].join(" ") }) : null;
  const line = points.length > 1
    ? s("polyline", { class: "line", points: points.map((p, i) => `${x(p, i).toFixed(1)},${y(p.rating).toFixed(1)}`).join(" ") })
    : null;
  const dots = points.map((p, i) => s("circle", { class: "dot", cx: x(p, i).toFixed(1), cy: y(p.rating).toFixed(1), r: 3.5 },
    s("title", {}, `${Math.round(p.rating)} ± ${Math.round(2 * p.deviation)} — ${when(p.at)}`)));
  const days = [s("text", { class: "axis", x: PAD.left, y: HEIGHT - 6, "text-anchor": "start" }, day(t0))];
  if (points.length > 1 && day(t1) !== day(t0)) {
    days.push(s("text", { class: "axis", x: width - PAD.right, y: HEIGHT - 6, "text-anchor": "end" }, day(t1)));
  }
  return s("svg", { width, height: HEIGHT, viewBox: `0 0 ${width} ${HEIGHT}`, "aria-hidden": "true", focusable: "false" },
    ...grid, band, line, ...dots, ...days);
}
