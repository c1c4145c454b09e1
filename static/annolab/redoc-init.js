// Starts Redoc on the API docs page (templates/drf_spectacular/redoc.html). A file of its
// own rather than an inline script, so the Content-Security-Policy allows no inline script.
(function () {
  "use strict";
  var container = document.getElementById("redoc-container");
  var settings = JSON.parse(container.dataset.settings || "{}");
  Redoc.init(container.dataset.schemaUrl, settings, container);
})();
