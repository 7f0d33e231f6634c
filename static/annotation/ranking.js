/* Relative ranking screen: the source, the reference when the campaign shows it, and N translations
   of the same segment, each ranked 1 (best) .. N, ties allowed (docs/methods.md §8).
   Each translation's rank is a radio group (one Tab stop per row; ← → change the rank, like any
   radio group). Keys: ↑ ↓ move between rows, a digit ranks the focused row and moves on to the
   next one, Enter submits. Submit stays disabled until every translation has a rank, and a hint
   says how many are left. The rank buttons stay left-to-right in right-to-left languages.
   Constituent ranking (the item has `source_span` and each candidate a `span`): one phrase of the
   source and of each translation is highlighted, a <mark> with "highlighted:" before it for screen
   readers. Spans are [start, end) in Unicode code points, not the UTF-16 units JS strings count. */
(function () {
  "use strict";
  var LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  var box = document.getElementById("ranking");
  var rowsEl = document.getElementById("rk-rows");
  var sourceEl = document.getElementById("rk-source");
  var referenceBox = document.getElementById("rk-reference-box");
  var referenceEl = document.getElementById("rk-reference");
  var remainingEl = document.getElementById("rk-remaining");
  var button = document.getElementById("submit");
  var rows = [];      // per translation shown: {key, el, inputs}
  var ranks = {};     // candidate key -> rank
  var current = 0;    // the row the digits rank when the focus is nowhere in particular
  var serial = 0;     // radio group names differ from one screen to the next
  var sending = false;

  var languageName = window.HitScreens.languageName;
  var element = window.HitScreens.element;
  var fillText = window.HitScreens.fillText;

  (function labelSource() {
    var name = languageName(box.dataset.sourceLang);
    document.getElementById("rk-source-label").textContent = name ? "Source (" + name + ")" : "Source";
  })();

  function remaining() {
    return rows.filter(function (row) { return !(row.key in ranks); }).length;
  }

  function update() {
    var left = remaining();
    button.disabled = sending || left > 0 || rows.length === 0;
    remainingEl.classList.toggle("all", left === 0);
    if (left === 0) {
      remainingEl.textContent = "All ranked";
    } else {
      remainingEl.textContent = (left === 1 ? "1 translation" : left + " translations") + " still to rank";
    }
  }

  function setRank(index, rank) {
    var row = rows[index];
    ranks[row.key] = rank;
    row.inputs[rank - 1].checked = true;
    row.el.classList.add("ranked");
    update();
  }

  function focusRow(index) {
    if (!rows.length) { return; }
    current = Math.max(0, Math.min(rows.length - 1, index));
    var row = rows[current];
    var target = row.inputs.filter(function (input) { return input.checked; })[0] || row.inputs[0];
    target.focus();
  }

  function rowIndexOf(el) {
    var rowEl = el && el.closest ? el.closest(".rk-row") : null;
    for (var i = 0; i < rows.length; i++) {
      if (rows[i].el === rowEl) { return i; }
    }
    return -1;
  }

  function buildRow(candidate, index, n) {
    var letter = LETTERS.charAt(index) || String(index + 1);
    var li = element("li", "rk-row");
    li.appendChild(element("span", "rk-letter", letter)).setAttribute("aria-hidden", "true");
    var text = li.appendChild(element("p", "rk-text"));
    fillText(text, candidate.text, candidate.span);
    text.id = "rk-text-" + serial + "-" + index;
    text.dir = box.dataset.targetDir;
    text.lang = box.dataset.targetLang;
    var group = li.appendChild(element("fieldset", "rk-ranks"));
    group.dir = "ltr";
    group.setAttribute("aria-describedby", text.id);
    group.appendChild(element("legend", "visually-hidden", "Rank of translation " + letter));
    var inputs = [];
    for (var rank = 1; rank <= n; rank++) {
      var label = group.appendChild(element("label", "rk-rank"));
      var input = label.appendChild(element("input"));
      input.type = "radio";
      input.name = "rk-" + serial + "-" + index;
      input.value = String(rank);
      var face = label.appendChild(element("span", "rk-face", String(rank)));
      if (rank === 1 || rank === n) {
        face.appendChild(element("span", "visually-hidden", rank === 1 ? " (best)" : " (worst)"));
      }
      input.addEventListener("change", setRank.bind(null, index, rank));
      inputs.push(input);
    }
    li.addEventListener("focusin", function () { current = index; });
    rowsEl.appendChild(li);
    return {key: candidate.key, el: li, inputs: inputs};
  }

  function submit() {
    if (button.disabled || remaining() > 0) { return; }
    var answer = {};
    rows.forEach(function (row) { answer[row.key] = ranks[row.key]; });
    sending = true;
    button.disabled = true;
    window.HitScreens.submit({ranks: answer});
  }

  button.addEventListener("click", submit);

  document.addEventListener("keydown", function (event) {
    if (window.HitScreens.isPaused() || !rows.length || box.offsetParent === null) { return; }
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var active = document.activeElement;
    var inRow = rowIndexOf(active);
    var free = !active || active === document.body;  // nothing focused: the keys go to the current row
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      if (inRow < 0 && !free) { return; }
      var from = inRow < 0 ? current - (event.key === "ArrowDown" ? 1 : -1) : inRow;
      focusRow(from + (event.key === "ArrowDown" ? 1 : -1));
      event.preventDefault();
    } else if (/^[1-9]$/.test(event.key)) {
      var rank = Number(event.key);
      var index = inRow >= 0 ? inRow : (free ? current : -1);
      if (index < 0 || rank > rows.length) { return; }
      event.preventDefault();
      setRank(index, rank);
      focusRow(index + 1);  // on to the next translation (the last one keeps the focus)
    } else if (event.key === "Enter" && !event.repeat) {
      if (active && active !== button && active.tagName === "BUTTON") { return; }  // e.g. "Instructions"
      event.preventDefault();
      submit();
    }
  });

  window.HitScreens.register({
    show: function (item) {
      serial += 1;
      sending = false;
      fillText(sourceEl, item.source === undefined ? "" : item.source, item.source_span);
      sourceEl.parentNode.hidden = item.source === undefined;
      referenceBox.hidden = item.reference === undefined;
      referenceEl.textContent = item.reference === undefined ? "" : item.reference;
      rowsEl.textContent = "";
      ranks = {};
      current = 0;
      var n = item.candidates.length;
      rows = item.candidates.map(function (candidate, i) { return buildRow(candidate, i, n); });
      document.getElementById("rk-worst").textContent = String(n);
      document.getElementById("rk-digits").textContent = n > 9 ? "1–9 (← → for more)" : "1–" + n;
      update();
      window.scrollTo(0, 0);  // a new screen starts at its top (phones)
    },
    focus: function () {
      current = 0;
      if (rows.length) { rows[0].inputs[0].focus({preventScroll: true}); }
    },
    unlock: function () {
      sending = false;
      update();
    }
  });
})();
