/* Rows of choices: the screen that several protocols share (ranks 1..N per translation, Yes / No per
   translation, Yes / No per question). Each row's choices are a radio group (one Tab stop per row; ← → change
   the choice, like any radio group). Keys: ↑ ↓ move between rows, a choice's key answers the focused row and
   the focus moves on to the next one (the last keeps it), Enter submits. Submit stays disabled until every row
   is answered, and a hint says how many are left. The choices stay left-to-right in right-to-left languages.

   ChoiceRows.create(spec) -> {show(entries), focus(), unlock()}, the screen's part for HitScreens.register.
   spec: box (the screen's element: the keys act only while it is shown), list (where the rows go), button
   (Submit), remaining (the hint), doneClass (the hint's class once every row is answered), left(n) (the hint's
   text with n rows left), rowSelector (a row element's selector), row(entry, index, serial) -> {el, group,
   name, choices: [{value, label, className, faceClass, note?}]} (the row's element, its choices' container,
   their radio name), mark(el, value) (a row answered), keyValue(event, count) (the choice a key picks, or
   null), answer(values) (the body to submit, from {entry key: value} in row order).
   ChoiceRows.YES_NO are the Yes / No choices; ChoiceRows.yesNo(event) the Yes / No keys: Y or 1 yes, N or 2
   no (also the Arabic-Indic and Persian digits; on a keyboard whose letters are not Latin, the keys where Y
   and N are on a US keyboard). For rows of translations of one segment: showSegment, labelSource and
   translationRow (below). */
(function () {
  "use strict";
  var LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  var YES_NO = [{value: "yes", label: "Yes", className: "ac-choice ac-yes", faceClass: "ac-face"},
                {value: "no", label: "No", className: "ac-choice ac-no", faceClass: "ac-face"}];

  function yesNo(event) {
    var key = event.key;
    if (key === "y" || key === "Y" || key === "1" || key === "١" || key === "۱") { return "yes"; }
    if (key === "n" || key === "N" || key === "2" || key === "٢" || key === "۲") { return "no"; }
    if (key && key.length === 1 && !/[a-z0-9]/i.test(key)) {
      if (event.code === "KeyY") { return "yes"; }
      if (event.code === "KeyN") { return "no"; }
    }
    return null;
  }

  /* The segment the translations are of: the source (its span highlighted) and the reference, each hidden when
     the item has none (a campaign line without a reference gives an empty one: no empty "Reference" box). */
  function showSegment(item, sourceEl, referenceBox, referenceEl) {
    window.HitScreens.fillText(sourceEl, item.source === undefined ? "" : item.source, item.source_span);
    sourceEl.parentNode.hidden = item.source === undefined;
    referenceBox.hidden = !item.reference;
    referenceEl.textContent = item.reference || "";
  }

  /* "Source (<language>)" into labelEl, from box.dataset.sourceLang. */
  function labelSource(box, labelEl) {
    var name = window.HitScreens.languageName(box.dataset.sourceLang);
    labelEl.textContent = name ? "Source (" + name + ")" : "Source";
  }

  /* A translation's row for spec.row: its letter, its text (its span highlighted) in the target's direction and
     language (box.dataset), and a fieldset (look.groupClass) labelled look.legend(letter) for its choices;
     look.rowClass is the row's class, look.prefix makes its ids and radio name. */
  function translationRow(box, candidate, index, serial, look) {
    var hit = window.HitScreens;
    var letter = LETTERS.charAt(index) || String(index + 1);
    var li = hit.element("li", look.rowClass);
    li.appendChild(hit.element("span", "rk-letter", letter)).setAttribute("aria-hidden", "true");
    var text = li.appendChild(hit.element("p", "rk-text"));
    hit.fillText(text, candidate.text, candidate.span);
    text.id = look.prefix + "-text-" + serial + "-" + index;
    text.dir = box.dataset.targetDir;
    text.lang = box.dataset.targetLang;
    var group = li.appendChild(hit.element("fieldset", look.groupClass));
    group.dir = "ltr";
    group.setAttribute("aria-describedby", text.id);
    group.appendChild(hit.element("legend", "visually-hidden", look.legend(letter)));
    return {el: li, group: group, name: look.prefix + "-" + serial + "-" + index};
  }

  function create(spec) {
    var hit = window.HitScreens;
    var element = hit.element;
    var rows = [];      // per row shown: {key, el, inputs}
    var values = {};    // entry key -> the choice's value
    var current = 0;    // the row the keys answer when the focus is nowhere in particular
    var serial = 0;     // radio group names differ from one screen to the next
    var sending = false;

    function remaining() {
      return rows.filter(function (row) { return !(row.key in values); }).length;
    }

    function update() {
      var left = remaining();
      spec.button.disabled = sending || left > 0 || rows.length === 0;
      spec.remaining.classList.toggle(spec.doneClass, left === 0);
      spec.remaining.textContent = spec.left(left);
    }

    function set(index, value) {
      var row = rows[index];
      values[row.key] = value;
      row.inputs.forEach(function (input) { input.checked = input.value === String(value); });
      spec.mark(row.el, value);
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
      var rowEl = el && el.closest ? el.closest(spec.rowSelector) : null;
      for (var i = 0; i < rows.length; i++) {
        if (rows[i].el === rowEl) { return i; }
      }
      return -1;
    }

    function build(entry, index) {
      var made = spec.row(entry, index, serial);
      var inputs = made.choices.map(function (choice) {
        var label = made.group.appendChild(element("label", choice.className));
        var input = label.appendChild(element("input"));
        input.type = "radio";
        input.name = made.name;
        input.value = String(choice.value);
        var face = label.appendChild(element("span", choice.faceClass, choice.label));
        if (choice.note) { face.appendChild(element("span", "visually-hidden", choice.note)); }
        input.addEventListener("change", function () { if (input.checked) { set(index, choice.value); } });
        return input;
      });
      made.el.addEventListener("focusin", function () { current = index; });
      spec.list.appendChild(made.el);
      return {key: entry.key, el: made.el, inputs: inputs};
    }

    function submit() {
      if (spec.button.disabled || remaining() > 0) { return; }
      var answer = {};
      rows.forEach(function (row) { answer[row.key] = values[row.key]; });
      sending = true;
      spec.button.disabled = true;
      hit.submit(spec.answer(answer));
    }

    spec.button.addEventListener("click", submit);

    document.addEventListener("keydown", function (event) {
      if (hit.isPaused() || !rows.length || spec.box.offsetParent === null) { return; }
      if (event.ctrlKey || event.metaKey || event.altKey) { return; }
      var active = document.activeElement;
      var inRow = rowIndexOf(active);
      var free = !active || active === document.body;  // nothing focused: the keys go to the current row
      var value = spec.keyValue(event, rows.length);
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        if (inRow < 0 && !free) { return; }
        var step = event.key === "ArrowDown" ? 1 : -1;
        focusRow((inRow < 0 ? current - step : inRow) + step);
        event.preventDefault();
      } else if (value !== null) {
        var index = inRow >= 0 ? inRow : (free ? current : -1);
        if (index < 0) { return; }
        event.preventDefault();
        set(index, value);
        focusRow(index + 1);  // on to the next row (the last one keeps the focus)
      } else if (event.key === "Enter" && !event.repeat) {
        if (active && active !== spec.button && active.tagName === "BUTTON") { return; }  // e.g. "Instructions"
        event.preventDefault();
        submit();
      }
    });

    return {
      /* A new screen: one row per entry ({key, …}: what spec.row shows). */
      show: function (entries) {
        serial += 1;
        sending = false;
        spec.list.textContent = "";
        values = {};
        current = 0;
        rows = entries.map(build);
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
    };
  }

  window.ChoiceRows = {create: create, yesNo: yesNo, YES_NO: YES_NO, showSegment: showSegment,
                       labelSource: labelSource, translationRow: translationRow};
})();
