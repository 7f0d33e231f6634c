/* Direct Assessment screen: one item on the visual analogue scale (vas.js; docs/methods.md §1), Enter submits.
   Document-level DA (item.unit, docs/methods.md §1.1): a segment is shown in its document, the segments
   before it (with the scores given, as this browser remembers them) and after it muted, the whole document
   on request; the document item shows the whole document. A state with a page of several items
   (`document_page`) is shown by document_page.js instead, with the same Submit button. */
(function () {
  "use strict";
  var track = document.getElementById("vas-track");
  var button = document.getElementById("submit");
  var oneEl = document.getElementById("da-one");
  var contextEl = document.getElementById("context-text");
  var candidateEl = document.getElementById("candidate-text");
  var docNote = document.getElementById("da-doc-note");
  var beforeEl = document.getElementById("da-before");
  var afterEl = document.getElementById("da-after");
  var textsEl = document.getElementById("da-texts");
  var expandEl = document.getElementById("da-expand");
  var shownItem = null;
  var paged = false;  // the state's page is on screen (document_page.js)
  var scale = window.HitVas.attach({
    root: track.parentNode, track: track, thumb: document.getElementById("vas-thumb"),
    ghost: document.getElementById("vas-ghost"), hint: document.getElementById("vas-hint"),
    labels: document.getElementById("vas-labels")
  }, function (value) { button.disabled = value === null; });

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
    if (paged) {
      window.HitDocumentPage.submit();
      return;
    }
    var value = scale.value();
    if (value !== null && !button.disabled) {
      button.disabled = true;
      if (shownItem && shownItem.unit) { remember(shownItem.id, value); }
      window.HitScreens.submit({score: value});
    }
  }
  button.addEventListener("click", submit);
  document.addEventListener("keydown", function (event) {
    if (window.HitScreens.isPaused()) { return; }
    if (!paged && event.target !== track && (event.target === document.body || event.target === button)) {
      scale.key(event);  // slider keys work even after a click elsewhere took the focus
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

  window.HitScreens.register({
    show: function (item, page) {
      shownItem = item;
      paged = window.HitDocumentPage.show(item, page, {remember: remember, recalled: recalled, contextRow: contextRow});
      oneEl.hidden = paged;
      if (paged) {
        docNote.hidden = true;
        return;
      }
      var context = item.reference !== undefined ? item.reference : item.source;
      contextEl.hidden = context === undefined;
      contextEl.textContent = context === undefined ? "" : context;
      contextEl.dir = item.source !== undefined ? track.dataset.sourceDir : track.dataset.targetDir;
      candidateEl.textContent = item.candidate;
      showDocument(item);
      scale.showMarks(item.marks);
      scale.reset();
    },
    focus: function () {
      if (paged) { window.HitDocumentPage.focus(); } else { track.focus(); }
    },
    unlock: function () {
      button.disabled = paged ? !window.HitDocumentPage.complete() : scale.value() === null;
    }
  });
})();
