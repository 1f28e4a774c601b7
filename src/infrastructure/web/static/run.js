// The web view: a run live: its output as `show --follow` prints it, with nudge and cancel for a person holding the token.
// Registers its panel in PANELS (app.js): it fills the `#run` placeholder of the signal's detail (app.js renderDetail)
// on every redraw. Its own names stay inside this function: the page's scripts share one global scope.
"use strict";

(() => {
  const FOLLOW_EVERY = 500;  // ms between pages of /api/output while the run goes on
  let run = { signal: null, lines: [], after: "", ended: false, timer: null };

  // Kept across redraws (renderDetail rebuilds the detail each time): what a person typed stays.
  const output = el("pre", { id: "output", class: "output" });
  const nudgeText = el("input", { type: "text", class: "nudge-text", placeholder: "a word to the running agent", "aria-label": "nudge text" });
  const reason = el("input", { type: "text", class: "cancel-reason", placeholder: "why it is cancelled", "aria-label": "cancel reason" });
  const name = el("input", { type: "text", class: "run-name", placeholder: "who acts", "aria-label": "your name" });
  const message = el("p", { id: "run-message", class: "hint" });
  const fields = [nudgeText, reason, name];
  const controls = el("div", { class: "run-acts" },
    el("label", {}, "your name ", name),
    el("div", {}, nudgeText, " ", el("button", { type: "button", class: "nudge", onclick: () => act("nudge") }, "nudge")),
    el("div", {}, reason, " ", el("button", { type: "button", class: "cancel", onclick: () => act("cancel") }, "cancel")));

  // One name for every act: this field writes through to the gates' (app.js decider(), kept in this browser).
  name.addEventListener("input", () => { decider().value = name.value; });
  name.addEventListener("change", () => decider().dispatchEvent(new Event("change")));

  // A redraw takes the fields out of the page and back, which loses the focus: the one typed in gets it back.
  let typing = null;
  document.addEventListener("focusin", (e) => { typing = fields.includes(e.target) ? e.target : null; });
  document.addEventListener("mousedown", (e) => { if (!fields.includes(e.target)) typing = null; });

  function text() {
    if (!run.lines.length) return run.ended ? "(no output kept)" : "(waiting for output)";
    return run.lines.map((l) => l.line).join("\n");  // each as every follower shows it (the server words it)
  }

  // The output keeps up with the run unless one scrolled back in it; a redraw (which puts it back in the page
  // at its top) keeps where one was.
  let pinned = true, top = 0;
  output.addEventListener("scroll", () => {
    if (!output.isConnected) return;
    top = output.scrollTop;
    pinned = top + output.clientHeight >= output.scrollHeight - 4;
  });
  const scrolled = () => { output.scrollTop = pinned ? output.scrollHeight : top; };

  function show() {
    output.textContent = text();
    output.dataset.ended = String(run.ended);  // the follow got the signal's outcome: no more pages asked for
    scrolled();
  }

  // pages of /api/output after the last line seen, until the signal ended (its `outcome`)
  function follow(signalId) {
    if (run.signal === signalId) return;  // already following it
    clearTimeout(run.timer);
    run = { signal: signalId, lines: [], after: "", ended: false, timer: null };
    message.textContent = "";
    pinned = true;
    show();
    next(run);
  }

  async function next(mine) {
    if (run !== mine) return;  // another signal was picked meanwhile
    try {
      const page = await getJSON(`/api/output?signal=${enc(mine.signal)}&after=${enc(mine.after)}`);
      if (run !== mine) return;
      mine.lines.push(...page.lines);
      mine.after = page.after;
      mine.ended = page.outcome !== null;
    } catch (error) {
      if (run !== mine) return;
    }
    show();
    if (!mine.ended) mine.timer = setTimeout(() => next(mine), FOLLOW_EVERY);
  }

  // POST /api/signals/SIG/nudge or /cancel through app.js's decide (the token in its header), as a gate's decision
  async function act(action) {
    const signalId = run.signal, by = decider().value.trim();
    const body = action === "nudge" ? { by, text: nudgeText.value } : { by, reason: reason.value.trim() || null };
    try {
      await decide(signalId, action, body, "signals");
      message.textContent = `${signalId} ${action === "nudge" ? "nudged" : "cancelled"} by ${by}`;
      (action === "nudge" ? nudgeText : reason).value = "";
      render();
    } catch (error) {
      message.textContent = error.message;
    }
  }

  function draw(view) {
    const place = $("run");
    const s = place && view.signals.find((x) => x.signal_id === S.selected);
    if (!s) { clearTimeout(run.timer); run = { signal: null, lines: [], after: "", ended: true, timer: null }; return; }
    follow(s.signal_id);
    const acting = s.status === "CLAIMED" && S.decide && S.token && S.live;  // as the gates' buttons
    if (acting && document.activeElement !== name) name.value = decider().value;
    const hint = s.status === "CLAIMED" && S.decide && !S.token
      ? el("p", { class: "hint" }, "Open the page with ?token=T to nudge or cancel this run.") : null;
    place.replaceChildren(...[el("h4", {}, "output"), output, acting ? controls : null, hint, message].filter(Boolean));
    scrolled();
    if (typing && typing.isConnected && document.activeElement !== typing) typing.focus();
  }

  PANELS.push(draw);
})();
