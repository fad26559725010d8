// The explorer's entry point: reads the embedded data (<script id="explore-data">), lays out
// one view or two side by side (--compare), instantiates the WebAssembly replay for each
// manual mode, and sets body[data-ready="1"] once everything is drawn and the module is
// ready (the browser tests wait for it). Errors land in #errors (prelude.js).
(function () {
  'use strict';
  var TX = window.TilesimExplore;

  var D = JSON.parse(document.getElementById('explore-data').textContent);
  var root = document.getElementById('explore');

  function header() {
    var first = D.views[0];
    root.appendChild(TX.el('header', {}, [
      TX.el('h1', {}, ['tilesim explore', TX.el('span', {class: 'sub'}, [
        ': ' + D.views.map(function (v) { return v.label || v.experiment; }).join(' vs ')])]),
      TX.el('p', {class: 'caption'}, [
        'Step through the launch order: which tiles are dispatched, what the L2 holds of each operand, and what ' +
        'it costs in DRAM traffic. Click a tile, the chart or the timeline to jump to that step. ' +
        (first.manual ? 'Below each view, build an order by hand and export it for tilesim run.' : '')])]));
  }

  /// For two views: the whole-run numbers side by side, with the ratio of the second to the first.
  function comparison() {
    var a = D.views[0], b = D.views[1];
    var row = function (name, f, fmt, better) {
      var x = f(a), y = f(b), ratio = x > 0 ? y / x : NaN;
      var cls = !isFinite(ratio) || Math.abs(ratio - 1) < 0.005 ? '' : (ratio < 1) === better ? 'good' : 'bad';
      return TX.el('tr', {}, [TX.el('th', {}, [name]), TX.el('td', {}, [fmt(x)]), TX.el('td', {}, [fmt(y)]),
                              TX.el('td', {class: cls}, [isFinite(ratio) ? ratio.toFixed(2) + '\u00d7' : '\u2014'])]);
    };
    var lbl = function (v, i) { return v.label || v.experiment || 'view ' + i; };
    root.appendChild(TX.el('table', {class: 'compare', id: 'compare'}, [
      TX.el('tr', {}, [TX.el('th', {}, ['whole run']), TX.el('th', {}, [lbl(a, 0)]), TX.el('th', {}, [lbl(b, 1)]),
                       TX.el('th', {}, [lbl(b, 1) + ' / ' + lbl(a, 0)])]),
      row('DRAM read', function (v) { return v.total.dram_read_bytes; }, TX.fmtBytes, true),
      row('DRAM written', function (v) { return v.total.dram_write_bytes; }, TX.fmtBytes, true),
      row('L2 hit rate', function (v) { return v.total.hit_rate; }, TX.fmtPct, false),
      row('duration', function (v) { return v.duration_ns; }, TX.fmtTime, true)]));
  }

  function wasmBytes() {
    var node = document.getElementById('explore-wasm');
    var text = node ? node.textContent.trim() : '';
    return text ? TX.decodeBase64(text) : null;
  }

  /// One TilesimReplay per view with a manual mode (null where none can be made).
  function replays() {
    var bytes = wasmBytes();
    return Promise.all(D.views.map(function (v) {
      if (!v.manual || !bytes || !window.TilesimReplay) return Promise.resolve(null);
      return TilesimReplay.create(bytes, v.manual).catch(function (e) {
        window.tilesimRecordError('view ' + v.label + ': the manual mode\'s replay module failed: ' + (e && e.stack ? e.stack : e));
        return null;
      });
    }));
  }

  function render(rs) {
    var n = D.views.length;
    var box = TX.el('div', {class: 'views views-' + n});
    root.appendChild(box);
    var width = Math.max(420, Math.floor((box.clientWidth || root.clientWidth || 1200) / n) - (n > 1 ? 24 : 0));
    var views = D.views.map(function (v, i) {
      var view = new TX.View(v, i, width);
      box.appendChild(view.node);
      if (v.manual) {
        view.node.appendChild(new TX.Manual(v, view.id, width, rs[i]).node);
      } else {
        view.node.appendChild(TX.manualNote(v));
      }
      view.setStep(0);
      return view;
    });
    if (n === 2) linkViews(views);
  }

  /// "Same step in both views": stepping one moves the other to the same dispatch index.
  function linkViews(views) {
    var box = TX.el('input', {type: 'checkbox', id: 'link-steps'});
    root.insertBefore(TX.el('label', {class: 'link'}, [box, ' step both views together']),
                      root.querySelector('.views'));
    views.forEach(function (view, i) {
      view.onStep(function (step) { if (box.checked) views[1 - i].setStep(step, true); });
    });
  }

  header();
  if (D.views.length === 2) comparison();
  replays().then(function (rs) {
    render(rs);
    document.body.dataset.ready = '1';
  }).catch(function (e) {
    window.tilesimRecordError('error while rendering the explorer: ' + (e && e.stack ? e.stack : e));
    document.body.dataset.ready = 'failed';
  });
})();
