/* Crowd reference translation, the detect-MT stage (docs/methods.md §9; Callison-Burch 2009 §5.1): a source
   sentence and its translations, some by people and some by machine translation, shuffled. The judge clicks
   every translation that looks machine-made (a toggle button, aria-pressed); clicking again unmarks it. Keys:
   1–9 toggle the translation with that number, Enter submits (from anywhere but a translation's button, where
   Enter and Space toggle it). Submitting with nothing marked says "none looks machine-made". The answer:
   {"machine": [keys of the marked candidates]}; every other candidate shown counts as human. */
(function () {
  "use strict";
  var box = document.getElementById("reference-translation-detect");
  var sourceEl = document.getElementById("rd-source");
  var listEl = document.getElementById("rd-candidates");
  var countEl = document.getElementById("rd-count");
  var button = document.getElementById("submit");
  var hit = window.HitScreens;
  var element = hit.element;
  var candidates = [];   // {key, el, marked}
  var sending = false;

  var sourceName = hit.languageName(box.dataset.sourceLang);
  document.getElementById("rd-source-label").textContent = sourceName ? "Source (" + sourceName + ")" : "Source";

  function update() {
    var n = candidates.filter(function (c) { return c.marked; }).length;
    countEl.textContent = n === 0 ? "None marked machine-made" : (n === 1 ? "1 marked" : n + " marked") +
      " machine-made";
    button.disabled = sending || !candidates.length;
  }

  function toggle(candidate) {
    if (sending) { return; }
    candidate.marked = !candidate.marked;
    candidate.el.setAttribute("aria-pressed", candidate.marked ? "true" : "false");
    candidate.el.parentNode.classList.toggle("rd-marked", candidate.marked);
    update();
  }

  function build(candidate, index) {
    var li = listEl.appendChild(element("li", "rd-candidate"));
    var button = li.appendChild(element("button", "rd-toggle"));
    button.type = "button";
    button.setAttribute("aria-pressed", "false");
    button.appendChild(element("span", "rd-num", String(index + 1))).setAttribute("aria-hidden", "true");
    var text = button.appendChild(element("span", "rd-text", candidate.text));
    text.dir = box.dataset.targetDir;
    if (box.dataset.targetLang) { text.lang = box.dataset.targetLang; }
    button.appendChild(element("span", "rd-badge", "machine-made"));
    var entry = {key: candidate.key, el: button, marked: false};
    button.addEventListener("click", function () { toggle(entry); });
    return entry;
  }

  function submit() {
    if (sending || button.disabled) { return; }
    sending = true;
    update();
    hit.submit({machine: candidates.filter(function (c) { return c.marked; }).map(function (c) { return c.key; })});
  }

  button.addEventListener("click", submit);

  document.addEventListener("keydown", function (event) {
    if (hit.isPaused() || !candidates.length || box.offsetParent === null) { return; }
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var active = document.activeElement;
    if (/^[1-9]$/.test(event.key)) {
      var candidate = candidates[Number(event.key) - 1];
      if (candidate) {
        event.preventDefault();
        toggle(candidate);
      }
    } else if (event.key === "Enter" && !event.repeat) {
      if (active && active.tagName === "BUTTON" && active !== button) { return; }  // a toggle, "Instructions"
      event.preventDefault();
      submit();
    }
  });

  hit.register({
    show: function (item) {
      sending = false;
      sourceEl.textContent = typeof item.source === "string" ? item.source : "";
      listEl.textContent = "";
      var list = Array.isArray(item.candidates) ? item.candidates : [];
      candidates = list.filter(function (c) { return c && typeof c.key === "string"; }).map(function (c, i) {
        return build({key: c.key, text: typeof c.text === "string" ? c.text : ""}, i);
      });
      update();
      window.scrollTo(0, 0);
    },
    // The list, not its first button: Enter submits, as the hint says (on a button Enter toggles it), and Tab
    // goes on to the translations.
    focus: function () { listEl.focus({preventScroll: true}); },
    unlock: function () {
      sending = false;
      update();
    }
  });
})();
