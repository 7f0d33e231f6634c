/* Document-level DA on one page (`document_page`, docs/methods.md §1.1): the state's `page` (docs/api.md §8.2) is
   the document's segments still to rate and then the document item. Each segment is shown with its own scale
   (vas.js), the document's scale last; the segments rated before (a page left half done) stand above, muted, with
   their scores. Submit (slider.js's button) is enabled once every scale has been moved, and sends the page's
   answers as one batch (HitScreens.submitBatch, docs/api.md §8.3). Keyboard: Tab goes from scale to scale, the
   scale keys of vas.js move the focused one, Enter submits. Texts keep their direction (dir on each paragraph,
   isolated). */
(function () {
  "use strict";
  var element = window.HitScreens.element;
  var pageEl = document.getElementById("da-page");
  var button = document.getElementById("submit");
  var oneTrack = document.getElementById("vas-track");  // the one-item scale carries the text directions
  var anchors = Array.prototype.map.call(document.querySelectorAll("#da-one .vas-anchors span"),
                                         function (el) { return el.textContent; });
  var shown = [];  // [{entry, scale}] of the page on screen
  var helpers = null;

  function complete() {
    return shown.length > 0 && shown.every(function (one) { return one.scale.value() !== null; });
  }

  function onChange() { button.disabled = !complete(); }

  function texts(entry) {
    var box = element("div", "da-row-texts");
    var gray = entry.reference !== undefined ? entry.reference : entry.source;
    if (gray !== undefined) {
      box.appendChild(element("p", "da-gray", gray)).dir = entry.source !== undefined ? oneTrack.dataset.sourceDir :
        oneTrack.dataset.targetDir;
    }
    box.appendChild(element("p", "da-black", entry.candidate)).dir = oneTrack.dataset.targetDir;
    return box;
  }

  function scaleFor(entry, label, marks) {
    var parts = window.HitVas.build(label, anchors);
    var scale = window.HitVas.attach(parts, onChange);
    scale.showMarks(marks);
    shown.push({entry: entry, scale: scale});
    return parts.root;
  }

  /* Show `page` (from the state) for `item`; false when there is no page of several items (slider.js shows the
     item alone). */
  function show(item, page, given) {
    helpers = given;
    shown = [];
    pageEl.textContent = "";
    var paged = Array.isArray(page) && page.length > 1 && !!item.document;
    pageEl.hidden = !paged;
    if (!paged) { return false; }
    var segments = item.document.segments;
    var first = item.document.current || 0;
    var n = segments.length;
    pageEl.appendChild(element("p", "da-page-note", first === 0 ?
      "Rate each of the " + n + " segments of this document, then the whole document." :
      "Rate the remaining segments of this document, then the whole document."));
    if (first > 0) {
      var before = pageEl.appendChild(element("div", "da-context da-page-before"));
      segments.slice(0, first).forEach(function (segment, i) { before.appendChild(helpers.contextRow(segment, i)); });
    }
    var list = pageEl.appendChild(element("ol", "da-page-list"));
    list.start = first + 1;
    page.forEach(function (entry, k) {
      if (entry.unit === "document") { return; }
      var row = list.appendChild(element("li", "da-page-row"));
      row.appendChild(texts(entry));
      row.appendChild(scaleFor(entry, "Segment " + (first + k + 1) + " of " + n, item.marks));
    });
    var whole = pageEl.appendChild(element("section", "da-page-whole"));
    whole.appendChild(element("h3", "da-page-whole-title", "The whole document"));
    whole.appendChild(element("p", "da-page-whole-hint",
                              "Now rate the document as one text, all " + n + " segments together."));
    whole.appendChild(scaleFor(page[page.length - 1], "The whole document", item.marks));
    onChange();
    return true;
  }

  function submit() {
    if (!complete() || button.disabled) { return; }
    button.disabled = true;
    var answers = shown.map(function (one) {
      var score = one.scale.value();
      if (one.entry.unit === "segment") { helpers.remember(one.entry.id, score); }
      return {item: one.entry.id, score: score};
    });
    window.HitScreens.submitBatch(answers);
  }

  function focus() {
    var untouched = shown.filter(function (one) { return one.scale.value() === null; })[0] || shown[0];
    if (untouched) { untouched.scale.focus(); }
  }

  window.HitDocumentPage = {show: show, submit: submit, focus: focus, complete: complete};
})();
