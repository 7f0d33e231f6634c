/* Direct Assessment screen: a 0-100 visual analogue scale with no numbers, anchored at
   both ends, marks at the quarters, untouched until moved (docs/methods.md §1).
   Untouched, it shows no handle (no position is suggested) but says how to rate, and a faint
   handle follows the pointer over the line, where a click would put it.
   Keyboard: arrows move by 1, Page Up/Down by 10, Home/End to the ends, Enter submits.
   Document-level DA (item.unit, docs/methods.md §1.1): a segment is shown in its document, the segments
   before it (with the scores given, as this browser remembers them) and after it muted, the whole document
   on request; the document item shows the whole document. item.marks (SQM labels) replace the quarter
   ticks and the end anchors with labelled marks at their places on the line. */
(function () {
  "use strict";
  var track = document.getElementById("vas-track");
  var thumb = document.getElementById("vas-thumb");
  var ghost = document.getElementById("vas-ghost");
  var hint = document.getElementById("vas-hint");
  var button = document.getElementById("submit");
  var contextEl = document.getElementById("context-text");
  var candidateEl = document.getElementById("candidate-text");
  var docNote = document.getElementById("da-doc-note");
  var beforeEl = document.getElementById("da-before");
  var afterEl = document.getElementById("da-after");
  var textsEl = document.getElementById("da-texts");
  var expandEl = document.getElementById("da-expand");
  var labelsEl = document.getElementById("vas-labels");
  var vasEl = track.parentNode;
  var value = null;
  var dragging = false;
  var shownItem = null;

  function clamp(v) { return Math.min(100, Math.max(0, v)); }

  function setValue(v) {
    value = Math.round(clamp(v) * 100) / 100;
    thumb.style.left = value + "%";
    track.classList.remove("untouched", "hovering");
    hint.hidden = true;
    track.setAttribute("aria-valuenow", String(Math.round(value)));
    button.disabled = false;
  }

  function reset() {
    value = null;
    track.classList.add("untouched");
    hint.hidden = false;
    track.removeAttribute("aria-valuenow");
    button.disabled = true;
  }

  function pointerPercent(event) {
    var box = track.getBoundingClientRect();
    return clamp(100 * (event.clientX - box.left) / box.width);
  }

  function fromPointer(event) {
    setValue(pointerPercent(event));
  }

  track.addEventListener("pointerdown", function (event) {
    if (event.button !== 0) { return; }
    dragging = true;
    track.setPointerCapture(event.pointerId);
    track.focus();
    fromPointer(event);
    event.preventDefault();
  });
  track.addEventListener("pointermove", function (event) {
    if (dragging) {
      fromPointer(event);
    } else if (value === null && event.pointerType === "mouse") {
      ghost.style.left = pointerPercent(event) + "%";  // where a click would put the handle
      track.classList.add("hovering");
    }
  });
  track.addEventListener("pointerleave", function () { track.classList.remove("hovering"); });
  track.addEventListener("pointerup", function () { dragging = false; });
  track.addEventListener("pointercancel", function () { dragging = false; });

  var steps = {ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1, PageUp: 10, PageDown: -10};
  function onSliderKey(event) {
    var start = value === null ? 50 : value;
    if (event.key in steps) {
      setValue(start + steps[event.key]);
    } else if (event.key === "Home") {
      setValue(0);
    } else if (event.key === "End") {
      setValue(100);
    } else {
      return;
    }
    event.preventDefault();
  }
  track.addEventListener("keydown", onSliderKey);

  /* Scores given to the segments of a document, by item id, kept for the tab's session (a reload keeps them). */
  function remember(id, score) {
    try { window.sessionStorage.setItem("da-score:" + id, String(score)); } catch (error) { /* private mode */ }
  }
  function recalled(id) {
    try {
      var stored = window.sessionStorage.getItem("da-score:" + id);
      return stored === null ? null : Number(stored);
    } catch (error) {
      return null;
    }
  }

  function submit() {
    if (value !== null && !button.disabled) {
      button.disabled = true;
      if (shownItem && shownItem.unit) { remember(shownItem.id, value); }
      window.HitScreens.submit({score: value});
    }
  }
  button.addEventListener("click", submit);
  document.addEventListener("keydown", function (event) {
    if (window.HitScreens.isPaused()) { return; }
    if (event.target !== track && (event.target === document.body || event.target === button)) {
      onSliderKey(event);  // slider keys work even after a click elsewhere took the focus
    }
    if (event.key === "Enter" && !event.repeat) {
      event.preventDefault();
      submit();
    }
  });

  var element = window.HitScreens.element;

  function contextRow(segment, index, far) {
    var row = element("div", "da-row" + (far ? " da-far" : ""));
    var gray = segment.reference !== undefined ? segment.reference : segment.source;
    row.appendChild(element("span", "da-num", String(index + 1)));
    var texts = row.appendChild(element("div", "da-row-texts"));
    if (gray !== undefined) {
      var g = texts.appendChild(element("p", "da-gray", gray));
      g.dir = segment.source !== undefined ? track.dataset.sourceDir : track.dataset.targetDir;
    }
    texts.appendChild(element("p", "da-black", segment.candidate)).dir = track.dataset.targetDir;
    var score = segment.item === undefined ? null : recalled(segment.item);
    if (score !== null && isFinite(score)) {
      var badge = row.appendChild(element("span", "da-score"));
      badge.title = "Your score";
      badge.appendChild(element("span", "visually-hidden", "your score: "));
      var bar = badge.appendChild(element("span", "da-score-bar"));
      bar.appendChild(element("span", "da-score-fill")).style.width = Math.max(0, Math.min(100, score)) + "%";
      badge.appendChild(element("span", "da-score-text", String(Math.round(score))));
    }
    return row;
  }

  function setExpanded(open) {
    beforeEl.classList.toggle("expanded", open);
    afterEl.classList.toggle("expanded", open);
    expandEl.setAttribute("aria-expanded", open ? "true" : "false");
    expandEl.textContent = open ? "Show less of the document" : expandEl.dataset.label;
  }
  expandEl.addEventListener("click", function () { setExpanded(expandEl.getAttribute("aria-expanded") !== "true"); });

  function showDocument(item) {
    var doc = item.unit && item.document && Array.isArray(item.document.segments) ? item.document : null;
    beforeEl.textContent = "";
    afterEl.textContent = "";
    beforeEl.hidden = afterEl.hidden = docNote.hidden = expandEl.hidden = !doc;
    textsEl.hidden = false;
    textsEl.classList.toggle("da-current", !!doc);
    if (!doc) { return; }
    var segments = doc.segments, k = doc.current;
    var whole = item.unit === "document" || k === null || k === undefined;
    segments.forEach(function (segment, i) {
      if (whole || i < k) { beforeEl.appendChild(contextRow(segment, i, !whole && i < k - 1)); }
      if (!whole && i > k) { afterEl.appendChild(contextRow(segment, i, i > k + 1)); }
    });
    beforeEl.classList.toggle("da-whole", whole);
    textsEl.hidden = whole;
    afterEl.hidden = whole || k >= segments.length - 1;
    beforeEl.hidden = !whole && k === 0;
    docNote.textContent = whole ? "Now rate the whole document (" + segments.length + " segments) as one text." :
      "Segment " + (k + 1) + " of " + segments.length + " of a document.";
    docNote.classList.toggle("da-doc-whole", whole);
    expandEl.dataset.label = "Show the whole document (" + segments.length + " segments)";
    expandEl.hidden = whole || (k <= 1 && k >= segments.length - 2);
    setExpanded(false);
  }

  function showMarks(marks) {
    var sqm = Array.isArray(marks) && marks.length > 0;
    vasEl.classList.toggle("vas-sqm", sqm);
    labelsEl.hidden = !sqm;
    Array.prototype.forEach.call(track.querySelectorAll(".vas-mark"), function (el) { track.removeChild(el); });
    labelsEl.textContent = "";
    if (!sqm) { return; }
    marks.forEach(function (mark, i) {
      var tick = element("span", "vas-tick vas-mark");
      tick.style.left = mark.at + "%";
      track.insertBefore(tick, ghost);
      var label = labelsEl.appendChild(element("span", "vas-label", mark.text));
      label.style.left = mark.at + "%";
      if (i === 0) { label.classList.add("first"); }
      if (i === marks.length - 1) { label.classList.add("last"); }
    });
  }

  window.HitScreens.register({
    show: function (item) {
      shownItem = item;
      var context = item.reference !== undefined ? item.reference : item.source;
      contextEl.hidden = context === undefined;
      contextEl.textContent = context === undefined ? "" : context;
      contextEl.dir = item.source !== undefined ? track.dataset.sourceDir : track.dataset.targetDir;
      candidateEl.textContent = item.candidate;
      showDocument(item);
      showMarks(item.marks);
      reset();
    },
    focus: function () { track.focus(); },
    unlock: function () { button.disabled = value === null; }
  });
})();
