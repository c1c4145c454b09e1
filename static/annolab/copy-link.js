// The Copy buttons next to invite links (templates/projects/_invite.html): copy the link in
// the same row, or select it for Ctrl+C where the clipboard is not available (plain http).
(function () {
  "use strict";
  document.querySelectorAll("[data-copy-link]").forEach(function (button) {
    button.addEventListener("click", function () {
      var input = button.parentElement.querySelector("input.invite-link");
      input.select();
      var done = function () { button.textContent = "Copied"; };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(input.value).then(done, function () {});
      } else if (document.execCommand && document.execCommand("copy")) {
        done();
      }
    });
  });
})();
