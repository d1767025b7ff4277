/* The report: sortable tables. */
document.querySelectorAll("table.sortable").forEach((table) => {
  table.querySelectorAll("th").forEach((th, col) => {
    th.addEventListener("click", () => {
      const body = table.tBodies[0];
      const up = th.dataset.dir !== "asc";
      table.querySelectorAll("th").forEach((h) => delete h.dataset.dir);
      th.dataset.dir = up ? "asc" : "desc";
      const key = (row) => {
        const cell = row.cells[col];
        const v = cell.dataset.v ?? cell.textContent;
        const n = parseFloat(v);
        return Number.isNaN(n) ? v : n;
      };
      const rows = Array.from(body.rows).sort((a, b) => {
        const x = key(a), y = key(b);
        const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
        return up ? c : -c;
      });
      rows.forEach((r) => body.appendChild(r));
    });
  });
});
