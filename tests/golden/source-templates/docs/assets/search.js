// Offline search over the index built at generation time (assets/search-index.js):
// types, titles, descriptions and field names. No network, no dependencies,
// results built with textContent only.
(function () {
  "use strict";
  var input = document.getElementById("search-input");
  var list = document.getElementById("search-results");
  var status = document.getElementById("search-status");
  var entries = window.EVCAT_SEARCH_INDEX || [];
  if (!input || !list) { return; }
  var LIMIT = 50;
  function rank(entry, words) {
    var name = entry.name.toLowerCase(), title = entry.title.toLowerCase(), score = 0;
    words.forEach(function (word) {
      if (name === word) { score += 100; } else if (name.indexOf(word) !== -1) { score += 20; }
      if (title.indexOf(word) !== -1) { score += 10; }
      if (entry.fields.some(function (field) { return field.toLowerCase() === word; })) { score += 5; }
    });
    return score;
  }
  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) { node.className = className; }
    if (text) { node.textContent = text; }
    return node;
  }
  function show(entry, words) {
    var item = element("li", "result");
    var link = element("a", "", entry.title);
    link.href = entry.url;
    item.appendChild(link);
    item.appendChild(document.createTextNode(" "));
    item.appendChild(element("code", "", entry.name));
    if (entry.deprecated) {
      item.appendChild(document.createTextNode(" "));
      item.appendChild(element("span", "badge deprecated", "deprecated"));
    }
    var meta = entry.catalog + (entry.versions.length ? " · " + entry.versions.join(", ") : "");
    var fields = entry.fields.filter(function (field) {
      var lower = field.toLowerCase();
      return words.some(function (word) { return lower.indexOf(word) !== -1; });
    });
    if (fields.length) { meta += " · field " + fields.slice(0, 5).join(", "); }
    item.appendChild(element("div", "muted", meta));
    list.appendChild(item);
  }
  function apply() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    list.textContent = "";
    if (!words.length) { list.hidden = true; status.textContent = ""; return; }
    var found = entries.filter(function (entry) {
      return words.every(function (word) { return entry.text.indexOf(word) !== -1; });
    });
    found.sort(function (a, b) { return rank(b, words) - rank(a, words) || (a.name < b.name ? -1 : 1); });
    found.slice(0, LIMIT).forEach(function (entry) { show(entry, words); });
    list.hidden = found.length === 0;
    status.textContent = found.length === 0 ? "No event or schema matches." :
      found.length > LIMIT ? found.length + " matches; the first " + LIMIT + " are shown." :
      found.length + (found.length === 1 ? " match." : " matches.");
  }
  input.addEventListener("input", apply);
  var initial = new URLSearchParams(window.location.search).get("q");
  if (initial) { input.value = initial; }
  apply();
}());
