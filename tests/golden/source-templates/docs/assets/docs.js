// Copy buttons for the example event and the HTTP request. No network.
(function () {
  "use strict";
  function copied(button, ok) {
    button.textContent = ok ? "Copied" : "Press Ctrl+C";
    button.setAttribute("data-state", ok ? "copied" : "failed");
    window.setTimeout(function () { button.textContent = "Copy"; button.removeAttribute("data-state"); }, 2000);
  }
  function fallback(button, target) {
    var range = document.createRange();
    range.selectNodeContents(target);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (error) { ok = false; }
    copied(button, ok);
  }
  document.querySelectorAll("button.copy").forEach(function (button) {
    var target = document.getElementById(button.getAttribute("data-copy"));
    if (!target) { return; }
    button.hidden = false;
    button.addEventListener("click", function () {
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(target.textContent).then(
          function () { copied(button, true); }, function () { fallback(button, target); });
      } else {
        fallback(button, target);
      }
    });
  });
}());
