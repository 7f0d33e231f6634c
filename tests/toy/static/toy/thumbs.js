/* The toy thumbs screen (tests/toy/protocol.py): the source and the translation, thumb up or down, and a
   confidence button from 1 to the item's levels; Submit posts {thumb, confidence}. */
(function () {
  "use strict";
  var statement = document.getElementById("statement");
  var button = document.getElementById("submit");
  var levelsBox = document.getElementById("thumbs-confidence");
  var thumbs = Array.prototype.slice.call(document.querySelectorAll("#thumbs-choices .thumb"));
  var thumb = null;
  var confidence = null;

  function ready() { button.disabled = thumb === null || confidence === null; }

  function press(buttons, attribute, value) {
    buttons.forEach(function (b) { b.setAttribute("aria-pressed", String(b.dataset[attribute] === value)); });
  }

  thumbs.forEach(function (b) {
    b.addEventListener("click", function () { thumb = b.dataset.thumb; press(thumbs, "thumb", thumb); ready(); });
  });
  button.addEventListener("click", function () {
    if (!button.disabled) {
      button.disabled = true;
      window.HitScreens.submit({thumb: thumb, confidence: confidence});
    }
  });

  window.HitScreens.register({
    show: function (item) {
      document.getElementById("thumbs-source").textContent = item.source;
      document.getElementById("thumbs-candidate").textContent = item.candidate;
      statement.textContent = item.question || statement.dataset.statement;
      levelsBox.querySelectorAll("button").forEach(function (b) { b.remove(); });
      var levels = [];
      for (var level = 1; level <= item.levels; level++) {
        var b = window.HitScreens.element("button", "choice level", String(level));
        b.type = "button";
        b.dataset.level = String(level);
        b.setAttribute("aria-pressed", "false");
        b.addEventListener("click", function (event) {
          confidence = Number(event.currentTarget.dataset.level);
          press(levels, "level", String(confidence));
          ready();
        });
        levels.push(b);
        levelsBox.appendChild(b);
      }
      thumb = null;
      confidence = null;
      press(thumbs, "thumb", null);
      ready();
    },
    focus: function () { button.focus({preventScroll: true}); },
    unlock: ready
  });
})();
