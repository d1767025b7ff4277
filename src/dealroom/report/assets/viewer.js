/* The trace viewer: the timeline loads page by page as it scrolls; documents and the memo
   history load when first opened. Data: DR.data.meta, items:N, memo, doc:ID. */
const meta = DR.data.meta;
const $ = (sel) => document.querySelector(sel);
const texts = new Set(meta.texts);

function ref(doc, first, last, quote, printed) {  /* printed: the page as printed, "452:7" */
  const pages = first ? (last && last !== first ? ` pp.${first}-${last}` : ` p.${first}`) : "";
  const shown = doc + pages + (printed ? `, printed ${printed}` : "");
  if (!texts.has(doc)) return esc(shown);
  const q = quote ? ` data-q="${esc(quote)}"` : "";
  const line = printed && first === (last || first) ? /:(\d+)$/.exec(printed) : null;
  const ml = line ? ` data-mline="${line[1]}"` : "";
  return `<a class="ref" href="#" data-doc="${esc(doc)}" data-page="${esc(first || 1)}"${q}${ml}>${esc(shown)}</a>`;
}
const CITATION = /\b(D\d{5})(?: (?:p|pp)\.(\d+)(?:-(\d+))?(?:, printed ([^\]\s,;]+(?: to [^\]\s,;]+)?))?)?/g;
function linkCitations(text) {  /* each line a span (the judge's line numbers link to it); a
  citation carries its line's words, to find the cited passage on the page */
  return text.split("\n").map((line, i) => {
    const quote = line.replace(CITATION, " ").replace(/[\[\]()*_#|]/g, " ").replace(/\s+/g, " ").trim();
    const html = esc(line).replace(CITATION, (m, doc, a, b, pr) => ref(doc, a ? +a : null, b ? +b : null, quote, pr));
    return `<span class="ln" data-line="${i + 1}">${html}</span>`;
  }).join("\n");
}
function words(text) {
  return (text.toLowerCase().match(/[a-z0-9$][a-z0-9$,.%-]*[a-z0-9%]/g) || [])
    .map((w) => w.replace(/[.,]+$/, "")).filter((w) => w.length > 3 || /\d/.test(w));
}
function passage(text, quote) {  /* the sentence of the page sharing most words with the quote */
  const want = new Set(words(quote || ""));
  let best = null;
  if (!want.size) return best;
  for (const m of text.matchAll(/(?:[^\n.!?;]|[.!?;](?=\S))+[.!?;]?/g)) {
    let score = 0;
    new Set(words(m[0])).forEach((w) => { if (want.has(w)) score += /\d/.test(w) ? 2 : 1; });
    if (score >= 2 && (!best || score > best.score)) best = { start: m.index, end: m.index + m[0].length, score };
  }
  return best;
}
function tokens(u) { return u ? (u.input_tokens || 0) + (u.output_tokens || 0) : 0; }

/* -- the header and tabs ------------------------------------------------------------------ */
const FAILURES = { no_code: "no code", cell_error: "cell error", failed_wave: "failed wave",
  low_budget: "low budget", tool_error: "tool error" };
function asks() {  /* the run's follow-up questions, each linking to its own turns */
  if (!(meta.asks || []).length) return;
  const el = $("#asks");
  el.hidden = false;
  el.innerHTML = "<b>follow-up questions</b>" + meta.asks.map((a) =>
    `<div class="ask"><a href="asks/${esc(a.number)}/index.html">${esc(a.number)}. ${esc(a.question)}</a>` +
    ` <span class="muted">${esc(a.status)}, ${esc(a.turns)} turns, $${fmt(a.cost_usd || 0, 4)}</span>` +
    `<div class="answer">${linkCitations(a.answer ?? "(no answer)")}</div></div>`).join("");
}
function banner() {
  asks();
  const f = meta.fork;
  if (!f) return;
  const el = $("#banner");
  el.hidden = false;
  if (meta.ask) {
    el.innerHTML = `<b>follow-up question ${esc(meta.ask.number)}</b> on <span class="source" title="${esc(f.path)}">${esc(f.run)}</span> after its turn ${esc(meta.ask.after_turn)}: ${esc(meta.ask.question)}`;
    return;
  }
  el.innerHTML = `<b>forked run</b>: continues <span class="source" title="${esc(f.path)}">${esc(f.run)}</span> after turn ${esc(f.turn)} · policy before: <code>${esc(f.before ?? "–")}</code> → after: <code>${esc(f.after ?? "–")}</code>`;
}
function model(role) {  // the model id sent and where, as config.json records it
  const m = (meta.models || {})[role];
  if (!m || !m.model) return meta[`${role}_model`] ?? meta[role];
  return m.base_url ? `${m.model} @ ${m.base_url}` : m.model;
}
function header() {
  banner();
  const s = meta.scores;
  $("#title").textContent = `${meta.run} — ${meta.room}`;
  $("#facts").innerHTML = [  /* model names and where, never spec strings (prices) */
    ["harness", meta.harness], ["root", model("root")], ["sub", model("sub")],
    ["status", meta.status], ["turns", meta.turns], ["wall", fmt(meta.wall_s, 1) + " s"],
    ["sub-calls", meta.behaviour.sub_calls], ["coverage", fmt(meta.coverage.coverage, 3)],
    ["pass rate", s ? fmt(s.pass_rate, 3) : "not judged"],
  ].map(([k, v]) => `<span><b>${esc(k)}</b> ${esc(v ?? "–")}</span>`).join("");
}
const TABS = ["timeline", "memo", "scores", "coverage", "usage"];
function showTab(name) {
  document.querySelectorAll("nav button").forEach((b) => b.classList.toggle("on", b.dataset.tab === name));
  document.querySelectorAll("main > section").forEach((s) => { s.hidden = s.id !== name; });
  if (location.hash.slice(1) !== name && !(name === "timeline" && location.hash.startsWith("#turn-")))
    history.replaceState(null, "", "#" + name);
  if (name === "memo") memoTab();
}
async function followHash() {  /* #memo, #scores, ...: that tab; #turn-3 (#turn-root/c1-0-2): that turn */
  const want = decodeURIComponent(location.hash.slice(1));
  if (TABS.includes(want)) { showTab(want); return; }
  if (!want.startsWith("turn-")) return;
  showTab("timeline");
  while (!document.getElementById(want) && nextPage < meta.pages) {
    const before = nextPage;
    try { await loadPage(); } catch (e) { break; }  // a page that cannot load: stop there
    if (nextPage === before) break;
  }
  const sec = document.getElementById(want);
  if (sec) { sec.classList.add("target"); sec.scrollIntoView({ block: "start" }); }
}

/* -- the timeline ---------------------------------------------------------------------------- */
const agents = {};
const waves = {};
const subs = {};
let nextPage = 0;

function agentBox(agent, item) {  /* a child: a box in the parent's turn that started it */
  if (agents[agent]) return agents[agent];
  let el = $("#timeline-body"), box = null;
  if (agent.includes("/")) {
    const parent = (item && item.parent) || agent.slice(0, agent.lastIndexOf("/"));
    const started = /\/t(\d+)\/s\d+$/.exec((item && item.call_id) || "");
    box = document.createElement("details");
    box.className = "child"; box.open = true; box.dataset.agent = agent;
    box.innerHTML = `<summary>child ${esc(agent)}<span class="task"></span> · <span class="state">running</span><span class="totals">${childTotals(agent)}</span></summary><div></div>`;
    turnBox(parent, started ? +started[1] : null).appendChild(box);
    el = box.lastElementChild;
  }
  return (agents[agent] = { el, turns: {}, current: null, box });
}
function childState(item) {  /* the child's summary: its task, then how it ended */
  const box = (agents[item.a] || {}).box;
  if (!box) return;
  if (item.k === "child_start") box.querySelector(".task").textContent = ` · ${item.task ?? ""}`;
  if (item.k !== "child_end") return;
  const state = box.querySelector(".state");
  state.textContent = `${item.status}, ${item.turns} turns` + (item.error ? `: ${item.error}` : "");
  state.classList.toggle("err", !!item.error);
}
function childTotals(agent) {  // the child's subtree, as metrics.json usage.by_child has it
  const u = ((meta.usage || {}).by_child || {})[agent];
  return u ? ` · ${fmt(u.calls)} calls · ${fmt(tokens(u))} tokens · $${fmt(u.cost_usd, 4)} (with its children)` : "";
}
function subName(spec) {  // a named sub-agent model's name (--sub fast=...), else its spec
  const named = Object.entries(meta.subs || {}).find(([, s]) => s === spec);
  return named ? named[0] : spec;
}
function turnBox(agent, turn, item) {
  const box = agentBox(agent, item);
  if (turn === null || turn === undefined) turn = box.current ?? 0;
  box.current = turn;
  if (!box.turns[turn]) {
    const sec = document.createElement("section");
    sec.className = "turn";
    sec.dataset.agent = agent; sec.dataset.turn = turn;
    const fails = agent === "root" ? (meta.failures || {})[turn] || [] : [];
    const badges = fails.map((f) => `<span class="badge ${esc(f.kind)}" title="${esc(f.detail)}">${esc(FAILURES[f.kind] || f.kind)}</span>`).join("");
    sec.id = `turn-${agent === "root" ? "" : agent + "-"}${turn}`;
    sec.innerHTML = `<h3><a class="turn-link" href="#${esc(sec.id)}">${esc(agent)} · ${turn ? "turn " + esc(turn) : "start"}</a>${badges}</h3>`;
    if (fails.length) sec.classList.add("failure-point");
    box.el.appendChild(sec);
    box.turns[turn] = sec;
  }
  return box.turns[turn];
}
function add(parent, cls, html) {
  const div = document.createElement("div");
  div.className = cls; div.innerHTML = html;
  parent.appendChild(div);
  return div;
}
function waveBox(item, parent) {
  const key = `${item.a}|${agents[item.a].current}|${item.wave}`;
  if (!waves[key]) {
    const box = document.createElement("details");
    box.className = "wave";
    box.innerHTML = `<summary>wave ${esc(item.wave ?? "–")}</summary><table class="calls"><thead><tr><th>call</th><th>slices</th><th>answer</th><th>model</th><th>tokens in / out</th><th>cost</th><th>latency</th><th></th></tr></thead><tbody></tbody></table>`;
    parent.appendChild(box);
    waves[key] = { box, calls: 0, tokens: 0 };
  }
  return waves[key];
}
function render(item) {
  if (item.k === "child_start" && item.a.includes("/")) {  // the child's box says it all
    agentBox(item.a, item); childState(item);
    return;
  }
  const at = turnBox(item.a, item.turn, item);
  switch (item.k) {
    case "reply":
      if (item.seen && item.seen.length) {
        const seen = item.seen.map((m) => (item.seen.length > 1 ? `[${m.role}]\n` : "") + (typeof m.content === "string" ? m.content : JSON.stringify(m.content))).join("\n\n");
        const first = seen.split("\n").find((x) => x.trim()) || "";
        add(at, "seen", `<details><summary>harness → ${esc(item.role)}${item.replaced ? " (whole prompt, after compaction)" : ""}: ${esc(first.slice(0, 90))} · ${fmt(seen.length)} chars</summary><pre>${esc(seen)}</pre></details>`);
      }
      add(at, "reply", `<details><summary>${esc(item.role)} reply · ${esc(item.model)} · ${fmt(tokens(item.usage))} tokens · ${fmt(item.lat, 2)} s${item.err ? " · <span class=err>error</span>" : ""}</summary>${item.think ? `<details class="reasoning"><summary>reasoning · ${fmt(item.think.length)} characters</summary><pre>${esc(item.think)}</pre></details>` : ""}<pre>${esc(item.out || item.err || "")}</pre></details>`);
      if (item.role === "root" && ((meta.failures || {})[item.turn] || []).some((f) => f.kind === "no_code"))
        add(at, "nothing-ran", "nothing ran: the reply had no ```python block");
      break;
    case "compaction":
      add(at, "reply", `<details><summary>history compacted · turns ${esc(item.turns && item.turns.join("–"))} summarized · ${fmt(item.before)} → ${fmt(item.after)} tokens${item.err ? " · <span class=err>no summary</span>" : ""}</summary><pre>${esc(item.summary || "")}</pre></details>`);
      break;
    case "cell": {
      const cell = add(at, "cell", `<pre class="code">${esc(item.code)}</pre><pre class="out">${esc(item.out)}</pre>` +
        (item.cut ? `<div class="note">output cut to the limit the root was shown</div>` : "") +
        (item.err ? `<pre class="err">${esc(item.err)}</pre>` : "") +
        (item.timed_out ? `<div class="err">timed out</div>` : "") + (item.crashed ? `<div class="err">crashed</div>` : ""));
      const first = at.querySelector(":scope > details.wave, :scope > .child-line, :scope > details.child");
      if (first) at.insertBefore(cell, first);  // the code before the waves it sent
      break;
    }
    case "sub": {
      const w = waveBox(item, at);
      w.calls += 1; w.tokens += tokens(item.usage);
      const n = Object.keys(subs).length;
      subs[n] = item;
      const slices = item.docs.map((d) => ref(d.id, d.pages && d.pages[0], d.pages && d.pages[1])).join(", ") || (item.text ? "text" : "");
      const row = document.createElement("tr");
      row.className = "call" + (item.err ? " failed" : ""); row.dataset.n = n;
      const answer = item.err ? "" : String(item.out ?? "").replace(/\s+/g, " ").trim();
      row.innerHTML = `<td><a href="#" class="open-call">${esc(item.id)}</a></td><td>${slices}</td><td class="preview" title="${esc(answer.slice(0, 400))}">${esc(answer.length > 80 ? answer.slice(0, 79) + "…" : answer)}</td><td>${esc(subName(item.model))}</td><td>${fmt(item.usage.input_tokens)} / ${fmt(item.usage.output_tokens)}</td><td class="num">$${fmt(item.usage.cost_usd || 0, 4)}</td><td>${fmt(item.lat, 2)} s</td><td>${item.err ? "<span class=err>failed</span>" : ""}</td>`;
      w.box.querySelector("tbody").appendChild(row);
      w.box.firstElementChild.textContent = `wave ${item.wave ?? "–"} · ${w.calls} calls · ${fmt(w.tokens)} tokens`;
      break;
    }
    case "wave": {
      const w = waveBox(item, at);
      w.box.firstElementChild.textContent = `wave ${item.wave} · ${item.calls} calls (${item.ok} ok, ${item.failed} failed) · ${fmt(item.seconds, 2)} s · ${fmt(w.tokens)} tokens`;
      break;
    }
    case "budget":
      add(at, "budget", `${item.of ? `turn ${esc(item.turn)} of ${esc(item.of)}` : `turn ${esc(item.turn)}`} · ${fmt(item.tokens)} tokens · $${fmt(item.cost, 4)} · ${fmt(item.t, 1)} s`);
      break;
    case "child_start":
      childState(item);
      add(at, "child-line", `child started: ${esc(item.task)}`);
      break;
    case "child_end":
      childState(item);
      add(at, "child-line", `child ended (${esc(item.status)}, ${esc(item.turns)} turns): ${esc(item.error || item.text)}`);
      break;
    case "memo":
      add(at, "memo-line", `memo: ${esc(item.sections)} sections, ${fmt(item.chars)} chars`);
      break;
    case "tool":
      add(at, "tool", `tool ${esc(item.name)}(${esc(JSON.stringify(item.arguments))}) ${item.doc ? ref(item.doc) : ""} · ${fmt(item.output_chars)} chars${item.error ? ` <span class=err>${esc(item.error)}</span>` : ""}`);
      break;
    case "resumed":
      add(at, "note", `resumed after ${esc(item.previous_events)} events`);
      break;
    case "run_end":
      add(at, "end", `${esc(item.a)} ended: ${esc(item.status)} — ${esc(item.reason)}`);
      break;
  }
}
let pending = null;
function loadPage() {  // one page at a time: a second caller waits for the page in flight
  if (pending) return pending;
  if (nextPage >= meta.pages) return Promise.resolve();
  pending = loadNext().finally(() => { pending = null; });
  return pending;
}
async function loadNext() {
  const n = nextPage;
  const items = await DR.load(`items:${n}`, `data/items-${String(n).padStart(4, "0")}.js`);
  items.forEach(render);
  nextPage = n + 1;
  $("#loaded").textContent = `${Math.min(nextPage * meta.per_page, meta.items)} of ${meta.items} events`;
  if (nextPage >= meta.pages) $("#more").hidden = true;
  requestAnimationFrame(() => {  // the observer fires on changes only: keep filling the view
    if (nextPage < meta.pages && $("#more").getBoundingClientRect().top < 2 * innerHeight) loadPage();
  });
}
async function loadAll() { while (nextPage < meta.pages) await loadPage(); }

/* -- the side panel: a sub-call, a document page ------------------------------------------ */
function panel(html) {
  $("#panel-body").innerHTML = html; $("#panel").hidden = false;
  document.body.classList.add("with-panel");
}
function showCall(item) {
  const slices = item.docs.map((d) => `<li>${ref(d.id, d.pages && d.pages[0], d.pages && d.pages[1])} chars ${d.chars ? d.chars.join("–") : ""}</li>`).join("");
  const u = item.usage || {};
  panel(`<h2>sub-call ${esc(item.id)}</h2>
    <p>${esc(item.model)} · ${fmt(u.input_tokens)} in / ${fmt(u.output_tokens)} out · $${fmt(u.cost_usd, 4)} · ${fmt(item.lat, 2)} s${item.cut ? " · slice cut" : ""}</p>
    <h3>prompt</h3><pre>${esc(item.prompt)}</pre>
    ${slices ? `<h3>slices</h3><ul>${slices}</ul>` : ""}
    ${item.text ? `<h3>text</h3><pre>${esc(item.text)}</pre>` : ""}
    <h3>answer</h3><pre class="answer">${esc(item.out ?? "")}</pre>
    ${item.err ? `<h3>error</h3><pre class="err">${esc(JSON.stringify(item.err))}</pre>` : ""}`);
}
async function showDoc(id, page, quote, mline) {  /* mline: a transcript's margin line */
  const doc = await DR.load(`doc:${id}`, `${meta.docs_href}/${id}.js`);
  page = Math.max(1, Math.min(page, doc.pages.length));
  let label = doc.labels && doc.labels.length ? doc.labels[page - 1] : "";
  if (label && mline && doc.line_numbers) label += `:${mline}`;
  const ocr = doc.ocr ? doc.ocr[String(page)] : undefined;
  panel(`<h2 class="doc-title">${esc(id)} p.${page}${label ? ` (printed ${esc(label)})` : ""} of ${doc.pages.length}</h2><p>${esc(doc.title)}</p>
    ${ocr !== undefined ? `<p class="ocr">text read by OCR from the page image (confidence ${Math.round(ocr)})</p>` : ""}
    <p>${page > 1 ? `<a class="ref" href="#" data-doc="${esc(id)}" data-page="${page - 1}">previous page</a>` : ""}
    ${page < doc.pages.length ? `<a class="ref" href="#" data-doc="${esc(id)}" data-page="${page + 1}">next page</a>` : ""}</p>
    <pre class="page-text">${highlighted(doc.pages[page - 1], quote, doc.line_numbers ? mline : 0)}</pre>`);
  const mark = $("#panel mark.cited");
  if (mark) mark.scrollIntoView({ block: "center" });
}
function marginLine(text, n) {  /* the line a transcript page numbers n in its margin */
  const m = n ? new RegExp(`^[ \\t]*${n}(?:[ \\t].*)?$`, "m").exec(text) : null;
  return m ? { start: m.index, end: m.index + m[0].length } : null;
}
function highlighted(text, quote, mline) {
  const at = marginLine(text, mline) || passage(text, quote);
  if (!at) return esc(text);
  return esc(text.slice(0, at.start)) + `<mark class="cited">${esc(text.slice(at.start, at.end))}</mark>` + esc(text.slice(at.end));
}

/* -- the memo, its history, the scores, coverage, usage ------------------------------------ */
let memoReady = null;
function memoTab() { return (memoReady = memoReady || renderMemo()); }
async function renderMemo() {
  const memo = await DR.load("memo", "data/memo.js");
  $("#memo").dataset.done = "1";
  const score = Object.fromEntries(memo.by_turn.map((t) => [t.turn, t]));
  const buttons = memo.history.map((h) => {
    const s = score[h.turn];
    return `<button data-turn="${esc(h.turn)}">turn ${esc(h.turn)}${s ? ` · ${fmt(s.pass_rate, 2)}` : ""}</button>`;
  }).join("");
  $("#memo").innerHTML = `<div class="history">as of: <button data-turn="final" class="on">delivered</button>${buttons}</div>
    <div class="views">show: <button data-view="md" class="on">memo</button><button data-view="source">Markdown source (line numbers)</button></div>
    <article class="memo-md"></article><pre class="memo-text" hidden></pre>`;
  let shown = { md: memo.html, text: memo.final };
  const fill = () => {
    $("#memo .memo-md").innerHTML = shown.text ? shown.md : "<p class=note>(no memo)</p>";
    linkTextCitations($("#memo .memo-md"));
    $("#memo .memo-text").innerHTML = linkCitations(shown.text || "(no memo)");
  };
  fill();
  $("#memo .history").addEventListener("click", (ev) => {
    const b = ev.target.closest("button");
    if (!b) return;
    $("#memo .history").querySelectorAll("button").forEach((x) => x.classList.toggle("on", x === b));
    const h = memo.history.find((x) => String(x.turn) === b.dataset.turn);
    shown = h ? { md: h.html, text: h.memo } : { md: memo.html, text: memo.final };
    fill();
  });
  $("#memo .views").addEventListener("click", (ev) => {
    const b = ev.target.closest("button");
    if (b) memoView(b.dataset.view);
  });
}
function memoView(view) {
  $("#memo .views").querySelectorAll("button").forEach((x) => x.classList.toggle("on", x.dataset.view === view));
  $("#memo .memo-md").hidden = view !== "md";
  $("#memo .memo-text").hidden = view === "md";
}
function linkTextCitations(root) {  /* citations in rendered Markdown: each text node's, the
  block's words as the quote */
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const hits = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    CITATION.lastIndex = 0;
    if (CITATION.test(n.nodeValue)) hits.push(n);
  }
  hits.forEach((n) => {
    const block = n.parentElement.closest("[data-lines]") || root;
    const quote = block.textContent.replace(CITATION, " ").replace(/[\[\]()*_#|]/g, " ").replace(/\s+/g, " ").trim();
    const span = document.createElement("span");
    span.innerHTML = esc(n.nodeValue).replace(CITATION, (m, doc, a, b, pr) => ref(doc, a ? +a : null, b ? +b : null, quote, pr));
    n.replaceWith(...span.childNodes);
  });
}
function scoresTab() {
  const s = meta.scores;
  if (!s) { $("#scores").innerHTML = `<p class="note">not judged: run <code>dealroom judge RUN</code></p>`; return; }
  const lines = (text) => esc(text).replace(/\bline (\d+)/g, '<a href="#" class="line-ref" data-line="$1">line $1</a>');
  const row = (r) => `<tr class="${esc(r.verdict)}"><td>${esc(r.id)}</td><td>${esc(r.title)}</td><td>${esc(r.verdict)}</td><td>${lines(r.reasoning)}</td></tr>`;
  const types = Object.entries(s.by_type).map(([t, v]) => `<span><b>${esc(t)}</b> ${fmt(v.pass_rate, 2)}</span>`).join("");
  $("#scores").innerHTML = `<p>${esc(s.judge)} judge: ${esc(s.summary)}</p><div class="facts">${types}</div>
    <table class="criteria"><thead><tr><th>id</th><th>criterion</th><th>verdict</th><th>reasoning / matched line</th></tr></thead><tbody>${s.criteria.map(row).join("")}</tbody></table>
    <h3>judge errors (${s.errors.length})</h3>${s.errors.length ? `<table class="criteria"><tbody>${s.errors.map(row).join("")}</tbody></table>` : "<p class=note>none</p>"}`;
}
function shade(share) { return `hsl(${Math.round(120 * share)}, 60%, ${share > 0 ? 82 : 94}%)`; }
function coverageTab() {
  const tree = meta.tree.map((cat) => `<details><summary style="background:${shade(cat.share)}">${esc(cat.name)} · ${fmt(100 * cat.share, 0)}%</summary>` +
    cat.folders.map((f) => `<details class="folder"><summary style="background:${shade(f.share)}">${esc(f.name)} · ${fmt(100 * f.share, 0)}%</summary><ul>` +
      f.docs.map((d) => `<li style="background:${shade(d.share)}">${ref(d.id)} ${esc(d.title)} · ${fmt(100 * d.share, 0)}%</li>`).join("") + "</ul></details>").join("") + "</details>").join("");
  const c = meta.coverage;
  $("#coverage").innerHTML = `<p>coverage ${fmt(c.coverage, 3)} · ${fmt(c.documents_touched)} of ${fmt(c.documents_total)} documents touched (colour: share read)</p>${tree || "<p class=note>the room is not found: no tree</p>"}`;
}
function usageTab() {
  const u = meta.usage;
  const table = (title, group) => `<h3>by ${title}</h3><table><thead><tr><th>${title}</th><th>calls</th><th>input</th><th>cached</th><th>output</th><th>cost USD</th></tr></thead><tbody>` +
    Object.entries(group || {}).map(([k, v]) => `<tr><td>${esc(k)}</td><td>${fmt(v.calls)}</td><td>${fmt(v.input_tokens)}</td><td>${fmt(v.cached_input_tokens)}</td><td>${fmt(v.output_tokens)}</td><td>${fmt(v.cost_usd, 4)}</td></tr>`).join("") + "</tbody></table>";
  const sources = Object.entries(u.counts_source || {}).map(([k, n]) => `${esc(k)}: ${fmt(n)}`).join(", ");
  const guessed = u.usage_estimated_calls ? `<p class="note err">usage of ${fmt(u.usage_estimated_calls)} calls is a words-v1 estimate (the server reported none and counts none): tokens, cost and budgets rest on it</p>` : "";
  const from = sources ? `<p class=note>counts from: ${sources}</p>` : "";
  const kids = Object.keys(u.by_child || {}).length;  // their tree is the timeline's
  const tree = kids ? `<p class="note children">${fmt(kids)} children: each one's totals (its own children included) are in its box on the timeline, with its turns</p>` : "";
  const split = u.split ? table("part (the root, each sub-agent model it called, its children)", u.split) : "";
  $("#usage").innerHTML = u.total ? guessed + from + split + table("role", u.by_role) + table("sub-agent model", u.by_sub) + table("model", u.by_model) + table("depth", u.by_depth) + tree : "<p class=note>no usage recorded</p>";
}

async function showMemoLine(n) {  /* a judge's "line N": the delivered memo, that line lit */
  showTab("memo");
  await memoTab();
  const final = $('#memo .history button[data-turn="final"]');
  if (!final.classList.contains("on")) final.click();
  memoView("source");
  $("#memo").querySelectorAll(".ln.hl").forEach((x) => x.classList.remove("hl"));
  const line = $(`#memo .ln[data-line="${n}"]`);
  if (line) { line.classList.add("hl"); line.scrollIntoView({ block: "center" }); }
}

/* -- wiring -------------------------------------------------------------------------------- */
document.addEventListener("click", (ev) => {
  const a = ev.target.closest("a.ref, a.open-call, a.line-ref, nav button");
  if (!a) return;
  ev.preventDefault();
  if (a.matches("nav button")) showTab(a.dataset.tab);
  else if (a.classList.contains("ref")) showDoc(a.dataset.doc, +a.dataset.page || 1, a.dataset.q, +a.dataset.mline || 0);
  else if (a.classList.contains("line-ref")) showMemoLine(+a.dataset.line);
  else showCall(subs[a.closest("tr").dataset.n]);
});
$("#panel-close").addEventListener("click", () => {
  $("#panel").hidden = true; document.body.classList.remove("with-panel");
});
$("#load-all").addEventListener("click", loadAll);
header(); scoresTab(); coverageTab(); usageTab();
addEventListener("hashchange", followHash);
followHash();
new IntersectionObserver((entries) => { if (entries.some((e) => e.isIntersecting)) loadPage(); })
  .observe($("#more"));
loadPage();
