// Forms that change what counts (leaving an annotator out) ask first: a form with
// data-confirm="question" is sent only when the person answers OK.
(function () {
  "use strict";
  document.querySelectorAll("form[data-confirm]").forEach(function (form) {
    form.addEventListener("submit", function (event) {
      if (!window.confirm(form.dataset.confirm)) {
        event.preventDefault();
      }
    });
  });
})();
