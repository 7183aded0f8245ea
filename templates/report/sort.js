// Sort a table by the column whose header button was pressed; press again to reverse.
// Cells may carry data-sort (a number) to sort by instead of their text.
document.querySelectorAll("table.sortable").forEach(function (table) {
  table.querySelectorAll("thead th button").forEach(function (button, column) {
    button.addEventListener("click", function () {
      var header = button.parentElement;
      var ascending = header.getAttribute("aria-sort") !== "ascending";
      table.querySelectorAll("thead th").forEach(function (th) { th.removeAttribute("aria-sort"); });
      header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      var key = function (row) {
        var cell = row.cells[column];
        var value = cell.getAttribute("data-sort");
        return value !== null ? parseFloat(value) : cell.textContent.trim().toLowerCase();
      };
      rows.sort(function (a, b) {
        var x = key(a), y = key(b);
        var order = x < y ? -1 : x > y ? 1 : 0;
        return ascending ? order : -order;
      });
      rows.forEach(function (row) { body.appendChild(row); });
    });
  });
});
