// The board page: a snapshot from the JSON endpoints, then the log's records as server-sent events
// (each with the signal or entry it changed). The slider replays the board at any log position
// through the server's time travel (the same as `--at`). Read-only but for a person's acts: when the server runs
// with a token, a person may approve or reject an open gate, and nudge or cancel a run (run.js) (POST, the token
// in a header); nothing is fetched from elsewhere.
"use strict";

const STATUSES = ["POSTED", "CLAIMED", "COMPLETED", "FAILED", "EXPIRED", "UNCLAIMED", "CANCELLED"];
const SHOWN_EVENTS = 500;
const CARDS = 50;  // cards a column shows at first; "show more" adds as many (docs/web.md, "Large boards")
const TIMELINE = 200;  // the most recent signals the timeline draws
const RECENT = 10000;  // the board's events are loaded from the log's last RECENT records, and as many are kept
const S = {
  board: null, boards: new Set(), head: 0, live: true, at: 0, past: null,
  signals: new Map(), entries: new Map(), events: [], seen: new Set(), selected: null, entryKey: null,
  decide: false, token: null, cards: {},
};

// The panels the page's other scripts add (workers.js, charts.js, run.js, graph.js, loaded after this one):
// each pushes a function that draws its panel from the view `render` draws (shown(): the board now, or at the
// slider's position), called on every redraw after the panels of this file.
const PANELS = [];

const $ = (id) => document.getElementById(id);
const enc = encodeURIComponent;
const SVG = "http://www.w3.org/2000/svg";

function el(tag, attrs = {}, ...children) {
  const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined) continue;
    if (name === "onclick") node.addEventListener("click", value);
    else node.setAttribute(name, value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

async function getJSON(url) {
  const response = await fetch(url, { credentials: "same-origin" });
  if (!response.ok) throw new Error(`${url}: ${response.status}`);
  return response.json();
}

const short = (value, n = 80) => { const t = typeof value === "string" ? value : JSON.stringify(value); return t.length > n ? t.slice(0, n - 1) + "…" : t; };
const time = (iso) => iso ? iso.slice(11, 23) : "";
const span = (from, to) => from && to ? `${((Date.parse(to) - Date.parse(from)) / 1000).toFixed(3)} s` : "—";

// --- state --------------------------------------------------------------------------------------

async function start() {
  const wanted = new URLSearchParams(location.search).get("board");
  const { boards, position, decide } = await getJSON("/api/boards");
  S.decide = Boolean(decide);
  S.token = pageToken();
  boards.forEach((b) => S.boards.add(b));
  S.head = position;
  S.board = wanted || boards[0] || null;
  if (S.board) S.boards.add(S.board);
  await loadBoard();
  follow(position);
  $("board").addEventListener("change", (e) => { S.board = e.target.value; S.selected = null; S.entryKey = null; goLive(); loadBoard(); });
  $("slider").addEventListener("input", (e) => travel(Number(e.target.value)));
  $("live").addEventListener("click", goLive);
  const filter = $("label-filter");
  filter.value = new URLSearchParams(location.search).get("label") || "";
  filter.addEventListener("input", render);
}

async function loadBoard() {
  renderBoards();
  S.cards = {};  // each column of another board starts at its first CARDS
  if (!S.board) { render(); return; }
  const board = S.board;
  const since = Math.max(0, S.head - RECENT);  // the recent ones: what the event log and a signal's history show
  const [snapshot, log] = await Promise.all([getJSON(`/api/board?board=${enc(board)}`), getJSON(`/api/events?board=${enc(board)}&since=${since}`)]);
  if (board !== S.board) return;
  S.signals = new Map(snapshot.signals.map((s) => [s.signal_id, s]));
  S.entries = new Map(snapshot.entries.map((e) => [e.key, e]));
  for (const event of log.events) remember(event);
  S.head = Math.max(S.head, snapshot.position, log.position);
  render();
}

function remember(event) {
  if (S.seen.has(event.position)) return;
  S.seen.add(event.position);
  S.events.push(event);
  if (S.events.length > 1 && S.events[S.events.length - 2].position > event.position) S.events.sort((a, b) => a.position - b.position);
  if (S.events.length > 2 * RECENT) {  // a long session keeps the last RECENT, not every record it saw
    S.events = S.events.slice(-RECENT);
    S.seen = new Set(S.events.map((e) => e.position));
  }
}

function follow(since) {
  const source = new EventSource(`/api/stream?since=${since}`);
  source.onopen = () => { $("connection").textContent = "connected"; $("connection").className = "connection on"; };
  source.onerror = () => { $("connection").textContent = "reconnecting"; $("connection").className = "connection off"; };
  source.addEventListener("position", (e) => { S.head = Math.max(S.head, Number(e.data)); schedule(); });
  source.addEventListener("log", (e) => onRecord(JSON.parse(e.data)));
}

function onRecord(record) {
  S.head = Math.max(S.head, record.position);
  if (!S.boards.has(record.blackboard_id)) {
    S.boards.add(record.blackboard_id);
    if (!S.board) { S.board = record.blackboard_id; loadBoard(); return; }
    renderBoards();
  }
  if (record.blackboard_id === S.board) {
    remember(record);
    // a record's document is the signal as the server read it then: never over a later one (a POST's answer)
    if (record.signal && !(S.signals.get(record.signal.signal_id)?.version > record.signal.version)) S.signals.set(record.signal.signal_id, record.signal);
    if (record.entry) S.entries.set(record.entry.key, record.entry);
    if (record.key && record.key === S.entryKey && S.live) showEntry(record.key);
  }
  schedule();
}

// Live records are drawn together: one redraw in the next frame, and after a costly one (a large board) the
// next waits four times as long as it took, so drawing takes at most a fifth of the time however fast they come.
let pending = false, drawnAt = 0, drawCost = 0;
function schedule() {
  if (pending) return;
  pending = true;
  setTimeout(() => requestAnimationFrame(() => {
    pending = false;
    const started = performance.now();
    render();
    drawnAt = performance.now();
    drawCost = drawnAt - started;
  }), Math.max(0, drawnAt + 4 * drawCost - performance.now()));
}

let travelling = null;
function travel(position) {
  if (position >= S.head) { goLive(); return; }
  S.live = false;
  S.at = position;
  clearTimeout(travelling);
  travelling = setTimeout(async () => {
    const snapshot = await getJSON(`/api/board?board=${enc(S.board)}&at=${position}`);
    if (!S.live && S.at === position) { S.past = snapshot; render(); if (S.entryKey) showEntry(S.entryKey); }
  }, 120);
  render();
}

function goLive() { S.live = true; S.past = null; render(); if (S.entryKey) showEntry(S.entryKey); }

// The token the page was opened with (?token=T), kept for this tab: a decision sends it in a header.
function pageToken() {
  const given = new URLSearchParams(location.search).get("token");
  if (given) sessionStorage.setItem("blackboard-token", given);
  return given || sessionStorage.getItem("blackboard-token");
}

// a person's act (`under` "gates": approve, reject; "signals": nudge, cancel, run.js), each behind the same guard
async function decide(signalId, action, body, under = "gates") {
  const response = await fetch(`/api/${under}/${enc(signalId)}/${action}`, {
    method: "POST", credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-Blackboard-Token": S.token || "" },
    body: JSON.stringify(body),
  });
  const answer = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(answer.error || `${action}: ${response.status}`);
  if (answer.signal_id) S.signals.set(answer.signal_id, answer);
  return answer;
}

function shown() {
  if (S.live || !S.past) return { signals: [...S.signals.values()], entries: [...S.entries.values()], upto: Infinity };
  return { signals: S.past.signals, entries: S.past.entries, upto: S.past.position };
}

// --- rendering ----------------------------------------------------------------------------------

function render() {
  const view = shown();
  view.signals.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.signal_id.localeCompare(b.signal_id));
  renderTravel();
  renderGates(view.signals);
  renderFlows(view.signals);
  renderColumns(view.signals);
  renderDetail(view);
  renderTimeline(view.signals, view.upto);
  renderEntries(view.entries);
  renderTopics(view);
  renderEvents(view.upto);
  for (const panel of PANELS) panel(view);
}

function renderBoards() {
  const select = $("board");
  select.replaceChildren(...[...S.boards].sort().map((b) => el("option", { value: b }, b)));
  if (S.board) select.value = S.board;
}

function renderTravel() {
  const slider = $("slider");
  slider.max = String(S.head);
  if (S.live) slider.value = String(S.head);
  $("position").textContent = `${S.live ? S.head : S.at} / ${S.head}`;
  $("mode").textContent = S.live ? "live" : `as at position ${S.at}`;
  $("mode").className = S.live ? "mode" : "mode past";
  document.body.classList.toggle("past", !S.live);
}

function renderGates(signals) {
  const open = signals.filter((s) => s.gate && s.status === "POSTED" && !s.waiting_for.length);
  const buttons = S.decide && S.token && S.live;
  const message = $("gate-message");
  if (S.decide && !S.token) message.textContent = "Open the page with ?token=T to approve or reject a gate.";
  const rows = open.map((s) => {
    const why = gateText(s.signal_id);
    const act = (action) => async () => {
      const by = $("decider") ? $("decider").value.trim() : "";
      const text = why.value.trim();
      const body = action === "approve" ? { by, note: text || null } : { by, reason: text };
      try { await decide(s.signal_id, action, body); message.textContent = `${s.signal_id} ${action}d by ${by}`; render(); }
      catch (error) { message.textContent = error.message; }
    };
    return el("tr", { class: "gate", "data-gate": s.signal_id },
      el("td", {}, s.signal_id), el("td", {}, s.payload.topic), el("td", {}, s.posted_by),
      el("td", {}, s.claimable_since ? time(s.claimable_since) : ""),
      buttons ? el("td", {}, why, " ",
        el("button", { type: "button", class: "approve", "data-action": "approve", onclick: act("approve") }, "approve"), " ",
        el("button", { type: "button", class: "reject", "data-action": "reject", onclick: act("reject") }, "reject")) : null);
  });
  const head = el("tr", {}, ...["gate", "topic", "posted by", "open since", ...(buttons ? ["decision"] : [])].map((h) => el("th", {}, h)));
  const name = buttons ? el("label", {}, "your name ", decider()) : null;
  $("gates").replaceChildren(...(name ? [name] : []),
    el("table", { class: "table" }, head, ...(rows.length ? rows : [el("tr", {}, el("td", { colspan: 5, class: "hint" }, "No open gate."))])));
}

// a flow step's place in its flow: its entry id's N (e-N), which a retry of it keeps
const stepPlace = (s) => Number(s.payload.entry_id.slice(2)) || 0;

// A flow's steps, each at its latest signal (one that no signal retries), in step order (its entry id e-N),
// and the flow's state: the rules of domain/flows.py (`latest`, `flow_state`) on the documents the page holds,
// so time travel shows a flow as it stood (tests/e2e/test_ui_flows.py holds the page to `flow status`).
function flowsOf(signals) {
  const retried = new Set(signals.map((s) => s.retry_of).filter(Boolean));
  const flows = new Map();
  for (const s of signals) {
    if (!s.flow_id || retried.has(s.signal_id)) continue;
    if (!flows.has(s.flow_id)) flows.set(s.flow_id, []);
    flows.get(s.flow_id).push(s);
  }
  for (const steps of flows.values()) steps.sort((a, b) => stepPlace(a) - stepPlace(b));
  return flows;
}

function flowState(steps) {
  if (steps.some((s) => s.status === "POSTED" || s.status === "CLAIMED")) return "running";
  if (steps.every((s) => s.status === "COMPLETED")) return "completed";
  return steps.some((s) => s.status === "CANCELLED") ? "cancelled" : "failed";
}

function renderFlows(signals) {
  const flows = flowsOf(signals);
  $("flows-panel").hidden = flows.size === 0;
  const head = el("tr", {}, ...["flow", "state", "steps"].map((h) => el("th", {}, h)));
  const rows = [...flows.entries()].sort().map(([id, steps]) => el("tr", { "data-flow": id, "data-state": flowState(steps) },
    el("td", {}, id), el("td", { class: "state" }, flowState(steps)),
    el("td", {}, ...steps.map((s) => el("span", { class: `step ${s.status}`, "data-step": s.step_id, title: `${s.signal_id} ${s.status}`,
      onclick: () => { S.selected = s.signal_id; render(); } }, `${s.step_id} ${s.status.toLowerCase()}`)))));
  $("flows").replaceChildren(head, ...rows);
}

// A gate's note or reason field, kept across redraws (the live stream redraws the page while one types).
const gateTexts = new Map();
function gateText(signalId) {
  if (!gateTexts.has(signalId)) {
    gateTexts.set(signalId, el("input", { type: "text", class: "gate-text", placeholder: "note (approve) or reason (reject)", "aria-label": `note or reason for ${signalId}` }));
  }
  return gateTexts.get(signalId);
}

// One name field, kept across redraws (and in this browser), so a render does not lose what was typed.
let deciderInput = null;
function decider() {
  if (!deciderInput) {
    deciderInput = el("input", { id: "decider", type: "text", placeholder: "who decides", value: localStorage.getItem("blackboard-decider") || "" });
    deciderInput.addEventListener("change", () => localStorage.setItem("blackboard-decider", deciderInput.value.trim()));
  }
  return deciderInput;
}

// the labels the filter names: a signal is shown when it carries every one (as `signals --label` lists them)
const wantedLabels = () => $("label-filter").value.split(/[\s,]+/).filter(Boolean);
const labelled = (s, wanted) => wanted.every((l) => (s.labels || []).includes(l));

// The order of a column: what is to be done next first while it is open (POSTED: the most urgent, then the
// oldest, as workers claim, score aside; CLAIMED: the longest running), the newest first once it ended.
const before = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
const ORDER = {
  POSTED: (a, b) => a.priority - b.priority || before(a.created_at, b.created_at),
  CLAIMED: (a, b) => before(a.claimed_at || "", b.claimed_at || ""),
};
const ended = (s) => s.completed_at || s.created_at;
const newest = (a, b) => before(ended(b), ended(a)) || before(b.signal_id, a.signal_id);

// Each column: its full count (the labels filter applied to every signal), and its first S.cards[status]
// cards (CARDS at first), with a button for the next ones; a column with more scrolls on its own, where it
// was scrolled to before the redraw.
function renderColumns(signals) {
  const wanted = wantedLabels();
  const scrolled = new Map([...$("columns").children].map((c) => [c.dataset.status, c.scrollTop]));
  const by = new Map(STATUSES.map((status) => [status, []]));
  for (const s of signals) if (by.has(s.status) && labelled(s, wanted)) by.get(s.status).push(s);
  const columns = STATUSES.map((status) => {
    const here = by.get(status).sort(ORDER[status] || newest);
    const shown = Math.min(here.length, S.cards[status] || CARDS), rest = here.length - shown;
    const more = () => { S.cards[status] = shown + CARDS; render(); };
    return el("div", { class: rest ? "column long" : "column", "data-status": status }, el("h3", {}, `${status} `, el("span", { class: "count" }, String(here.length))),
      ...here.slice(0, shown).map(card),
      rest ? el("button", { type: "button", class: "more", onclick: more }, `show ${Math.min(CARDS, rest)} more of ${rest.toLocaleString("en")}`) : null);
  });
  $("columns").replaceChildren(...columns);
  for (const c of columns) c.scrollTop = scrolled.get(c.dataset.status) || 0;
}

function card(s) {
  const selected = s.signal_id === S.selected ? " selected" : "";
  return el("div", { class: `card ${s.status}${selected}`, "data-signal": s.signal_id, onclick: () => { S.selected = s.signal_id; render(); } },
    el("div", { class: "id" }, s.signal_id, " ", el("span", { class: "priority" }, `P${s.priority}`), " ",
      el("span", { class: "type" }, s.gate ? `${s.signal_type} · gate` : s.signal_type)),
    el("div", { class: "topic" }, s.payload.topic),
    s.attempt > 1 || (s.max_attempts || 1) > 1 ? el("div", { class: "attempt" }, `attempt ${s.attempt}${s.max_attempts ? `/${s.max_attempts}` : ""}`) : null,
    s.usage ? el("div", { class: "cost" }, cost(s.usage)) : null,
    (s.stalls || []).length ? el("div", { class: "stalled" }, stalled(s.stalls)) : null,
    // why a POSTED signal waits, in the words of `blackboard next`, as the server words them (docs/web.md)
    ...(s.status === "POSTED" ? [s.waiting, ...(s.waits || [])].filter(Boolean).map((w) => el("div", { class: "why" }, w)) : []),
    s.claimed_by ? el("div", { class: "who" }, "by ", s.claimed_by) : null,
    s.decided_by ? el("div", { class: "who" }, ({ COMPLETED: "approved by ", CANCELLED: "cancelled by " })[s.status] || "rejected by ", s.decided_by) : null,
    s.waiting_for.length ? el("div", { class: "who" }, "waits for ", s.waiting_for.join(", ")) : null,
    s.flow_id ? el("div", { class: "who" }, `step ${s.step_id} of ${s.flow_id}`) : null,
    (s.labels || []).length ? el("div", { class: "labels" }, ...s.labels.map((l) => el("span", { class: "label" }, l))) : null);
}

// the attempts whose run stalled (no progress for its stall_timeout: stopped, a failed attempt; docs/control.md)
function stalled(stalls) {
  return "stalled: " + stalls.map((t) => `attempt ${t.attempt} after ${Math.round(t.seconds_idle)}s idle`).join(", ");
}

// what a runner's run of it cost so far: dollars when priced, and its tokens
function cost(u) {
  const tokens = `${(u.input_tokens + u.output_tokens).toLocaleString("en")} tokens`;
  return u.cost_usd == null ? tokens : `$${Number(u.cost_usd).toFixed(4)} · ${tokens}`;
}

function renderDetail(view) {
  const s = view.signals.find((x) => x.signal_id === S.selected);
  if (!s) { $("detail").replaceChildren(el("p", { class: "hint" }, "Click a signal to see its payload, claimer, result and events.")); return; }
  const history = S.events.filter((e) => e.signal_id === s.signal_id && !e.key && e.position <= view.upto);
  $("detail").replaceChildren(
    el("h3", {}, `${s.signal_id} · ${s.signal_type} · ${s.status}`),
    el("dl", {}, ...[["posted by", s.posted_by], ["claimer", s.claimed_by || "—"], ["after", s.after.join(", ") || "—"],
      ["waited", span(s.claimable_since || s.created_at, s.claimed_at)], ["took", span(s.claimed_at, s.completed_at)],
      ["capabilities", s.target_capabilities.join(", ")]].flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)])),
    el("h4", {}, "payload"), el("pre", {}, JSON.stringify(s.payload, null, 2)),
    el("h4", {}, "result"), el("pre", {}, s.result ? JSON.stringify(s.result, null, 2) : "—"),
    el("h4", {}, "events"),
    el("ol", { class: "history" }, ...history.map((e) => el("li", {}, `#${e.position} ${time(e.recorded_at)} ${e.event_type}`, e.actor ? ` (${e.actor})` : ""))),
    el("div", { id: "run", class: "run" }));  // its run, live, with nudge and cancel: run.js fills it
}

// The most recent TIMELINE signals (by their post; `signals` come oldest first), and a line saying so when
// there are more: the columns and the slider show the others.
function renderTimeline(all, upto) {
  if (!all.length) { $("timeline").replaceChildren(el("p", { class: "hint" }, "No signals.")); return; }
  const signals = all.slice(-TIMELINE);
  const windowed = all.length > signals.length ? el("p", { id: "timeline-window", class: "hint" },
    `the most recent ${signals.length} of ${all.length.toLocaleString("en")} signals; the columns list them all`) : null;
  const ms = (iso) => iso ? Date.parse(iso) : null;
  const t0 = Math.min(...signals.map((s) => ms(s.created_at)));
  const then = upto === Infinity ? null : S.events.filter((e) => e.position <= upto).pop();  // the slider's moment
  const t1 = Math.max(then ? ms(then.recorded_at) : Date.now(), ...signals.map((s) => ms(s.completed_at) || 0));
  const agents = [...new Set(signals.map((s) => s.claimed_by || "(not claimed)"))].sort();
  const left = 130, width = 760, lane = 22, scale = (t) => left + (width * (t - t0)) / Math.max(1, t1 - t0);
  const perAgent = new Map(agents.map((a) => [a, []]));
  signals.forEach((s) => perAgent.get(s.claimed_by || "(not claimed)").push(s));
  let y = 20;
  const svg = el("svg:svg", { width: left + width + 10, class: "timeline" },
    el("svg:text", { x: left, y: 12, class: "small" }, time(new Date(t0).toISOString())),
    el("svg:text", { x: left + width, y: 12, class: "small", "text-anchor": "end" }, time(new Date(t1).toISOString())));
  for (const agent of agents) {
    const mine = perAgent.get(agent);
    svg.append(el("svg:text", { x: 4, y: y + 15, class: "agent" }, agent));
    for (const s of mine) {
      const posted = ms(s.created_at), claimed = ms(s.claimed_at), done = ms(s.completed_at);
      const end = done || t1, waitEnd = claimed || end;
      const g = el("svg:g", { "data-signal": s.signal_id }, el("svg:title", {}, `${s.signal_id} ${s.signal_type} ${s.status}`),
        el("svg:rect", { x: scale(posted), y: y + 4, width: Math.max(2, scale(waitEnd) - scale(posted)), height: lane - 8, class: "waiting" }));
      if (claimed) g.append(el("svg:rect", { x: scale(claimed), y: y + 2, width: Math.max(2, scale(end) - scale(claimed)), height: lane - 4, class: `working ${s.status}` }));
      g.append(el("svg:text", { x: scale(posted) + 3, y: y + 15, class: "small" }, s.signal_id));
      svg.append(g);
      y += lane;
    }
    y += 6;
  }
  svg.setAttribute("height", String(y + 4));
  $("timeline").replaceChildren(...(windowed ? [windowed] : []), svg);
}

function renderEntries(entries) {
  const head = el("tr", {}, ...["key", "v", "author", "type", "value", "topics", "conflict"].map((h) => el("th", {}, h)));
  const rows = entries.map((e) => el("tr", { class: `entry${e.conflict ? " in-conflict" : ""}${e.key === S.entryKey ? " selected" : ""}`, "data-key": e.key,
      onclick: () => { S.entryKey = e.key; showEntry(e.key); render(); } },
    el("td", {}, e.key), el("td", {}, String(e.version)), el("td", {}, e.author), el("td", {}, e.entry_type),
    el("td", { class: "value" }, short(e.value)), el("td", {}, e.topics.join(", ")),
    el("td", { class: e.conflict ? "conflict" : "" }, e.conflict
      ? "conflict: " + e.conflict.candidates.map((c) => `v${c.version} by ${c.author}: ${short(c.value, 30)}`).join(" | ") : "")));
  $("entries").replaceChildren(head, ...(rows.length ? rows : [el("tr", {}, el("td", { colspan: 7, class: "hint" }, "No entries."))]));
}

async function showEntry(key) {
  const at = S.live ? "" : `&at=${S.at}`;
  const target = $("entry-detail");
  try {
    const versions = await getJSON(`/api/entry?board=${enc(S.board)}&key=${enc(key)}${at}`);
    target.replaceChildren(el("h3", {}, `history of ${key}`), el("ol", { class: "history" }, ...versions.map((v) =>
      el("li", { class: v.status }, `v${v.version} ${v.status} by ${v.author} at #${v.position}: ${short(v.value, 100)}`,
        v.rationale ? ` (picked ${v.picked ?? "a merge"}: ${v.rationale})` : ""))));
  } catch (error) {
    target.replaceChildren(el("p", { class: "hint" }, `${key}: not written yet at this position`));
  }
}

function renderTopics(view) {
  const topics = new Map();
  for (const e of S.events) {
    if (e.position > view.upto || !e.key || !(e.data.topics || []).length) continue;
    if (e.event_type === "EntryCandidateKept") continue;  // a candidate left in conflict is not published
    for (const t of e.data.topics) {
      const seen = topics.get(t) || { count: 0, last: "", keys: new Set() };
      seen.count += 1; seen.last = e.recorded_at; seen.keys.add(e.key);
      topics.set(t, seen);
    }
  }
  const head = el("tr", {}, ...["topic", "published", "last", "keys"].map((h) => el("th", {}, h)));
  const rows = [...topics.entries()].sort().map(([t, s]) => el("tr", { "data-topic": t },
    el("td", {}, t), el("td", {}, String(s.count)), el("td", {}, time(s.last)), el("td", {}, [...s.keys].join(", "))));
  $("topics").replaceChildren(head, ...(rows.length ? rows : [el("tr", {}, el("td", { colspan: 4, class: "hint" }, "No topic activity."))]));
}

function renderEvents(upto) {
  const head = el("tr", {}, ...["#", "time", "event", "of", "by"].map((h) => el("th", {}, h)));
  const rows = S.events.slice(-SHOWN_EVENTS).reverse().map((e) => el("tr", { class: e.position > upto ? "future" : "", "data-position": e.position },
    el("td", {}, String(e.position)), el("td", {}, time(e.recorded_at)), el("td", {}, e.event_type),
    el("td", {}, e.key || e.signal_id || ""), el("td", {}, e.actor || e.data.claimed_by || e.data.author || "")));
  $("events").replaceChildren(head, ...rows);
}

// after every script of the page ran, so each panel has registered itself before the first redraw
document.addEventListener("DOMContentLoaded", () => start().catch((error) => {
  $("connection").textContent = `error: ${error.message}`; $("connection").className = "connection off";
}));
