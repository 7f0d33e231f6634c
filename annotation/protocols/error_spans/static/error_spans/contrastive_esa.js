/* Contrastive ESA screen (docs/methods.md §11, WMT26): every system's translation of the same segment side by
   side (columns on a desktop, one under the other on a phone), each in its own document (the segments before
   and after it muted, the whole documents on request), the source above them. Each translation gets its own
   error spans (spans_editor.js) and its own 0–100 slider with its score shown as a number; equal scores are
   marked on every translation that has one ("= B"), so ties are seen at a glance. One Submit for all,
   enabled once every slider has been moved; Enter submits. The answer:
   {"candidates": {"<key>": {"spans": [...], "score"}}}, offsets in code points. */
(function () {
  "use strict";
  var LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  var box = document.getElementById("contrastive");
  var sourceBox = document.getElementById("ces-source-box");
  var beforeEl = document.getElementById("ces-before");
  var afterEl = document.getElementById("ces-after");
  var sourceEl = document.getElementById("ces-source");
  var columnsEl = document.getElementById("ces-columns");
  var expandEl = document.getElementById("ces-expand");
  var keysEl = document.getElementById("ces-keys");
  var remainingEl = document.getElementById("ces-remaining");
  var button = document.getElementById("submit");
  var statement = document.getElementById("statement").textContent;
  var hit = window.HitScreens;
  var element = hit.element;
  var columns = [];   // per translation: {key, letter, editor, slider, el, number, tie}
  var sending = false;

  (function labels() {
    var source = hit.languageName(box.dataset.sourceLang);
    document.getElementById("ces-source-label").textContent = source ? "Source (" + source + ")" : "Source";
  })();

  /* Every document on the screen (the source's, each translation's) and the screen itself expand together. */
  var setExpanded = window.SpanEditor.expander(expandEl, function () {
    return Array.prototype.slice.call(box.querySelectorAll(".es-doc")).concat([box]);
  }, function () { return box.classList.contains("expanded"); }, "Show less of the documents", true);

  function update() {
    var left = columns.filter(function (c) { return c.slider.value === null; }).length;
    columns.forEach(function (column) {
      var value = column.slider.value;
      column.number.textContent = value === null ? "–" : String(value);
      var same = value === null ? [] : columns.filter(function (other) {
        return other !== column && other.slider.value === value;
      });
      column.el.classList.toggle("ces-tied", same.length > 0);
      column.tie.hidden = same.length === 0;
      column.tie.textContent = same.length ? "= " + same.map(function (o) { return o.letter; }).join(" = ") : "";
      column.tie.title = same.length ? "The same score as translation " + same.map(function (o) {
        return o.letter;
      }).join(" and ") : "";
    });
    button.disabled = sending || left > 0 || columns.length === 0;
    remainingEl.classList.toggle("all", left === 0);
    remainingEl.textContent = left === 0 ? "All scored" :
      (left === 1 ? "1 translation" : left + " translations") + " still to score";
  }

  function buildColumn(candidate, i, item) {
    var letter = LETTERS.charAt(i) || String(i + 1);
    var col = element("section", "ces-col");
    col.setAttribute("aria-label", "Translation " + letter);
    var head = col.appendChild(element("div", "ces-col-head"));
    head.appendChild(element("h2", "ces-col-title", "Translation " + letter));
    var scoreLine = head.appendChild(element("span", "ces-score-line"));
    var tie = scoreLine.appendChild(element("span", "ces-tie"));
    tie.hidden = true;
    var number = scoreLine.appendChild(element("output", "ces-score", "–"));
    number.setAttribute("aria-label", "Score of translation " + letter);
    var current = window.SpanEditor.columnDocument(col, candidate, item, box);
    var editor = window.SpanEditor.create({
      text: candidate.text, severities: item.severities, categories: item.categories || null, prefilled: candidate.prefilled,
      dir: box.dataset.targetDir, lang: box.dataset.targetLang, label: "Translation " + letter, onChange: update
    });
    current.appendChild(editor.line);
    col.appendChild(editor.tools);
    var scoreBox = col.appendChild(element("div", "es-score-box"));
    var slider = window.SpanEditor.slider({label: "Translation " + letter + ": " + statement, integer: true,
                                           low: box.dataset.low, high: box.dataset.high, onChange: update,
                                           hint: "Click or drag on the line to score " + letter});
    scoreBox.appendChild(slider.el);
    columnsEl.appendChild(col);
    return {key: candidate.key, letter: letter, editor: editor, slider: slider, el: col, number: number, tie: tie};
  }

  function submit() {
    if (button.disabled || !columns.length) { return; }
    var answer = {};
    for (var i = 0; i < columns.length; i++) {
      if (columns[i].slider.value === null || columns[i].editor.problem()) { return; }
      answer[columns[i].key] = {spans: columns[i].editor.result(), score: columns[i].slider.value};
    }
    sending = true;
    button.disabled = true;
    hit.submit({candidates: answer});
  }
  button.addEventListener("click", submit);

  window.SpanEditor.listenKeys({
    box: box, button: button, submit: submit, ready: function () { return columns.length > 0; }
  });

  hit.register({
    show: function (item) {
      window.SpanEditor.forget();
      sending = false;
      var withSource = item.source !== undefined;
      var sources = window.SpanEditor.columnsSource(item, box, sourceBox, sourceEl, beforeEl, afterEl);
      columnsEl.textContent = "";
      columns = item.candidates.map(function (candidate, i) { return buildColumn(candidate, i, item); });
      columnsEl.classList.toggle("ces-many", columns.length > 3);
      var longest = Math.max.apply(null, item.candidates.map(function (c) {
        return Array.isArray(c.document) ? c.document.length : 1;
      }).concat([withSource ? sources.length : 1]));
      expandEl.dataset.label = "Show the whole documents (" + longest + " segments)";
      expandEl.hidden = !box.querySelector(".es-far");
      setExpanded(false);
      keysEl.textContent = "Keys: Tab to a translation, ← → move, Shift+← → select (Ctrl: by word), → at the end: " +
        "[missing]; " + item.severities.map(function (s, i) { return (i + 1) + " " + s; }).join(", ") +
        "; Delete removes, Esc cancels; slider ← → PgUp PgDn; Enter submits";
      update();
      window.scrollTo(0, 0);
    },
    focus: function () {  // the keys start in the first translation
      if (columns.length && !window.SpanEditor.coarse()) { columns[0].editor.text.focus({preventScroll: true}); }
    },
    unlock: function () {
      sending = false;
      update();
    }
  });
})();
