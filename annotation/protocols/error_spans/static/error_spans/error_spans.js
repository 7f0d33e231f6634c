/* Error-span screen, ESA and MQM (docs/methods.md §11; Kocmi et al. 2024, Freitag et al. 2021): the
   translation in its document (the segments before and after it muted, the whole document on request),
   the source beside it when the campaign shows it. The judge marks the errors (spans_editor.js: select,
   then a severity, for MQM a category too; [missing] for an omission), then scores the translation on the
   Direct Assessment slider (slider.js's look and keys) with the marked errors still in view. Submit is
   enabled once the slider has been moved; Enter submits. The answer:
   {"spans": [{"start", "end", "severity", "category"?}], "score"}, offsets in code points. */
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
  var keysEl = document.getElementById("es-keys");
  var button = document.getElementById("submit");
  var statement = document.getElementById("statement").textContent;
  var hit = window.HitScreens;
  var editor = null;
  var slider = null;
  var sending = false;

  (function labels() {
    var source = hit.languageName(box.dataset.sourceLang), target = hit.languageName(box.dataset.targetLang);
    document.getElementById("es-source-label").textContent = source ? "Source (" + source + ")" : "Source";
    document.getElementById("es-target-label").textContent = target ? "Translation (" + target + ")" : "Translation";
  })();

  var setExpanded = window.SpanEditor.expander(expandEl, function () { return [docEl]; }, function () {
    return docEl.classList.contains("expanded");
  }, "Show less of the document", true);

  function keysText(item) {
    var parts = ["Keys: Tab to the translation, ← → move, Shift+← → select (Ctrl: by word), → at the end: [missing];"];
    parts.push(item.severities.map(function (s, i) { return (i + 1) + " " + s; }).join(", ") + ";");
    if (item.categories) { parts.push("category: its letter, then a digit;"); }
    parts.push("Delete removes, Esc cancels; slider ← → PgUp PgDn; Enter submits");
    return parts.join(" ");
  }

  function update() {
    button.disabled = sending || !slider || slider.value === null;
  }

  function submit() {
    if (button.disabled || !editor || slider.value === null || editor.problem()) { return; }
    sending = true;
    button.disabled = true;
    hit.submit({spans: editor.result(), score: slider.value});
  }
  button.addEventListener("click", submit);

  window.SpanEditor.listenKeys({
    box: box, button: button, submit: submit, ready: function () { return !!editor; },
    more: function (event, active) {  // slider keys work even after a click elsewhere took the focus (slider.js)
      return (!active || active === document.body || active === button) && !event.ctrlKey && !event.metaKey &&
        slider.key(event);
    }
  });

  hit.register({
    show: function (item) {
      window.SpanEditor.forget();
      sending = false;
      var withSource = item.source !== undefined;
      box.classList.toggle("with-source", withSource);
      var doc = window.SpanEditor.fillDocument(box, beforeEl, afterEl, item, withSource, true);
      var k = doc.current, segments = doc.segments;
      expandEl.dataset.label = "Show the whole document (" + segments.length + " segments)";
      expandEl.hidden = k <= 1 && k >= segments.length - 2;
      setExpanded(false);
      sourceEl.hidden = !withSource;
      sourceEl.textContent = withSource ? item.source : "";
      editor = window.SpanEditor.create({
        text: item.candidate, severities: item.severities, categories: item.categories || null,
        prefilled: item.prefilled, dir: box.dataset.targetDir, lang: box.dataset.targetLang,
        label: "Translation", onChange: update
      });
      targetEl.textContent = "";
      targetEl.appendChild(editor.line);
      toolsEl.textContent = "";
      toolsEl.appendChild(editor.tools);
      slider = window.SpanEditor.slider({label: statement, low: box.dataset.low, high: box.dataset.high,
                                         onChange: update});
      var old = scoreEl.querySelector(".vas");
      if (old) { scoreEl.removeChild(old); }
      scoreEl.appendChild(slider.el);
      keysEl.textContent = keysText(item);
      update();
      window.scrollTo(0, 0);
    },
    focus: function () {  // the keys start in the translation (a phone's keyboard is not opened)
      if (editor && !window.SpanEditor.coarse()) { editor.text.focus({preventScroll: true}); }
    },
    unlock: function () {
      sending = false;
      update();
    }
  });
})();
