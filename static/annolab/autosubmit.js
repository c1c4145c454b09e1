// A <select data-autosubmit> submits its form when it changes (the BWS dashboard's scheme
// and method pickers). Kept out of the HTML: the Content-Security-Policy allows no inline
// script or event-handler attribute.
(function () {
  "use strict";
  document.querySelectorAll("select[data-autosubmit]").forEach(function (select) {
    select.addEventListener("change", function () {
      select.form.submit();
    });
  });
})();
