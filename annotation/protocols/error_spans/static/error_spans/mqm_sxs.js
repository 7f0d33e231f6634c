/* MQM side by side (docs/methods.md#side-by-side; Anthea MQM-SxS, Song et al. 2025): two or more translations of the
   same segment in columns (one under the other on a phone), each in its own document, the source above. Each
   translation gets MQM spans (spans_editor.js: a category and a severity); there is no score. Submit is always
   possible: a translation without marks is one without errors. Enter submits.

   The consistency aid: when words marked in one column also occur in another where nothing covers them, the
   marked column says "“…” is marked here; the same words in B are unmarked", with "Mark in B too" (the same
   severity and category) and "Dismiss", and the words are underlined in B (a CSS highlight). Nothing is forced. Each hint shown is recorded once: {from, column, text, start, end, shown
   (seconds after the item appeared), action}, the action read at Submit: `marked` when the words are covered in
   that column then, else `dismissed` or `none`. The answer:
   {"candidates": {"<key>": {"spans": [...]}}, "hints": [...]}, offsets in code points. */
(function () {
  "use strict";
  var LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  var box = document.getElementById("mqm-sxs");
  var sourceBox = document.getElementById("sxs-source-box");
  var beforeEl = document.getElementById("sxs-before");
  var afterEl = document.getElementById("sxs-after");
  var sourceEl = document.getElementById("sxs-source");
  var columnsEl = document.getElementById("sxs-columns");
  var expandEl = document.getElementById("sxs-expand");
  var keysEl = document.getElementById("sxs-keys");
  var button = document.getElementById("submit");
  var hit = window.HitScreens;
  var element = hit.element;
  var columns = [];   // per translation: {key, letter, editor, el, hints}
  var hints = {};     // "from|column|start|end" -> {from, column, text, start, end, shown, dismissed}
  var shownAt = 0;
  var sending = false;

  (function labels() {
    var source = hit.languageName(box.dataset.sourceLang);
    document.getElementById("sxs-source-label").textContent = source ? "Source (" + source + ")" : "Source";
  })();

  /* Every document on the screen (the source's, each translation's) and the screen itself expand together. */
  var setExpanded = window.SpanEditor.expander(expandEl, function () {
    return Array.prototype.slice.call(box.querySelectorAll(".es-doc")).concat([box]);
  }, function () { return box.classList.contains("expanded"); }, "Show less of the documents", false);

  function covered(column, start, end) {
    return column.editor.spans.some(function (s) { return s.start < end && start < s.end; });
  }

  /* Where the code points `words` occur in `chars` (every start). */
  function occurrences(chars, words) {
    var out = [];
    for (var p = 0; p + words.length <= chars.length; p++) {
      var same = true;
      for (var i = 0; i < words.length && same; i++) { same = chars[p + i] === words[i]; }
      if (same) { out.push(p); }
    }
    return out;
  }

  /* The hints that hold now (marked words unmarked elsewhere), each recorded the first time it holds. */
  function currentHints() {
    var now = [];
    columns.forEach(function (x) {
      x.editor.spans.forEach(function (span) {
        if (span.start >= span.end || span.suggested) { return; }
        var words = x.editor.index.chars.slice(span.start, span.end);
        columns.forEach(function (y) {
          if (y === x) { return; }
          occurrences(y.editor.index.chars, words).forEach(function (p) {
            var end = p + words.length;
            if (covered(y, p, end)) { return; }
            var id = [x.key, y.key, p, end].join("|");
            if (!hints[id]) {
              hints[id] = {from: x.key, column: y.key, text: words.join(""), start: p, end: end,
                           shown: Math.round((performance.now() - shownAt) / 100) / 10, dismissed: false};
            }
            now.push({hint: hints[id], x: x, y: y, span: span});
          });
        });
      });
    });
    return now;
  }

  function markToo(y, start, end, span) {
    var mark = {start: start, end: end, severity: span.severity};
    if (span.category !== undefined) { mark.category = span.category; }
    y.editor.spans.push(mark);
    window.SpanEditor.sortSpans(y.editor.spans);
    y.editor.changed();
  }

  /* The unmarked words of the hints shown, underlined where the browser has the CSS Custom Highlight API. */
  function paintUnmarked(now) {
    if (!(window.CSS && CSS.highlights && window.Highlight)) { return; }
    var highlight = new Highlight();
    now.forEach(function (h) {
      var range = h.hint.dismissed ? null : h.y.editor.rangeOf(h.hint.start, h.hint.end);
      if (range) { highlight.add(range); }
    });
    CSS.highlights.set("sxs-unmarked", highlight);
  }

  function showHints() {
    var now = currentHints();
    paintUnmarked(now);
    columns.forEach(function (column) { column.hints.textContent = ""; });
    now.forEach(function (h) {
      if (h.hint.dismissed) { return; }
      var line = h.x.hints.appendChild(element("p", "sxs-hint"));
      line.setAttribute("role", "status");
      line.appendChild(element("span", "sxs-hint-text", "“" + h.hint.text + "” is marked here; the same words in " +
                                                       h.y.letter + " are unmarked."));
      var mark = line.appendChild(element("button", "link sxs-mark-too", "Mark in " + h.y.letter + " too"));
      mark.type = "button";
      mark.addEventListener("click", function () { markToo(h.y, h.hint.start, h.hint.end, h.span); });
      var dismiss = line.appendChild(element("button", "link sxs-dismiss", "Dismiss"));
      dismiss.type = "button";
      dismiss.addEventListener("click", function () {
        h.hint.dismissed = true;
        showHints();
      });
    });
  }

  function update() {
    showHints();
    button.disabled = sending || columns.length === 0;
  }

  function buildColumn(candidate, i, item) {
    var letter = LETTERS.charAt(i) || String(i + 1);
    var col = element("section", "ces-col");
    col.setAttribute("aria-label", "Translation " + letter);
    var head = col.appendChild(element("div", "ces-col-head"));
    head.appendChild(element("h2", "ces-col-title", "Translation " + letter));
    var current = window.SpanEditor.columnDocument(col, candidate, item, box);
    var editor = window.SpanEditor.create({
      text: candidate.text, severities: item.severities, categories: item.categories || null,
      prefilled: candidate.prefilled, dir: box.dataset.targetDir, lang: box.dataset.targetLang,
      label: "Translation " + letter, onChange: update
    });
    current.appendChild(editor.line);
    var hintBox = col.appendChild(element("div", "sxs-hints"));
    hintBox.setAttribute("aria-live", "polite");
    col.appendChild(editor.tools);
    columnsEl.appendChild(col);
    return {key: candidate.key, letter: letter, editor: editor, el: col, hints: hintBox};
  }

  function answerHints() {
    return Object.keys(hints).map(function (id) {
      var h = hints[id];
      var column = columns.filter(function (c) { return c.key === h.column; })[0];
      var action = covered(column, h.start, h.end) ? "marked" : (h.dismissed ? "dismissed" : "none");
      return {from: h.from, column: h.column, text: h.text, start: h.start, end: h.end, shown: h.shown,
              action: action};
    });
  }

  function submit() {
    if (button.disabled || !columns.length) { return; }
    var answer = {};
    for (var i = 0; i < columns.length; i++) {
      if (columns[i].editor.problem()) { return; }
      answer[columns[i].key] = {spans: columns[i].editor.result()};
    }
    sending = true;
    button.disabled = true;
    hit.submit({candidates: answer, hints: answerHints()});
  }
  button.addEventListener("click", submit);

  window.SpanEditor.listenKeys({
    box: box, button: button, submit: submit, ready: function () { return columns.length > 0; }
  });

  hit.register({
    show: function (item) {
      window.SpanEditor.forget();
      sending = false;
      hints = {};
      columns = [];
      shownAt = performance.now();
      var withSource = item.source !== undefined;
      var sources = window.SpanEditor.columnsSource(item, box, sourceBox, sourceEl, beforeEl, afterEl);
      columnsEl.textContent = "";
      item.candidates.forEach(function (candidate, i) { columns.push(buildColumn(candidate, i, item)); });
      columnsEl.classList.toggle("ces-many", columns.length > 3);
      var longest = Math.max.apply(null, item.candidates.map(function (c) {
        return Array.isArray(c.document) ? c.document.length : 1;
      }).concat([withSource ? sources.length : 1]));
      expandEl.dataset.label = "Show the whole documents (" + longest + " segments)";
      expandEl.hidden = !box.querySelector(".es-far");
      setExpanded(false);
      keysEl.textContent = "Keys: Tab to a translation, ← → move, Shift+← → select (Ctrl: by word), → at the end: " +
        "[missing]; " + item.severities.map(function (s, i) { return (i + 1) + " " + s; }).join(", ") +
        "; category: its letter, then a digit; Delete removes, Esc cancels; Enter submits";
      update();
      window.scrollTo(0, 0);
    },
    focus: function () {
      if (columns.length && !window.SpanEditor.coarse()) { columns[0].editor.text.focus({preventScroll: true}); }
    },
    unlock: function () {
      sending = false;
      update();
    }
  });
})();
