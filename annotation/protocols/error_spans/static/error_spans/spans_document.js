/* The document around the segment judged, as every error-span screen shows it (error_spans.js, span_review.js,
   contrastive_esa.js, mqm_sxs.js): the segments before and after it muted, one row each, the far ones hidden until
   the whole document is asked for, and the toggle that asks for it. SpanEditor.fillContext, .columnDocument,
   .columnsSource, .fillDocument, .expander (loaded after spans_editor.js). */
(function (S) {
  "use strict";
  var element = window.HitScreens.element;

  function paragraph(className, text, dir, lang) {
    var p = element("p", className, text === undefined || text === null ? "" : text);
    p.dir = dir;
    if (lang) { p.lang = lang; }
    return p;
  }

  /* The texts before and after the k-th into `before` and `after`, one row each, in one language (the columns of
     contrastive_esa.js and mqm_sxs.js, and their source). */
  S.fillContext = function (before, after, texts, k, className, dir, lang) {
    before.textContent = "";
    after.textContent = "";
    texts.forEach(function (text, i) {
      if (i === k) { return; }
      var row = element("div", "es-row" + (Math.abs(i - k) > 1 ? " es-far" : ""));
      row.appendChild(paragraph(className, text, dir, lang));
      (i < k ? before : after).appendChild(row);
    });
  };

  /* A column's translation in its document (contrastive_esa.js, mqm_sxs.js): the rows before and after it into
     `col`, and the row of its current segment, returned for the editor's line. */
  S.columnDocument = function (col, candidate, item, box) {
    var doc = col.appendChild(element("div", "es-doc"));
    var before = doc.appendChild(element("div", "es-context es-before"));
    var current = doc.appendChild(element("div", "es-row es-current"));
    var after = doc.appendChild(element("div", "es-context es-after"));
    var texts = Array.isArray(candidate.document) ? candidate.document : [candidate.text];
    var k = Array.isArray(candidate.document) ? item.current : 0;
    S.fillContext(before, after, texts, k, "es-tgt", box.dataset.targetDir, box.dataset.targetLang);
    return current;
  };

  /* The source above the columns (contrastive_esa.js, mqm_sxs.js), its document around it, or the source box hidden
     when the campaign does not show it. Returns the source's segments (one without a document). */
  S.columnsSource = function (item, box, sourceBox, sourceEl, before, after) {
    var withSource = item.source !== undefined;
    sourceBox.hidden = !withSource;
    var sources = Array.isArray(item.sources) ? item.sources : [item.source];
    var k = Array.isArray(item.sources) ? item.current : 0;
    sourceEl.textContent = withSource ? item.source : "";
    S.fillContext(before, after, withSource ? sources : [], k, "ces-src", box.dataset.sourceDir,
                  box.dataset.sourceLang);
    return sources;
  };

  /* The item's document around its current segment into `before` and `after` (error_spans.js, span_review.js):
     each row the segment's source when `withSource`, then its translation, with the directions of `box` and,
     when `withLang`, its languages. Returns {segments, current} (an item without a document is one segment). */
  S.fillDocument = function (box, before, after, item, withSource, withLang) {
    var doc = item.document && Array.isArray(item.document.segments) ? item.document :
      {segments: [{candidate: item.candidate, source: item.source}], current: 0};
    var k = doc.current, segments = doc.segments;
    var sourceLang = withLang ? box.dataset.sourceLang : null, targetLang = withLang ? box.dataset.targetLang : null;
    function row(segment, far) {
      var el = element("div", "es-row" + (far ? " es-far" : ""));
      if (withSource) { el.appendChild(paragraph("es-src", segment.source, box.dataset.sourceDir, sourceLang)); }
      el.appendChild(paragraph("es-tgt", segment.candidate, box.dataset.targetDir, targetLang));
      return el;
    }
    before.textContent = "";
    after.textContent = "";
    segments.forEach(function (segment, i) {
      if (i < k) { before.appendChild(row(segment, i < k - 1)); }
      if (i > k) { after.appendChild(row(segment, i > k + 1)); }
    });
    return {segments: segments, current: k};
  };

  /* The "Show the whole document" toggle `button`: opening puts "expanded" on each element `docs()` gives, and
     shows `less` on the button (closed, its data-label); with `scroll`, each one's .es-before is scrolled to its
     end, next to the current segment. Returns set(open); a click toggles what `isOpen()` says. */
  S.expander = function (button, docs, isOpen, less, scroll) {
    function set(open) {
      docs().forEach(function (doc) {
        doc.classList.toggle("expanded", open);
        var first = scroll && doc.querySelector(".es-before");
        if (open && first) { first.scrollTop = first.scrollHeight; }
      });
      button.setAttribute("aria-expanded", open ? "true" : "false");
      button.textContent = open ? less : button.dataset.label;
    }
    button.addEventListener("click", function () { set(!isOpen()); });
    return set;
  };
})(window.SpanEditor);
