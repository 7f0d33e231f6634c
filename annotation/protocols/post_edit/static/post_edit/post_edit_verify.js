/* Verifying a post-edit, HTER's verify stage (docs/methods.md §9; Callison-Burch 2009 §5.2): the reference and
   one edited translation, then two yes/no questions: does the edited translation mean the same as the
   reference, and is it acceptable target language? The questions are choice_rows.js's rows: Y or 1 answers
   the focused question yes, N or 2 no, and the focus moves on to the next question; ↑ ↓ move between the
   questions; Enter submits once both are answered. The answer:
   {"same_meaning": "yes" | "no", "acceptable": "yes" | "no"}. */
(function () {
  "use strict";
  var box = document.getElementById("post-edit-verify");
  var referenceEl = document.getElementById("pv-reference");
  var candidateEl = document.getElementById("pv-candidate");
  var hit = window.HitScreens;
  var element = hit.element;
  var choiceRows = window.ChoiceRows;

  var targetName = hit.languageName(box.dataset.targetLang);
  var QUESTIONS = [
    {key: "same_meaning", text: "Does the edited translation mean the same as the reference?"},
    {key: "acceptable", text: targetName ? "Is it acceptable " + targetName + "?" :
      "Is it acceptable in the target language?"}
  ];
  document.getElementById("pv-reference-label").textContent =
    targetName ? "Reference (" + targetName + ")" : "Reference";

  function row(question, index, serial) {
    var fieldset = element("div", "pv-question");
    fieldset.dataset.key = question.key;
    var text = fieldset.appendChild(element("p", "pv-q-text"));
    text.id = "pv-q-" + serial + "-" + index;
    text.appendChild(element("span", "pv-q-num", (index + 1) + ".")).setAttribute("aria-hidden", "true");
    text.appendChild(document.createTextNode(" " + question.text));
    var group = fieldset.appendChild(element("div", "ac-choices pv-choices"));
    group.setAttribute("role", "radiogroup");
    group.setAttribute("aria-labelledby", text.id);
    group.dir = "ltr";
    return {el: fieldset, group: group, name: "pv-" + serial + "-" + question.key, choices: choiceRows.YES_NO};
  }

  var rows = choiceRows.create({
    box: box, list: document.getElementById("pv-questions"), button: document.getElementById("submit"),
    remaining: document.getElementById("pv-remaining"), doneClass: "pe-done", rowSelector: ".pv-question",
    row: row,
    left: function (n) {
      return n === 0 ? "Both answered" : (n === 1 ? "1 question" : n + " questions") + " still to answer";
    },
    mark: function (el, value) {
      el.classList.toggle("pv-said-yes", value === "yes");
      el.classList.toggle("pv-said-no", value === "no");
    },
    keyValue: choiceRows.yesNo,
    answer: function (answers) { return {same_meaning: answers.same_meaning, acceptable: answers.acceptable}; }
  });

  hit.register({
    show: function (item) {
      referenceEl.textContent = item.reference === undefined ? "" : item.reference;
      candidateEl.textContent = item.candidate === undefined ? "" : item.candidate;
      rows.show(QUESTIONS);
    },
    focus: rows.focus,
    unlock: rows.unlock
  });
})();
