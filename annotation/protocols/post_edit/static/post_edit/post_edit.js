/* Post-editing screen, HTER's edit stage (docs/methods.md §9; Callison-Burch 2009 §5.2): up to ten
   sentences of one document, each a row with the reference on the left and, on the right, a text box
   prefilled with the machine translation. The judge edits each translation with as few changes as possible
   so that it means what the reference means and is good target language. Under each box a live diff against
   the machine translation (char_diff.js): deleted characters struck through in red, inserted ones
   underlined in green; Reset brings the machine translation back. Hints only (the server decides): an
   empty box, or one identical to the reference, is flagged and Submit waits until it is fixed. A refused
   answer (400) is shown by the controller (hit.js) and, when it names an edit ("edit 2 …"), under that box
   too; the boxes stay editable. The answer: {"edits": [one text per translation, in order]}.
   Keys: Tab moves on (box, its Reset when there is something to reset, the next box), Enter moves to the
   next box (the last one: Submit), Ctrl+Enter (⌘+Enter) submits from anywhere. */
(function () {
  "use strict";
  var box = document.getElementById("post-edit");
  var rowsEl = document.getElementById("pe-rows");
  var instructionEl = document.getElementById("pe-instruction");
  var remainingEl = document.getElementById("pe-remaining");
  var statusEl = document.getElementById("status");
  var button = document.getElementById("submit");
  var statement = document.getElementById("statement").textContent.trim();
  var hit = window.HitScreens;
  var element = hit.element;
  var rows = [];     // {el, box, original, reference, diff, reset, warning, serverMessage}
  var serial = 0;
  var sending = false;

  var targetName = hit.languageName(box.dataset.targetLang);
  var sourceName = hit.languageName(box.dataset.sourceLang);

  (function labels() {
    document.getElementById("pe-reference-label").textContent =
      targetName ? "Reference (" + targetName + ")" : "Reference";
    var text = "Edit each translation with as few changes as possible so that it means what the reference means " +
      "and is good " + (targetName || "target language") + ".";
    // The campaign's statement says it already (the protocol's default does); a statement of its own gets this too.
    var same = function (s) { return s.toLowerCase().replace(/\s+/g, " ").replace(/[.\s]+$/, ""); };
    instructionEl.textContent = text;
    instructionEl.hidden = same(statement) === same(text);
  })();

  function normal(text) {
    return text.replace(/\s+/g, " ").trim();
  }

  function problemOf(row) {
    var value = row.box.value;
    if (!value.trim()) {
      return "This box is empty. Write the edited translation (Reset brings back the machine translation).";
    }
    // (a machine translation that was the reference already may stay as it is)
    if (normal(value) === normal(row.reference) && normal(row.original) !== normal(row.reference)) {
      return "This is the reference, copied. Edit the machine translation instead: change only what needs changing.";
    }
    return "";
  }

  function fit(textarea) {  // the box grows with its text (no scroll bar inside it)
    if (!textarea.offsetParent) { return; }
    textarea.style.height = "auto";
    textarea.style.height = (textarea.scrollHeight + textarea.offsetHeight - textarea.clientHeight) + "px";
  }

  function renderDiff(row) {
    var target = row.diff;
    target.textContent = "";
    var ops = window.CharDiff.diff(row.original, row.box.value);
    var changed = ops.some(function (op) { return op.op !== "equal"; });
    row.el.classList.toggle("pe-changed", changed);
    if (!changed) {
      target.appendChild(element("span", "pe-nochange", "No changes yet"));
      return;
    }
    ops.forEach(function (op) {
      if (op.op === "equal") {
        target.appendChild(document.createTextNode(op.text));
      } else {
        var mark = element(op.op === "delete" ? "del" : "ins", op.op === "delete" ? "pe-del" : "pe-ins", op.text);
        if (!op.text.trim()) { mark.classList.add("pe-space"); }  // a deleted or added space, made visible
        target.appendChild(mark);
      }
    });
  }

  function problems() {
    return rows.filter(function (row) { return !!problemOf(row); });
  }

  function update() {
    var bad = problems();
    button.disabled = sending || bad.length > 0 || rows.length === 0;
    remainingEl.classList.toggle("pe-bad", bad.length > 0);
    if (!bad.length) {
      remainingEl.textContent = "";
    } else {
      var which = bad.map(function (row) { return row.number; });
      remainingEl.textContent = (which.length === 1 ? "Sentence " + which[0] + " needs" :
        "Sentences " + which.slice(0, -1).join(", ") + " and " + which[which.length - 1] + " need") +
        " fixing before you submit";
    }
  }

  function showWarning(row) {
    var message = row.serverMessage || problemOf(row);
    row.warning.textContent = message;
    row.warning.hidden = !message;
    row.warning.classList.toggle("pe-server", !!row.serverMessage);
    row.el.classList.toggle("pe-problem", !!message);
    row.box.setAttribute("aria-invalid", message ? "true" : "false");
  }

  function changed(row) {
    row.serverMessage = "";
    renderDiff(row);
    showWarning(row);
    row.reset.disabled = row.box.value === row.original || sending;
    fit(row.box);
    update();
  }

  function buildRow(item, index) {
    var number = index + 1;
    var id = "pe-" + serial + "-" + index;
    var li = element("li", "pe-row");
    var left = li.appendChild(element("div", "pe-left"));
    left.appendChild(element("span", "pe-num", String(number))).setAttribute("aria-hidden", "true");
    var texts = left.appendChild(element("div", "pe-texts"));
    texts.appendChild(element("span", "pe-label pe-ref-label", "Reference"));
    var ref = texts.appendChild(element("p", "pe-ref", item.reference[index]));
    ref.id = id + "-ref";
    ref.dir = box.dataset.targetDir;
    if (box.dataset.targetLang) { ref.lang = box.dataset.targetLang; }
    if (item.source[index]) {  // the source, when sent, under the reference and muted: the reference is what counts
      var src = texts.appendChild(element("p", "pe-src"));
      src.appendChild(element("span", "pe-src-label", sourceName ? "Source (" + sourceName + ")" : "Source"));
      src.appendChild(element("span", "pe-src-text", item.source[index])).dir = box.dataset.sourceDir;
      if (box.dataset.sourceLang) { src.lastChild.lang = box.dataset.sourceLang; }
    }

    var right = li.appendChild(element("div", "pe-right"));
    var label = right.appendChild(element("label", "pe-label pe-box-label", "Your edit"));
    label.htmlFor = id + "-box";
    label.appendChild(element("span", "visually-hidden", " of sentence " + number));
    var textarea = right.appendChild(element("textarea", "pe-box"));
    textarea.id = id + "-box";
    textarea.rows = 1;
    textarea.value = item.outputs[index];
    textarea.dir = box.dataset.targetDir;
    if (box.dataset.targetLang) { textarea.lang = box.dataset.targetLang; }
    textarea.spellcheck = true;
    textarea.setAttribute("autocomplete", "off");
    var warning = right.appendChild(element("p", "pe-warning"));
    warning.id = id + "-warning";
    warning.hidden = true;
    warning.setAttribute("aria-live", "polite");
    textarea.setAttribute("aria-describedby", ref.id + " " + warning.id);
    var under = right.appendChild(element("div", "pe-under"));
    var diffLine = under.appendChild(element("p", "pe-diff"));
    diffLine.appendChild(element("span", "pe-diff-label", "Changes"));
    var diff = diffLine.appendChild(element("span", "pe-diff-text"));
    diff.dir = box.dataset.targetDir;
    if (box.dataset.targetLang) { diff.lang = box.dataset.targetLang; }
    var reset = under.appendChild(element("button", "pe-reset", "Reset"));
    reset.type = "button";
    reset.setAttribute("aria-label", "Reset sentence " + number + " to the machine translation");
    rowsEl.appendChild(li);

    var row = {el: li, box: textarea, original: item.outputs[index], reference: item.reference[index],
               diff: diff, reset: reset, warning: warning, serverMessage: "", number: number};
    textarea.addEventListener("input", function () { changed(row); });
    reset.addEventListener("click", function () {
      textarea.value = row.original;
      changed(row);
      textarea.focus();
    });
    renderDiff(row);
    reset.disabled = true;
    return row;
  }

  function fitAll() {
    rows.forEach(function (row) { fit(row.box); });
  }

  function setSending(on) {
    sending = on;
    rows.forEach(function (row) {
      row.box.readOnly = on;
      row.reset.disabled = on || row.box.value === row.original;
    });
    update();
  }

  function submit() {
    if (sending || !rows.length) { return; }
    var bad = problems();
    if (bad.length) {  // shown already; the first one gets the focus
      bad.forEach(showWarning);
      bad[0].box.focus();
      return;
    }
    setSending(true);
    hit.submit({edits: rows.map(function (row) { return row.box.value; })});
  }

  button.addEventListener("click", submit);

  /* The server's reason for a refusal, under the box it names ("edit 2 …", counted from 1 as on the screen). */
  function showRefusal() {
    if (!statusEl || !statusEl.classList.contains("error")) { return; }
    var message = statusEl.textContent;
    var match = /\bedit\s+(\d+)\b/i.exec(message);
    var row = match ? rows[Number(match[1]) - 1] : null;
    if (!row) { return; }
    row.serverMessage = message;
    showWarning(row);
    row.box.focus();
  }

  document.addEventListener("keydown", function (event) {
    if (hit.isPaused() || !rows.length || box.offsetParent === null || event.isComposing) { return; }
    if (event.key !== "Enter" || event.altKey || event.shiftKey) { return; }
    var active = document.activeElement;
    if (event.ctrlKey || event.metaKey) {
      event.preventDefault();
      if (!event.repeat) { submit(); }
      return;
    }
    for (var i = 0; i < rows.length; i++) {
      if (rows[i].box === active) {  // a sentence has no line breaks: Enter moves on
        event.preventDefault();
        if (i + 1 < rows.length) { rows[i + 1].box.focus(); } else if (!button.disabled) { button.focus(); }
        return;
      }
    }
  });

  window.addEventListener("resize", fitAll);

  hit.register({
    show: function (item) {
      serial += 1;
      sending = false;
      rowsEl.textContent = "";
      var outputs = Array.isArray(item.outputs) ? item.outputs : [];
      var references = Array.isArray(item.reference) ? item.reference : [];
      var sources = Array.isArray(item.source) ? item.source : [];
      var nth = function (list) {
        return outputs.map(function (_, i) { return typeof list[i] === "string" ? list[i] : ""; });
      };
      item = {outputs: outputs, source: nth(sources), reference: nth(references)};
      rows = outputs.map(function (_, i) { return buildRow(item, i); });
      rows.forEach(showWarning);
      update();
      window.scrollTo(0, 0);  // a new screen starts at its top (phones)
      fitAll();
    },
    focus: function () {  // the first box, with the cursor at its end (a phone's keyboard is not opened)
      fitAll();
      if (!rows.length) { return; }
      var coarse = window.matchMedia && window.matchMedia("(pointer: coarse)").matches;
      if (coarse) { return; }
      var first = rows[0].box;
      first.focus({preventScroll: true});
      first.setSelectionRange(first.value.length, first.value.length);
    },
    unlock: function () {
      setSending(false);
      showRefusal();
    }
  });
})();
