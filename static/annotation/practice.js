/* A tutorial item's "Practice" note above the screen (docs/api.md §8.2): shown when the server marks the item
   `practice` (a tutorial that opens the HIT), hidden on every other item. A silent attention check is never
   marked, so the note never tells a check from a real item. */
(function () {
  "use strict";
  var note = document.getElementById("practice-note");
  window.HitPractice = {
    show: function (item) { if (note) { note.hidden = !(item && item.practice === true); } }
  };
})();
