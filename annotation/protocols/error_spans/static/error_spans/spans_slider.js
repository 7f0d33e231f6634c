/* The Direct Assessment slider (slider.js, the same look and keys) for a page with several of them:
   SpanEditor.slider(options). */
(function (S) {
  "use strict";
  var element = window.HitScreens.element;

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

  S.slider = function (options) { return new Slider(options); };
})(window.SpanEditor);
