/* What the error-span screens share (error_spans.js: ESA and MQM; contrastive_esa.js; docs/methods.md §11):
   window.SpanEditor = {create, slider, handleKey, listenKeys, forget, coarse}. The editor is in parts, loaded in this
   order after hit.js: spans_editor.js (this file: an editor's marked errors and what is selected),
   spans_text.js (code points, grapheme and word boundaries), spans_render.js (the line and the cursor),
   spans_selection.js (mouse, touch and keyboard selecting), spans_menus.js (severities, categories and
   their keys), spans_slider.js (the 0–100 slider for a page with several) and spans_document.js (the document
   around the segment judged, and its "whole document" toggle).

   create(options) makes one translation to mark errors in: `line` (the text, the marked errors as <mark>s,
   the [missing] marker for omissions) and `tools` (severity buttons, for MQM the categories, what is
   selected, a message). The screen puts both where it wants. Offsets are half-open [start, end) in Unicode
   code points of the text, never the UTF-16 units JavaScript strings count; an omission is the empty span
   [n, n] at the end.

   A selection (spans_selection.js) snaps to whole characters and drops the white space around it. Then a
   severity and for MQM a category (spans_menus.js). A selection over an error already marked is refused with
   a message. A marked error is selected by a click or a tap (or by moving the cursor into it); then the
   severity and category buttons change it and Remove (or Delete) removes it. Spans suggested in advance
   (`prefilled`) are shown marked as suggested until the judge changes them. */
(function () {
  "use strict";
  var S = window.SpanEditor = {};
  var state = S.state = {editors: [], last: null};  // the editors on screen; the one the keys act on when the
  var serial = 0;                                     // focus is in none

  /* Whether the main pointer is a finger (no keyboard cursor, no focus moved into the text). */
  S.coarse = function () {
    return !!(window.matchMedia && window.matchMedia("(pointer: coarse)").matches);
  };

  /* The pending selections painted with the CSS Custom Highlight API where there is one: they stay visible when
     a tap on a button takes the browser's own selection away. */
  var canHighlight = !!(window.CSS && CSS.highlights && window.Highlight);
  S.paintPending = function () {
    if (!canHighlight) { return; }
    var ranges = [];
    state.editors.forEach(function (editor) {
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
  };

  S.SEVERITY_LABELS = {minor: "Minor", major: "Major", critical: "Critical"};

  function Editor(options) {
    var self = this;
    serial += 1;
    this.id = "es-" + serial;
    this.options = options;
    this.index = new S.TextIndex(options.text);
    this.dir = options.dir === "rtl" ? "rtl" : "ltr";
    this.severities = options.severities || ["minor", "major"];
    this.groups = options.categories ? S.groupCategories(options.categories) : null;
    this.onChange = options.onChange || function () {};
    var n = this.index.length;
    this.spans = (options.prefilled || []).filter(function (s) {
      return s && s.start >= 0 && s.start <= s.end && s.end <= n && (s.start < s.end || s.start === n);
    }).map(function (s) {
      var span = {start: s.start, end: s.end, severity: s.severity, suggested: true};
      if (self.groups && s.category !== undefined) { span.category = s.category; }
      return span;
    });
    S.sortSpans(this.spans);
    this.pending = null;       // {start, end}: selected, waiting for a severity (an omission: start = end = n)
    this.pendingSeverity = null;
    this.pendingCategory = null;
    this.active = -1;          // the index of the marked error selected
    this.caret = 0;            // keyboard cursor, in code points; n + 1 … : the omission chips, then [missing]
    this.anchor = 0;
    this.cursorShown = false;
    this.openGroup = null;
    this.message = null;       // a refusal shown until the next action
    this.buildLine();
    this.buildTools();
    this.render();
    this.updateTools();
  }

  S.sortSpans = function (spans) {
    spans.sort(function (a, b) { return a.start - b.start || a.end - b.end; });
  };

  Editor.prototype.touch = function () { state.last = this; };
  Editor.prototype.missingPosition = function () { return this.index.length + this.omissionIndices().length + 1; };
  Editor.prototype.omissionIndices = function () {
    var n = this.index.length, out = [];
    this.spans.forEach(function (s, i) { if (s.start === n && s.end === n) { out.push(i); } });
    return out;
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
    S.paintPending();
  };

  Editor.prototype.activate = function (i) {
    if (!(i >= 0 && i < this.spans.length)) { return; }
    this.clearNativeSelection();
    this.pending = null;
    this.active = i;
    this.message = null;
    this.refreshMarks();
    this.updateTools();
    S.paintPending();
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
    S.paintPending();
    return true;
  };

  Editor.prototype.add = function () {
    var span = {start: this.pending.start, end: this.pending.end, severity: this.pendingSeverity};
    if (this.groups) { span.category = this.pendingCategory; }
    this.spans.push(span);
    S.sortSpans(this.spans);
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
    S.paintPending();
    this.onChange(this);
  };

  Editor.prototype.say = function (text) {
    this.message = text;
    this.updateTools();
  };

  /* What stops the answer from being sent (an MQM error without a category, e.g. a suggested one; a selection
     still waiting for its severity or category, which would otherwise be dropped unsaid), shown and selected; null
     when nothing does. */
  Editor.prototype.problem = function () {
    var categories = this.options.categories || [];
    if (this.pending && this.overlaps(this.pending) < 0) {
      var unfinished = "You selected an error but did not finish it: choose its " +
        (this.groups ? "category and severity" : "severity") + ", or press Esc to drop the selection.";
      state.last = this;
      this.say(unfinished);
      return unfinished;
    }
    for (var i = 0; i < this.spans.length; i++) {
      var span = this.spans[i], reason = null;
      if (this.severities.indexOf(span.severity) < 0) {
        reason = "This error's severity is not one of this campaign's: choose one (or remove the error).";
      } else if (this.groups && categories.indexOf(span.category) < 0) {
        reason = "This error has no category of this campaign yet: choose one (or remove the error).";
      }
      if (reason) {
        state.last = this;
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
    for (var i = 0; i < state.editors.length; i++) {
      if (state.editors[i].contains(node)) { return state.editors[i]; }
    }
    return null;
  }

  S.Editor = Editor;
  /* A new translation to mark: {text, severities, categories?, prefilled?, suggestedLabel?, dir, lang, label,
     onChange}; `suggestedLabel` names the prefilled spans ("suggested" by default; the review: "first pass"). */
  S.create = function (options) {
    var editor = new Editor(options);
    state.editors.push(editor);
    return editor;
  };
  /* The screen shows something new: the editors so far are gone. */
  S.forget = function () {
    state.editors = [];
    state.last = null;
    S.paintPending();
  };
  /* A key for the editors (from the screen's keydown listener); true when one used it. */
  S.handleKey = function (event) {
    S.syncSelection();
    var active = document.activeElement;
    var focused = editorOf(active);
    if (focused && active === focused.text && focused.textKey(event)) { return true; }
    var editor = focused || state.last;
    return !!editor && editor.commandKey(event);
  };

  /* The keys of a screen of editors (screen: {box, button, submit(), ready(), more(event, active)?}): the
     editors' keys first, then Enter submits (not from another button), then `more` may take the rest (true when
     it did). Nothing while the screen is hidden or paused, or not ready(). */
  S.listenKeys = function (screen) {
    document.addEventListener("keydown", function (event) {
      if (event.defaultPrevented || window.HitScreens.isPaused() || !screen.ready() ||
          screen.box.offsetParent === null) { return; }
      if (S.handleKey(event)) {
        event.preventDefault();
        return;
      }
      var active = document.activeElement;
      if (event.key === "Enter") {
        if (event.repeat || (active && active !== screen.button && active.tagName === "BUTTON")) { return; }
        event.preventDefault();
        screen.submit();
      } else if (screen.more && screen.more(event, active)) {
        event.preventDefault();
      }
    });
  };
})();
