// The site's only script: sort a table by a column (click its heading), filter the index by name.
"use strict";
for (const table of document.querySelectorAll("table.sortable")) {
  table.querySelectorAll("th").forEach((th, column) => {
    th.addEventListener("click", () => {
      const body = table.tBodies[0];
      const ascending = th.dataset.order !== "ascending";
      th.dataset.order = ascending ? "ascending" : "descending";
      const key = (row) => row.cells[column] ? row.cells[column].textContent.trim() : "";
      const rows = Array.from(body.rows).sort((a, b) => {
        const x = key(a), y = key(b), nx = Number(x), ny = Number(y);
        const order = x !== "" && y !== "" && !isNaN(nx) && !isNaN(ny) ? nx - ny : x.localeCompare(y);
        return ascending ? order : -order;
      });
      body.append(...rows);
    });
  });
}
const filter = document.getElementById("filter");
if (filter) {
  filter.addEventListener("input", () => {
    const wanted = filter.value.trim().toLowerCase();
    for (const row of document.querySelectorAll("tr.device")) {
      row.hidden = wanted !== "" && !row.dataset.name.toLowerCase().includes(wanted);
    }
  });
}
