// The report's first script: every error on the page (a library, the data, the rendering) is
// appended to <pre id="errors">, visible to a reader and to the browser test, which requires
// it to stay empty. Runs before any other script, so nothing can fail unseen.
(function () {
  'use strict';
  var box = document.getElementById('errors');
  function record(text) {
    box.textContent += text + '\n';
  }
  window.onerror = function (message, source, line, column, error) {
    var where = source ? ' (' + source.slice(-60) + ':' + line + ':' + column + ')' : '';
    record('error: ' + message + where + (error && error.stack ? '\n' + error.stack : ''));
  };
  window.addEventListener('unhandledrejection', function (event) {
    record('unhandled promise rejection: ' + event.reason);
  });
  var consoleError = console.error;
  console.error = function () {
    record('console.error: ' + Array.prototype.map.call(arguments, String).join(' '));
    return consoleError.apply(console, arguments);
  };
  window.tilesimRecordError = record;
})();
