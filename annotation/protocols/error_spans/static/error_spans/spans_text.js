/* The error-span editor's text (spans_editor.js): a text as Unicode code points (an emoji or a CJK extension B
   character is one, as in Python; never the UTF-16 units JavaScript strings count), with its grapheme
   boundaries (a base letter with its combining marks, an emoji sequence) and its word boundaries, so that a
   selection snaps to whole characters as people see them and drops the white space around it; a mouse or touch
   selection also snaps to whole words, except in scripts written without spaces.
   SpanEditor.TextIndex(text), SpanEditor.shorten(text, max). */
(function (S) {
  "use strict";

  var isMark = (function () {
    try {
      var re = new RegExp("^[\\p{M}\\u200d\\ufe0f]$", "u");
      return function (ch) { return re.test(ch); };
    } catch (error) {
      return function (ch) { return /^[\u0300-\u036f\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u200d\ufe0f]$/.test(ch); };
    }
  })();
  var isSpace = function (ch) { return /^\s$/.test(ch) || ch === "\u200b"; };
  /* Scripts written without spaces between words (Chinese, Japanese, Thai, Lao, Khmer, Myanmar): a selection
     there stays per character, as their word boundaries are a dictionary's guess. */
  var isUnspaced = (function () {
    try {
      var re = new RegExp("[\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Thai}" +
                          "\\p{Script=Lao}\\p{Script=Khmer}\\p{Script=Myanmar}]", "u");
      return function (text) { return re.test(text); };
    } catch (error) {
      return function (text) { return /[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]|[\ud840-\ud87f]/.test(text); };
    }
  })();

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
  /* A selection made by the mouse or a finger: [a, b) widened to whole words where an end falls inside a
     word (as Appraise and Pearmut do), except in words of scripts without spaces, which stay per character;
     then as `normalize`. */
  TextIndex.prototype.toWords = function (a, b) {
    var lo = Math.max(0, Math.min(a, b)), hi = Math.min(this.length, Math.max(a, b));
    for (var k = 0; k < this.wordStarts.length; k++) {
      var start = this.wordStarts[k], end = this.wordEnds[k];
      if (isUnspaced(this.slice(start, end))) { continue; }
      if (start < lo && lo < end) { lo = start; }
      if (start < hi && hi < end) { hi = end; }
    }
    return this.normalize(lo, hi);
  };
  TextIndex.prototype.slice = function (a, b) { return this.chars.slice(a, b).join(""); };

  S.shorten = function (text, max) {
    var chars = Array.from(text);
    return chars.length > max ? chars.slice(0, max - 1).join("") + "…" : text;
  };

  S.TextIndex = TextIndex;
})(window.SpanEditor);
