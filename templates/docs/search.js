// Client-side filter of the event index: no network, no dependencies.
(function () {
  "use strict";
  var input = document.getElementById("search");
  if (!input) { return; }
  var rows = Array.prototype.slice.call(document.querySelectorAll(".event-row"));
  var empty = document.getElementById("no-results");
  function apply() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    rows.forEach(function (row) {
      var text = row.getAttribute("data-search") || "";
      var match = words.every(function (word) { return text.indexOf(word) !== -1; });
      row.hidden = !match;
      if (match) { shown += 1; }
    });
    document.querySelectorAll("table.events").forEach(function (table) {
      var visible = table.querySelectorAll(".event-row:not([hidden])").length;
      table.hidden = visible === 0;
      var heading = table.previousElementSibling;
      if (heading && heading.classList.contains("domain")) { heading.hidden = visible === 0; }
    });
    empty.hidden = shown !== 0;
  }
  input.addEventListener("input", apply);
  var initial = new URLSearchParams(window.location.search).get("q");
  if (initial) { input.value = initial; apply(); }
}());
