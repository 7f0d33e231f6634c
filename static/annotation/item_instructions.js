/* The item's instructions (the text the system was given: register, format, terminology, length), shown in a
   labelled box apart from the source, and the instruction judgment ("Did the translation follow the instructions?
   yes / partly / no", with an optional note) for each translation the item names in `instruction_targets`
   (docs/api.md#instructions). The judgment's rows go just above the screen's Submit; hit.js asks answer() before
   it posts and adds its `instruction` field to the screen's own answer. Text nodes only, never HTML. */
(function () {
  "use strict";
  var ANSWERS = [["yes", "Yes"], ["partly", "Partly"], ["no", "No"]];
  var MAX_NOTE = 1000;
  var box = document.getElementById("item-instructions");
  var textEl = document.getElementById("item-instructions-text");
  var fieldset = document.getElementById("instruction-judgment");
  var rowsEl = document.getElementById("instruction-rows");
  var targets = [];
  var serial = 0;  // radio group names differ from one item to the next

  function element(tag, className, text) {
    var el = document.createElement(tag);
    if (className) { el.className = className; }
    if (text !== undefined) { el.textContent = text; }
    return el;
  }

  function place() {
    var submit = document.getElementById("submit");
    var actions = submit && submit.closest(".actions");
    if (actions && fieldset.nextElementSibling !== actions) { actions.parentNode.insertBefore(fieldset, actions); }
  }

  function row(target, index) {
    var name = "ij-" + serial + "-" + index;
    var el = element("div", "ij-row");
    var group = el.appendChild(element("div", "ij-choices"));
    group.setAttribute("role", "radiogroup");
    if (targets.length > 1 || target.key) {
      var label = group.appendChild(element("span", "ij-label", target.label));
      label.id = name + "-label";
      group.setAttribute("aria-labelledby", name + "-label");
    } else {
      group.setAttribute("aria-label", "Did the translation follow the instructions?");
    }
    ANSWERS.forEach(function (answer) {
      var option = group.appendChild(element("label", "ij-choice ij-" + answer[0]));
      var input = option.appendChild(element("input"));
      input.type = "radio";
      input.name = name;
      input.value = answer[0];
      option.appendChild(document.createTextNode(" " + answer[1]));
    });
    var note = el.appendChild(element("input", "ij-note"));
    note.type = "text";
    note.id = name + "-note";
    note.maxLength = MAX_NOTE;
    note.placeholder = "Note (optional)";
    note.setAttribute("aria-label", "Note on the instructions" + (targets.length > 1 ? ", " + target.label : ""));
    note.dir = "auto";
    return el;
  }

  function show(item) {
    var given = typeof item.instructions === "string" ? item.instructions : "";
    box.hidden = !given;
    textEl.textContent = given;
    targets = Array.isArray(item.instruction_targets) ? item.instruction_targets : [];
    serial += 1;
    rowsEl.textContent = "";
    fieldset.hidden = targets.length === 0;
    if (!targets.length) { return; }
    place();
    targets.forEach(function (target, index) { rowsEl.appendChild(row(target, index)); });
  }

  /* {fields: {instruction: ...}} to add to the answer, or {error} naming the first translation not judged. */
  function answer() {
    if (!targets.length) { return {fields: {}}; }
    var judged = {};
    var missing = -1;
    targets.forEach(function (target, index) {
      var name = "ij-" + serial + "-" + index;
      var checked = rowsEl.querySelector("input[name='" + name + "']:checked");
      if (!checked) {
        if (missing < 0) { missing = index; }
        return;
      }
      var note = document.getElementById(name + "-note").value.trim();
      judged[target.key] = note ? {answer: checked.value, note: note} : {answer: checked.value};
    });
    if (missing >= 0) {
      var first = rowsEl.querySelector("input[name='ij-" + serial + "-" + missing + "']");
      if (first) { first.focus(); }
      var which = targets.length > 1 ? targets[missing].label : "the translation";
      return {error: "Say whether " + which + " followed the instructions: yes, partly or no."};
    }
    var single = targets.length === 1 && targets[0].key === "";
    return {fields: {instruction: single ? judged[""] : judged}};
  }

  // Keys typed here (a note, arrows between the answers) are this control's, not the screen's shortcuts (pairwise's
  // A/T/B, ranking's digits, the span editor's 1/2, Enter to submit).
  fieldset.addEventListener("keydown", function (event) {
    if (event.key !== "Tab") { event.stopPropagation(); }
  });

  window.HitInstructions = {show: show, answer: answer};
})();
