// The web view: spend and flow over time: finished per minute by status, claim wait p50/p90, spend per agent against the budget.
// Registers its panel in PANELS (app.js). Its numbers are the server's (/api/charts, application/flow_charts.py): the
// page asks again on new log records (at most once every CHART_EVERY ms) and when the slider moves (`at`), and draws
// three SVG charts; nothing is computed here but the drawing.
"use strict";

const CHART_WINDOWS = [[15, "15 min"], [60, "1 h"], [360, "6 h"], [1440, "24 h"]];
const CHART_EVERY = 2000;  // ms between two requests while live
const CHART_SETTLE = 120;  // ms the slider rests before the past is asked for (as app.js's `travel`)
const CHART_W = 430, CHART_H = 190, PAD = { left: 54, right: 12, top: 26, bottom: 34 };
// what was asked (board|window|live or position), the log head it was asked at, the answer and the one drawn, the
// request waiting (its key and timer) and when the last one left; the panel's controls and body, made once
const CHARTS = { window: 60, asked: null, head: -1, data: null, drawn: null, pending: null, timer: null, sent: 0, controls: null, body: null };

PANELS.push(chartsPanel);

function chartsPanel() {
  if (!CHARTS.controls) chartControls();
  if (!S.board) { chartBody([el("p", { class: "hint" }, "No board.")]); return; }
  const wanted = `${S.board}|${CHARTS.window}|${S.live ? "live" : S.at}`;
  if (wanted !== CHARTS.asked) askCharts(wanted, S.live ? 0 : CHART_SETTLE);
  else if (S.live && S.head !== CHARTS.head) askCharts(wanted, Math.max(0, CHARTS.sent + CHART_EVERY - Date.now()));
  if (CHARTS.drawn !== CHARTS.data) drawCharts(CHARTS.data);
}

// one request waits at a time: a later redraw that wants the same is already served by it
function askCharts(wanted, delay) {
  if (CHARTS.timer && CHARTS.pending === wanted) return;
  clearTimeout(CHARTS.timer);
  CHARTS.pending = wanted;
  CHARTS.timer = setTimeout(async () => {
    const [board, live, at, head] = [S.board, S.live, S.at, S.head];
    CHARTS.sent = Date.now();
    CHARTS.asked = wanted;
    CHARTS.head = head;
    CHARTS.timer = null;
    try {
      const answer = await getJSON(`/api/charts?board=${enc(board)}&window=${CHARTS.window}${live ? "" : `&at=${at}`}`);
      if (CHARTS.asked === wanted) CHARTS.data = answer;
    } catch (error) {
      if (CHARTS.asked === wanted) CHARTS.data = { error: error.message };
    }
    chartsPanel();
  }, delay);
}

function chartControls() {
  const buttons = CHART_WINDOWS.map(([minutes, label]) => el("button", {
    type: "button", class: minutes === CHARTS.window ? "chart-window on" : "chart-window", "data-window": minutes,
    onclick: () => { CHARTS.window = minutes; buttons.forEach((b) => b.classList.toggle("on", Number(b.dataset.window) === minutes)); chartsPanel(); },
  }, label));
  CHARTS.controls = el("div", { class: "chart-controls" }, el("span", { class: "hint" }, "window "), ...buttons,
    el("span", { id: "chart-span", class: "hint" }));
  CHARTS.body = el("div", { class: "chart-row" });
  $("charts").replaceChildren(CHARTS.controls, CHARTS.body);
}

function chartBody(children) { CHARTS.body.replaceChildren(...children); }

function drawCharts(data) {
  CHARTS.drawn = data;
  if (!data) { chartBody([el("p", { class: "hint" }, "Loading…")]); return; }
  if (data.error) { chartBody([el("p", { class: "hint" }, `charts: ${data.error}`)]); return; }
  const every = data.bucket_seconds / 60;
  $("chart-span").textContent = ` ${hhmm(data.start)} to ${hhmm(data.end)} UTC${data.at === null ? "" : ` (as at position ${data.at})`}`;
  chartBody([finishedChart(data, every), waitChart(data), spendChart(data)]);
}

const hhmm = (iso) => iso.slice(11, 16);
const perBucket = (every) => every === 1 ? "per minute" : `per ${Number(every.toFixed(1))} min`;

// A chart's frame: its title, y axis (a label and three ticks from 0 to `top`), x axis (the window's times)
function frame(kind, title, data, top, yLabel, format) {
  const svg = el("svg:svg", { width: CHART_W, height: CHART_H, class: `chart ${kind}`, "data-chart": kind, viewBox: `0 0 ${CHART_W} ${CHART_H}` },
    el("svg:text", { x: PAD.left, y: 14, class: "chart-title" }, title),
    el("svg:text", { x: 12, y: PAD.top + plotH() / 2, class: "small", transform: `rotate(-90 12 ${PAD.top + plotH() / 2})`, "text-anchor": "middle" }, yLabel),
    el("svg:line", { x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: PAD.top + plotH(), class: "axis" }),
    el("svg:line", { x1: PAD.left, y1: PAD.top + plotH(), x2: PAD.left + plotW(), y2: PAD.top + plotH(), class: "axis" }));
  for (const f of [0, 0.5, 1]) {
    const y = PAD.top + plotH() * (1 - f);
    svg.append(el("svg:line", { x1: PAD.left - 3, y1: y, x2: PAD.left + plotW(), y2: y, class: f ? "grid" : "axis" }),
      el("svg:text", { x: PAD.left - 5, y: y + 4, class: "small", "text-anchor": "end" }, format(top * f)));
  }
  const n = data.buckets.length;
  for (const [i, anchor] of [[0, "start"], [Math.floor(n / 2), "middle"]]) {
    svg.append(el("svg:text", { x: xAt(i, n), y: PAD.top + plotH() + 14, class: "small", "text-anchor": anchor }, hhmm(data.buckets[i])));
  }
  svg.append(el("svg:text", { x: PAD.left + plotW(), y: PAD.top + plotH() + 14, class: "small", "text-anchor": "end" }, hhmm(data.end)),
    el("svg:text", { x: PAD.left + plotW() / 2, y: CHART_H - 4, class: "small", "text-anchor": "middle" }, "time (UTC)"));
  return svg;
}

const plotW = () => CHART_W - PAD.left - PAD.right;
const plotH = () => CHART_H - PAD.top - PAD.bottom;
const xAt = (i, n) => PAD.left + (plotW() * i) / n;  // a bucket's left edge
const yAt = (value, top) => PAD.top + plotH() * (1 - value / top);
const roomy = (max) => { if (max <= 0) return 1; const p = 10 ** Math.floor(Math.log10(max)); return Math.ceil(max / p * 2) / 2 * p; };
const none = (svg) => { svg.append(el("svg:text", { x: PAD.left + plotW() / 2, y: PAD.top + plotH() / 2, class: "chart-empty", "text-anchor": "middle" }, "no data in this window")); return svg; };

function legend(items) {
  return el("div", { class: "chart-legend" }, ...items.map(([cls, text, attrs]) => el("span", { class: "chart-key", ...attrs },
    el("span", { class: `swatch ${cls}` }), text)));
}

function chartBox(svg, keys) { return el("figure", { class: "chart-box" }, svg, keys); }

function finishedChart(data, every) {
  const statuses = Object.keys(data.finished).filter((s) => data.finished[s].some(Boolean));
  const n = data.buckets.length;
  const stacked = data.buckets.map((_, i) => statuses.reduce((sum, s) => sum + data.finished[s][i], 0));
  const top = 2 * Math.ceil(roomy(Math.max(0, ...stacked)) / 2);  // even: its middle tick a whole count
  const svg = frame("finished", `Finished ${perBucket(every)}, by status`, data, top, "signals", (v) => String(v));
  if (!statuses.length) return chartBox(none(svg), legend([]));
  const w = plotW() / n;
  data.buckets.forEach((start, i) => {
    let base = 0;
    for (const s of statuses) {
      const count = data.finished[s][i];
      if (!count) continue;
      svg.append(el("svg:rect", { x: xAt(i, n) + w * 0.1, width: Math.max(1, w * 0.8), y: yAt(base + count, top), height: yAt(base, top) - yAt(base + count, top),
        class: `bar ${s}`, "data-status": s, "data-count": count }, el("svg:title", {}, `${hhmm(start)}: ${count} ${s}`)));
      base += count;
    }
  });
  const total = (s) => data.finished[s].reduce((a, b) => a + b, 0);
  return chartBox(svg, legend(statuses.map((s) => [`bar ${s}`, `${s} ${total(s)}`, { "data-status": s, "data-count": total(s) }])));
}

// a line through the buckets' middles, broken where a bucket has no value (null)
function linePath(values, n, top) {
  let d = "", open = false;
  values.forEach((v, i) => {
    if (v === null) { open = false; return; }
    d += `${open ? "L" : "M"}${(xAt(i, n) + plotW() / n / 2).toFixed(1)},${yAt(v, top).toFixed(1)}`;
    open = true;
  });
  return d;
}

function dots(svg, values, n, top, cls) {
  values.forEach((v, i) => { if (v !== null) svg.append(el("svg:circle", { cx: xAt(i, n) + plotW() / n / 2, cy: yAt(v, top), r: 2.5, class: cls })); });
}

function waitChart(data) {
  const { p50, p90, claimed } = data.claim_wait;
  const n = data.buckets.length;
  const top = roomy(Math.max(0, ...p90.filter((v) => v !== null)));
  const svg = frame("wait", "Claim wait of the signals claimed, p50 and p90", data, top, "seconds", seconds);
  if (!claimed.some(Boolean)) return chartBox(none(svg), legend([]));
  for (const [values, cls] of [[p90, "line p90"], [p50, "line p50"]]) {
    svg.append(el("svg:path", { d: linePath(values, n, top), class: cls, "data-series": cls.slice(5) }));
    dots(svg, values, n, top, `dot ${cls.slice(5)}`);
  }
  const count = claimed.reduce((a, b) => a + b, 0);
  return chartBox(svg, legend([["line p50", "p50"], ["line p90", "p90"], ["", `${count} claimed`, { "data-claimed": count }]]));
}

const seconds = (v) => String(v >= 100 ? Math.round(v) : Number(v.toFixed(v >= 1 ? 1 : 2)));

function spendChart(data) {
  const { agents, budget } = data.spend;
  const tokens = budget !== null && budget.usd === null;  // a budget of tokens alone: spend in tokens
  const unit = tokens ? "tokens" : "US dollars";
  const limit = budget === null ? null : tokens ? budget.tokens : budget.usd;
  const series = agents.map((a) => tokens ? a.tokens : a.usd);
  const n = data.buckets.length;
  const top = roomy(Math.max(0, limit || 0, ...series.flat()));
  const format = tokens ? (v) => Math.round(v).toLocaleString("en") : (v) => `$${v > 0 && v < 0.1 ? v.toFixed(4) : v.toFixed(2)}`;
  const svg = frame("spend", `Spend per agent, cumulative${limit === null ? "" : ", and the budget"}`, data, top, unit, format);
  if (limit !== null) {
    const y = yAt(limit, top);
    svg.append(el("svg:line", { x1: PAD.left, y1: y, x2: PAD.left + plotW(), y2: y, class: "budget", "data-budget": limit }),
      el("svg:text", { x: PAD.left + plotW() - 2, y: y < PAD.top + 12 ? y + 12 : y - 4, class: "small budget-label", "text-anchor": "end" }, `budget ${format(limit)}`));
  }
  if (!agents.length) return chartBox(none(svg), legend([]));
  agents.forEach((a, k) => {
    svg.append(el("svg:path", { d: linePath(series[k], n, top), class: `line agent-${k % 6}`, "data-agent": a.agent }));
  });
  const said = (a) => tokens ? `${a.total_tokens.toLocaleString("en")} tokens` : a.total_usd === null ? "cost unknown" : `$${a.total_usd.toFixed(4)}`;
  return chartBox(svg, legend(agents.map((a, k) => [`line agent-${k % 6}`, `${a.agent} ${said(a)}`,
    { "data-agent": a.agent, "data-total-usd": a.total_usd === null ? "" : a.total_usd, "data-total-tokens": a.total_tokens }])));
}
