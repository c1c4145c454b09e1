// Starts Redoc on the API docs page (templates/drf_spectacular/redoc.html). A file of its
// own rather than an inline script, so the Content-Security-Policy allows no inline script.
(function () {
  "use strict";
  var container = document.getElementById("redoc-container");
  var settings = JSON.parse(container.dataset.settings || "{}");
  // Redoc's side menu draws its maker's logo from their server; an image from another
  // host gets ours instead, so the page asks nothing of any other host.
  var ownLogo = container.dataset.logoUrl;
  var setAttribute = Element.prototype.setAttribute;
  Element.prototype.setAttribute = function (name, value) {
    if (this instanceof HTMLImageElement && String(name).toLowerCase() === "src") {
      value = ownIfForeign(value);
    }
    return setAttribute.call(this, name, value);
  };
  var src = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, "src");
  Object.defineProperty(HTMLImageElement.prototype, "src", {
    configurable: true,
    enumerable: src.enumerable,
    get: src.get,
    set: function (value) { src.set.call(this, ownIfForeign(value)); },
  });
  function ownIfForeign(url) {
    return isForeign(url) ? ownLogo : url;
  }
  function isForeign(url) {
    try {
      return new URL(String(url), document.baseURI).origin !== window.location.origin;
    } catch (error) {
      return true;
    }
  }
  Redoc.init(container.dataset.schemaUrl, settings, container);
})();
