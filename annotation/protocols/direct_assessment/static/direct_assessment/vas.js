/* The visual analogue scale of Direct Assessment (docs/methods.md §1): a 0-100 line with no numbers, anchored at
   both ends, marks at the quarters, untouched until moved. Untouched, it shows no handle (no position is
   suggested), and a faint handle follows the pointer over the line, where a click would put it.
   Keyboard: arrows move by 1, Page Up/Down by 10, Home/End to the ends. Shared by the one-item screen (slider.js)
   and the document page (document_page.js): HitVas.attach(parts, onChange) drives the elements slider.html
   writes; HitVas.build(label, anchors, dirs) makes a new set of them. item.marks (SQM labels) replace the quarter
   ticks and the end anchors with labelled marks at their places on the line (showMarks). */
(function () {
  "use strict";
  var element = window.HitScreens.element;
  var STEPS = {ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1, PageUp: 10, PageDown: -10};

  function clamp(v) { return Math.min(100, Math.max(0, v)); }

  /* A scale over `parts` ({root, track, thumb, ghost, hint, labels}); onChange(value) after each move and reset
     (value null when untouched). Returns {value(), reset(), key(event): handled?, showMarks(marks), focus()}. */
  function attach(parts, onChange) {
    var track = parts.track;
    var value = null;
    var dragging = false;

    function set(v) {
      value = Math.round(clamp(v) * 100) / 100;
      parts.thumb.style.left = value + "%";
      track.classList.remove("untouched", "hovering");
      parts.hint.hidden = true;
      track.setAttribute("aria-valuenow", String(Math.round(value)));
      onChange(value);
    }

    function reset() {
      value = null;
      track.classList.add("untouched");
      parts.hint.hidden = false;
      track.removeAttribute("aria-valuenow");
      onChange(null);
    }

    function pointerPercent(event) {
      var box = track.getBoundingClientRect();
      return clamp(100 * (event.clientX - box.left) / box.width);
    }

    track.addEventListener("pointerdown", function (event) {
      if (event.button !== 0) { return; }
      dragging = true;
      track.setPointerCapture(event.pointerId);
      track.focus();
      set(pointerPercent(event));
      event.preventDefault();
    });
    track.addEventListener("pointermove", function (event) {
      if (dragging) {
        set(pointerPercent(event));
      } else if (value === null && event.pointerType === "mouse") {
        parts.ghost.style.left = pointerPercent(event) + "%";  // where a click would put the handle
        track.classList.add("hovering");
      }
    });
    track.addEventListener("pointerleave", function () { track.classList.remove("hovering"); });
    track.addEventListener("pointerup", function () { dragging = false; });
    track.addEventListener("pointercancel", function () { dragging = false; });

    function key(event) {
      var start = value === null ? 50 : value;
      if (event.key in STEPS) {
        set(start + STEPS[event.key]);
      } else if (event.key === "Home") {
        set(0);
      } else if (event.key === "End") {
        set(100);
      } else {
        return false;
      }
      event.preventDefault();
      return true;
    }
    track.addEventListener("keydown", key);

    function showMarks(marks) {
      var sqm = Array.isArray(marks) && marks.length > 0;
      parts.root.classList.toggle("vas-sqm", sqm);
      parts.labels.hidden = !sqm;
      Array.prototype.forEach.call(track.querySelectorAll(".vas-mark"), function (el) { track.removeChild(el); });
      parts.labels.textContent = "";
      if (!sqm) { return; }
      marks.forEach(function (mark, i) {
        var tick = element("span", "vas-tick vas-mark");
        tick.style.left = mark.at + "%";
        track.insertBefore(tick, parts.ghost);
        var label = parts.labels.appendChild(element("span", "vas-label", mark.text));
        label.style.left = mark.at + "%";
        if (i === 0) { label.classList.add("first"); }
        if (i === marks.length - 1) { label.classList.add("last"); }
      });
    }

    return {
      value: function () { return value; },
      reset: reset,
      key: key,
      showMarks: showMarks,
      focus: function () { track.focus(); }
    };
  }

  /* The elements of a new scale as slider.html writes them, labelled `label` for assistive technology, with the
     campaign's end `anchors` ([low, high]); the hint is short, the one-item screen's says more. */
  function build(label, anchors) {
    var root = element("div", "vas");
    root.dir = "ltr";
    var track = root.appendChild(element("div", "vas-track untouched"));
    track.setAttribute("role", "slider");
    track.tabIndex = 0;
    track.setAttribute("aria-valuemin", "0");
    track.setAttribute("aria-valuemax", "100");
    track.setAttribute("aria-label", label);
    [25, 50, 75].forEach(function (at) {
      track.appendChild(element("span", "vas-tick" + (at === 50 ? " mid" : ""))).style.left = at + "%";
    });
    var ghost = track.appendChild(element("span", "vas-ghost"));
    ghost.setAttribute("aria-hidden", "true");
    var thumb = track.appendChild(element("span", "vas-thumb"));
    var ends = root.appendChild(element("div", "vas-anchors"));
    ends.appendChild(element("span", "", anchors[0]));
    ends.appendChild(element("span", "", anchors[1]));
    var labels = root.appendChild(element("div", "vas-labels"));
    labels.setAttribute("aria-hidden", "true");
    labels.hidden = true;
    var hint = root.appendChild(element("p", "vas-hint", "Click or drag on the line to rate"));
    return {root: root, track: track, thumb: thumb, ghost: ghost, hint: hint, labels: labels};
  }

  window.HitVas = {attach: attach, build: build};
})();
