/* The campaign page's Copy button: puts the crowd link on the clipboard (no inline script: the CSP forbids it). */
(function () {
  "use strict";
  var button = document.getElementById("copy-crowd-link"), field = document.getElementById("crowd-link");
  if (!button || !field) return;
  function copied() {
    button.textContent = "Copied";
    setTimeout(function () { button.textContent = "Copy"; }, 2000);
  }
  function fallback() { field.select(); document.execCommand("copy"); copied(); }
  button.addEventListener("click", function () {
    field.select();
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(field.value).then(copied, fallback);
    else fallback();
  });
})();
