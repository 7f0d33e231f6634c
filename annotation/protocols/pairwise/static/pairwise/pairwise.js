/* Pairwise screen: two candidates side by side (stacked on a phone), sentence by sentence
   aligned across the sides, the source first for adequacy; A better / tie / B better
   (docs/methods.md §7). Keys: A or ←, T or ↓, B or →; Enter submits. */
(function () {
  "use strict";
  var box = document.getElementById("pairwise");
  var rows = document.getElementById("pw-rows");
  var button = document.getElementById("submit");
  var choices = Array.prototype.slice.call(document.querySelectorAll("#pw-choices .choice"));
  var choice = null;

  function cell(className, text, dir) {
    var el = document.createElement("div");
    el.className = className;
    el.textContent = text;
    if (dir) { el.dir = dir; }
    return el;
  }

  function choose(value) {
    choice = value;
    choices.forEach(function (b) { b.setAttribute("aria-pressed", String(b.dataset.choice === value)); });
    button.disabled = value === null;
  }

  function submit() {
    if (choice !== null && !button.disabled) {
      button.disabled = true;
      window.HitScreens.submit({choice: choice});
    }
  }

  choices.forEach(function (b) { b.addEventListener("click", function () { choose(b.dataset.choice); }); });
  button.addEventListener("click", submit);
  var keys = {a: "A", ArrowLeft: "A", t: "tie", ArrowDown: "tie", b: "B", ArrowRight: "B", 1: "A", 2: "tie", 3: "B"};
  document.addEventListener("keydown", function (event) {
    if (window.HitScreens.isPaused()) { return; }
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    if (key in keys) {
      choose(keys[key]);
      event.preventDefault();
    } else if (event.key === "Enter" && !event.repeat) {
      event.preventDefault();
      submit();
    }
  });

  window.HitScreens.register({
    show: function (item) {
      var hasSource = item.source !== undefined;
      box.classList.toggle("with-source", hasSource);
      box.classList.toggle("document", item.unit === "document");
      rows.textContent = "";
      for (var i = 0; i < item.A.length; i++) {
        var row = document.createElement("div");
        row.className = "pw-row";
        if (hasSource) { row.appendChild(cell("pw-source", item.source[i], box.dataset.sourceDir)); }
        row.appendChild(cell("pw-a", item.A[i], box.dataset.targetDir));
        row.appendChild(cell("pw-b", item.B[i], box.dataset.targetDir));
        rows.appendChild(row);
      }
      rows.scrollTop = 0;
      window.scrollTo(0, 0);  // a new item starts at its top, also where the page scrolls (phones)
      choose(null);
    },
    focus: function () { rows.focus({preventScroll: true}); },
    unlock: function () { button.disabled = choice === null; }
  });
})();
