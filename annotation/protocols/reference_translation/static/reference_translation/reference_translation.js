/* Crowd reference translation, the translate stage (docs/methods.md §9; Callison-Burch 2009 §5.1): up to ten
   source sentences of one document, a text box under each. The judge translates them faithfully in meaning and
   style, fluently, adding and dropping nothing, without machine translation. Pasting into a box (the `paste`
   event: keyboard, context menu or drag-and-drop of text) is noticed: the box is marked and its sentence's
   `pasted` flag is sent with the answer (the server stores what the screen says; it cannot see pasting itself).
   The first screen of a HIT (item.ask_background) also asks the judge's native language, years of study or
   use of the target language and country; what they typed is remembered in this browser and filled in next
   time. Submit waits until every box and every background field is filled. A refused answer (400) is shown
   by the controller (hit.js) and, when it names a translation ("translation 2 …"), under that box.
   The answer: {"translations": [...], "pasted": [true/false, ...], "background"?: {native_language,
   target_language_years, country}}. Keys: Enter moves to the next box (the last one: Submit), Ctrl+Enter
   (⌘+Enter) submits. */
(function () {
  "use strict";
  var STORE = "mteval-rt-background";
  var box = document.getElementById("reference-translation");
  var rowsEl = document.getElementById("rt-rows");
  var backgroundEl = document.getElementById("rt-background");
  var remainingEl = document.getElementById("rt-remaining");
  var statusEl = document.getElementById("status");
  var button = document.getElementById("submit");
  var fields = {native_language: document.getElementById("rt-native"),
                target_language_years: document.getElementById("rt-years"),
                country: document.getElementById("rt-country")};
  var hit = window.HitScreens;
  var element = hit.element;
  var rows = [];     // {el, box, pasted, warning, serverMessage, number}
  var askBackground = false;
  var serial = 0;
  var sending = false;

  var targetName = hit.languageName(box.dataset.targetLang);
  var sourceName = hit.languageName(box.dataset.sourceLang);
  if (targetName) {
    Array.prototype.forEach.call(box.querySelectorAll(".rt-target-name"), function (el) {
      el.textContent = targetName;
    });
  }

  function remembered() {
    try { return JSON.parse(window.localStorage.getItem(STORE) || "{}") || {}; } catch (error) { return {}; }
  }

  function remember(background) {
    try { window.localStorage.setItem(STORE, JSON.stringify(background)); } catch (error) { /* private mode */ }
  }

  function background() {
    var years = fields.target_language_years.value.trim();
    return {native_language: fields.native_language.value.trim(),
            target_language_years: years === "" ? null : Number(years),
            country: fields.country.value.trim()};
  }

  function backgroundMissing() {
    if (!askBackground) { return []; }
    var b = background();
    var missing = [];
    if (!b.native_language) { missing.push("your native language"); }
    if (b.target_language_years === null || !(b.target_language_years >= 0 && b.target_language_years <= 100)) {
      missing.push("your years of " + (targetName || "the target language"));
    }
    if (!b.country) { missing.push("your country"); }
    return missing;
  }

  function empty() {
    return rows.filter(function (row) { return !row.box.value.trim(); });
  }

  function update() {
    var blank = empty();
    var missing = backgroundMissing();
    button.disabled = sending || blank.length > 0 || missing.length > 0 || rows.length === 0;
    var parts = [];
    if (blank.length) {
      parts.push(blank.length === 1 ? "1 sentence to translate" : blank.length + " sentences to translate");
    }
    if (missing.length) { parts.push(missing.join(", ") + " to fill in"); }
    remainingEl.textContent = parts.length ? parts.join("; ") : "All translated";
    remainingEl.classList.toggle("pe-done", !parts.length);
  }

  function fit(textarea) {  // the box grows with its text
    if (!textarea.offsetParent) { return; }
    textarea.style.height = "auto";
    textarea.style.height = (textarea.scrollHeight + textarea.offsetHeight - textarea.clientHeight) + "px";
  }

  function showWarning(row) {
    var message = row.serverMessage ||
      (row.pasted ? "Text was pasted into this box. Please write your own translation, without machine " +
                    "translation; the paste is recorded with your answer." : "");
    row.warning.textContent = message;
    row.warning.hidden = !message;
    row.el.classList.toggle("rt-pasted", row.pasted);
    row.el.classList.toggle("pe-problem", !!row.serverMessage);
  }

  function buildRow(source, index) {
    var number = index + 1;
    var id = "rt-" + serial + "-" + index;
    var li = element("li", "rt-row");
    li.appendChild(element("span", "pe-num", String(number))).setAttribute("aria-hidden", "true");
    var body = li.appendChild(element("div", "rt-body"));
    var src = body.appendChild(element("p", "rt-source", source));
    src.id = id + "-src";
    src.dir = box.dataset.sourceDir;
    if (box.dataset.sourceLang) { src.lang = box.dataset.sourceLang; }
    var label = body.appendChild(element("label", "visually-hidden",
      "Your " + (targetName ? targetName + " " : "") + "translation of sentence " + number));
    label.htmlFor = id + "-box";
    var textarea = body.appendChild(element("textarea", "pe-box rt-box"));
    textarea.id = id + "-box";
    textarea.rows = 1;
    textarea.dir = box.dataset.targetDir;
    if (box.dataset.targetLang) { textarea.lang = box.dataset.targetLang; }
    textarea.placeholder = "Your " + (targetName || "") + " translation";
    textarea.spellcheck = true;
    textarea.setAttribute("autocomplete", "off");
    var warning = body.appendChild(element("p", "pe-warning rt-warning"));
    warning.id = id + "-warning";
    warning.hidden = true;
    warning.setAttribute("aria-live", "polite");
    textarea.setAttribute("aria-describedby", src.id + " " + warning.id);
    rowsEl.appendChild(li);
    var row = {el: li, box: textarea, pasted: false, warning: warning, serverMessage: "", number: number};
    textarea.addEventListener("paste", function () {
      row.pasted = true;
      showWarning(row);
    });
    textarea.addEventListener("drop", function (event) {  // dropped text is pasted text
      if (event.dataTransfer && event.dataTransfer.types && Array.prototype.indexOf.call(
        event.dataTransfer.types, "text/plain") >= 0) {
        row.pasted = true;
        showWarning(row);
      }
    });
    textarea.addEventListener("input", function () {
      row.serverMessage = "";
      showWarning(row);
      fit(textarea);
      update();
    });
    return row;
  }

  function setSending(on) {
    sending = on;
    rows.forEach(function (row) { row.box.readOnly = on; });
    Object.keys(fields).forEach(function (key) { fields[key].readOnly = on; });
    update();
  }

  function submit() {
    if (sending || button.disabled) { return; }
    var answer = {translations: rows.map(function (row) { return row.box.value; }),
                  pasted: rows.map(function (row) { return row.pasted; })};
    if (askBackground) {
      answer.background = background();
      remember(answer.background);
    }
    setSending(true);
    hit.submit(answer);
  }

  button.addEventListener("click", submit);
  Object.keys(fields).forEach(function (key) { fields[key].addEventListener("input", update); });

  function showRefusal() {
    if (!statusEl || !statusEl.classList.contains("error")) { return; }
    var match = /\btranslation\s+(\d+)\b/i.exec(statusEl.textContent);
    var row = match ? rows[Number(match[1]) - 1] : null;
    if (!row) { return; }
    row.serverMessage = statusEl.textContent;
    showWarning(row);
    row.box.focus();
  }

  document.addEventListener("keydown", function (event) {
    if (hit.isPaused() || !rows.length || box.offsetParent === null || event.isComposing) { return; }
    if (event.key !== "Enter" || event.altKey || event.shiftKey) { return; }
    if (event.ctrlKey || event.metaKey) {
      event.preventDefault();
      if (!event.repeat) { submit(); }
      return;
    }
    for (var i = 0; i < rows.length; i++) {
      if (rows[i].box === document.activeElement) {
        event.preventDefault();
        if (i + 1 < rows.length) { rows[i + 1].box.focus(); } else if (!button.disabled) { button.focus(); }
        return;
      }
    }
  });

  window.addEventListener("resize", function () { rows.forEach(function (row) { fit(row.box); }); });

  hit.register({
    show: function (item) {
      serial += 1;
      sending = false;
      rowsEl.textContent = "";
      var sources = Array.isArray(item.source) ? item.source : [];
      rows = sources.map(function (source, i) { return buildRow(typeof source === "string" ? source : "", i); });
      askBackground = item.ask_background === true;
      backgroundEl.hidden = !askBackground;
      if (askBackground) {
        var known = remembered();
        Object.keys(fields).forEach(function (key) {
          fields[key].readOnly = false;
          if (!fields[key].value && known[key] !== undefined && known[key] !== null) {
            fields[key].value = String(known[key]);
          }
        });
      }
      if (sourceName) { rowsEl.setAttribute("aria-label", "Sentences to translate from " + sourceName); }
      update();
      window.scrollTo(0, 0);
    },
    focus: function () {
      if (!rows.length) { return; }
      var coarse = window.matchMedia && window.matchMedia("(pointer: coarse)").matches;
      if (coarse) { return; }
      var first = askBackground ? Object.keys(fields).map(function (k) { return fields[k]; })
        .filter(function (f) { return !f.value; })[0] : null;
      (first || rows[0].box).focus({preventScroll: true});
    },
    unlock: function () {
      setSending(false);
      showRefusal();
    }
  });
})();
