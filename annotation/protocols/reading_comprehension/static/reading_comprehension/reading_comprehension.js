/* Reading comprehension's four screens (docs/methods.md §9; Callison-Burch 2009 §5.3); the page's template
   says which (data-stage on #reading-comprehension). Every text from the server is set as textContent.
   write:  the article (the human translation) beside three question boxes, each with a sample answer. Submit
           waits for three non-empty, different questions with answers; a sample answer that is only yes/no or
           only a number is flagged (a hint: the server accepts it). {"questions": [{"question", "answer"} ×3]}
   vote:   the article, one question and its sample answer; good? (Y / N) and, optionally, which other question of
           the article it repeats. {"good": "yes" | "no", "redundant_with": <question id> | null}
   answer: the article (one translation of it) beside the questions, each with a box and "the article does not
           say" (which empties the box). Submit waits until each is answered or ticked. {"answers": {id: text}}
   grade:  the question, the sample answer and the given answer; correct? (Y / N). {"correct": "yes" | "no"}
   Keys: Ctrl+Enter (⌘+Enter) submits from anywhere; on vote and grade, Y / N choose and Enter submits. */
(function () {
  "use strict";
  var box = document.getElementById("reading-comprehension");
  var stage = box.dataset.stage;
  var button = document.getElementById("submit");
  var remainingEl = document.getElementById("rc-remaining");
  var hit = window.HitScreens;
  var element = hit.element;
  var sending = false;
  var screen = null;  // {ready(): message or "", answer(): object, focus()}

  function textual(el) {
    el.dir = box.dataset.targetDir;
    if (box.dataset.targetLang) { el.lang = box.dataset.targetLang; }
    return el;
  }

  function showArticle(sentences) {
    var article = document.getElementById("rc-article");
    article.textContent = "";
    (Array.isArray(sentences) ? sentences : []).forEach(function (s) {
      if (typeof s === "string") { article.appendChild(textual(element("p", "rc-sentence", s))); }
    });
    article.scrollTop = 0;
  }

  function update() {
    var problem = screen ? screen.ready() : "Loading…";
    button.disabled = sending || !!problem;
    remainingEl.textContent = problem;
  }

  function normal(text) { return text.replace(/\s+/g, " ").trim(); }

  /* write ------------------------------------------------------------------------------------------ */
  var YES_NO = /^\W*(yes|no|yeah|nope|true|false)\b\W*$/i;
  var NUMBER = /^[\s\d.,:;\/%+\-–()$€£]*\d[\s\d.,:;\/%+\-–()$€£]*$/;

  function field(parent, tag, id, label, className) {
    var wrap = parent.appendChild(element("div", "rc-field"));
    var l = wrap.appendChild(element("label", "rc-field-label", label));
    l.htmlFor = id;
    var input = wrap.appendChild(textual(element(tag, className)));
    input.id = id;
    if (tag === "textarea") { input.rows = 2; }
    input.setAttribute("autocomplete", "off");
    return input;
  }

  function writeScreen(item) {
    showArticle(item.article);
    var list = document.getElementById("rc-questions");
    list.textContent = "";
    var rows = [];
    for (var i = 0; i < (item.count || 3); i++) {
      var li = list.appendChild(element("li", "rc-q"));
      var q = field(li, "textarea", "rc-q-" + item.id + "-" + i, "Question " + (i + 1), "rc-q-text");
      q.maxLength = 500;
      var a = field(li, "input", "rc-a-" + item.id + "-" + i, "Sample answer (a few words)", "rc-a-text");
      a.maxLength = 300;
      var warn = li.appendChild(element("p", "rc-warning"));
      warn.hidden = true;
      warn.setAttribute("aria-live", "polite");
      rows.push({q: q, a: a, warn: warn});
    }
    function check(row, index) {
      var text = normal(row.q.value), sample = normal(row.a.value), message = "";
      var key = text.toLowerCase().replace(/[?.\s]+$/, "");
      var earlier = rows.slice(0, index).some(function (r) {
        return key && normal(r.q.value).toLowerCase().replace(/[?.\s]+$/, "") === key;
      });
      if (earlier) {
        message = "The same as an earlier question: ask something else.";
      } else if (sample && YES_NO.test(sample)) {
        message = "A yes/no answer: better ask why or how.";
      } else if (sample && NUMBER.test(sample)) {
        message = "Only a number or date: better ask why or how.";
      }
      row.warn.textContent = message;
      row.warn.hidden = !message;
      row.warn.classList.toggle("rc-blocking", earlier);
      return earlier;
    }
    rows.forEach(function (row) {
      [row.q, row.a].forEach(function (input) { input.addEventListener("input", update); });
    });
    return {
      ready: function () {
        var repeats = rows.map(check).some(Boolean);
        var missing = rows.filter(function (r) { return !normal(r.q.value) || !normal(r.a.value); }).length;
        if (missing) { return missing + (missing === 1 ? " question or answer" : " questions or answers") + " to write"; }
        return repeats ? "Write three different questions" : "";
      },
      answer: function () {
        return {questions: rows.map(function (r) { return {question: r.q.value, answer: r.a.value}; })};
      },
      focus: function () { rows[0].q.focus({preventScroll: true}); },
      lock: function (on) { rows.forEach(function (r) { r.q.readOnly = on; r.a.readOnly = on; }); }
    };
  }

  /* vote ------------------------------------------------------------------------------------------- */
  function radios(name) {
    return Array.prototype.slice.call(document.querySelectorAll("input[name='" + name + "']"));
  }

  function chosen(name) {
    var on = radios(name).filter(function (r) { return r.checked; })[0];
    return on ? on.value : "";
  }

  function resetRadios(name) {
    radios(name).forEach(function (r) { r.checked = false; r.disabled = false; });
  }

  function voteScreen(item) {
    showArticle(item.article);
    var question = item.question || {};
    textual(document.getElementById("rc-question")).textContent = question.question || "";
    textual(document.getElementById("rc-sample")).textContent = question.answer || "";
    resetRadios("rc-good");
    var select = document.getElementById("rc-redundant");
    select.textContent = "";
    var none = select.appendChild(element("option", "", "No, it asks something of its own"));
    none.value = "";
    (Array.isArray(item.others) ? item.others : []).forEach(function (other) {
      var option = select.appendChild(element("option", "", "Yes, the same as: " + other.question));
      option.value = other.id;
    });
    select.value = "";
    return {
      ready: function () { return chosen("rc-good") ? "" : "Say whether it is a good question"; },
      answer: function () { return {good: chosen("rc-good"), redundant_with: select.value || null}; },
      focus: function () { radios("rc-good")[0].focus({preventScroll: true}); },
      lock: function (on) { select.disabled = on; }
    };
  }

  /* answer ----------------------------------------------------------------------------------------- */
  function answerScreen(item) {
    showArticle(item.article);
    var list = document.getElementById("rc-questions");
    list.textContent = "";
    var rows = (Array.isArray(item.questions) ? item.questions : []).map(function (q, i) {
      var li = list.appendChild(element("li", "rc-q"));
      var id = "rc-ans-" + item.id + "-" + i;
      var label = li.appendChild(textual(element("label", "rc-q-label", q.question)));
      label.htmlFor = id;
      var input = li.appendChild(textual(element("input", "rc-a-text")));
      input.id = id;
      input.maxLength = 1000;
      input.setAttribute("autocomplete", "off");
      var tick = li.appendChild(element("label", "rc-unknown"));
      var unknown = tick.appendChild(element("input"));
      unknown.type = "checkbox";
      tick.appendChild(document.createTextNode(" The article does not say"));
      unknown.addEventListener("change", function () {
        if (unknown.checked) { input.value = ""; }
        input.disabled = unknown.checked;
        update();
      });
      input.addEventListener("input", update);
      return {id: q.id, input: input, unknown: unknown};
    });
    return {
      ready: function () {
        var left = rows.filter(function (r) { return !normal(r.input.value) && !r.unknown.checked; }).length;
        if (left) { return left + (left === 1 ? " question" : " questions") + " still to answer"; }
        if (rows.length && rows.every(function (r) { return r.unknown.checked; })) {
          return "Answer at least one question from the article";
        }
        return "";
      },
      answer: function () {
        var answers = {};
        rows.forEach(function (r) { answers[r.id] = r.unknown.checked ? "" : r.input.value; });
        return {answers: answers};
      },
      focus: function () { if (rows.length) { rows[0].input.focus({preventScroll: true}); } },
      lock: function (on) { rows.forEach(function (r) { r.input.readOnly = on; r.unknown.disabled = on; }); }
    };
  }

  /* grade ------------------------------------------------------------------------------------------ */
  function gradeScreen(item) {
    textual(document.getElementById("rc-question")).textContent = item.question || "";
    textual(document.getElementById("rc-sample")).textContent = item.sample_answer || "";
    textual(document.getElementById("rc-given")).textContent = item.answer || "";
    resetRadios("rc-correct");
    return {
      ready: function () { return chosen("rc-correct") ? "" : "Say whether the answer is correct"; },
      answer: function () { return {correct: chosen("rc-correct")}; },
      focus: function () { radios("rc-correct")[0].focus({preventScroll: true}); },
      lock: function () {}
    };
  }

  var BUILD = {write: writeScreen, vote: voteScreen, answer: answerScreen, grade: gradeScreen};
  var CHOICE = {vote: "rc-good", grade: "rc-correct"};

  document.addEventListener("change", function (event) {
    if (event.target.name === CHOICE[stage]) { update(); }
  });

  function submit() {
    if (sending || !screen || screen.ready()) { return; }
    sending = true;
    screen.lock(true);
    update();
    hit.submit(screen.answer());
  }

  button.addEventListener("click", submit);

  document.addEventListener("keydown", function (event) {
    if (hit.isPaused() || !screen || box.offsetParent === null || event.isComposing) { return; }
    var tag = document.activeElement ? document.activeElement.tagName : "";
    var typing = tag === "TEXTAREA" || (tag === "INPUT" && document.activeElement.type === "text") ||
      (tag === "INPUT" && !document.activeElement.type);
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      if (!event.repeat) { submit(); }
      return;
    }
    if (CHOICE[stage] && !typing && !event.ctrlKey && !event.metaKey && !event.altKey) {
      var key = event.key.toLowerCase();
      if (key === "y" || key === "n") {
        var radio = radios(CHOICE[stage]).filter(function (r) { return r.value === (key === "y" ? "yes" : "no"); })[0];
        radio.checked = true;
        radio.focus();
        update();
        event.preventDefault();
      } else if (event.key === "Enter" && tag !== "SELECT" && tag !== "BUTTON") {
        event.preventDefault();
        submit();
      }
    } else if (event.key === "Enter" && tag === "INPUT" && stage === "answer" && !event.shiftKey) {
      event.preventDefault();  // Enter in an answer box moves on, as Tab does
      var inputs = Array.prototype.slice.call(box.querySelectorAll(".rc-a-text:not(:disabled)"));
      var next = inputs[inputs.indexOf(document.activeElement) + 1];
      if (next) { next.focus(); } else if (!button.disabled) { button.focus(); }
    }
  });

  var handlers = {
    show: function (item) {
      sending = false;
      screen = BUILD[stage](item || {});
      update();
      window.scrollTo(0, 0);
    },
    focus: function () {
      var coarse = window.matchMedia && window.matchMedia("(pointer: coarse)").matches;
      if (screen && !coarse) { screen.focus(); }
    },
    unlock: function () {
      sending = false;
      if (screen) { screen.lock(false); }
      update();
    }
  };
  hit.register(handlers);
})();
