/* What the error-span screens share (error_spans.js: ESA and MQM; contrastive_esa.js; docs/methods.md §11):
   window.SpanEditor = {create, slider, handleKey, forget}.

   create(options) makes one translation to mark errors in: `line` (the text, the marked errors as <mark>s,
   the [missing] marker for omissions) and `tools` (severity buttons, for MQM the categories, what is
   selected, a message). The screen puts both where it wants. Offsets are half-open [start, end) in Unicode
   code points of the text (an emoji or a CJK extension B character is one, as in Python), never the
   UTF-16 units JavaScript strings count; an omission is the empty span [n, n] at the end.

   Selecting: with the mouse or a finger (the browser's own selection, long-press on a phone), or with the
   keyboard: the translation takes the focus, ← → move a cursor (Ctrl or Alt: by word; Home / End),
   Shift extends the selection, → past the end reaches the [missing] marker. A selection snaps to whole
   characters as people see them (grapheme clusters: a base letter with its combining marks, an emoji
   sequence; never half of a surrogate pair) and drops the white space around it. Then a severity
   (buttons, or 1 minor, 2 major, 3 critical) and for MQM a category (a letter opens a group, a digit
   picks in it; a group without subcategories is one letter). A selection over an error already marked is
   refused with a message. A marked error is selected by a click or a tap (or by moving the cursor into
   it); then the severity and category buttons change it and Remove (or Delete) removes it.
   Spans suggested in advance (`prefilled`) are shown marked as suggested until the judge changes them.

   The text is only ever set as text (text nodes), never as HTML.
   slider(options) is the Direct Assessment slider (slider.js, the same look and keys) for a page with
   several of them. */
(function () {
  "use strict";

  var SEVERITY_KEYS = {minor: "1", major: "2", critical: "3"};
  var SEVERITY_LABELS = {minor: "Minor", major: "Major", critical: "Critical"};
  var CHILD_KEYS = "1234567890";
  var LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  var editors = [];      // the editors on screen
  var lastEditor = null; // the one the keys act on when the focus is in none
  var serial = 0;

  function coarse() {
    return !!(window.matchMedia && window.matchMedia("(pointer: coarse)").matches);
  }

  function element(tag, className, text) {
    var el = document.createElement(tag);
    if (className) { el.className = className; }
    if (text !== undefined) { el.textContent = text; }
    return el;
  }

  /* The key shown on a button (for the eyes; aria-keyshortcuts tells screen readers). */
  function keyOn(button, key) {
    if (!key) { return; }
    button.appendChild(element("kbd", "", key)).setAttribute("aria-hidden", "true");
    button.setAttribute("aria-keyshortcuts", key);
  }

  var isMark = (function () {
    try {
      var re = new RegExp("^[\\p{M}\\u200d\\ufe0f]$", "u");
      return function (ch) { return re.test(ch); };
    } catch (error) {
      return function (ch) { return /^[\u0300-\u036f\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u200d\ufe0f]$/.test(ch); };
    }
  })();
  var isSpace = function (ch) { return /^\s$/.test(ch) || ch === "\u200b"; };

  /* A text as code points, with the grapheme boundaries and the word boundaries in code points. */
  function TextIndex(text) {
    var chars = Array.from(text);
    var n = chars.length;
    var u16 = [0];
    var i;
    for (i = 0; i < n; i++) { u16.push(u16[i] + chars[i].length); }
    this.text = text;
    this.chars = chars;
    this.length = n;
    this.u16 = u16;
    var boundary = [];
    for (i = 0; i <= n; i++) { boundary.push(i === 0 || i === n); }
    var self = this;
    var segmenter = null;
    try {
      if (window.Intl && Intl.Segmenter) { segmenter = new Intl.Segmenter(undefined, {granularity: "grapheme"}); }
    } catch (error) {
      segmenter = null;
    }
    if (segmenter) {
      Array.from(segmenter.segment(text)).forEach(function (s) { boundary[self.cpOf(s.index)] = true; });
    } else {
      for (i = 1; i < n; i++) { boundary[i] = !isMark(chars[i]) && chars[i - 1] !== "\u200d"; }
    }
    this.boundary = boundary;
    // Word starts and ends (for Ctrl+arrows), from Intl.Segmenter where there is one, else white space.
    var starts = [], ends = [];
    try {
      Array.from(new Intl.Segmenter(undefined, {granularity: "word"}).segment(text)).forEach(function (s) {
        if (s.isWordLike) {
          starts.push(self.cpOf(s.index));
          ends.push(self.cpOf(s.index + s.segment.length));
        }
      });
    } catch (error) {
      for (i = 0; i < n; i++) {
        if (!isSpace(chars[i]) && (i === 0 || isSpace(chars[i - 1]))) { starts.push(i); }
        if (!isSpace(chars[i]) && (i === n - 1 || isSpace(chars[i + 1]))) { ends.push(i + 1); }
      }
    }
    this.wordStarts = starts;
    this.wordEnds = ends;
  }

  /* The code point holding UTF-16 offset u (its start: never the middle of a surrogate pair). */
  TextIndex.prototype.cpOf = function (u) {
    var lo = 0, hi = this.length;
    while (lo < hi) {
      var mid = (lo + hi + 1) >> 1;
      if (this.u16[mid] <= u) { lo = mid; } else { hi = mid - 1; }
    }
    return lo;
  };
  TextIndex.prototype.snapDown = function (p) {
    while (p > 0 && !this.boundary[p]) { p--; }
    return p;
  };
  TextIndex.prototype.snapUp = function (p) {
    while (p < this.length && !this.boundary[p]) { p++; }
    return p;
  };
  TextIndex.prototype.next = function (p) { return p >= this.length ? this.length : this.snapUp(p + 1); };
  TextIndex.prototype.previous = function (p) { return p <= 0 ? 0 : this.snapDown(p - 1); };
  TextIndex.prototype.nextWord = function (p) {
    var ends = this.wordEnds.filter(function (e) { return e > p; });
    return ends.length ? this.snapUp(ends[0]) : this.length;
  };
  TextIndex.prototype.previousWord = function (p) {
    var starts = this.wordStarts.filter(function (s) { return s < p; });
    return starts.length ? this.snapDown(starts[starts.length - 1]) : 0;
  };
  /* [a, b) snapped outwards to whole characters, without the white space around it; null when empty. */
  TextIndex.prototype.normalize = function (a, b) {
    var start = this.snapDown(Math.max(0, Math.min(a, b)));
    var end = this.snapUp(Math.min(this.length, Math.max(a, b)));
    while (start < end && isSpace(this.chars[start])) { start = this.next(start); }
    while (end > start && isSpace(this.chars[end - 1])) { end = this.previous(end); }
    return start < end ? {start: start, end: end} : null;
  };
  TextIndex.prototype.slice = function (a, b) { return this.chars.slice(a, b).join(""); };

  function shorten(text, max) {
    var chars = Array.from(text);
    return chars.length > max ? chars.slice(0, max - 1).join("") + "…" : text;
  }

  /* MQM categories grouped by their parent (the text before the first "/"): each group has a key (a
     letter, the first free one of its name) and either one category or children with digit keys. */
  function groupCategories(categories) {
    var groups = [], byName = {};
    categories.forEach(function (category) {
      var cut = category.indexOf("/");
      var parent = cut < 0 ? category : category.slice(0, cut);
      var group = byName[parent];
      if (!group) {
        group = byName[parent] = {name: parent, self: null, children: []};
        groups.push(group);
      }
      if (cut < 0) { group.self = category; } else { group.children.push({category: category, label: category.slice(cut + 1)}); }
    });
    var used = {};
    groups.forEach(function (group) {
      if (group.children.length && group.self) {
        group.children.unshift({category: group.self, label: group.name + " (general)"});
      }
      group.children.forEach(function (child, i) { child.key = CHILD_KEYS.charAt(i); });
      var candidates = (group.name.toUpperCase() + LETTERS).split("");
      group.key = candidates.filter(function (c) { return LETTERS.indexOf(c) >= 0 && !used[c]; })[0] || "";
      if (group.key) { used[group.key] = true; }
    });
    return groups;
  }

  function leafOf(category) {
    var cut = category.indexOf("/");
    return cut < 0 ? category : category.slice(cut + 1);
  }

  /* ---- The pending selection painted with the CSS Custom Highlight API where there is one: it stays
     visible when a tap on a button takes the browser's own selection away. ---- */
  var canHighlight = !!(window.CSS && CSS.highlights && window.Highlight);
  function paintPending() {
    if (!canHighlight) { return; }
    var ranges = [];
    editors.forEach(function (editor) {
      var range = editor.pendingRange();
      if (range) { ranges.push(range); }
    });
    if (ranges.length) {
      var highlight = new Highlight();
      ranges.forEach(function (r) { highlight.add(r); });
      CSS.highlights.set("es-pending", highlight);
    } else {
      CSS.highlights.delete("es-pending");
    }
  }

  function Editor(options) {
    var self = this;
    serial += 1;
    this.id = "es-" + serial;
    this.options = options;
    this.index = new TextIndex(options.text);
    this.dir = options.dir === "rtl" ? "rtl" : "ltr";
    this.severities = options.severities || ["minor", "major"];
    this.groups = options.categories ? groupCategories(options.categories) : null;
    this.onChange = options.onChange || function () {};
    var n = this.index.length;
    this.spans = (options.prefilled || []).filter(function (s) {
      return s && s.start >= 0 && s.start <= s.end && s.end <= n && (s.start < s.end || s.start === n);
    }).map(function (s) {
      var span = {start: s.start, end: s.end, severity: s.severity, suggested: true};
      if (self.groups && s.category !== undefined) { span.category = s.category; }
      return span;
    });
    sortSpans(this.spans);
    this.pending = null;       // {start, end}: selected, waiting for a severity (an omission: start = end = n)
    this.pendingSeverity = null;
    this.pendingCategory = null;
    this.active = -1;          // the index of the marked error selected
    this.caret = 0;            // keyboard cursor, in code points; n + 1 … : the omission chips, then [missing]
    this.anchor = 0;
    this.cursorShown = false;
    this.openGroup = null;
    this.message = null;       // a refusal shown until the next action
    this.build();
    this.render();
    this.updateTools();
  }

  function sortSpans(spans) {
    spans.sort(function (a, b) { return a.start - b.start || a.end - b.end; });
  }

  Editor.prototype.build = function () {
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
      remember(null);
      editors.forEach(function (other) { if (other !== self && other.pending) { other.select(null); } });
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
      lastEditor = self;
      // a cursor for the keyboard and the mouse, none after a tap or on a touch screen
      self.cursorShown = !self.touching && !coarse();
      self.touching = false;
      self.placeCursor();
    });
    text.addEventListener("blur", function () { self.cursor.hidden = true; });

    var tools = this.tools = element("div", "es-tools");
    var sevRow = tools.appendChild(element("div", "es-tool-row"));
    sevRow.appendChild(element("span", "es-tool-label", "Severity"));
    var sevGroup = sevRow.appendChild(element("div", "es-severities"));
    sevGroup.setAttribute("role", "group");
    sevGroup.setAttribute("aria-label", "Severity");
    this.severityButtons = this.severities.map(function (severity) {
      var button = sevGroup.appendChild(element("button", "es-severity sev-" + severity));
      button.type = "button";
      button.dataset.severity = severity;
      keyOn(button, SEVERITY_KEYS[severity]);
      button.appendChild(element("span", "es-swatch sev-" + severity)).setAttribute("aria-hidden", "true");
      button.appendChild(document.createTextNode(SEVERITY_LABELS[severity] || severity));
      button.setAttribute("aria-pressed", "false");
      button.addEventListener("click", function () { syncSelection(); self.chooseSeverity(severity); self.touch(); });
      return button;
    });
    if (this.groups) {
      var catRow = tools.appendChild(element("div", "es-tool-row es-categories"));
      catRow.appendChild(element("span", "es-tool-label", "Category"));
      var groupBox = catRow.appendChild(element("div", "es-groups"));
      groupBox.setAttribute("role", "group");
      groupBox.setAttribute("aria-label", "Error category");
      this.groupButtons = this.groups.map(function (group) {
        var button = groupBox.appendChild(element("button", "es-group"));
        button.type = "button";
        keyOn(button, group.key);
        button.appendChild(document.createTextNode(group.name + (group.children.length ? " ▸" : "")));
        if (group.children.length) { button.setAttribute("aria-expanded", "false"); } else {
          button.setAttribute("aria-pressed", "false");
        }
        button.addEventListener("click", function () { syncSelection(); self.chooseGroup(group); self.touch(); });
        return button;
      });
      this.childBox = tools.appendChild(element("div", "es-children"));
      this.childBox.setAttribute("role", "group");
      this.childBox.hidden = true;
    }
    var status = tools.appendChild(element("div", "es-status"));
    this.messageEl = status.appendChild(element("p", "es-message"));
    this.messageEl.setAttribute("aria-live", "polite");
    var remove = this.removeButton = status.appendChild(element("button", "es-remove", "Remove"));
    remove.type = "button";
    remove.hidden = true;
    remove.addEventListener("click", function () { self.removeActive(); self.touch(); });
  };

  Editor.prototype.touch = function () { lastEditor = this; };
  Editor.prototype.missingPosition = function () { return this.index.length + this.omissionIndices().length + 1; };
  Editor.prototype.omissionIndices = function () {
    var n = this.index.length, out = [];
    this.spans.forEach(function (s, i) { if (s.start === n && s.end === n) { out.push(i); } });
    return out;
  };

  Editor.prototype.describe = function (span) {
    var words = [SEVERITY_LABELS[span.severity] || span.severity, "error"];
    if (span.category) { words.push("(" + span.category + ")"); }
    if (span.suggested) { words.push("— suggested"); }
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
    remember(null);
  };

  Editor.prototype.markFor = function (span, i, content) {
    var mark = element("mark", "es-span sev-" + span.severity, content);
    mark.dataset.index = String(i);
    if (span.suggested) { mark.classList.add("es-suggested"); }
    if (i === this.active) { mark.classList.add("es-active"); }
    var label = [];
    if (span.suggested) { label.push("suggested"); }
    if (span.category) { label.push(leafOf(span.category)); }
    if (label.length) { mark.dataset.label = label.join(" · "); }
    mark.title = this.describe(span);
    return mark;
  };

  /* ---- DOM positions and code points ---- */
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

  /* ---- What is selected ---- */
  Editor.prototype.overlaps = function (p) {
    if (!p || p.start === p.end) { return -1; }
    for (var i = 0; i < this.spans.length; i++) {
      var s = this.spans[i];
      if (s.start < s.end && p.start < s.end && s.start < p.end) { return i; }
    }
    return -1;
  };

  Editor.prototype.select = function (pending) {
    this.pending = pending;
    this.pendingSeverity = null;
    this.pendingCategory = null;
    this.active = -1;
    this.message = null;
    this.refreshMarks();
    this.updateTools();
    paintPending();
  };

  Editor.prototype.activate = function (i) {
    if (!(i >= 0 && i < this.spans.length)) { return; }
    this.clearNativeSelection();
    this.pending = null;
    this.active = i;
    this.message = null;
    this.refreshMarks();
    this.updateTools();
    paintPending();
  };

  Editor.prototype.deselect = function () {
    if (!this.pending && this.active < 0 && !this.openGroup && !this.message) { return false; }
    this.pending = null;
    this.active = -1;
    this.openGroup = null;
    this.message = null;
    this.clearNativeSelection();
    this.refreshMarks();
    this.updateTools();
    paintPending();
    return true;
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

  Editor.prototype.clearNativeSelection = function () {
    var selection = window.getSelection();
    if (selection && selection.rangeCount && this.text.contains(selection.getRangeAt(0).commonAncestorContainer)) {
      selection.removeAllRanges();
      remember(null);
    }
  };

  /* The browser's selection changed: within this text, a selection becomes the pending one; a click (an
     empty selection) puts the keyboard cursor there, on a marked error selects it. */
  Editor.prototype.fromSelection = function (range) {
    var a = this.pointToCp(range.startContainer, range.startOffset);
    var b = this.pointToCp(range.endContainer, range.endOffset, true);
    if (a === null || b === null) { return; }
    lastEditor = this;
    if (range.collapsed) {
      this.caret = this.anchor = this.index.snapDown(a);
      var node = range.startContainer;
      var mark = node.parentNode && node.parentNode.closest ? node.parentNode.closest("mark.es-span") : null;
      if (mark && this.text.contains(mark)) {
        this.active = Number(mark.dataset.index);
        this.pending = null;
        this.message = null;
        this.refreshMarks();
        this.updateTools();
        paintPending();
      } else if (this.pending && this.pending.start < this.pending.end) {
        this.select(null);
      } else {
        this.placeCursor();
      }
      return;
    }
    this.anchor = a;
    this.caret = b;
    this.select(this.index.normalize(a, b));
  };

  /* ---- Keyboard: the cursor and Shift-selection ---- */
  Editor.prototype.setSelectionFromKeys = function () {
    var n = this.index.length;
    var selection = window.getSelection();
    var a = Math.min(this.anchor, this.caret), b = Math.max(this.anchor, this.caret);
    if (this.caret > n) {
      this.clearNativeSelection();
      var chips = this.omissionIndices();
      var k = this.caret - n - 1;
      if (k < chips.length) { this.activate(chips[k]); } else { this.select({start: n, end: n}); }
      return;
    }
    if (a < b) {
      var range = this.rangeOf(a, b);
      selection.removeAllRanges();
      selection.addRange(range);
      remember(selection.getRangeAt(0));  // not news when its selectionchange comes
      this.select(this.index.normalize(a, b));
    } else {
      this.clearNativeSelection();
      this.pending = null;
      this.pendingSeverity = this.pendingCategory = null;
      this.message = null;
      this.active = this.spanAt(this.caret);
      this.refreshMarks();
      this.updateTools();
      paintPending();
    }
  };

  /* The marked error holding the character after position p, else the one before it; -1 for none. */
  Editor.prototype.spanAt = function (p) {
    var after = -1, before = -1;
    this.spans.forEach(function (s, i) {
      if (s.start < s.end && s.start <= p && p < s.end) { after = i; }
      if (s.start < s.end && s.start < p && p <= s.end) { before = i; }
    });
    return after >= 0 ? after : before;
  };

  Editor.prototype.textKey = function (event) {
    var key = event.key, index = this.index, n = index.length;
    var horizontal = key === "ArrowRight" || key === "ArrowLeft";
    if (!horizontal && key !== "Home" && key !== "End") { return false; }
    if (event.metaKey) { return false; }
    var forward = horizontal ? (key === "ArrowRight") !== (this.dir === "rtl") : key === "End";
    var byWord = event.ctrlKey || event.altKey;
    var caret = Math.min(this.caret, n + (event.shiftKey ? 0 : this.missingPosition() - n));
    var target;
    if (key === "Home") {
      target = 0;
    } else if (key === "End") {
      target = n;
    } else if (caret > n) {
      target = forward ? Math.min(caret + 1, this.missingPosition()) : caret - 1;
    } else if (forward) {
      target = caret >= n ? (event.shiftKey ? n : n + 1) : (byWord ? index.nextWord(caret) : index.next(caret));
    } else {
      target = byWord ? index.previousWord(caret) : index.previous(caret);
    }
    if (event.shiftKey) {
      if (this.anchor > n) { this.anchor = n; }
      this.caret = Math.min(target, n);
    } else {
      this.caret = this.anchor = target;
    }
    this.cursorShown = true;
    lastEditor = this;
    this.setSelectionFromKeys();
    return true;
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

  /* ---- Severity, category, removal ---- */
  Editor.prototype.chooseSeverity = function (severity) {
    if (this.severities.indexOf(severity) < 0) { return; }
    if (this.active >= 0) {
      var span = this.spans[this.active];
      span.severity = severity;
      span.suggested = false;
      this.changed();
      return;
    }
    if (!this.pending) {
      this.say("First select the error in the translation (or [missing] for an omission), then its severity.");
      return;
    }
    if (this.overlaps(this.pending) >= 0) {
      this.say("That selection overlaps an error already marked. Select it by clicking on it to change or remove it.");
      return;
    }
    this.pendingSeverity = severity;
    if (this.groups && !this.pendingCategory) {
      this.updateTools();
      return;
    }
    this.add();
  };

  Editor.prototype.chooseGroup = function (group) {
    if (!group.children.length) {
      this.openGroup = null;
      this.chooseCategory(group.self);
      return;
    }
    this.openGroup = this.openGroup === group ? null : group;
    this.updateTools();
  };

  Editor.prototype.chooseCategory = function (category) {
    this.openGroup = null;
    if (this.active >= 0) {
      var span = this.spans[this.active];
      span.category = category;
      span.suggested = false;
      this.changed();
      return;
    }
    if (!this.pending) {
      this.say("First select the error in the translation (or [missing] for an omission), then its category.");
      return;
    }
    if (this.overlaps(this.pending) >= 0) {
      this.say("That selection overlaps an error already marked. Select it by clicking on it to change or remove it.");
      return;
    }
    this.pendingCategory = category;
    if (!this.pendingSeverity) {
      this.updateTools();
      return;
    }
    this.add();
  };

  Editor.prototype.add = function () {
    var span = {start: this.pending.start, end: this.pending.end, severity: this.pendingSeverity};
    if (this.groups) { span.category = this.pendingCategory; }
    this.spans.push(span);
    sortSpans(this.spans);
    this.active = this.spans.indexOf(span);
    this.pending = null;
    this.pendingSeverity = this.pendingCategory = null;
    this.clearNativeSelection();
    if (span.start === span.end) { this.caret = this.anchor = this.index.length + this.omissionIndices().indexOf(this.active) + 1; }
    this.changed();
  };

  Editor.prototype.removeActive = function () {
    if (this.active < 0) { return false; }
    this.spans.splice(this.active, 1);
    this.active = -1;
    if (this.caret > this.index.length) { this.caret = this.anchor = this.index.length; }
    this.changed();
    return true;
  };

  Editor.prototype.changed = function () {
    this.message = null;
    this.render();
    this.refreshMarks();
    this.updateTools();
    paintPending();
    this.onChange(this);
  };

  Editor.prototype.say = function (text) {
    this.message = text;
    this.updateTools();
  };

  Editor.prototype.updateTools = function () {
    var self = this, n = this.index.length;
    var span = this.active >= 0 ? this.spans[this.active] : null;
    var severity = span ? span.severity : this.pendingSeverity;
    var category = span ? span.category : this.pendingCategory;
    var ready = !!(span || this.pending);
    this.tools.classList.toggle("es-ready", ready);
    this.severityButtons.forEach(function (button) {
      button.setAttribute("aria-pressed", button.dataset.severity === severity ? "true" : "false");
    });
    if (this.groups) {
      this.groups.forEach(function (group, i) {
        var button = self.groupButtons[i];
        var chosen = !!category && (category === group.self || group.children.some(function (c) {
          return c.category === category;
        }));
        button.classList.toggle("es-chosen", chosen);
        if (group.children.length) {
          button.setAttribute("aria-expanded", self.openGroup === group ? "true" : "false");
        } else {
          button.setAttribute("aria-pressed", chosen ? "true" : "false");
        }
      });
      var box = this.childBox;
      box.textContent = "";
      box.hidden = !this.openGroup;
      if (this.openGroup) {
        box.setAttribute("aria-label", this.openGroup.name);
        this.openGroup.children.forEach(function (child) {
          var button = box.appendChild(element("button", "es-child"));
          button.type = "button";
          keyOn(button, child.key);
          button.appendChild(document.createTextNode(child.label));
          button.setAttribute("aria-pressed", child.category === category ? "true" : "false");
          button.addEventListener("click", function () {
            syncSelection();
            self.chooseCategory(child.category);
            self.touch();
          });
        });
      }
    }
    this.removeButton.hidden = !span;
    var text;
    if (this.message) {
      text = this.message;
    } else if (span) {
      var what = span.start === span.end ? "[missing]" : "“" + shorten(this.index.slice(span.start, span.end), 40) + "”";
      text = "Selected: " + what + " — " + (SEVERITY_LABELS[span.severity] || span.severity) +
        (span.category ? ", " + span.category : "") + (span.suggested ? " (suggested)" : "") +
        ". Change it with the buttons, or remove it (Delete).";
    } else if (this.pending) {
      var target = this.pending.start === n ? "[missing]" :
        "“" + shorten(this.index.slice(this.pending.start, this.pending.end), 40) + "”";
      if (this.overlaps(this.pending) >= 0) {
        text = "That selection overlaps an error already marked; select only unmarked text.";
      } else if (this.groups) {
        var missingParts = [];
        if (!this.pendingCategory) { missingParts.push("its category"); }
        if (!this.pendingSeverity) { missingParts.push("its severity"); }
        text = target + ": now choose " + missingParts.join(" and ") + ".";
      } else {
        text = target + ": now choose its severity.";
      }
    } else {
      text = "Select an error in the translation (or [missing] for an omission), then " +
        (this.groups ? "its category and severity." : "its severity.");
    }
    this.messageEl.textContent = text;
    this.messageEl.classList.toggle("es-refused", !!this.message);
  };

  /* Keys that act on what is selected, wherever the focus is: severities, categories, Delete, Escape. */
  Editor.prototype.commandKey = function (event) {
    var key = event.key;
    if (event.ctrlKey || event.metaKey || event.altKey) { return false; }
    if (key === "Escape") { return this.deselect(); }
    if (key === "Delete" || key === "Backspace") { return this.removeActive(); }
    var upper = key.length === 1 ? key.toUpperCase() : "";
    if (this.openGroup) {
      var child = this.openGroup.children.filter(function (c) { return c.key === key; })[0];
      if (child) {
        this.chooseCategory(child.category);
        return true;
      }
    }
    if (this.groups && upper && LETTERS.indexOf(upper) >= 0) {
      var group = this.groups.filter(function (g) { return g.key === upper; })[0];
      if (!group) { return false; }
      if (!this.pending && this.active < 0) {
        this.say("First select the error in the translation (or [missing] for an omission), then its category.");
        return true;
      }
      this.chooseGroup(group);
      return true;
    }
    for (var severity in SEVERITY_KEYS) {
      if (SEVERITY_KEYS[severity] === key && this.severities.indexOf(severity) >= 0) {
        this.chooseSeverity(severity);
        return true;
      }
    }
    return false;
  };

  /* What stops the answer from being sent (an MQM error without a category, e.g. a suggested one), shown and
     selected; null when nothing does. */
  Editor.prototype.problem = function () {
    var categories = this.options.categories || [];
    for (var i = 0; i < this.spans.length; i++) {
      var span = this.spans[i], reason = null;
      if (this.severities.indexOf(span.severity) < 0) {
        reason = "This error's severity is not one of this campaign's: choose one (or remove the error).";
      } else if (this.groups && categories.indexOf(span.category) < 0) {
        reason = "This error has no category of this campaign yet: choose one (or remove the error).";
      }
      if (reason) {
        lastEditor = this;
        this.activate(i);
        this.say(reason);
        return reason;
      }
    }
    return null;
  };

  Editor.prototype.result = function () {
    var mqm = !!this.groups;
    return this.spans.map(function (s) {
      var span = {start: s.start, end: s.end, severity: s.severity};
      if (mqm && s.category !== undefined) { span.category = s.category; }
      return span;
    });
  };

  Editor.prototype.contains = function (node) {
    return !!node && (this.line.contains(node) || this.tools.contains(node));
  };

  function editorOf(node) {
    for (var i = 0; i < editors.length; i++) {
      if (editors[i].contains(node)) { return editors[i]; }
    }
    return null;
  }

  /* The browser's selection, acted on once (on selectionchange, and before a key or a button acts, which may
     come first): in a translation it becomes that one's pending selection; a selection elsewhere lets go of
     what the others had pending; no selection at all (a tap on a button) keeps it. */
  var seen = null;
  function remember(range) {
    seen = range ? {sc: range.startContainer, so: range.startOffset, ec: range.endContainer, eo: range.endOffset} :
      null;
  }

  function syncSelection() {
    var selection = window.getSelection();
    if (!selection || !editors.length) { return; }
    if (!selection.rangeCount) {
      remember(null);
      return;
    }
    var range = selection.getRangeAt(0);
    if (seen && seen.sc === range.startContainer && seen.so === range.startOffset &&
        seen.ec === range.endContainer && seen.eo === range.endOffset) { return; }
    remember(range);
    var owner = null;
    [range.startContainer, range.endContainer].some(function (node) {
      owner = editors.filter(function (e) { return e.text.contains(node); })[0] || null;
      return owner !== null;
    });
    if (!owner && !range.collapsed) {
      owner = editors.filter(function (e) { return range.intersectsNode(e.text); })[0] || null;
    }
    editors.forEach(function (editor) {
      if (editor !== owner && !range.collapsed && editor.pending) { editor.select(null); }
    });
    if (owner) { owner.fromSelection(range); }
  }
  document.addEventListener("selectionchange", syncSelection);

  window.addEventListener("resize", function () { editors.forEach(function (e) { e.placeCursor(); }); });

  /* ---- The Direct Assessment slider (slider.js), one per translation ---- */
  function Slider(options) {
    var self = this;
    this.integer = !!options.integer;
    this.onChange = options.onChange || function () {};
    this.value = null;
    var el = this.el = element("div", "vas");
    el.dir = "ltr";
    var track = this.track = el.appendChild(element("div", "vas-track untouched"));
    track.setAttribute("role", "slider");
    track.tabIndex = 0;
    track.setAttribute("aria-valuemin", "0");
    track.setAttribute("aria-valuemax", "100");
    track.setAttribute("aria-label", options.label || "Score from 0 to 100");
    [25, 50, 75].forEach(function (at) {
      track.appendChild(element("span", "vas-tick" + (at === 50 ? " mid" : ""))).style.left = at + "%";
    });
    var ghost = track.appendChild(element("span", "vas-ghost"));
    ghost.setAttribute("aria-hidden", "true");
    this.thumb = track.appendChild(element("span", "vas-thumb"));
    var anchors = el.appendChild(element("div", "vas-anchors"));
    anchors.appendChild(element("span", "", options.low || ""));
    anchors.appendChild(element("span", "", options.high || ""));
    this.hint = el.appendChild(element("p", "vas-hint", options.hint ||
                                       "Click or drag anywhere on the line to rate (or use the arrow keys)"));
    var dragging = false;
    function percent(event) {
      var box = track.getBoundingClientRect();
      return Math.min(100, Math.max(0, 100 * (event.clientX - box.left) / box.width));
    }
    track.addEventListener("pointerdown", function (event) {
      if (event.button !== 0) { return; }
      dragging = true;
      track.setPointerCapture(event.pointerId);
      track.focus();
      self.set(percent(event));
      event.preventDefault();
    });
    track.addEventListener("pointermove", function (event) {
      if (dragging) {
        self.set(percent(event));
      } else if (self.value === null && event.pointerType === "mouse") {
        ghost.style.left = percent(event) + "%";
        track.classList.add("hovering");
      }
    });
    track.addEventListener("pointerleave", function () { track.classList.remove("hovering"); });
    track.addEventListener("pointerup", function () { dragging = false; });
    track.addEventListener("pointercancel", function () { dragging = false; });
    track.addEventListener("keydown", function (event) {
      if (self.key(event)) { event.preventDefault(); }
    });
  }

  var STEPS = {ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1, PageUp: 10, PageDown: -10};
  Slider.prototype.key = function (event) {
    var start = this.value === null ? 50 : this.value;
    if (event.key in STEPS) {
      this.set(start + STEPS[event.key]);
    } else if (event.key === "Home") {
      this.set(0);
    } else if (event.key === "End") {
      this.set(100);
    } else {
      return false;
    }
    return true;
  };
  Slider.prototype.set = function (v) {
    v = Math.min(100, Math.max(0, v));
    this.value = this.integer ? Math.round(v) : Math.round(v * 100) / 100;
    this.thumb.style.left = this.value + "%";
    this.track.classList.remove("untouched", "hovering");
    this.hint.hidden = true;
    this.track.setAttribute("aria-valuenow", String(Math.round(this.value)));
    this.onChange(this.value);
  };
  Slider.prototype.focus = function () { this.track.focus({preventScroll: true}); };

  window.SpanEditor = {
    /* A new translation to mark: {text, severities, categories?, prefilled?, dir, lang, label, onChange}. */
    create: function (options) {
      var editor = new Editor(options);
      editors.push(editor);
      return editor;
    },
    /* The screen shows something new: the editors so far are gone. */
    forget: function () {
      editors = [];
      lastEditor = null;
      paintPending();
    },
    slider: function (options) { return new Slider(options); },
    /* Whether the main pointer is a finger (no keyboard cursor, no focus moved into the text). */
    coarse: coarse,
    /* A key for the editors (from the screen's keydown listener); true when one used it. */
    handleKey: function (event) {
      syncSelection();
      var active = document.activeElement;
      var focused = editorOf(active);
      if (focused && active === focused.text && focused.textKey(event)) { return true; }
      var editor = focused || lastEditor;
      return !!editor && editor.commandKey(event);
    },
    groupCategories: groupCategories,
    TextIndex: TextIndex
  };
})();
