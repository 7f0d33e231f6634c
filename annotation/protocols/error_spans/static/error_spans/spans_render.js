/* The error-span editor's rendering (spans_editor.js): the translation's line (its text with the marked errors
   as <mark>s, the omissions before the [missing] marker, the keyboard cursor drawn over the text), and the
   mapping between DOM positions and code points. The text is only ever set as text (text nodes), never as
   HTML. */
(function (S) {
  "use strict";
  var Editor = S.Editor;
  var state = S.state;
  var element = window.HitScreens.element;

  Editor.prototype.buildLine = function () {
    var self = this;
    var line = this.line = element("div", "es-line");
    line.dir = this.dir;
    var text = this.text = line.appendChild(element("span", "es-text"));
    text.tabIndex = 0;
    text.id = this.id + "-text";
    if (this.options.lang) { text.lang = this.options.lang; }
    text.setAttribute("aria-label", (this.options.label || "Translation") +
                      ": select an error with Shift and the arrow keys, then its severity");
    this.omissions = line.appendChild(element("span", "es-omissions"));
    var missing = this.missing = line.appendChild(element("button", "es-missing", "[missing]"));
    missing.type = "button";
    missing.title = "Something of the source is missing from the translation: click, then a severity";
    missing.setAttribute("aria-label", "[missing]: mark an omission");
    this.cursor = line.appendChild(element("span", "es-cursor"));
    this.cursor.setAttribute("aria-hidden", "true");
    this.cursor.hidden = true;

    missing.addEventListener("click", function () {
      var selection = window.getSelection();
      if (selection) { selection.removeAllRanges(); }
      S.remember(null);
      state.editors.forEach(function (other) { if (other !== self && other.pending) { other.select(null); } });
      self.caret = self.anchor = self.missingPosition();
      self.select({start: self.index.length, end: self.index.length});
      self.touch();
    });
    line.addEventListener("click", function (event) {
      var mark = event.target.closest ? event.target.closest("mark.es-span") : null;
      if (mark && line.contains(mark)) {
        var selection = window.getSelection();
        if (selection && selection.rangeCount && !selection.isCollapsed &&
            text.contains(selection.getRangeAt(0).commonAncestorContainer)) { return; }  // a selection, not a click
        self.activate(Number(mark.dataset.index));
        self.touch();
      }
    });
    text.addEventListener("pointerdown", function (event) { self.touching = event.pointerType === "touch"; });
    text.addEventListener("focus", function () {
      state.last = self;
      // a cursor for the keyboard and the mouse, none after a tap or on a touch screen
      self.cursorShown = !self.touching && !S.coarse();
      self.touching = false;
      self.placeCursor();
    });
    text.addEventListener("blur", function () { self.cursor.hidden = true; });
  };

  Editor.prototype.describe = function (span) {
    var words = [S.SEVERITY_LABELS[span.severity] || span.severity, "error"];
    if (span.category) { words.push("(" + span.category + ")"); }
    if (span.suggested) { words.push("— " + (this.options.suggestedLabel || "suggested")); }
    if (span.note) { words.push("— " + span.note); }
    return words.join(" ");
  };

  /* The text with its marked errors; the omission chips before [missing]. */
  Editor.prototype.render = function () {
    var self = this, index = this.index, n = index.length;
    var text = this.text;
    text.textContent = "";
    var at = 0;
    this.spans.forEach(function (span, i) {
      if (span.start === span.end) { return; }
      if (span.start > at) { text.appendChild(document.createTextNode(index.slice(at, span.start))); }
      text.appendChild(self.markFor(span, i, index.slice(span.start, span.end)));
      at = span.end;
    });
    if (at < n) { text.appendChild(document.createTextNode(index.slice(at, n))); }
    this.omissions.textContent = "";
    this.omissionIndices().forEach(function (i) {
      self.omissions.appendChild(self.markFor(self.spans[i], i, "[missing]")).classList.add("es-omission");
    });
    this.missing.textContent = this.omissionIndices().length ? "+ [missing]" : "[missing]";
    this.missing.classList.toggle("es-pending", !!(this.pending && this.pending.start === n));
    this.missing.setAttribute("aria-pressed", this.pending && this.pending.start === n ? "true" : "false");
    S.remember(null);
  };

  Editor.prototype.markFor = function (span, i, content) {
    var mark = element("mark", "es-span sev-" + span.severity, content);
    mark.dataset.index = String(i);
    if (span.suggested) { mark.classList.add("es-suggested"); }
    if (i === this.active) { mark.classList.add("es-active"); }
    var label = [];
    if (span.suggested) { label.push(this.options.suggestedLabel || "suggested"); }
    if (span.note) { label.push(span.note); mark.classList.add("es-noted"); }
    if (span.category) { label.push(S.leafOf(span.category)); }
    if (label.length) { mark.dataset.label = label.join(" · "); }
    mark.title = this.describe(span);
    return mark;
  };

  /* The code point at a DOM position; `up`: a position inside a surrogate pair counts after it (an end). */
  Editor.prototype.pointToCp = function (node, offset, up) {
    var whole = document.createRange();
    whole.selectNodeContents(this.text);
    var where;
    try { where = whole.comparePoint(node, offset); } catch (error) { return null; }
    if (where < 0) { return 0; }
    if (where > 0) { return this.index.length; }
    var before = document.createRange();
    before.setStart(this.text, 0);
    before.setEnd(node, offset);
    var u = before.toString().length, p = this.index.cpOf(u);
    return up && this.index.u16[p] < u ? p + 1 : p;
  };

  Editor.prototype.cpToPoint = function (p) {
    var target = this.index.u16[Math.max(0, Math.min(p, this.index.length))];
    var walker = document.createTreeWalker(this.text, NodeFilter.SHOW_TEXT);
    var node, seen = 0, last = null;
    while ((node = walker.nextNode())) {
      if (target <= seen + node.data.length) { return {node: node, offset: target - seen}; }
      seen += node.data.length;
      last = node;
    }
    return last ? {node: last, offset: last.data.length} : {node: this.text, offset: 0};
  };

  Editor.prototype.rangeOf = function (a, b) {
    var start = this.cpToPoint(a), end = this.cpToPoint(b);
    var range = document.createRange();
    range.setStart(start.node, start.offset);
    range.setEnd(end.node, end.offset);
    return range;
  };

  Editor.prototype.pendingRange = function () {
    var p = this.pending;
    return p && p.start < p.end ? this.rangeOf(p.start, p.end) : null;
  };

  Editor.prototype.refreshMarks = function () {
    var active = this.active, n = this.index.length, pending = this.pending;
    Array.prototype.forEach.call(this.line.querySelectorAll("mark.es-span"), function (mark) {
      mark.classList.toggle("es-active", Number(mark.dataset.index) === active);
    });
    this.missing.classList.toggle("es-pending", !!(pending && pending.start === n));
    this.missing.setAttribute("aria-pressed", pending && pending.start === n ? "true" : "false");
    this.placeCursor();
  };

  /* The blinking cursor, drawn over the text (never inside it: the text's nodes stay as they are). */
  Editor.prototype.placeCursor = function () {
    var cursor = this.cursor, n = this.index.length;
    var show = this.cursorShown && document.activeElement === this.text && this.caret <= n;
    cursor.hidden = !show;
    if (!show) { return; }
    var p = this.caret, rects, rtl = this.dir === "rtl", x, rect;
    if (n === 0) {
      rect = this.text.getBoundingClientRect();
      x = rtl ? rect.right : rect.left;
    } else if (p < n) {
      rects = this.rangeOf(p, this.index.next(p)).getClientRects();
      rect = rects[0];
      x = rect && (rtl ? rect.right : rect.left);
    } else {
      rects = this.rangeOf(this.index.previous(n), n).getClientRects();
      rect = rects[rects.length - 1];
      x = rect && (rtl ? rect.left : rect.right);
    }
    if (!rect) { cursor.hidden = true; return; }
    var box = this.line.getBoundingClientRect();
    cursor.style.left = (x - box.left - 1) + "px";
    cursor.style.top = (rect.top - box.top) + "px";
    cursor.style.height = rect.height + "px";
    // restart the blink, so the cursor is seen where it went
    cursor.classList.remove("es-blink");
    void cursor.offsetWidth;
    cursor.classList.add("es-blink");
  };

  window.addEventListener("resize", function () { state.editors.forEach(function (e) { e.placeCursor(); }); });
})(window.SpanEditor);
