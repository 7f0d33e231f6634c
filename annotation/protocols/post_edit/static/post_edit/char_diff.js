/* A small dependency-free diff for the post-editing screen (post_edit.js): what a judge changed in a
   machine translation, character by character. Myers' O(ND) algorithm (1986) over grapheme clusters
   (an accented letter or an emoji is one unit, never split), after the common prefix and suffix are
   set aside; texts longer than 1,000 characters, or so different that the character diff would pass
   400 edits, are compared word by word (words and runs of white space), and past that as one
   replacement. Short equal runs squeezed between two changes (a lone letter that happens to match)
   are folded into the changes, as diff-match-patch's semantic clean-up does, so a rewritten word
   reads as one deletion and one insertion.
   CharDiff.diff(a, b) -> [{op: "equal" | "delete" | "insert", text}], deletions before insertions;
   the equal and deleted texts join to a, the equal and inserted ones to b. */
(function () {
  "use strict";
  var CHAR_LIMIT = 1000;   // longer texts: word level
  var MAX_CHAR_EDITS = 400;
  var MAX_WORD_EDITS = 600;
  var segmenter = null;
  try {
    if (window.Intl && Intl.Segmenter) { segmenter = new Intl.Segmenter(undefined, {granularity: "grapheme"}); }
  } catch (error) {
    segmenter = null;
  }

  function graphemes(text) {
    if (!segmenter) { return Array.from(text); }
    var out = [];
    var iterator = segmenter.segment(text)[Symbol.iterator]();
    for (var step = iterator.next(); !step.done; step = iterator.next()) { out.push(step.value.segment); }
    return out;
  }

  function words(text) {
    return text.match(/\s+|[^\s]+/g) || [];
  }

  /* The shortest edit script from a to b (arrays of strings) as a list of [op, token] with op -1 (delete),
     0 (equal) or 1 (insert); null when it needs more than maxD edits. */
  function myers(a, b, maxD) {
    var n = a.length, m = b.length, max = n + m, offset = max + 1;
    var v = new Int32Array(2 * max + 3);
    var trace = [];
    var limit = Math.min(max, maxD);
    var found = -1;
    for (var d = 0; d <= limit && found < 0; d++) {
      for (var k = -d; k <= d; k += 2) {
        var x = (k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1])) ?
          v[offset + k + 1] : v[offset + k - 1] + 1;
        var y = x - k;
        while (x < n && y < m && a[x] === b[y]) { x++; y++; }
        v[offset + k] = x;
        if (x >= n && y >= m) { found = d; break; }
      }
      trace.push(v.slice(offset - d, offset + d + 1));  // V after round d, at index k + d
    }
    if (found < 0) { return null; }
    var ops = [];
    var cx = n, cy = m;
    for (var e = found; e > 0; e--) {
      var prev = trace[e - 1];  // index k + (e - 1)
      var ck = cx - cy;
      var prevK = (ck === -e || (ck !== e && prev[ck - 1 + e - 1] < prev[ck + 1 + e - 1])) ? ck + 1 : ck - 1;
      var prevX = prev[prevK + e - 1], prevY = prevX - prevK;
      while (cx > prevX && cy > prevY) { ops.push([0, a[cx - 1]]); cx--; cy--; }
      if (cx === prevX) { ops.push([1, b[cy - 1]]); } else { ops.push([-1, a[cx - 1]]); }
      cx = prevX;
      cy = prevY;
    }
    while (cx > 0 && cy > 0) { ops.push([0, a[cx - 1]]); cx--; cy--; }
    return ops.reverse();
  }

  /* Token ops -> runs: equal texts and change groups {del, ins} (a group's deletions shown first). */
  function runs(ops) {
    var out = [];
    ops.forEach(function (op) {
      var last = out[out.length - 1];
      if (op[0] === 0) {
        if (last && last.equal !== undefined) { last.equal += op[1]; } else { out.push({equal: op[1]}); }
      } else {
        if (!last || last.equal !== undefined) { last = {del: "", ins: ""}; out.push(last); }
        if (op[0] < 0) { last.del += op[1]; } else { last.ins += op[1]; }
      }
    });
    return out;
  }

  function size(text) {
    return Array.from(text).length;
  }

  /* Fold an equal run between two changes into them when it is no longer than the larger side of the change
     before it and of the change after it (diff-match-patch's cleanupSemantic rule), until none is left. */
  function cleanup(list) {
    var changed = true;
    while (changed) {
      changed = false;
      for (var i = 1; i + 1 < list.length; i++) {
        var before = list[i - 1], eq = list[i], after = list[i + 1];
        if (eq.equal === undefined || before.equal !== undefined || after.equal !== undefined) { continue; }
        var n = size(eq.equal);
        if (n <= Math.max(size(before.del), size(before.ins)) && n <= Math.max(size(after.del), size(after.ins))) {
          list.splice(i - 1, 3, {del: before.del + eq.equal + after.del, ins: before.ins + eq.equal + after.ins});
          changed = true;
          break;
        }
      }
    }
    return list;
  }

  function tokenOps(a, b, tokens, maxD) {
    var x = tokens(a), y = tokens(b);
    var start = 0;
    while (start < x.length && start < y.length && x[start] === y[start]) { start++; }
    var endX = x.length, endY = y.length;
    while (endX > start && endY > start && x[endX - 1] === y[endY - 1]) { endX--; endY--; }
    var middle = myers(x.slice(start, endX), y.slice(start, endY), maxD);
    if (middle === null) { return null; }
    var ops = [];
    if (start) { ops.push([0, x.slice(0, start).join("")]); }
    ops = ops.concat(middle);
    if (endX < x.length) { ops.push([0, x.slice(endX).join("")]); }
    return ops;
  }

  function diff(a, b) {
    a = a || "";
    b = b || "";
    var ops = null;
    if (Math.max(a.length, b.length) <= CHAR_LIMIT * 2 && Math.max(size(a), size(b)) <= CHAR_LIMIT) {
      ops = tokenOps(a, b, graphemes, MAX_CHAR_EDITS);
    }
    if (ops === null) { ops = tokenOps(a, b, words, MAX_WORD_EDITS); }
    if (ops === null) { ops = [[-1, a], [1, b]]; }
    var out = [];
    cleanup(runs(ops)).forEach(function (run) {
      if (run.equal !== undefined) {
        if (run.equal) { out.push({op: "equal", text: run.equal}); }
        return;
      }
      if (run.del) { out.push({op: "delete", text: run.del}); }
      if (run.ins) { out.push({op: "insert", text: run.ins}); }
    });
    return out;
  }

  window.CharDiff = {diff: diff};
})();
