// Shared helpers of the launch-order explorer (`tilesim explore`): DOM building, number
// formatting, colour scales and the hover tooltip. The explorer's scripts share one namespace,
// window.TilesimExplore (TX below), filled in order: util, grid, heatmap, chart, gantt, view,
// manual, main (sim/tools/explore/page.cpp embeds them in that order, after D3 and replay.js).
(function () {
  'use strict';

  var TX = window.TilesimExplore = {};

  /// An element: el('div', {class: 'x', id: 'y'}, [children or text]). Attributes named on*
  /// are not supported on purpose: listeners are added with addEventListener.
  TX.el = function (tag, attrs, children) {
    var e = document.createElement(tag);
    if (attrs) Object.keys(attrs).forEach(function (k) {
      if (attrs[k] !== null && attrs[k] !== undefined) e.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) {
      if (c === null || c === undefined) return;
      e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    });
    return e;
  };

  var SVG_NS = 'http://www.w3.org/2000/svg';
  TX.svg = function (tag, attrs) {
    var e = document.createElementNS(SVG_NS, tag);
    if (attrs) Object.keys(attrs).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    return e;
  };

  // Decimal units (MB = 10^6 bytes), as the CLI's tables print them.
  TX.fmtBytes = function (b) {
    if (!isFinite(b)) return '\u2014';
    var units = ['B', 'kB', 'MB', 'GB', 'TB'];
    var i = 0;
    while (Math.abs(b) >= 1000 && i < units.length - 1) { b /= 1000; ++i; }
    return (i === 0 ? String(Math.round(b)) : b.toFixed(b < 10 ? 2 : b < 100 ? 1 : 0)) + '\u202f' + units[i];
  };
  TX.fmtPct = function (x) { return isFinite(x) ? (100 * x).toFixed(1) + '\u202f%' : '\u2014'; };
  TX.fmtTime = function (ns) {
    if (!isFinite(ns)) return '\u2014';
    if (Math.abs(ns) >= 1e6) return (ns / 1e6).toFixed(2) + '\u202fms';
    if (Math.abs(ns) >= 1e3) return (ns / 1e3).toFixed(ns >= 1e5 ? 0 : 2) + '\u202f\u00b5s';
    return Math.round(ns) + '\u202fns';
  };
  TX.fmtInt = function (n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, '\u2009'); };
  TX.rate = function (hit, total) { return total > 0 ? hit / total : 0; };

  /// Bytes of a base64 text (the residency snapshots, the wasm module).
  TX.decodeBase64 = function (text) {
    if (window.TilesimReplay && TilesimReplay.decodeBase64) return TilesimReplay.decodeBase64(text);
    var bin = atob(text.replace(/\s+/g, ''));
    var out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; ++i) out[i] = bin.charCodeAt(i);
    return out;
  };

  /// Index of the last element of the sorted array `a` that is <= x (-1 when none).
  TX.lastAtMost = function (a, x) {
    var lo = 0, hi = a.length;
    while (lo < hi) {
      var mid = (lo + hi) >> 1;
      if (a[mid] <= x) lo = mid + 1; else hi = mid;
    }
    return lo - 1;
  };

  // ---- colours -------------------------------------------------------------------------
  // A perceptual ramp (viridis' stops; D3 3.5 has no built-in one) for "early → late", a
  // diverging red → yellow → green one for hit rates, and a blue ramp for residency.
  function ramp(stops) {
    var scale = d3.scale.linear()
      .domain(stops.map(function (s, i) { return i / (stops.length - 1); }))
      .range(stops).interpolate(d3.interpolateLab).clamp(true);
    return function (t) { return scale(isFinite(t) ? t : 0); };
  }
  TX.orderRamp = ramp(['#440154', '#414487', '#2a788e', '#22a884', '#7ad151', '#fde725']);
  TX.hitRamp = ramp(['#c62828', '#f4a742', '#f2e86d', '#8cc265', '#1b8a4a']);
  TX.costRamp = ramp(['#fff4d6', '#fdbb63', '#ef6a32', '#b3202a', '#5c0a1e']);
  TX.residencyRamp = ramp(['#f3f5f9', '#bcd5ee', '#5d9bd3', '#1f5fa8', '#0b2e66']);
  // Kernels: few, so plain categorical colours; SMs: many, so hues spread by the golden angle
  // (neighbouring SMs differ clearly).
  TX.kernelColour = function (k) { return ['#3a6fb0', '#e07b39', '#4f9a5b', '#b5477f', '#7a64b8', '#8c6d3f'][k % 6]; };
  TX.smColour = function (sm) { return d3.hsl((sm * 137.508) % 360, 0.62, 0.52).toString(); };
  /// A colour mixed toward white by `amount` (0 = unchanged), for tiles not dispatched yet.
  TX.pale = function (colour, amount) { return d3.interpolateRgb(colour, '#ffffff')(amount); };

  /// A horizontal gradient legend: [label0] ▭▭▭ [label1].
  TX.gradientLegend = function (scale, left, right, title) {
    var stops = [];
    for (var i = 0; i <= 10; ++i) stops.push(scale(i / 10) + ' ' + (i * 10) + '%');
    return TX.el('span', {class: 'legend'}, [
      title ? TX.el('span', {class: 'legend-title'}, [title]) : null, TX.el('span', {}, [left]),
      TX.el('span', {class: 'legend-bar', style: 'background: linear-gradient(to right, ' + stops.join(', ') + ')'}),
      TX.el('span', {}, [right])]);
  };
  TX.swatch = function (colour, label, cls) {
    return TX.el('span', {class: 'legend'}, [
      TX.el('span', {class: 'swatch ' + (cls || ''), style: 'background:' + colour}), TX.el('span', {}, [label])]);
  };

  // ---- tooltip ---------------------------------------------------------------------------
  var tip = null;
  /// Shows `lines` (strings) next to the mouse; hideTip() removes it.
  TX.showTip = function (event, lines) {
    if (!tip) {
      tip = TX.el('div', {class: 'tip'});
      document.body.appendChild(tip);
    }
    tip.textContent = '';
    lines.forEach(function (l, i) { tip.appendChild(TX.el('div', {class: i === 0 ? 'tip-head' : ''}, [l])); });
    tip.style.display = 'block';
    var x = event.clientX + 14, y = event.clientY + 14;
    var w = tip.offsetWidth, h = tip.offsetHeight;
    if (x + w > window.innerWidth - 4) x = event.clientX - w - 10;
    if (y + h > window.innerHeight - 4) y = event.clientY - h - 10;
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  };
  TX.hideTip = function () { if (tip) tip.style.display = 'none'; };

  /// A canvas sized w x h CSS pixels, sharp on high-DPI screens; returns [canvas, context].
  TX.canvas = function (w, h, cls) {
    var ratio = window.devicePixelRatio || 1;
    var c = TX.el('canvas', {class: cls || '', width: Math.round(w * ratio), height: Math.round(h * ratio)});
    c.style.width = w + 'px';
    c.style.height = h + 'px';
    var ctx = c.getContext('2d');
    ctx.scale(ratio, ratio);
    return [c, ctx];
  };

  /// Offers `text` as a download named `name` (Blob + <a download>: works from file://).
  TX.download = function (name, text) {
    var url = URL.createObjectURL(new Blob([text], {type: 'text/plain'}));
    var a = TX.el('a', {href: url, download: name, style: 'display:none'});
    document.body.appendChild(a);
    a.click();
    document.body.removeChild(a);
    setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
  };
})();
