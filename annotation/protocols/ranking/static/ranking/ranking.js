/* Relative ranking screen: the source, the reference when the campaign shows it, and N translations
   of the same segment, each ranked 1 (best) .. N, ties allowed (docs/methods.md §8). The rows of ranks are
   choice_rows.js's: ↑ ↓ move between rows, a digit ranks the focused row and moves on to the next one,
   ← → change the rank, Enter submits; Submit waits for every translation to have a rank.
   Constituent ranking (the item has `source_span` and each candidate a `span`): one phrase of the
   source and of each translation is highlighted, a <mark> with "highlighted:" before it for screen
   readers. Spans are [start, end) in Unicode code points, not the UTF-16 units JS strings count. */
(function () {
  "use strict";
  var box = document.getElementById("ranking");
  var choiceRows = window.ChoiceRows;
  var count = 0;  // translations on the screen: the ranks run 1..count
  var LOOK = {rowClass: "rk-row", groupClass: "rk-ranks", prefix: "rk",
              legend: function (letter) { return "Rank of translation " + letter; }};

  choiceRows.labelSource(box, document.getElementById("rk-source-label"));

  function row(candidate, index, serial) {
    var made = choiceRows.translationRow(box, candidate, index, serial, LOOK);
    made.choices = [];
    for (var rank = 1; rank <= count; rank++) {
      made.choices.push({value: rank, label: String(rank), className: "rk-rank", faceClass: "rk-face",
                         note: rank === 1 ? " (best)" : (rank === count ? " (worst)" : "")});
    }
    return made;
  }

  var rows = choiceRows.create({
    box: box, list: document.getElementById("rk-rows"), button: document.getElementById("submit"),
    remaining: document.getElementById("rk-remaining"), doneClass: "all", rowSelector: ".rk-row", row: row,
    left: function (n) {
      return n === 0 ? "All ranked" : (n === 1 ? "1 translation" : n + " translations") + " still to rank";
    },
    mark: function (el) { el.classList.add("ranked"); },
    keyValue: function (event, n) {
      return /^[1-9]$/.test(event.key) && Number(event.key) <= n ? Number(event.key) : null;
    },
    answer: function (ranks) { return {ranks: ranks}; }
  });

  window.HitScreens.register({
    show: function (item) {
      choiceRows.showSegment(item, document.getElementById("rk-source"), document.getElementById("rk-reference-box"),
                             document.getElementById("rk-reference"));
      count = item.candidates.length;
      document.getElementById("rk-worst").textContent = String(count);
      document.getElementById("rk-digits").textContent = count > 9 ? "1–9 (← → for more)" : "1–" + count;
      rows.show(item.candidates);
    },
    focus: rows.focus,
    unlock: rows.unlock
  });
})();
