// Records every error, failed load, blocked request and console error or warning, and writes
// them into the body element's data-report-errors attribute, so a headless browser's DOM dump shows them.
(function () {
  "use strict";
  var errors = (window.__reportErrors = []);
  function flush() {
    if (document.body) {
      document.body.setAttribute("data-report-errors", JSON.stringify(errors));
    }
  }
  window.__reportFlush = flush;
  function note(text) {
    errors.push(String(text));
    flush();
  }
  window.addEventListener("error", function (e) {
    var t = e.target;
    note("error: " + (e.message || (t && (t.src || t.href || t.tagName)) || "unknown"));
  }, true);
  window.addEventListener("unhandledrejection", function (e) {
    note("unhandled rejection: " + e.reason);
  });
  document.addEventListener("securitypolicyviolation", function (e) {
    note("blocked request: " + e.violatedDirective + " " + e.blockedURI);
  });
  ["error", "warn"].forEach(function (k) {
    var orig = console[k];
    console[k] = function () {
      note("console." + k + ": " + Array.prototype.join.call(arguments, " "));
      return orig.apply(console, arguments);
    };
  });
})();
