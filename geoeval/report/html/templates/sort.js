// Sortable leaderboard columns: an extra, nothing on the page depends on it.
(function () {
  "use strict";
  var table = document.getElementById("board");
  if (!table || !table.tBodies.length) { return; }
  var heads = table.tHead.rows[0].cells;
  function key(cell, type) {
    var v = cell.getAttribute("data-value") || "";
    if (type === "text") { return v.toLowerCase(); }
    var x = parseFloat(v.split(" ")[0]);
    return isNaN(x) ? Infinity : x;
  }
  Array.prototype.forEach.call(heads, function (th, col) {
    var type = th.getAttribute("data-type") || "text";
    var button = document.createElement("button");
    button.type = "button";
    while (th.firstChild) { button.appendChild(th.firstChild); }
    th.appendChild(button);
    button.addEventListener("click", function () {
      var up = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      var body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a.cells[col], type), y = key(b.cells[col], type);
        var c = x < y ? -1 : x > y ? 1 : 0;
        return up ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
}());
