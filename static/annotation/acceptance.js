/* Constituent acceptance screen (docs/methods.md §8, WMT08): the source with one phrase highlighted,
   the reference when the campaign shows it, then one row per translation with the phrase aligned to
   the source's highlighted, and for each a Yes / No answer: is it an acceptable translation of the
   highlighted source phrase? The answer is {"accept": {key: "yes" | "no"}}, every row answered.
   Each row's answer is a radio group (one Tab stop per row; ← → switch between Yes and No, like
   any radio group). Keys: ↑ ↓ move between rows, Y or 1 answers the focused row yes, N or 2 no,
   and the focus moves on to the next row; Enter submits. Submit stays disabled until every row is
   answered, and a hint says how many are left. The Yes / No buttons stay in that order in
   right-to-left languages. Spans are [start, end) in Unicode code points, not the UTF-16 units JS
   strings count; the phrase is a <mark> with "highlighted:" before it for screen readers. */
(function () {
  "use strict";
  var LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  var CHOICES = [{value: "yes", label: "Yes"}, {value: "no", label: "No"}];
  var box = document.getElementById("acceptance");
  var rowsEl = document.getElementById("ac-rows");
  var sourceEl = document.getElementById("ac-source");
  var referenceBox = document.getElementById("ac-reference-box");
  var referenceEl = document.getElementById("ac-reference");
  var remainingEl = document.getElementById("ac-remaining");
  var button = document.getElementById("submit");
  var rows = [];      // per translation shown: {key, el, inputs}
  var answers = {};   // candidate key -> "yes" | "no"
  var current = 0;    // the row the keys answer when the focus is nowhere in particular
  var serial = 0;     // radio group names differ from one screen to the next
  var sending = false;

  var languageName = window.HitScreens.languageName;
  var element = window.HitScreens.element;
  var fillText = window.HitScreens.fillText;

  (function labelSource() {
    var name = languageName(box.dataset.sourceLang);
    document.getElementById("ac-source-label").textContent = name ? "Source (" + name + ")" : "Source";
  })();

  function remaining() {
    return rows.filter(function (row) { return !(row.key in answers); }).length;
  }

  function update() {
    var left = remaining();
    button.disabled = sending || left > 0 || rows.length === 0;
    remainingEl.classList.toggle("all", left === 0);
    if (left === 0) {
      remainingEl.textContent = "All answered";
    } else {
      remainingEl.textContent = (left === 1 ? "1 translation" : left + " translations") + " still to answer";
    }
  }

  function setAnswer(index, value) {
    var row = rows[index];
    answers[row.key] = value;
    row.inputs.forEach(function (input) { input.checked = input.value === value; });
    row.el.classList.add("answered");
    row.el.classList.toggle("ac-said-yes", value === "yes");
    row.el.classList.toggle("ac-said-no", value === "no");
    update();
  }

  function focusRow(index) {
    if (!rows.length) { return; }
    current = Math.max(0, Math.min(rows.length - 1, index));
    var row = rows[current];
    var target = row.inputs.filter(function (input) { return input.checked; })[0] || row.inputs[0];
    target.focus();
  }

  function rowIndexOf(el) {
    var rowEl = el && el.closest ? el.closest(".rk-row") : null;
    for (var i = 0; i < rows.length; i++) {
      if (rows[i].el === rowEl) { return i; }
    }
    return -1;
  }

  /* Y / 1 is yes, N / 2 no (also the Arabic-Indic and Persian digits); on a keyboard whose letters are
     not Latin, the keys where Y and N are on a US keyboard. */
  function answerOf(event) {
    var key = event.key;
    if (key === "y" || key === "Y" || key === "1" || key === "١" || key === "۱") { return "yes"; }
    if (key === "n" || key === "N" || key === "2" || key === "٢" || key === "۲") { return "no"; }
    if (key && key.length === 1 && !/[a-z0-9]/i.test(key)) {
      if (event.code === "KeyY") { return "yes"; }
      if (event.code === "KeyN") { return "no"; }
    }
    return null;
  }

  function buildRow(candidate, index) {
    var letter = LETTERS.charAt(index) || String(index + 1);
    var li = element("li", "rk-row ac-row");
    li.appendChild(element("span", "rk-letter", letter)).setAttribute("aria-hidden", "true");
    var text = li.appendChild(element("p", "rk-text"));
    fillText(text, candidate.text, candidate.span);
    text.id = "ac-text-" + serial + "-" + index;
    text.dir = box.dataset.targetDir;
    text.lang = box.dataset.targetLang;
    var group = li.appendChild(element("fieldset", "ac-choices"));
    group.dir = "ltr";
    group.setAttribute("aria-describedby", text.id);
    group.appendChild(element("legend", "visually-hidden", "Is the highlighted phrase of translation " + letter +
                                                           " acceptable?"));
    var inputs = CHOICES.map(function (choice) {
      var label = group.appendChild(element("label", "ac-choice ac-" + choice.value));
      var input = label.appendChild(element("input"));
      input.type = "radio";
      input.name = "ac-" + serial + "-" + index;
      input.value = choice.value;
      label.appendChild(element("span", "ac-face", choice.label));
      input.addEventListener("change", function () { if (input.checked) { setAnswer(index, choice.value); } });
      return input;
    });
    li.addEventListener("focusin", function () { current = index; });
    rowsEl.appendChild(li);
    return {key: candidate.key, el: li, inputs: inputs};
  }

  function submit() {
    if (button.disabled || remaining() > 0) { return; }
    var answer = {};
    rows.forEach(function (row) { answer[row.key] = answers[row.key]; });
    sending = true;
    button.disabled = true;
    window.HitScreens.submit({accept: answer});
  }

  button.addEventListener("click", submit);

  document.addEventListener("keydown", function (event) {
    if (window.HitScreens.isPaused() || !rows.length || box.offsetParent === null) { return; }
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var active = document.activeElement;
    var inRow = rowIndexOf(active);
    var free = !active || active === document.body;  // nothing focused: the keys go to the current row
    var value = answerOf(event);
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      if (inRow < 0 && !free) { return; }
      var from = inRow < 0 ? current - (event.key === "ArrowDown" ? 1 : -1) : inRow;
      focusRow(from + (event.key === "ArrowDown" ? 1 : -1));
      event.preventDefault();
    } else if (value) {
      var index = inRow >= 0 ? inRow : (free ? current : -1);
      if (index < 0) { return; }
      event.preventDefault();
      setAnswer(index, value);
      focusRow(index + 1);  // on to the next translation (the last one keeps the focus)
    } else if (event.key === "Enter" && !event.repeat) {
      if (active && active !== button && active.tagName === "BUTTON") { return; }  // e.g. "Instructions"
      event.preventDefault();
      submit();
    }
  });

  window.HitScreens.register({
    show: function (item) {
      serial += 1;
      sending = false;
      fillText(sourceEl, item.source === undefined ? "" : item.source, item.source_span);
      sourceEl.parentNode.hidden = item.source === undefined;
      referenceBox.hidden = item.reference === undefined;
      referenceEl.textContent = item.reference === undefined ? "" : item.reference;
      rowsEl.textContent = "";
      answers = {};
      current = 0;
      rows = item.candidates.map(buildRow);
      update();
      window.scrollTo(0, 0);  // a new screen starts at its top (phones)
    },
    focus: function () {
      current = 0;
      if (rows.length) { rows[0].inputs[0].focus({preventScroll: true}); }
    },
    unlock: function () {
      sending = false;
      update();
    }
  });
})();
