// The web view: the live workers, what each runs now and for how long, its last beat.
// Registers its panel in PANELS (app.js). The workers come from GET /api/workers, polled: a beat is no log
// event, so the live stream does not carry them. Ages are the server's (its clock read them), grown by the
// time since its answer came, so a browser whose clock is off shows them right.
"use strict";

const WORKERS_EVERY = 2000;  // ms between polls
const WORKERS_BACK_OFF = 30000;  // at most this long between polls while the server does not answer
const W = { fleet: null, received: 0, failed: false, every: WORKERS_EVERY };

async function pollWorkers() {
  // one request at a time: the next poll is planned once this one answered (or failed)
  if (!document.hidden) {
    try {
      W.fleet = await getJSON("/api/workers");
      W.received = performance.now();
      W.failed = false;
      W.every = WORKERS_EVERY;
    } catch (error) {
      W.failed = true;  // said once in the panel; polled less often until it answers again
      W.every = Math.min(WORKERS_BACK_OFF, W.every * 2);
    }
    drawWorkers();
  }
  setTimeout(pollWorkers, W.every);
}

// an age in the words of `blackboard status`: 3s, 4m05s, 2h07m, 3d04h
function age(seconds) {
  const s = Math.max(0, Math.floor(seconds)), two = (n) => String(n).padStart(2, "0");
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${two(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${two(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86400)}d${two(Math.floor((s % 86400) / 3600))}h`;
}

// a signal a worker runs, picked as a card is; one of another board turns the page to that board first
function selectRun(run) {
  S.selected = run.signal_id;
  if (run.blackboard_id === S.board) { render(); return; }
  S.board = run.blackboard_id;
  S.boards.add(run.blackboard_id);
  S.entryKey = null;
  goLive();
  loadBoard();
}

// the topic of a signal of the board shown, as its card says it (the page holds the board's signals)
function topicOf(signalId) {
  const s = S.signals.get(signalId);
  return s ? el("span", { class: "hint" }, ` ${s.payload.topic}`) : "";
}

function drawWorkers() {
  const target = $("workers");
  if (!target) return;
  const notes = [];
  if (!S.live) notes.push(el("p", { class: "hint workers-note" }, "Workers are shown live only, whatever the log position: presence has no history."));
  if (W.failed) notes.push(el("p", { class: "hint workers-note failed" }, "workers: unavailable"));
  if (!W.fleet) { target.replaceChildren(...notes, ...(W.failed ? [] : [el("p", { class: "hint" }, "Reading the workers…")])); return; }
  const grown = (performance.now() - W.received) / 1000;
  const head = el("tr", {}, ...["agent", "host:pid", "boards", "runs now", "for", "last beat"].map((h) => el("th", {}, h)));
  const rows = W.fleet.workers.map((w) => el("tr", { class: `worker${w.runs.length ? " busy" : ""}`, "data-worker": w.worker_id },
    el("td", { class: "agent" }, w.agent),
    el("td", { class: "where" }, `${w.host}:${w.pid}`),
    el("td", {}, (w.boards || ["all"]).join(", ")),
    el("td", { class: "runs" }, ...(w.runs.length ? w.runs.map((r) => el("div", {},
      el("a", { href: "#", class: "run", "data-signal": r.signal_id, onclick: (e) => { e.preventDefault(); selectRun(r); } }, r.signal_id),
      r.blackboard_id === S.board ? topicOf(r.signal_id) : ` on ${r.blackboard_id}`)) : [el("span", { class: "hint" }, "nothing")])),
    el("td", { class: "for" }, ...w.runs.map((r) => el("div", {}, age(r.running_seconds + grown)))),
    el("td", { class: "beat" }, `${age(w.last_beat_seconds + grown)} ago`)));
  const none = el("tr", {}, el("td", { colspan: 6, class: "hint" }, "No live worker: start one with blackboard worker --agent NAME."));
  target.replaceChildren(...notes, el("table", { class: "table" }, head, ...(rows.length ? rows : [none])));
}

PANELS.push(drawWorkers);
document.addEventListener("DOMContentLoaded", pollWorkers);
