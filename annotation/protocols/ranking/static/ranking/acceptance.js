/* Constituent acceptance screen (docs/methods.md §8, WMT08): the source with one phrase highlighted,
   the reference when the campaign shows it, then one row per translation with the phrase aligned to
   the source's highlighted, and for each a Yes / No answer: is it an acceptable translation of the
   highlighted source phrase? The answer is {"accept": {key: "yes" | "no"}}, every row answered.
   The rows of Yes / No are choice_rows.js's: ↑ ↓ move between rows, Y or 1 answers the focused row yes,
   N or 2 no, and the focus moves on to the next row; Enter submits. Spans are [start, end) in Unicode code
   points, not the UTF-16 units JS strings count; the phrase is a <mark> with "highlighted:" before it for
   screen readers. */
(function () {
  "use strict";
  var box = document.getElementById("acceptance");
  var choiceRows = window.ChoiceRows;
  var LOOK = {rowClass: "rk-row ac-row", groupClass: "ac-choices", prefix: "ac", legend: function (letter) {
    return "Is the highlighted phrase of translation " + letter + " acceptable?";
  }};

  choiceRows.labelSource(box, document.getElementById("ac-source-label"));

  var rows = choiceRows.create({
    box: box, list: document.getElementById("ac-rows"), button: document.getElementById("submit"),
    remaining: document.getElementById("ac-remaining"), doneClass: "all", rowSelector: ".rk-row",
    row: function (candidate, index, serial) {
      var made = choiceRows.translationRow(box, candidate, index, serial, LOOK);
      made.choices = choiceRows.YES_NO;
      return made;
    },
    left: function (n) {
      return n === 0 ? "All answered" : (n === 1 ? "1 translation" : n + " translations") + " still to answer";
    },
    mark: function (el, value) {
      el.classList.add("answered");
      el.classList.toggle("ac-said-yes", value === "yes");
      el.classList.toggle("ac-said-no", value === "no");
    },
    keyValue: choiceRows.yesNo,
    answer: function (accept) { return {accept: accept}; }
  });

  window.HitScreens.register({
    show: function (item) {
      choiceRows.showSegment(item, document.getElementById("ac-source"), document.getElementById("ac-reference-box"),
                             document.getElementById("ac-reference"));
      rows.show(item.candidates);
    },
    focus: rows.focus,
    unlock: rows.unlock
  });
})();
