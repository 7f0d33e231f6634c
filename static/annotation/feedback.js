/* A loud tutorial's feedback (docs/api.md §8, "Training"): after a wrong answer the server sends the expected
   answer, which the page never has before. HitFeedback.show(feedback, item) fills the #feedback box above the
   screen: the server's message, the translation with each expected span highlighted (a <mark>, its severity and
   category beside it; red when the judge missed it), and the expected score range (contrastive ESA: both per
   column, "Translation A", B, … in the screen's order); show(null) hides it. Spans are
   [start, end) in code points. Text nodes only, never HTML. */
(function () {
  "use strict";
  var box = document.getElementById("feedback");
  if (!box) { return; }
  var element = window.HitScreens.element;

  function label(span) {
    return [span.severity, span.category].filter(Boolean).join(", ") || "an error";
  }

  function marked(text, spans, missed) {
    var p = element("p", "fb-text");
    var chars = Array.from(text || "");
    var at = 0;
    spans.forEach(function (span) {
      if (span.start < at || span.end > chars.length) { return; }
      p.appendChild(document.createTextNode(chars.slice(at, span.start).join("")));
      var wrong = missed.some(function (m) { return m.start === span.start && m.end === span.end; });
      var mark = p.appendChild(element("mark", "fb-expected" + (wrong ? " fb-missed" : ""),
                                       chars.slice(span.start, span.end).join("")));
      mark.title = "expected: " + label(span);
      p.appendChild(element("span", "fb-label", " [" + label(span) + (wrong ? ": missed" : "") + "]"));
      at = span.end;
    });
    p.appendChild(document.createTextNode(chars.slice(at).join("")));
    return p;
  }

  /* One translation's expected answer: its text with the expected spans marked, and the expected score. */
  function expectedAnswer(expected, text, missed, scoreWrong) {
    var spans = expected.spans || [];
    if (spans.length && text !== undefined) {
      box.appendChild(element("p", "fb-caption", "The errors the answer should mark:"));
      box.appendChild(marked(text, spans, missed));
    }
    if (expected.score) {
      box.appendChild(element("p", "fb-score" + (scoreWrong ? " fb-missed-text" : ""), expected.spans ?
        "Expected score: between " + expected.score[0] + " and " + expected.score[1] + "." :
        "Expected rating: " + part(expected.score[0], expected.score[1]) + "."));
    }
  }

  /* A part of a slider that shows no numbers (Direct Assessment, whose expected answer has no spans). */
  function part(low, high) {
    if (low <= 0 && high >= 100) { return "anywhere on the line"; }
    if (low <= 0) { return "in the left " + high + " % of the line"; }
    if (high >= 100) { return "in the right " + (100 - low) + " % of the line"; }
    return "between " + low + " % and " + high + " % of the way from the left end of the line";
  }

  function show(feedback, item) {
    box.textContent = "";
    if (!feedback) {
      box.hidden = true;
      return;
    }
    var expected = feedback.expected || {};
    box.appendChild(element("h2", "fb-title", "Not quite — have another look"));
    box.appendChild(element("p", "fb-message", feedback.message || ""));
    if (expected.candidates && item && item.candidates) {  // contrastive ESA: one expected answer per column
      item.candidates.forEach(function (candidate, i) {
        var want = expected.candidates[candidate.key];
        if (!want) { return; }
        var missed = (feedback.missed || []).filter(function (m) { return m.candidate === candidate.key; });
        var wrong = (feedback.scores_wrong || []).indexOf(candidate.key) >= 0;
        box.appendChild(element("h3", "fb-column", "Translation " + String.fromCharCode(65 + i)));
        expectedAnswer(want, candidate.text, missed, wrong);
      });
    } else {
      expectedAnswer(expected, item && item.candidate, feedback.missed || [], feedback.score_wrong);
    }
    box.hidden = false;
    box.scrollIntoView({block: "start", behavior: "smooth"});
  }

  window.HitFeedback = {show: show};
})();
