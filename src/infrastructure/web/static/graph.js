// The web view: the dependency graph laid out: layers by what waits on what, and flows' phases.
// Registers its panel in PANELS (app.js).
"use strict";

// A layered (Sugiyama) drawing of the view's signals: an edge from each upstream to what waits on it (`after`), a
// dashed one from a failed signal to its retry (`retry_of`). Each connected group is laid out on its own: layers by
// longest path (an upstream left of what waits on it), an edge that spans layers routed through them (a point in
// each, kept clear of the boxes), the order within each layer from a few barycenter sweeps down and up (the one
// with the fewest crossings kept), heights without overlap pulled toward the neighbours'. A flow's steps are laid
// out the same way inside a band (its id over it, its phases in step order left to right), which the group's
// layout then places as one box spanning the band's layers. Signals with no edge and in no flow are chips in a
// strip over the graph. At most MAX_BOXES boxes: the most recent groups first, a line says what was left out. The
// layout depends only on which signals are shown (their edges never change), so it is kept until that changes.
const GRAPH = {
  W: 136, H: 34, COL: 176, GAP: 14, DUMMY: 6, PAD: 8, LABEL: 18, MARGIN: 36, SWEEPS: 4,
  MAX_BOXES: 300, LONE_SHOWN: 60,
  kept: { key: null, layout: null },
  room: 860,  // the width the groups' rows fill: the panel's, once the browser has laid it out
  timing: null,  // the last redraw's: {signals, boxes, layout_ms (0: the kept layout), kept_ms (what it took), draw_ms}
};

PANELS.push(renderGraph);

// the panel's width, told by the browser after it laid the page out (reading it while drawing would make the
// browser lay out the whole page there and then, a second time each redraw on a large board)
new ResizeObserver(([entry]) => {
  const room = Math.max(400, Math.floor(entry.contentRect.width) - 2 * GRAPH.PAD - 12);
  if (room !== GRAPH.room) { GRAPH.room = room; schedule(); }
}).observe($("graph"));

function renderGraph(view) {
  const t0 = performance.now();
  const signals = view.signals;
  const room = GRAPH.room;
  const key = `${shownKey(signals)}:${room}`;
  const fresh = GRAPH.kept.key !== key;
  if (fresh) GRAPH.kept = { key, layout: graphLayout(signals, room), ms: 0 };
  const t1 = performance.now();
  if (fresh) GRAPH.kept.ms = t1 - t0;
  const layout = GRAPH.kept.layout;
  const byId = new Map(signals.map((s) => [s.signal_id, s]));
  $("graph").replaceChildren(...(signals.length ? graphParts(layout, byId) : [el("p", { class: "hint" }, "No signals.")]));
  GRAPH.timing = { signals: signals.length, boxes: layout.boxes, layout_ms: fresh ? t1 - t0 : 0, kept_ms: GRAPH.kept.ms, draw_ms: performance.now() - t1 };
}

// which signals are shown, in one number (their edges never change, so neither does their layout)
function shownKey(signals) {
  let h = 2166136261;
  for (const s of signals) {
    const id = s.signal_id;
    for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619);
    h = Math.imul(h ^ 44, 16777619);
  }
  return `${signals.length}:${h >>> 0}`;
}

// --- what is drawn: the groups, the lone signals, the boxes left out -----------------------------------------

function graphLayout(signals, room) {
  const n = signals.length, index = new Map(signals.map((s, i) => [s.signal_id, i]));
  const edges = [];  // [from, to, retry]
  signals.forEach((s, i) => {
    for (const u of s.after) if (index.has(u)) edges.push([index.get(u), i, false]);
    if (s.retry_of && index.has(s.retry_of)) edges.push([index.get(s.retry_of), i, true]);
  });
  // groups: what edges and flows join (union-find, near-linear)
  const parent = Array.from({ length: n }, (_, i) => i);
  const root = (i) => { while (parent[i] !== i) { parent[i] = parent[parent[i]]; i = parent[i]; } return i; };
  const join = (a, b) => { a = root(a); b = root(b); if (a !== b) parent[Math.max(a, b)] = Math.min(a, b); };
  const linked = new Uint8Array(n), flowFirst = new Map();
  for (const [a, b] of edges) { join(a, b); linked[a] = linked[b] = 1; }
  signals.forEach((s, i) => {
    if (!s.flow_id) return;
    linked[i] = 1;
    if (flowFirst.has(s.flow_id)) join(flowFirst.get(s.flow_id), i); else flowFirst.set(s.flow_id, i);
  });
  const groups = new Map(), lone = [];
  for (let i = 0; i < n; i++) {
    if (!linked[i]) { lone.push(i); continue; }
    const r = root(i);
    if (!groups.has(r)) groups.set(r, []);
    groups.get(r).push(i);
  }
  // the most recent groups first (the view is in creation order: a group's last member is its newest)
  const recent = [...groups.values()].sort((a, b) => b[b.length - 1] - a[a.length - 1]);
  const drawn = [];
  let boxes = 0, leftSignals = 0, leftGroups = 0, cut = 0;
  for (const members of recent) {  // until one does not fit: all left out is older than all drawn
    if (!leftGroups && boxes + members.length <= GRAPH.MAX_BOXES) { drawn.push(members); boxes += members.length; continue; }
    if (!drawn.length) {  // one group larger than the bound: its newest signals, with the edges among them
      drawn.push(members.slice(-GRAPH.MAX_BOXES)); boxes = GRAPH.MAX_BOXES; cut = members.length;
      continue;
    }
    leftSignals += members.length; leftGroups += 1;
  }
  const out = new Map();
  edges.forEach(([a, b, retry]) => { if (!out.has(a)) out.set(a, []); out.get(a).push([b, retry]); });
  const placed = drawn.map((members) => groupLayout(members, signals, out));
  const ids = signals.map((s) => s.signal_id);
  return { ...pack(placed, room), ids, boxes, lone: lone.reverse().map((i) => ids[i]), leftSignals, leftGroups, cut };
}

// one group: its flows laid out first (each a band), then the group with each band as one wide box. An edge
// between a band's step and a signal outside it leaves (or enters) the band through its last (first) layer: a
// port there, which the band's layout routes the edge to, as it routes an edge that skips a layer.
function groupLayout(members, signals, out) {
  const G = GRAPH, inGroup = new Set(members), flowOf = (i) => signals[i].flow_id;
  const flows = new Map();  // flow id -> its members
  for (const i of members) {
    if (!flowOf(i)) continue;
    if (!flows.has(flowOf(i))) flows.set(flowOf(i), []);
    flows.get(flowOf(i)).push(i);
  }
  const outward = new Set(), inward = new Set();  // steps with an edge to (from) a signal outside their band
  for (const i of members) for (const [t] of out.get(i) || []) {
    if (!inGroup.has(t) || (flowOf(i) && flowOf(i) === flowOf(t))) continue;
    if (flowOf(i)) outward.add(i);
    if (flowOf(t)) inward.add(t);
  }
  const boxOf = new Map(), items = [];  // signal -> [item, the step's index in its band's layout, or -1]
  for (const i of members) {
    if (!flowOf(i)) { boxOf.set(i, [items.length, -1]); items.push({ span: 1, h: G.H, signal: i }); continue; }
    if (!flows.has(flowOf(i))) continue;  // its band is made already
    const f = flowOf(i), steps = flows.get(f).sort((a, b) => stepPlace(signals[a]) - stepPlace(signals[b]) || a - b);
    flows.delete(f);
    const at = new Map(steps.map((s, k) => [s, k]));
    const innerEdges = [];
    for (const s of steps) for (const [t, retry] of out.get(s) || []) if (at.has(t)) innerEdges.push({ a: at.get(s), b: at.get(t), retry, offA: G.H / 2, offB: G.H / 2 });
    const boxes = steps.map(() => ({ span: 1, h: G.H }));
    let inner = layered(boxes, innerEdges);
    const ports = new Map(), portItems = [], portEdges = [];  // "out:k" / "in:k" -> the port's index
    steps.forEach((s, k) => {
      const port = (side, edge) => { ports.set(`${side}:${k}`, boxes.length + portItems.length); portEdges.push(edge(boxes.length + portItems.length)); portItems.push({ span: 1, h: G.DUMMY, at: side === "out" ? "last" : "first" }); };
      if (outward.has(s) && inner.nodes[k].layer < inner.layers - 1) port("out", (p) => ({ a: k, b: p, offA: G.H / 2, offB: G.DUMMY / 2 }));
      if (inward.has(s) && inner.nodes[k].layer > 0) port("in", (p) => ({ a: p, b: k, offA: G.DUMMY / 2, offB: G.H / 2 }));
    });
    if (portItems.length) inner = layered([...boxes, ...portItems], [...innerEdges, ...portEdges]);
    const item = { span: inner.layers, h: inner.height + G.LABEL + 2 * G.PAD, flow: f, steps, inner, innerEdges, ports, portEdges };
    steps.forEach((s, k) => boxOf.set(s, [items.length, k]));
    items.push(item);
  }
  const end = (i, side) => {  // where an edge meets a signal: its item, the offset from the item's top, the port
    const [item, k] = boxOf.get(i);
    if (k < 0) return [item, G.H / 2, null];
    const it = items[item], port = it.ports.get(`${side}:${k}`), node = it.inner.nodes[port === undefined ? k : port];
    return [item, G.LABEL + G.PAD + node.y + node.h / 2, port === undefined ? null : port];
  };
  const edges = [];
  for (const i of members) for (const [t, retry] of out.get(i) || []) {
    if (!inGroup.has(t) || (flowOf(i) && flowOf(i) === flowOf(t))) continue;  // inside a band: drawn with it
    const [a, offA, portA] = end(i, "out"), [b, offB, portB] = end(t, "in");
    edges.push({ a, b, retry, offA, offB, from: i, to: t, portA, portB });
  }
  const outer = layered(items, edges);
  // absolute places: boxes, bands, edges as lists of points (an edge's two ends on its boxes' sides)
  const inside = (item, node) => { const o = outer.nodes[item]; return { x: o.x + node.x, y: o.y + G.LABEL + G.PAD + node.y }; };
  const boxAt = (i) => { const [item, k] = boxOf.get(i); return k < 0 ? outer.nodes[item] : inside(item, items[item].inner.nodes[k]); };
  const via = (item, port) => {  // a port, and the points of the band's layout between it and its step
    const it = items[item], chain = it.inner.chains[it.innerEdges.length + it.portEdges.findIndex((e) => e.a === port || e.b === port)];
    const points = chain.map((d) => inside(item, d)), at = inside(item, it.inner.nodes[port]);
    return it.portEdges.some((e) => e.b === port) ? [...points, at] : [at, ...points];
  };
  const boxes = [], bands = [], lines = [];
  items.forEach((it, j) => {
    const o = outer.nodes[j];
    if (!it.flow) { boxes.push({ signal: it.signal, x: o.x, y: o.y }); return; }
    bands.push({ flow: it.flow, x: o.x - G.PAD, y: o.y, w: (it.span - 1) * G.COL + G.W + 2 * G.PAD, h: it.h });
    it.steps.forEach((s, k) => boxes.push({ signal: s, ...inside(j, it.inner.nodes[k]) }));
    it.innerEdges.forEach((e, n) => lines.push({ retry: e.retry, from: it.steps[e.a], to: it.steps[e.b],
      points: route(boxAt(it.steps[e.a]), it.inner.chains[n].map((d) => inside(j, d)), boxAt(it.steps[e.b])) }));
  });
  edges.forEach((e, n) => {
    const through = [...(e.portA === null ? [] : via(e.a, e.portA)), ...outer.chains[n], ...(e.portB === null ? [] : via(e.b, e.portB))];
    lines.push({ retry: e.retry, from: e.from, to: e.to, points: route(boxAt(e.from), through, boxAt(e.to)) });
  });
  return { boxes, bands, lines, width: outer.width, height: outer.height };
}

// an edge's points: out of its upstream's right side, straight through each layer it crosses, into the left side
function route(from, through, to) {
  const G = GRAPH, points = [{ x: from.x + G.W, y: from.y + G.H / 2 }];
  for (const d of through) points.push({ x: d.x, y: d.y + G.DUMMY / 2 }, { x: d.x + G.W, y: d.y + G.DUMMY / 2 });
  points.push({ x: to.x, y: to.y + G.H / 2 });
  return points;
}

// the groups in rows, left to right, a row as wide as the panel's room (or the widest group)
function pack(groups, room) {
  const G = GRAPH, at = [];
  let x = 0, y = 0, row = 0, width = 0;
  for (const g of groups) {
    if (x > 0 && x + g.width > room) { x = 0; y += row + G.MARGIN; row = 0; }
    at.push({ group: g, dx: x + G.PAD + 2, dy: y + 4 });
    width = Math.max(width, x + g.width);
    x += g.width + G.MARGIN * 2;
    row = Math.max(row, g.height);
  }
  return { groups: at, width: width + 2 * G.PAD + 4, height: y + row + 8 };
}

// --- the layered layout of one set of items (boxes, or bands spanning layers) ---------------------------------

// items: [{span, h}] in their first order (creation, or step order); edges: [{a, b, offA, offB}], offX where the edge
// meets item X from its top. Gives each item its layer, x and y, and each edge the points it passes in the layers
// between its ends (`chains`).
function layered(items, edges) {
  const G = GRAPH, n = items.length;
  const pred = items.map(() => []), succ = items.map(() => []);
  edges.forEach((e) => { succ[e.a].push(e.b); pred[e.b].push(e.a); });
  const indeg = pred.map((p) => p.length), order = [];
  for (let i = 0; i < n; i++) if (!indeg[i]) order.push(i);
  for (let q = 0; q < order.length; q++) for (const v of succ[order[q]]) if (--indeg[v] === 0) order.push(v);
  if (order.length < n) for (let i = 0; i < n; i++) if (indeg[i] > 0) order.push(i);  // a cycle: none is possible
  // longest path: each after every upstream; a source then pulled right, next to the first that waits on it
  const layer = new Array(n).fill(0);
  for (const v of order) for (const u of pred[v]) layer[v] = Math.max(layer[v], layer[u] + items[u].span);
  for (let q = order.length - 1; q >= 0; q--) {
    const v = order[q];
    if (pred[v].length || !succ[v].length) continue;
    layer[v] = Math.min(...succ[v].map((w) => layer[w])) - items[v].span;
  }
  const free = layer.filter((l, i) => !items[i].at), first = Math.min(...free), last = Math.max(...free);
  items.forEach((it, i) => { if (it.at) layer[i] = it.at === "first" ? first : last; });  // a band's ports
  const low = Math.min(...layer);
  // the nodes: the items, then a point in each layer an edge crosses; segments join nodes of adjacent layers
  const nodes = items.map((it, i) => ({ span: it.span, h: it.h, layer: layer[i] - low, ins: [], outs: [] }));
  const segs = [];
  const link = (a, offA, b, offB) => { segs.push({ a, b, offA, offB }); nodes[a].outs.push(segs.length - 1); nodes[b].ins.push(segs.length - 1); };
  const chains = edges.map((e) => {
    const chain = [];
    let prev = e.a, off = e.offA;
    for (let l = nodes[e.a].layer + nodes[e.a].span; l < nodes[e.b].layer; l++) {
      nodes.push({ span: 1, h: G.DUMMY, layer: l, ins: [], outs: [], dummy: true });
      link(prev, off, nodes.length - 1, G.DUMMY / 2);
      prev = nodes.length - 1; off = G.DUMMY / 2;
      chain.push(prev);
    }
    link(prev, off, e.b, e.offB);
    return chain;
  });
  const layers = Math.max(1, ...nodes.map((v) => v.layer + v.span));
  let rows = Array.from({ length: layers }, () => []);
  nodes.forEach((v, i) => { for (let l = v.layer; l < v.layer + v.span; l++) rows[l].push(i); });
  rows = sweep(nodes, segs, rows);
  const y = heights(nodes, segs, rows);
  const top = Math.min(...y);
  nodes.forEach((v, i) => { v.x = v.layer * G.COL; v.y = Math.round(y[i] - top); });
  return {
    nodes, layers,
    chains: chains.map((c) => c.map((d) => nodes[d])),
    width: Math.max(...nodes.map((v) => v.x + (v.span - 1) * G.COL + G.W)),
    height: Math.max(...nodes.map((v) => v.y + v.h)),
  };
}

// the order within each layer: barycenter sweeps down (by the layer before) and up (by the layer after); the
// order with the fewest crossings wins. A wide box (a band) keeps one order among the other wide ones in every
// layer it spans, so it can hold one height.
function sweep(nodes, segs, rows) {
  const wide = nodes.map((v, i) => i).filter((i) => nodes[i].span > 1);
  const rank = () => rows.map((row) => new Map(row.map((v, k) => [v, k])));  // per layer: node -> its place
  const level = () => {
    if (wide.length < 2) return;
    const r = rank(), where = (v) => { let t = 0; for (let l = nodes[v].layer; l < nodes[v].layer + nodes[v].span; l++) t += r[l].get(v) / rows[l].length; return t / nodes[v].span; };
    const sorted = [...wide].sort((a, b) => where(a) - where(b));
    for (const row of rows) {
      const here = new Set(row.filter((v) => nodes[v].span > 1)), queue = sorted.filter((v) => here.has(v));
      for (let k = 0; k < row.length; k++) if (here.has(row[k])) row[k] = queue.shift();
    }
  };
  const pass = (down) => {
    for (let q = 1; q < rows.length; q++) {
      const l = down ? q : rows.length - 1 - q, from = down ? l - 1 : l + 1, r = new Map(rows[from].map((v, k) => [v, k]));
      const mine = new Map(rows[l].map((v, k) => [v, k]));
      const bary = (v) => {
        const node = nodes[v];
        if (r.has(v)) return r.get(v);  // a wide box: where it is in the layer beside
        const ends = (down ? node.ins.map((s) => segs[s].a) : node.outs.map((s) => segs[s].b)).filter((u) => r.has(u));
        return ends.length ? ends.reduce((t, u) => t + r.get(u), 0) / ends.length : mine.get(v) * (rows[from].length / Math.max(1, rows[l].length));
      };
      const b = new Map(rows[l].map((v) => [v, bary(v)]));
      rows[l] = [...rows[l]].sort((x, z) => b.get(x) - b.get(z) || mine.get(x) - mine.get(z));
    }
    level();
  };
  const crossings = () => {
    const r = rank();
    let count = 0;
    for (let l = 0; l + 1 < rows.length; l++) {
      const pairs = [];
      for (const v of rows[l]) {
        if (nodes[v].layer + nodes[v].span - 1 > l) pairs.push([r[l].get(v), r[l + 1].get(v)]);
        else for (const s of nodes[v].outs) if (r[l + 1].has(segs[s].b)) pairs.push([r[l].get(v), r[l + 1].get(segs[s].b)]);
      }
      count += inversions(pairs, rows[l + 1].length);
    }
    return count;
  };
  let best = rows.map((row) => [...row]), fewest = crossings();
  for (let k = 0; k < GRAPH.SWEEPS && fewest > 0; k++) {
    for (const down of [true, false]) {
      pass(down);
      const c = crossings();
      if (c < fewest) { fewest = c; best = rows.map((row) => [...row]); }
    }
  }
  return best;
}

// the crossings between two layers: the pairs of segments whose ends are in opposite orders, counted with a
// Fenwick tree over the lower ends (segments sorted by their upper ends): O(e log e)
function inversions(pairs, size) {
  pairs.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
  const tree = new Int32Array(size + 1);
  let count = 0, seen = 0;
  for (let i = 0; i < pairs.length;) {
    let j = i;
    while (j < pairs.length && pairs[j][0] === pairs[i][0]) j++;  // one upper end: its segments do not cross
    for (let k = i; k < j; k++) { let above = 0; for (let b = pairs[k][1] + 1; b > 0; b -= b & -b) above += tree[b]; count += seen - above; }
    for (let k = i; k < j; k++) { for (let b = pairs[k][1] + 1; b <= size; b += b & -b) tree[b] += 1; seen += 1; }
    i = j;
  }
  return count;
}

// heights: each node below the one above it in every layer it is in (a gap between), then moved, within what its
// neighbours in the layer allow, toward the heights of the nodes its edges join (a few passes down and up)
function heights(nodes, segs, rows) {
  const G = GRAPH, n = nodes.length, above = nodes.map(() => []), below = nodes.map(() => []);
  for (const row of rows) for (let k = 0; k + 1 < row.length; k++) {
    const a = row[k], b = row[k + 1], d = nodes[a].h + (nodes[a].dummy && nodes[b].dummy ? G.DUMMY : G.GAP);
    below[a].push([b, d]); above[b].push([a, d]);
  }
  const indeg = above.map((x) => x.length), order = [];
  for (let i = 0; i < n; i++) if (!indeg[i]) order.push(i);
  for (let q = 0; q < order.length; q++) for (const [b] of below[order[q]]) if (--indeg[b] === 0) order.push(b);
  const y = new Array(n).fill(0);
  if (order.length < n) {  // the rows disagree on an order (not expected): one under the other
    let t = 0;
    for (let i = 0; i < n; i++) { y[i] = t; t += nodes[i].h + G.GAP; }
    return y;
  }
  for (const v of order) for (const [a, d] of above[v]) y[v] = Math.max(y[v], y[a] + d);
  const wanted = (v) => {
    const node = nodes[v];
    let t = 0, c = 0;
    for (const s of node.ins) { t += y[segs[s].a] + segs[s].offA - segs[s].offB; c += 1; }
    for (const s of node.outs) { t += y[segs[s].b] + segs[s].offB - segs[s].offA; c += 1; }
    return c ? t / c : y[v];
  };
  const settle = (v) => {
    let lo = -Infinity, hi = Infinity;
    for (const [a, d] of above[v]) lo = Math.max(lo, y[a] + d);
    for (const [b, d] of below[v]) hi = Math.min(hi, y[b] - d);
    y[v] = Math.min(hi, Math.max(lo, wanted(v)));
  };
  for (let k = 0; k < 8; k++) {
    for (const v of order) settle(v);
    for (let q = order.length - 1; q >= 0; q--) settle(order[q]);
  }
  return y;
}

// --- drawing ---------------------------------------------------------------------------------------------

function graphParts(layout, byId) {
  const G = GRAPH, parts = [];
  const pick = (id) => () => { S.selected = id; render(); };
  if (layout.lone.length) {
    const chips = layout.lone.slice(0, G.LONE_SHOWN).map((id) => {
      const s = byId.get(id);
      return el("span", { class: `lone-chip ${s.status}${id === S.selected ? " selected" : ""}`, "data-signal": id,
        title: `${id} ${s.signal_type} · ${s.status}: ${s.payload.topic}`, onclick: pick(id) }, id);
    });
    const more = layout.lone.length - chips.length;
    parts.push(el("div", { class: "graph-lone" },
      el("span", { class: "graph-lone-count" }, `${layout.lone.length} signal${layout.lone.length === 1 ? "" : "s"} with no dependencies`),
      ...chips, more > 0 ? el("span", { class: "hint" }, `and ${more} more`) : null));
  }
  if (layout.leftSignals || layout.cut) {
    const count = (n, what) => `${n.toLocaleString("en")} ${what}${n === 1 ? "" : "s"}`;
    const drawn = layout.cut ? `the ${count(layout.boxes, "newest signal")} of a group of ${layout.cut.toLocaleString("en")} drawn`
      : `${count(layout.boxes, "signal")} drawn, the most recent groups`;
    const left = layout.leftSignals ? `; ${count(layout.leftSignals, "signal")} in ${count(layout.leftGroups, "older group")} left out` : "";
    parts.push(el("p", { class: "hint graph-left-out" }, `At most ${GRAPH.MAX_BOXES} boxes: ${drawn}${left}.`));
  }
  if (!layout.groups.length) return parts;
  const svg = el("svg:svg", { width: layout.width, height: layout.height, class: "graph" },
    el("svg:defs", {}, el("svg:marker", { id: "arrow", viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto" },
      el("svg:path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }))));
  const bands = [], lines = [], nodes = [];
  for (const { group, dx, dy } of layout.groups) {
    for (const b of group.bands) {
      bands.push(el("svg:g", { class: "band", "data-flow": b.flow },
        el("svg:rect", { x: b.x + dx, y: b.y + dy, width: b.w, height: b.h, rx: 8 }),
        el("svg:text", { x: b.x + dx + 6, y: b.y + dy + 13 }, `flow ${b.flow}`)));
    }
    for (const line of group.lines) {
      lines.push(el("svg:path", { d: curve(line.points, dx, dy), class: line.retry ? "edge retry" : "edge", "marker-end": "url(#arrow)",
        "data-from": layout.ids[line.from], "data-to": layout.ids[line.to] }));
    }
    for (const box of group.boxes) {
      const s = byId.get(layout.ids[box.signal]);
      nodes.push(el("svg:g", { class: `node ${s.status}${s.signal_id === S.selected ? " selected" : ""}`, "data-signal": s.signal_id,
        transform: `translate(${box.x + dx},${box.y + dy})`, onclick: pick(s.signal_id) },
        el("svg:title", {}, `${s.signal_id}: ${s.payload.topic}`),
        el("svg:rect", { width: G.W, height: G.H, rx: 5 }),
        el("svg:text", { x: 8, y: 14 }, s.signal_id),
        el("svg:text", { x: 8, y: 28, class: "small" }, `${s.step_id || s.signal_type} · ${s.status}`)));
    }
  }
  svg.append(...bands, ...lines, ...nodes);
  parts.push(svg);
  return parts;
}

// a smooth path through the points: a curve between layers (level where it leaves and where it arrives, so it
// stays between the two), a straight run through each layer it crosses
function curve(points, dx, dy) {
  const p = points.map((q) => [q.x + dx, q.y + dy]);
  let d = `M${p[0][0]},${p[0][1]}`;
  for (let k = 1; k < p.length; k++) {
    const [ax, ay] = p[k - 1], [bx, by] = p[k];
    if (k % 2 === 0) { d += ` L${bx},${by}`; continue; }  // through a layer
    const m = (bx - ax) / 2;
    d += ` C${ax + m},${ay} ${bx - m},${by} ${bx},${by}`;
  }
  return d;
}
