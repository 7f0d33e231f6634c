/* Review of error spans (docs/methods.md "Review of error spans"; the `mqm-review` and `esa-review` stages): the
   translation in its document, as on the error-span screen (error_spans.js), with the spans of the first pass
   marked "first pass" in the error-span editor (spans_editor.js) and listed under it. For each first-pass span
   the reviewer chooses Keep, Edit (its category and severity with the editor's buttons; its extent by selecting
   the new text, then "Use the selection") or Delete (Restore brings it back); errors the first pass missed are
   added as on the error-span screen. Submit is enabled once every first-pass span is kept, changed or deleted
   and the slider has been moved; the line beside it says what is still missing. The answer:
   {"review": [{"action": "kept"} | {"action": "changed", "span"} | {"action": "deleted"}, one per first-pass
   span in order], "added": [spans], "score"}, and "restored" (indices) where the first pass was made over an
   earlier rater's (an imported Anthea file): that rater's errors the first pass deleted are listed struck
   through, each with a Restore toggle. */
(function () {
  "use strict";
  var box = document.getElementById("error-spans");
  var docEl = document.getElementById("es-doc");
  var beforeEl = document.getElementById("es-before");
  var afterEl = document.getElementById("es-after");
  var sourceEl = document.getElementById("es-source");
  var targetEl = document.getElementById("es-target");
  var toolsEl = document.getElementById("es-tools");
  var scoreEl = document.getElementById("es-score");
  var expandEl = document.getElementById("es-expand");
  var listEl = document.getElementById("sr-list");
  var firstBox = document.getElementById("sr-first");
  var deletedBox = document.getElementById("sr-deleted-box");
  var deletedEl = document.getElementById("sr-deleted");
  var waitingEl = document.getElementById("sr-waiting");
  var button = document.getElementById("submit");
  var statement = document.getElementById("statement").textContent;
  var hit = window.HitScreens;
  var element = hit.element;
  var S = window.SpanEditor;
  var editor = null;
  var slider = null;
  var sending = false;
  var firsts = [];      // per first-pass span: {original, span (the editor's object), decided}
  var editing = null;   // the first-pass entry whose extent is being edited
  var priorDeleted = []; // an earlier rater's errors the first pass deleted: {span, mark (in the text once restored)}

  var setExpanded = S.expander(expandEl, function () { return [docEl]; }, function () {
    return docEl.classList.contains("expanded");
  }, "Show less of the document", false);

  function plain(span) {
    var out = {start: span.start, end: span.end, severity: span.severity};
    if (editor.groups && span.category !== undefined) { out.category = span.category; }
    return out;
  }

  function same(a, b) {
    return a.start === b.start && a.end === b.end && a.severity === b.severity &&
      (a.category || null) === (b.category || null);
  }

  /* kept, changed, deleted, or open (not yet decided). */
  function stateOf(f) {
    if (editor.spans.indexOf(f.span) < 0) { return "deleted"; }
    if (!same(f.span, f.original)) { return "changed"; }
    return f.decided ? "kept" : "open";
  }

  function describe(span) {
    var what = span.start === span.end ? "[missing]" : "“" + S.shorten(editor.index.slice(span.start, span.end), 40) + "”";
    return what + " — " + (S.SEVERITY_LABELS[span.severity] || span.severity) +
      (span.category ? ", " + span.category : "");
  }

  function action(label, className, handler, pressed) {
    var b = element("button", "sr-action " + className, label);
    b.type = "button";
    if (pressed !== undefined) { b.setAttribute("aria-pressed", pressed ? "true" : "false"); }
    b.addEventListener("click", handler);
    return b;
  }

  function select(f) {
    var i = editor.spans.indexOf(f.span);
    if (i >= 0) { editor.activate(i); editor.touch(); }
  }

  function keep(f) {
    f.decided = true;
    f.span.suggested = false;
    if (editing === f) { editing = null; }
    editor.changed();
  }

  function remove(f) {
    var i = editor.spans.indexOf(f.span);
    if (i < 0) { return; }
    if (editing === f) { editing = null; }
    editor.active = i;
    editor.removeActive();
  }

  function restore(f) {
    var back = f.span;
    back.start = f.original.start;
    back.end = f.original.end;
    back.severity = f.original.severity;
    if (f.original.category !== undefined) { back.category = f.original.category; } else { delete back.category; }
    if (back.start < back.end && editor.overlaps(back) >= 0) {
      editor.say("An error marked since overlaps this one: remove that one first to restore it.");
      return;
    }
    editor.spans.push(back);
    S.sortSpans(editor.spans);
    f.decided = false;
    editor.changed();
    select(f);
  }

  function useSelection(f) {
    var p = editor.pending;
    if (!p || p.start >= p.end) {
      editor.say("First select the new extent of this error in the translation.");
      return;
    }
    for (var i = 0; i < editor.spans.length; i++) {
      var other = editor.spans[i];
      if (other !== f.span && other.start < other.end && p.start < other.end && other.start < p.end) {
        editor.say("That selection overlaps another error; select only this error's text.");
        return;
      }
    }
    f.span.start = p.start;
    f.span.end = p.end;
    f.span.suggested = false;
    editing = null;
    editor.pending = null;
    editor.clearNativeSelection();
    S.sortSpans(editor.spans);
    editor.changed();
    select(f);
  }

  function renderList() {
    listEl.textContent = "";
    firstBox.hidden = !firsts.length;
    firsts.forEach(function (f, k) {
      var state = stateOf(f);
      var li = listEl.appendChild(element("li", "sr-item sr-" + state));
      li.dataset.index = String(k);
      var what = li.appendChild(element("button", "link sr-what", describe(f.original)));
      what.type = "button";
      what.title = "Show it in the translation";
      what.addEventListener("click", function () { select(f); });
      var labels = {open: "to review", kept: "kept", deleted: "deleted",
                    changed: state === "changed" ? "changed to " + describe(f.span) : ""};
      li.appendChild(element("span", "sr-state", labels[state]));
      var actions = li.appendChild(element("span", "sr-actions"));
      if (state === "deleted") {
        actions.appendChild(action("Restore", "sr-restore", function () { restore(f); }));
        return;
      }
      actions.appendChild(action("Keep", "sr-keep", function () { keep(f); }, state === "kept"));
      actions.appendChild(action("Edit", "sr-edit", function () {
        editing = editing === f ? null : f;
        select(f);
        renderList();
      }, editing === f));
      actions.appendChild(action("Delete", "sr-delete", function () { remove(f); }));
      if (editing === f) {
        var how = li.appendChild(element("div", "sr-editing"));
        how.appendChild(element("span", "hint", "Change its " + (editor.groups ? "category and " : "") +
          "severity with the buttons below; for a new extent select the text, then: "));
        how.appendChild(action("Use the selection", "sr-bounds", function () { useSelection(f); }));
      }
    });
  }

  /* A restored error is marked in the translation like the others (its mark noted "restored"); deleting the mark
     there, or pressing Restore again, takes it back out. */
  function restoredNow(d) { return !!d.mark && editor.spans.indexOf(d.mark) >= 0; }

  function toggleRestored(d) {
    if (restoredNow(d)) {
      editor.spans.splice(editor.spans.indexOf(d.mark), 1);
      editor.active = -1;
      editor.changed();
      return;
    }
    var mark = {start: d.span.start, end: d.span.end, severity: d.span.severity, note: "restored", prior: true};
    if (editor.groups && d.span.category !== undefined) { mark.category = d.span.category; }
    if (mark.start < mark.end && editor.overlaps(mark) >= 0) {
      editor.say("An error marked since overlaps this one: remove that one first to restore it.");
      return;
    }
    d.mark = mark;
    editor.spans.push(mark);
    S.sortSpans(editor.spans);
    editor.changed();
  }

  function renderDeleted() {
    deletedEl.textContent = "";
    deletedBox.hidden = !priorDeleted.length;
    priorDeleted.forEach(function (d, k) {
      var restored = restoredNow(d);
      var li = deletedEl.appendChild(element("li", "sr-item " + (restored ? "sr-restored" : "sr-deleted")));
      li.dataset.index = String(k);
      li.appendChild(element(restored ? "span" : "s", "sr-what", describe(d.span)));
      li.appendChild(element("span", "sr-state", restored ? "restored" : "deleted in the first pass"));
      li.appendChild(element("span", "sr-actions")).appendChild(action("Restore", "sr-restore", function () {
        toggleRestored(d);
      }, restored));
    });
  }

  function missing() {
    var open = firsts.filter(function (f) { return stateOf(f) === "open"; }).length;
    var parts = [];
    if (open) { parts.push(open + (open === 1 ? " error" : " errors") + " of the first pass to keep, edit or delete"); }
    if (!slider || slider.value === null) { parts.push("the score"); }
    return parts;
  }

  function update() {
    if (!editor) { return; }
    renderList();
    renderDeleted();
    var left = missing();
    waitingEl.textContent = left.length ? "Still to do: " + left.join("; ") + "." : "";
    button.disabled = sending || left.length > 0;
  }

  function submit() {
    if (button.disabled || !editor || missing().length || editor.problem()) { return; }
    sending = true;
    button.disabled = true;
    var review = firsts.map(function (f) {
      var state = stateOf(f);
      if (state === "changed") { return {action: "changed", span: plain(f.span)}; }
      return {action: state};
    });
    var added = editor.spans.filter(function (s) { return s.first === undefined && !s.prior; }).map(plain);
    var answer = {review: review, added: added, score: slider.value};
    if (priorDeleted.length) {
      answer.restored = [];
      priorDeleted.forEach(function (d, k) {
        if (!restoredNow(d)) { return; }
        if (same(d.mark, d.span)) { answer.restored.push(k); } else { added.push(plain(d.mark)); } // edited: added
      });
    }
    hit.submit(answer);
  }
  button.addEventListener("click", submit);

  S.listenKeys({
    box: box, button: button, submit: submit, ready: function () { return !!editor; },
    more: function (event, active) {
      return (!active || active === document.body || active === button) && !event.ctrlKey && !event.metaKey &&
        slider.key(event);
    }
  });

  hit.register({
    show: function (item) {
      S.forget();
      sending = false;
      editing = null;
      var withSource = item.source !== undefined;
      box.classList.toggle("with-source", withSource);
      var doc = S.fillDocument(box, beforeEl, afterEl, item, withSource, false);
      var k = doc.current, segments = doc.segments;
      expandEl.dataset.label = "Show the whole document (" + segments.length + " segments)";
      expandEl.hidden = k <= 1 && k >= segments.length - 2;
      setExpanded(false);
      sourceEl.hidden = !withSource;
      sourceEl.textContent = withSource ? item.source : "";
      var first = item.first_pass || [];
      editor = S.create({
        text: item.candidate, severities: item.severities, categories: item.categories || null,
        prefilled: first, suggestedLabel: "first pass", dir: box.dataset.targetDir, lang: box.dataset.targetLang,
        label: "Translation", onChange: update
      });
      firsts = first.map(function (original, n) {
        var span = editor.spans.filter(function (s) {
          return s.first === undefined && s.start === original.start && s.end === original.end;
        })[0];
        if (span) { span.first = n; }
        return {original: original, span: span || {start: original.start, end: original.end,
                                                    severity: original.severity, first: n}, decided: false};
      });
      priorDeleted = (item.first_pass_deleted || []).map(function (span) { return {span: span, mark: null}; });
      targetEl.textContent = "";
      targetEl.appendChild(editor.line);
      toolsEl.textContent = "";
      toolsEl.appendChild(editor.tools);
      slider = S.slider({label: statement, low: box.dataset.low, high: box.dataset.high, onChange: update});
      var old = scoreEl.querySelector(".vas");
      if (old) { scoreEl.removeChild(old); }
      scoreEl.appendChild(slider.el);
      update();
      window.scrollTo(0, 0);
    },
    focus: function () {
      if (editor && !S.coarse()) { editor.text.focus({preventScroll: true}); }
    },
    unlock: function () {
      sending = false;
      update();
    }
  });
})();
