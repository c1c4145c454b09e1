// Annotation page: keyboard for best-worst choices, time taken, rows for segments and boxes
// (and their "Nothing to mark" boxes).
(function () {
  "use strict";
  var form = document.getElementById("annotate-form");
  if (!form) return;
  var started = Date.now();
  // The page's language (the catalogue base.html loads; English without it).
  var gettext = function (text) { return window.gettext ? window.gettext(text) : text; };

  form.addEventListener("submit", function () {
    form.elements.time_taken_ms.value = String(Date.now() - started);
  });

  // ----- best-worst keyboard: 1..T choose best, q w e r t y u i choose worst, Enter submits
  var schemes = Array.prototype.map.call(
    document.querySelectorAll(".bws-scheme-head[data-scheme]"),
    function (th) { return th.dataset.scheme; }
  );
  var chosenScheme = null;

  function checked(scheme, kind) {
    return form.querySelector('input[name="' + scheme + "__" + kind + '"]:checked');
  }
  function complete(scheme) { return checked(scheme, "best") && checked(scheme, "worst"); }
  function activeScheme() {
    if (chosenScheme && !complete(chosenScheme)) return chosenScheme;
    for (var i = 0; i < schemes.length; i++) if (!complete(schemes[i])) return schemes[i];
    return chosenScheme || schemes[schemes.length - 1];
  }
  function highlight() {
    var active = activeScheme();
    document.querySelectorAll("[data-scheme]").forEach(function (el) {
      el.classList.toggle("active-scheme", schemes.length > 1 && el.dataset.scheme === active);
    });
  }
  // One item cannot be both best and worst: choosing it for the other side moves it there,
  // and the page says so instead of clearing the first choice silently.
  var status = document.getElementById("choice-status");
  function letter(input) {
    var label = input.labels && input.labels[0];
    var hidden = label && label.querySelector(".sr-only");
    return hidden ? hidden.textContent.replace(/[()\s]/g, "") : gettext("this item");
  }
  function moved(scheme, kind, input) {
    var other = checked(scheme, kind === "best" ? "worst" : "best");
    if (!other || other.value !== input.value) return;
    other.checked = false;
    if (status) {
      var was = kind === "best" ? "worst" : "best";
      var text = kind === "best"
        ? gettext("Item %(item)s was your worst choice for %(question)s; it is now best, so choose another worst.")
        : gettext("Item %(item)s was your best choice for %(question)s; it is now worst, so choose another best.");
      status.textContent = text.replace("%(item)s", letter(input)).replace("%(question)s", scheme);
    }
  }
  function choose(scheme, kind, key) {
    var input = form.querySelector(
      'input[name="' + scheme + "__" + kind + '"][data-key="' + key + '"]'
    );
    if (!input) return false;
    moved(scheme, kind, input);
    input.checked = true;
    input.focus({ preventScroll: true });
    return true;
  }
  function typing(target) {
    var tag = target.tagName;
    return tag === "TEXTAREA" || tag === "SELECT" ||
      (tag === "INPUT" && !/^(radio|checkbox|button|submit)$/.test(target.type));
  }

  form.addEventListener("change", function (event) {
    var name = event.target.name || "";
    var parts = name.split("__");
    if (parts.length === 2 && (parts[1] === "best" || parts[1] === "worst")) {
      moved(parts[0], parts[1], event.target);
      chosenScheme = complete(parts[0]) ? null : parts[0];
    }
    highlight();
  });

  if (form.dataset.keyboard === "on" && schemes.length) {
    document.addEventListener("keydown", function (event) {
      if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
      var key = event.key.toLowerCase();
      if (key === "enter") {
        if (event.target.tagName === "BUTTON" || event.target.tagName === "A") return;
        event.preventDefault();
        if (form.requestSubmit) form.requestSubmit(); else form.submit();
        return;
      }
      var scheme = activeScheme();
      // The page names each item's keys (data-key); any other key is left alone.
      var done = /^[a-z0-9]$/.test(key) &&
        (choose(scheme, "best", key) || choose(scheme, "worst", key));
      if (done) {
        event.preventDefault();
        if (complete(scheme)) chosenScheme = null;
        highlight();
      }
    });
  }
  highlight();

  // ----- rows of segments and boxes
  // A new row is a copy of the table's empty row (its <template>), made for "Add
  // segment"/"Add box" and for the timeline (timeline.js asks with an "add-row" event: a
  // drag swallows clicks). The table shows only the rows the person made.
  // A page without scripts offers a spare empty row to type into; here "Add" makes rows.
  document.querySelectorAll("tr.spare-row").forEach(function (row) { row.remove(); });
  document.querySelectorAll(".rows-scroll").forEach(function (wrap) {
    wrap.hidden = !wrap.querySelector("tr.data-row");
  });
  // A screen reader reads a cell's own name, not its column's: each control's name says
  // which row it is in ("start (s), row 2"), numbered again when rows come and go.
  function numberRows(table) {
    table.querySelectorAll("tr.data-row").forEach(function (row, index) {
      var number = String(index + 1);
      row.querySelectorAll("input[aria-label], select[aria-label]").forEach(function (control) {
        if (!control.dataset.name) control.dataset.name = control.getAttribute("aria-label");
        control.setAttribute(
          "aria-label",
          gettext("%(label)s, row %(number)s")
            .replace("%(label)s", control.dataset.name).replace("%(number)s", number)
        );
      });
      var remove = row.querySelector(".remove-row");
      if (remove) {
        remove.setAttribute("aria-label", gettext("Remove row %(number)s").replace("%(number)s", number));
      }
    });
  }
  document.querySelectorAll("table[data-rows]").forEach(numberRows);
  function addRow(table) {
    var wrap = table.closest(".rows-scroll");
    var template = wrap.querySelector("template.row-template");
    var row = template.content.querySelector("tr.data-row").cloneNode(true);
    table.tBodies[0].appendChild(row);
    wrap.hidden = false;
    numberRows(table);
    return row;
  }
  document.querySelectorAll(".add-row").forEach(function (button) {
    button.addEventListener("click", function () {
      var row = addRow(document.querySelector('table[data-rows="' + button.dataset.for + '"]'));
      var first = row.querySelector("input");
      if (first) first.focus();
    });
  });
  form.addEventListener("add-row", function (event) {
    var table = event.target.closest("table[data-rows]");
    if (table) event.detail.row = addRow(table);
  });
  // Remove takes the row away with its message; the table hides when no row is left.
  function removeRow(row) {
    var body = row.parentNode;
    var next = row.nextElementSibling;
    if (next && next.classList.contains("row-error-message")) body.removeChild(next);
    body.removeChild(row);
    numberRows(body.closest("table"));
    if (!body.querySelector("tr.data-row")) body.closest(".rows-scroll").hidden = true;
  }
  form.addEventListener("click", function (event) {
    if (event.target.classList.contains("remove-row")) removeRow(event.target.closest("tr"));
  });
  form.addEventListener("remove-row", function (event) {
    removeRow(event.target.closest("tr"));
    checkNothing();
  });
  // ----- "Nothing to mark" with rows filled in is a contradiction: the browser holds the
  // form back with this message (the server refuses it too), and nothing typed is lost.
  function rowsFilled(fieldset) {
    return Array.prototype.some.call(
      fieldset.querySelectorAll('tr.data-row input, tr.data-row select[name$="__label"]'),
      function (field) { return field.value.trim() !== ""; }
    );
  }
  function checkNothing() {
    form.querySelectorAll('input[type="checkbox"][name$="__nothing"]').forEach(function (box) {
      var both = box.checked && rowsFilled(box.closest("fieldset"));
      box.setCustomValidity(
        both ? gettext('Untick "Nothing to mark", or remove the rows you filled in.') : ""
      );
    });
  }
  form.addEventListener("input", checkNothing);
  form.addEventListener("change", checkNothing);
  form.addEventListener("click", function (event) {
    if (event.target.classList.contains("remove-row")) checkNothing();
  });
  checkNothing();
  // "Use current time" (segment schemes) is timeline.js's: it never writes over a typed value.
})();
