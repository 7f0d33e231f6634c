/* The error-span editor's selecting (spans_editor.js): with the mouse or a finger (the browser's own selection,
   long-press on a phone), or with the keyboard: the translation takes the focus, ← → move a cursor (Ctrl or
   Alt: by word; Home / End), Shift extends the selection, → past the end reaches the [missing] marker. The
   browser's selection is acted on once, wherever it comes from (selectionchange, a key, a button). */
(function (S) {
  "use strict";
  var Editor = S.Editor;
  var state = S.state;

  Editor.prototype.clearNativeSelection = function () {
    var selection = window.getSelection();
    if (selection && selection.rangeCount && this.text.contains(selection.getRangeAt(0).commonAncestorContainer)) {
      selection.removeAllRanges();
      S.remember(null);
    }
  };

  /* The browser's selection changed: within this text, a selection becomes the pending one; a click (an
     empty selection) puts the keyboard cursor there, on a marked error selects it. */
  Editor.prototype.fromSelection = function (range) {
    var a = this.pointToCp(range.startContainer, range.startOffset);
    var b = this.pointToCp(range.endContainer, range.endOffset, true);
    if (a === null || b === null) { return; }
    state.last = this;
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
        S.paintPending();
      } else if (this.pending && this.pending.start < this.pending.end) {
        this.select(null);
      } else {
        this.placeCursor();
      }
      return;
    }
    this.anchor = a;
    this.caret = b;
    this.select(this.index.toWords(a, b));
  };

  /* The keyboard: the cursor and Shift-selection. */
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
      S.remember(selection.getRangeAt(0));  // not news when its selectionchange comes
      this.select(this.index.normalize(a, b));
    } else {
      this.clearNativeSelection();
      this.pending = null;
      this.pendingSeverity = this.pendingCategory = null;
      this.message = null;
      this.active = this.spanAt(this.caret);
      this.refreshMarks();
      this.updateTools();
      S.paintPending();
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
    state.last = this;
    this.setSelectionFromKeys();
    return true;
  };

  /* The browser's selection, acted on once (on selectionchange, and before a key or a button acts, which may
     come first): in a translation it becomes that one's pending selection; a selection elsewhere lets go of
     what the others had pending; no selection at all (a tap on a button) keeps it. */
  var seen = null;
  S.remember = function (range) {
    seen = range ? {sc: range.startContainer, so: range.startOffset, ec: range.endContainer, eo: range.endOffset} :
      null;
  };

  S.syncSelection = function () {
    var selection = window.getSelection();
    if (!selection || !state.editors.length) { return; }
    if (!selection.rangeCount) {
      S.remember(null);
      return;
    }
    var range = selection.getRangeAt(0);
    if (seen && seen.sc === range.startContainer && seen.so === range.startOffset &&
        seen.ec === range.endContainer && seen.eo === range.endOffset) { return; }
    S.remember(range);
    var owner = null;
    [range.startContainer, range.endContainer].some(function (node) {
      owner = state.editors.filter(function (e) { return e.text.contains(node); })[0] || null;
      return owner !== null;
    });
    if (!owner && !range.collapsed) {
      owner = state.editors.filter(function (e) { return range.intersectsNode(e.text); })[0] || null;
    }
    state.editors.forEach(function (editor) {
      if (editor !== owner && !range.collapsed && editor.pending) { editor.select(null); }
    });
    if (owner) { owner.fromSelection(range); }
  };
  document.addEventListener("selectionchange", S.syncSelection);
})(window.SpanEditor);
