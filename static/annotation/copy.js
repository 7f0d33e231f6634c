/* Copy buttons: <button data-copy="ELEMENT-ID" hidden> copies that element's text. The buttons stay
   hidden without JavaScript, where the code is still plain text to select (one click selects all of it,
   see .completion-code). Uses the Clipboard API where the page may, else the selection and
   execCommand("copy"); if both fail the code is left selected for Ctrl+C. */
(function () {
  "use strict";

  function select(element) {
    var range = document.createRange();
    range.selectNodeContents(element);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  function legacyCopy(element) {
    select(element);
    try { return document.execCommand("copy"); } catch (e) { return false; }
  }

  function say(button, text) {
    var label = button.dataset.label || button.textContent;
    button.dataset.label = label;
    button.textContent = text;
    window.clearTimeout(button._copyTimer);
    button._copyTimer = window.setTimeout(function () { button.textContent = label; }, 2000);
  }

  function copy(button) {
    var element = document.getElementById(button.dataset.copy);
    if (!element) { return; }
    var text = element.textContent.trim();
    function fallback() {
      say(button, legacyCopy(element) ? "Copied" : "Press Ctrl+C");
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { say(button, "Copied"); }, fallback);
    } else {
      fallback();
    }
  }

  function init() {
    var buttons = document.querySelectorAll("button[data-copy]");
    for (var i = 0; i < buttons.length; i++) {
      buttons[i].hidden = false;
      buttons[i].addEventListener("click", function (event) { copy(event.currentTarget); });
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
