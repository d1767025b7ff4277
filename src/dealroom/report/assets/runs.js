/* `dealroom view DIR`: the runs of a folder or sweep, each linking to its trace. Served over
   HTTP (--serve), the rows are reloaded every refresh_s seconds, so a sweep can be watched. */
function renderRuns(data) {
  const rows = data.rows || [];
  document.getElementById("facts").innerHTML =
    `<span><b>${esc(data.source)}</b></span><span><b>${rows.length}</b> runs</span>` +
    `<span><b>${rows.filter((r) => r.status === "running").length}</b> running</span>`;
  const body = document.querySelector("#runs tbody");
  body.innerHTML = rows.map((r) => {
    const name = r.trace ? `<a href="${esc(r.trace)}">${esc(r.name)}</a>` : esc(r.name);
    const cls = r.status === "running" ? "running" : (r.error ? "failed" : "");
    return `<tr class="${cls}" data-run="${esc(r.name)}"><td>${name}</td>` +
      `<td class="status">${esc(r.status)}</td><td>${esc(r.room)}</td>` +
      `<td>${esc(r.policy)}</td><td class="num">${fmt(r.pass_rate, 3)}</td>` +
      `<td class="num">${fmt(r.cost_usd, 4)}</td><td class="num">${fmt(r.turns)}</td></tr>`;
  }).join("");
}
renderRuns(DR.data.runs);
if (location.protocol.startsWith("http")) {
  let n = 0;
  setInterval(() => {
    const old = document.querySelector("script[data-refresh]");
    const s = document.createElement("script");
    s.src = `data/runs.js?r=${++n}`; s.dataset.refresh = "1";
    s.onload = () => { renderRuns(DR.data.runs); if (old) old.remove(); };
    document.head.appendChild(s);
  }, 1000 * (DR.data.runs.refresh_s || 2));
}
