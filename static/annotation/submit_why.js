/* "Why is Submit disabled?", on every protocol's screen (issue 27; docs/api.md §8). A disabled Submit lets a click
   or tap through to the row around it (hit-help.css), and a small "Why can't I submit?" link stands beside it while
   it is disabled; either scrolls to the first unfinished part of the screen, outlines it for a moment, moves the
   focus there and says in a short message what is missing. The first unfinished part is the screen's own answer
   when it gives one (HitScreens.unfinished(): {el, message}), else the first in page order of: a video or audio
   clip not yet played to the campaign's required share (media.js says how far), a slider never moved, a group of
   choices (radios, a fieldset of toggle buttons) with none chosen, a box marked invalid, an empty text box, an
   unchosen select.
   Dependency-free; it reads the page, never changes an answer. */
(function () {
  "use strict";
  var screenEl = document.getElementById("screen");
  var button = document.getElementById("submit");
  if (!screenEl || !button || !window.HitScreens) { return; }
  var hit = window.HitScreens;
  var HIGHLIGHT_MS = 3500;
  var highlighted = null;
  var timer = null;

  var link = hit.element("button", "link why-link", "Why can't I submit?");
  link.type = "button";
  link.id = "why-submit";
  button.parentNode.insertBefore(link, button);
  var message = hit.element("p", "why-message");
  message.id = "why-message";
  message.setAttribute("role", "status");
  message.hidden = true;
  button.parentNode.parentNode.insertBefore(message, button.parentNode.nextSibling);

  function sync() {
    link.hidden = !button.disabled;
    if (!button.disabled) { message.hidden = true; }
  }
  new MutationObserver(sync).observe(button, {attributes: true, attributeFilter: ["disabled"]});
  sync();

  function visible(el) {
    return !el.closest("[hidden]") && el.getClientRects().length > 0;
  }

  function editable(el) {
    return visible(el) && !el.disabled && !el.readOnly;
  }

  /* The unfinished parts the page shows, each {el, message, focus}, in no particular order. */
  function candidates() {
    var found = [];
    var media = window.HitMedia;  // a clip still short of the campaign's require_media_played (media.js)
    if (media && media.held()) {
      var box = screenEl.querySelector("[data-media]");
      var player = box && box.querySelector("video, audio");
      if (box && player) { found.push({el: box, focus: player, message: media.reason()}); }
    }
    screenEl.querySelectorAll("[role=slider]").forEach(function (el) {
      if (visible(el) && !el.hasAttribute("aria-valuenow")) {
        found.push({el: el.closest(".vas") || el, focus: el, message: "Give a score: click or drag on this line."});
      }
    });
    var groups = {};
    screenEl.querySelectorAll("input[type=radio]").forEach(function (el) {
      if (!el.name || !editable(el)) { return; }
      var group = groups[el.name] || (groups[el.name] = {first: el, checked: false});
      group.checked = group.checked || el.checked;
    });
    Object.keys(groups).forEach(function (name) {
      var group = groups[name];
      if (!group.checked) {
        var box = group.first.closest("[role=radiogroup], fieldset") || group.first.parentNode;
        found.push({el: box.closest("li, .row, [class*='-row']") || box, focus: group.first,
                    message: "Choose an answer here."});
      }
    });
    var pressed = [];  // a fieldset of toggle buttons is one choice to make (pairwise's A / tie / B)
    screenEl.querySelectorAll("fieldset button[aria-pressed]").forEach(function (el) {
      var box = el.closest("fieldset");
      if (visible(el) && pressed.indexOf(box) < 0) { pressed.push(box); }
    });
    pressed.forEach(function (box) {
      if (!box.querySelector("button[aria-pressed=true]")) {
        found.push({el: box, focus: box.querySelector("button[aria-pressed]"), message: "Choose one of these."});
      }
    });
    screenEl.querySelectorAll("[aria-invalid=true]").forEach(function (el) {
      if (visible(el)) {
        var row = el.closest("[class*='-row']") || el;
        var said = row.querySelector("[class*='problem'], [class*='hint'], .error");
        found.push({el: row, focus: el, message: (said && said.textContent.trim()) || "Correct this box."});
      }
    });
    screenEl.querySelectorAll("textarea, input[type=text], input:not([type])").forEach(function (el) {
      if (editable(el) && !el.value.trim()) { found.push({el: el, focus: el, message: "Fill in this box."}); }
    });
    screenEl.querySelectorAll("select").forEach(function (el) {
      if (editable(el) && !el.value) { found.push({el: el, focus: el, message: "Choose an option here."}); }
    });
    return found;
  }

  function firstUnfinished() {
    var own = hit.unfinished();
    if (own && own.el) { return {el: own.el, focus: own.focus || own.el, message: own.message}; }
    var found = candidates();
    found.sort(function (a, b) {
      return a.el === b.el ? 0 : (a.el.compareDocumentPosition(b.el) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1);
    });
    return found[0] || null;
  }

  function clear() {
    if (highlighted) { highlighted.classList.remove("why-highlight"); }
    highlighted = null;
    message.hidden = true;
  }

  function explain() {
    if (!button.disabled) { return; }
    clear();
    window.clearTimeout(timer);
    var part = hit.isBusy() ? null : firstUnfinished();
    if (hit.isBusy()) {
      message.textContent = "Your answer is being saved…";
    } else if (!part) {
      message.textContent = "Finish the parts above first.";
    } else {
      message.textContent = part.message;
      highlighted = part.el;
      part.el.classList.add("why-highlight");
      var smooth = !window.matchMedia("(prefers-reduced-motion: reduce)").matches;
      part.el.scrollIntoView({block: "center", behavior: smooth ? "smooth" : "auto"});
      if (part.focus && part.focus.focus) { part.focus.focus({preventScroll: true}); }
    }
    message.hidden = false;
    timer = window.setTimeout(clear, HIGHLIGHT_MS);
  }

  link.addEventListener("click", explain);
  /* A click or tap on the disabled Submit arrives at the row around it (pointer-events: none on the button). A click
     whose target is the button itself was on an enabled Submit, which its own handler has just disabled to send
     the answer: it bubbles here too, and is no question to answer. */
  button.parentNode.addEventListener("click", function (event) {
    if (event.target === link || button.contains(event.target) || !button.disabled) { return; }
    var r = button.getBoundingClientRect();
    if (event.clientX >= r.left && event.clientX <= r.right && event.clientY >= r.top && event.clientY <= r.bottom) {
      explain();
    }
  });
  window.HitSubmitWhy = {explain: explain, firstUnfinished: firstUnfinished};
})();
