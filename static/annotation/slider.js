/* Direct Assessment screen: a 0-100 visual analogue scale with no numbers, anchored at
   both ends, marks at the quarters, untouched until moved (docs/methods.md §1).
   Untouched, it shows no handle (no position is suggested) but says how to rate, and a faint
   handle follows the pointer over the line, where a click would put it.
   Keyboard: arrows move by 1, Page Up/Down by 10, Home/End to the ends, Enter submits. */
(function () {
  "use strict";
  var track = document.getElementById("vas-track");
  var thumb = document.getElementById("vas-thumb");
  var ghost = document.getElementById("vas-ghost");
  var hint = document.getElementById("vas-hint");
  var button = document.getElementById("submit");
  var contextEl = document.getElementById("context-text");
  var candidateEl = document.getElementById("candidate-text");
  var value = null;
  var dragging = false;

  function clamp(v) { return Math.min(100, Math.max(0, v)); }

  function setValue(v) {
    value = Math.round(clamp(v) * 100) / 100;
    thumb.style.left = value + "%";
    track.classList.remove("untouched", "hovering");
    hint.hidden = true;
    track.setAttribute("aria-valuenow", String(Math.round(value)));
    button.disabled = false;
  }

  function reset() {
    value = null;
    track.classList.add("untouched");
    hint.hidden = false;
    track.removeAttribute("aria-valuenow");
    button.disabled = true;
  }

  function pointerPercent(event) {
    var box = track.getBoundingClientRect();
    return clamp(100 * (event.clientX - box.left) / box.width);
  }

  function fromPointer(event) {
    setValue(pointerPercent(event));
  }

  track.addEventListener("pointerdown", function (event) {
    if (event.button !== 0) { return; }
    dragging = true;
    track.setPointerCapture(event.pointerId);
    track.focus();
    fromPointer(event);
    event.preventDefault();
  });
  track.addEventListener("pointermove", function (event) {
    if (dragging) {
      fromPointer(event);
    } else if (value === null && event.pointerType === "mouse") {
      ghost.style.left = pointerPercent(event) + "%";  // where a click would put the handle
      track.classList.add("hovering");
    }
  });
  track.addEventListener("pointerleave", function () { track.classList.remove("hovering"); });
  track.addEventListener("pointerup", function () { dragging = false; });
  track.addEventListener("pointercancel", function () { dragging = false; });

  var steps = {ArrowRight: 1, ArrowUp: 1, ArrowLeft: -1, ArrowDown: -1, PageUp: 10, PageDown: -10};
  function onSliderKey(event) {
    var start = value === null ? 50 : value;
    if (event.key in steps) {
      setValue(start + steps[event.key]);
    } else if (event.key === "Home") {
      setValue(0);
    } else if (event.key === "End") {
      setValue(100);
    } else {
      return;
    }
    event.preventDefault();
  }
  track.addEventListener("keydown", onSliderKey);

  function submit() {
    if (value !== null && !button.disabled) {
      button.disabled = true;
      window.HitScreens.submit({score: value});
    }
  }
  button.addEventListener("click", submit);
  document.addEventListener("keydown", function (event) {
    if (window.HitScreens.isPaused()) { return; }
    if (event.target !== track && (event.target === document.body || event.target === button)) {
      onSliderKey(event);  // slider keys work even after a click elsewhere took the focus
    }
    if (event.key === "Enter" && !event.repeat) {
      event.preventDefault();
      submit();
    }
  });

  window.HitScreens.register("direct-assessment", {
    show: function (item) {
      var context = item.reference !== undefined ? item.reference : item.source;
      contextEl.hidden = context === undefined;
      contextEl.textContent = context === undefined ? "" : context;
      contextEl.dir = item.source !== undefined ? track.dataset.sourceDir : track.dataset.targetDir;
      candidateEl.textContent = item.candidate;
      reset();
    },
    focus: function () { track.focus(); },
    unlock: function () { button.disabled = value === null; }
  });
})();
