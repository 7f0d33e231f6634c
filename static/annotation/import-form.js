// Campaign import form (admin): show only the rows of the chosen protocol's options.
// Hidden rows are disabled too, so they are neither validated by the browser nor sent.
// With no protocol chosen (it may come from a settings file) every row shows, as without JavaScript;
// each row's help says which protocols use it.
(function () {
  "use strict";
  var form = document.getElementById("campaign-import");
  var protocol = form && form.querySelector("select[name=protocol]");
  if (!protocol) return;

  function toggle() {
    form.querySelectorAll("[data-protocols]").forEach(function (row) {
      var shown = !protocol.value || row.getAttribute("data-protocols").split(" ").indexOf(protocol.value) >= 0;
      row.style.display = shown ? "" : "none";
      row.querySelectorAll("input, select, textarea").forEach(function (input) { input.disabled = !shown; });
    });
  }

  protocol.addEventListener("change", toggle);
  toggle();
})();
