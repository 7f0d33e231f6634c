/* Verifying a post-edit, HTER's verify stage (docs/methods.md §9; Callison-Burch 2009 §5.2): the reference and
   one edited translation, then two yes/no questions: does the edited translation mean the same as the
   reference, and is it acceptable target language? Each question is a radio group (one Tab stop; ← → switch
   between Yes and No, as in any radio group). Keys: Y or 1 answers the focused question yes, N or 2 no, and
   the focus moves on to the next question; ↑ ↓ move between the questions; Enter submits. Submit is enabled
   once both are answered. The answer: {"same_meaning": "yes" | "no", "acceptable": "yes" | "no"}.
   Yes / No stay in that order in right-to-left languages. */
(function () {
  "use strict";
  var CHOICES = [{value: "yes", label: "Yes"}, {value: "no", label: "No"}];
  var box = document.getElementById("post-edit-verify");
  var questionsEl = document.getElementById("pv-questions");
  var referenceEl = document.getElementById("pv-reference");
  var candidateEl = document.getElementById("pv-candidate");
  var remainingEl = document.getElementById("pv-remaining");
  var button = document.getElementById("submit");
  var hit = window.HitScreens;
  var element = hit.element;
  var questions = [];   // {key, el, inputs}
  var answers = {};
  var current = 0;
  var serial = 0;
  var sending = false;

  var targetName = hit.languageName(box.dataset.targetLang);
  var QUESTIONS = [
    {key: "same_meaning", text: "Does the edited translation mean the same as the reference?"},
    {key: "acceptable", text: targetName ? "Is it acceptable " + targetName + "?" :
      "Is it acceptable in the target language?"}
  ];
  document.getElementById("pv-reference-label").textContent =
    targetName ? "Reference (" + targetName + ")" : "Reference";

  function remaining() {
    return questions.filter(function (q) { return !(q.key in answers); }).length;
  }

  function update() {
    var left = remaining();
    button.disabled = sending || left > 0 || questions.length === 0;
    remainingEl.classList.toggle("pe-done", left === 0);
    remainingEl.textContent = left === 0 ? "Both answered" :
      (left === 1 ? "1 question" : left + " questions") + " still to answer";
  }

  function setAnswer(index, value) {
    var q = questions[index];
    answers[q.key] = value;
    q.inputs.forEach(function (input) { input.checked = input.value === value; });
    q.el.classList.toggle("pv-said-yes", value === "yes");
    q.el.classList.toggle("pv-said-no", value === "no");
    update();
  }

  function focusQuestion(index) {
    if (!questions.length) { return; }
    current = Math.max(0, Math.min(questions.length - 1, index));
    var q = questions[current];
    var target = q.inputs.filter(function (input) { return input.checked; })[0] || q.inputs[0];
    target.focus();
  }

  function questionIndexOf(el) {
    var qEl = el && el.closest ? el.closest(".pv-question") : null;
    for (var i = 0; i < questions.length; i++) {
      if (questions[i].el === qEl) { return i; }
    }
    return -1;
  }

  /* Y / 1 is yes, N / 2 no (also the Arabic-Indic and Persian digits); on a keyboard whose letters are not
     Latin, the keys where Y and N are on a US keyboard. */
  function answerOf(event) {
    var key = event.key;
    if (key === "y" || key === "Y" || key === "1" || key === "١" || key === "۱") { return "yes"; }
    if (key === "n" || key === "N" || key === "2" || key === "٢" || key === "۲") { return "no"; }
    if (key && key.length === 1 && !/[a-z0-9]/i.test(key)) {
      if (event.code === "KeyY") { return "yes"; }
      if (event.code === "KeyN") { return "no"; }
    }
    return null;
  }

  function buildQuestion(question, index) {
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
    var inputs = CHOICES.map(function (choice) {
      var label = group.appendChild(element("label", "ac-choice ac-" + choice.value));
      var input = label.appendChild(element("input"));
      input.type = "radio";
      input.name = "pv-" + serial + "-" + question.key;
      input.value = choice.value;
      label.appendChild(element("span", "ac-face", choice.label));
      input.addEventListener("change", function () { if (input.checked) { setAnswer(index, choice.value); } });
      return input;
    });
    fieldset.addEventListener("focusin", function () { current = index; });
    questionsEl.appendChild(fieldset);
    return {key: question.key, el: fieldset, inputs: inputs};
  }

  function submit() {
    if (button.disabled || remaining() > 0) { return; }
    sending = true;
    button.disabled = true;
    hit.submit({same_meaning: answers.same_meaning, acceptable: answers.acceptable});
  }

  button.addEventListener("click", submit);

  document.addEventListener("keydown", function (event) {
    if (hit.isPaused() || !questions.length || box.offsetParent === null) { return; }
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var active = document.activeElement;
    var inQuestion = questionIndexOf(active);
    var free = !active || active === document.body;  // nothing focused: the keys go to the current question
    var value = answerOf(event);
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      if (inQuestion < 0 && !free) { return; }
      var step = event.key === "ArrowDown" ? 1 : -1;
      focusQuestion((inQuestion < 0 ? current - step : inQuestion) + step);
      event.preventDefault();
    } else if (value) {
      var index = inQuestion >= 0 ? inQuestion : (free ? current : -1);
      if (index < 0) { return; }
      event.preventDefault();
      setAnswer(index, value);
      focusQuestion(index + 1);  // on to the next question (the last one keeps the focus)
    } else if (event.key === "Enter" && !event.repeat) {
      if (active && active !== button && active.tagName === "BUTTON") { return; }  // e.g. "Instructions"
      event.preventDefault();
      submit();
    }
  });

  var screen = {
    show: function (item) {
      serial += 1;
      sending = false;
      referenceEl.textContent = item.reference === undefined ? "" : item.reference;
      candidateEl.textContent = item.candidate === undefined ? "" : item.candidate;
      questionsEl.textContent = "";
      answers = {};
      current = 0;
      questions = QUESTIONS.map(buildQuestion);
      update();
      window.scrollTo(0, 0);  // a new screen starts at its top (phones)
    },
    focus: function () {
      current = 0;
      if (questions.length) { questions[0].inputs[0].focus({preventScroll: true}); }
    },
    unlock: function () {
      sending = false;
      update();
    }
  };
  hit.register(screen);
})();
