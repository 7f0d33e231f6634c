/* The error-span editor's menus (spans_editor.js): the severity buttons (1 minor, 2 major, 3 critical) and for
   MQM the categories (a letter opens a group, a digit picks in it; a group without subcategories is one
   letter), what is selected and a message; the keys that act on what is selected wherever the focus is. */
(function (S) {
  "use strict";
  var Editor = S.Editor;
  var element = window.HitScreens.element;
  var CHILD_KEYS = "1234567890";
  S.SEVERITY_KEYS = {minor: "1", major: "2", critical: "3"};
  var LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

  /* The key shown on a button (for the eyes; aria-keyshortcuts tells screen readers). */
  function keyOn(button, key) {
    if (!key) { return; }
    button.appendChild(element("kbd", "", key)).setAttribute("aria-hidden", "true");
    button.setAttribute("aria-keyshortcuts", key);
  }

  /* MQM categories grouped by their parent (the text before the first "/"): each group has a key (a
     letter, the first free one of its name) and either one category or children with digit keys. */
  S.groupCategories = function (categories) {
    var groups = [], byName = {};
    categories.forEach(function (category) {
      var cut = category.indexOf("/");
      var parent = cut < 0 ? category : category.slice(0, cut);
      var group = byName[parent];
      if (!group) {
        group = byName[parent] = {name: parent, self: null, children: []};
        groups.push(group);
      }
      if (cut < 0) { group.self = category; } else { group.children.push({category: category, label: category.slice(cut + 1)}); }
    });
    var used = {};
    groups.forEach(function (group) {
      if (group.children.length && group.self) {
        group.children.unshift({category: group.self, label: group.name + " (general)"});
      }
      group.children.forEach(function (child, i) { child.key = CHILD_KEYS.charAt(i); });
      var candidates = (group.name.toUpperCase() + LETTERS).split("");
      group.key = candidates.filter(function (c) { return LETTERS.indexOf(c) >= 0 && !used[c]; })[0] || "";
      if (group.key) { used[group.key] = true; }
    });
    return groups;
  };

  S.leafOf = function (category) {
    var cut = category.indexOf("/");
    return cut < 0 ? category : category.slice(cut + 1);
  };

  Editor.prototype.buildTools = function () {
    var self = this;
    var tools = this.tools = element("div", "es-tools");
    var sevRow = tools.appendChild(element("div", "es-tool-row"));
    sevRow.appendChild(element("span", "es-tool-label", "Severity"));
    var sevGroup = sevRow.appendChild(element("div", "es-severities"));
    sevGroup.setAttribute("role", "group");
    sevGroup.setAttribute("aria-label", "Severity");
    this.severityButtons = this.severities.map(function (severity) {
      var button = sevGroup.appendChild(element("button", "es-severity sev-" + severity));
      button.type = "button";
      button.dataset.severity = severity;
      keyOn(button, S.SEVERITY_KEYS[severity]);
      button.appendChild(element("span", "es-swatch sev-" + severity)).setAttribute("aria-hidden", "true");
      button.appendChild(document.createTextNode(S.SEVERITY_LABELS[severity] || severity));
      button.setAttribute("aria-pressed", "false");
      button.addEventListener("click", function () { S.syncSelection(); self.chooseSeverity(severity); self.touch(); });
      return button;
    });
    if (this.groups) {
      var catRow = tools.appendChild(element("div", "es-tool-row es-categories"));
      catRow.appendChild(element("span", "es-tool-label", "Category"));
      var groupBox = catRow.appendChild(element("div", "es-groups"));
      groupBox.setAttribute("role", "group");
      groupBox.setAttribute("aria-label", "Error category");
      this.groupButtons = this.groups.map(function (group) {
        var button = groupBox.appendChild(element("button", "es-group"));
        button.type = "button";
        keyOn(button, group.key);
        button.appendChild(document.createTextNode(group.name + (group.children.length ? " ▸" : "")));
        if (group.children.length) { button.setAttribute("aria-expanded", "false"); } else {
          button.setAttribute("aria-pressed", "false");
        }
        button.addEventListener("click", function () { S.syncSelection(); self.chooseGroup(group); self.touch(); });
        return button;
      });
      this.childBox = tools.appendChild(element("div", "es-children"));
      this.childBox.setAttribute("role", "group");
      this.childBox.hidden = true;
    }
    var status = tools.appendChild(element("div", "es-status"));
    this.messageEl = status.appendChild(element("p", "es-message"));
    this.messageEl.setAttribute("aria-live", "polite");
    var remove = this.removeButton = status.appendChild(element("button", "es-remove", "Remove"));
    remove.type = "button";
    remove.hidden = true;
    remove.addEventListener("click", function () { self.removeActive(); self.touch(); });
  };

  /* Severity and category: of the marked error selected, or of the pending selection (then it is marked). */
  Editor.prototype.chooseSeverity = function (severity) {
    if (this.severities.indexOf(severity) < 0) { return; }
    if (this.active >= 0) {
      var span = this.spans[this.active];
      span.severity = severity;
      span.suggested = false;
      this.changed();
      return;
    }
    if (!this.pending) {
      this.say("First select the error in the translation (or [missing] for an omission), then its severity.");
      return;
    }
    if (this.overlaps(this.pending) >= 0) {
      this.say("That selection overlaps an error already marked. Select it by clicking on it to change or remove it.");
      return;
    }
    this.pendingSeverity = severity;
    if (this.groups && !this.pendingCategory) {
      this.updateTools();
      return;
    }
    this.add();
  };

  Editor.prototype.chooseGroup = function (group) {
    if (!group.children.length) {
      this.openGroup = null;
      this.chooseCategory(group.self);
      return;
    }
    this.openGroup = this.openGroup === group ? null : group;
    this.updateTools();
  };

  Editor.prototype.chooseCategory = function (category) {
    this.openGroup = null;
    if (this.active >= 0) {
      var span = this.spans[this.active];
      span.category = category;
      span.suggested = false;
      this.changed();
      return;
    }
    if (!this.pending) {
      this.say("First select the error in the translation (or [missing] for an omission), then its category.");
      return;
    }
    if (this.overlaps(this.pending) >= 0) {
      this.say("That selection overlaps an error already marked. Select it by clicking on it to change or remove it.");
      return;
    }
    this.pendingCategory = category;
    if (!this.pendingSeverity) {
      this.updateTools();
      return;
    }
    this.add();
  };

  Editor.prototype.updateTools = function () {
    var self = this, n = this.index.length;
    var span = this.active >= 0 ? this.spans[this.active] : null;
    var severity = span ? span.severity : this.pendingSeverity;
    var category = span ? span.category : this.pendingCategory;
    var ready = !!(span || this.pending);
    this.tools.classList.toggle("es-ready", ready);
    this.severityButtons.forEach(function (button) {
      button.setAttribute("aria-pressed", button.dataset.severity === severity ? "true" : "false");
    });
    if (this.groups) {
      this.groups.forEach(function (group, i) {
        var button = self.groupButtons[i];
        var chosen = !!category && (category === group.self || group.children.some(function (c) {
          return c.category === category;
        }));
        button.classList.toggle("es-chosen", chosen);
        if (group.children.length) {
          button.setAttribute("aria-expanded", self.openGroup === group ? "true" : "false");
        } else {
          button.setAttribute("aria-pressed", chosen ? "true" : "false");
        }
      });
      var box = this.childBox;
      box.textContent = "";
      box.hidden = !this.openGroup;
      if (this.openGroup) {
        box.setAttribute("aria-label", this.openGroup.name);
        this.openGroup.children.forEach(function (child) {
          var button = box.appendChild(element("button", "es-child"));
          button.type = "button";
          keyOn(button, child.key);
          button.appendChild(document.createTextNode(child.label));
          button.setAttribute("aria-pressed", child.category === category ? "true" : "false");
          button.addEventListener("click", function () {
            S.syncSelection();
            self.chooseCategory(child.category);
            self.touch();
          });
        });
      }
    }
    this.removeButton.hidden = !span;
    var text;
    if (this.message) {
      text = this.message;
    } else if (span) {
      var what = span.start === span.end ? "[missing]" : "“" + S.shorten(this.index.slice(span.start, span.end), 40) + "”";
      text = "Selected: " + what + " — " + (S.SEVERITY_LABELS[span.severity] || span.severity) +
        (span.category ? ", " + span.category : "") + (span.suggested ? " (" + (this.options.suggestedLabel || "suggested") + ")" : "") +
        ". Change it with the buttons, or remove it (Delete).";
    } else if (this.pending) {
      var target = this.pending.start === n ? "[missing]" :
        "“" + S.shorten(this.index.slice(this.pending.start, this.pending.end), 40) + "”";
      if (this.overlaps(this.pending) >= 0) {
        text = "That selection overlaps an error already marked; select only unmarked text.";
      } else if (this.groups) {
        var missingParts = [];
        if (!this.pendingCategory) { missingParts.push("its category"); }
        if (!this.pendingSeverity) { missingParts.push("its severity"); }
        text = target + ": now choose " + missingParts.join(" and ") + ".";
      } else {
        text = target + ": now choose its severity.";
      }
    } else {
      text = "Select an error in the translation (or [missing] for an omission), then " +
        (this.groups ? "its category and severity." : "its severity.");
    }
    this.messageEl.textContent = text;
    this.messageEl.classList.toggle("es-refused", !!this.message);
  };

  /* Keys that act on what is selected, wherever the focus is: severities, categories, Delete, Escape. */
  Editor.prototype.commandKey = function (event) {
    var key = event.key;
    if (event.ctrlKey || event.metaKey || event.altKey) { return false; }
    if (key === "Escape") { return this.deselect(); }
    if (key === "Delete" || key === "Backspace") { return this.removeActive(); }
    var upper = key.length === 1 ? key.toUpperCase() : "";
    if (this.openGroup) {
      var child = this.openGroup.children.filter(function (c) { return c.key === key; })[0];
      if (child) {
        this.chooseCategory(child.category);
        return true;
      }
    }
    if (this.groups && upper && LETTERS.indexOf(upper) >= 0) {
      var group = this.groups.filter(function (g) { return g.key === upper; })[0];
      if (!group) { return false; }
      if (!this.pending && this.active < 0) {
        this.say("First select the error in the translation (or [missing] for an omission), then its category.");
        return true;
      }
      this.chooseGroup(group);
      return true;
    }
    for (var severity in S.SEVERITY_KEYS) {
      if (S.SEVERITY_KEYS[severity] === key && this.severities.indexOf(severity) >= 0) {
        this.chooseSeverity(severity);
        return true;
      }
    }
    return false;
  };
})(window.SpanEditor);
