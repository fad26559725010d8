// One kernel's panel: its tile grid with the residency heatmaps of the tensors it reads. When
// the kernel is a matrix product (explore_specs.js found a left and a top operand: GEMM's A
// and B, an FFN's X/W_gate and H/W1) the picture is the textbook one: the left operand to the
// left of the grid, row-aligned with it, and the right operand above, column-aligned, so a
// tile's operands sit in line with it. Other tensors get their heatmaps in a row below.
(function () {
  'use strict';
  var TX = window.TilesimExplore;
  var CAPTION = 18;  // px: the caption row / column of the aligned layout

  function clamp(x, lo, hi) { return Math.max(lo, Math.min(hi, x)); }

  /// opts: {ops: {left, top, rest} (explore_specs.js), m, n, z, maxWidth, maxHeight,
  /// tileKey(m, n, z), title, idPrefix}. Returns {node, grid, heatmaps, width (px)}.
  TX.kernelPanel = function (opts) {
    var ops = opts.ops, m = opts.m, n = opts.n, z = Math.max(1, opts.z || 1);
    var heatmaps = [], grid, body, width;
    var maxW = opts.maxWidth, maxH = opts.maxHeight;
    if (ops.left) {
      // Thickness of each operand strip relative to the grid: its true aspect ratio, clamped so
      // that a long K neither vanishes nor crowds out the grid.
      var rl = clamp(ops.left.cols / ops.left.rows, 0.12, 0.3), rt = clamp(ops.top.rows / ops.top.cols, 0.12, 0.3);
      var t = Math.floor(Math.min((maxW - CAPTION - 6) / (n + rl * m), (maxH - CAPTION - 6) / (m + rt * n)));
      t = clamp(t, 2, 90);
      grid = TX.makeTileGrid({m: m, n: n, z: 1, tile: t, tileKey: opts.tileKey});
      // A very wide or tall grid would make one strip dwarf it: cap each strip by the grid's
      // other side.
      var lw = Math.round(clamp(rl * grid.height, 18, Math.max(40, 0.6 * grid.width)));
      var th = Math.round(clamp(rt * grid.width, 18, Math.max(40, 0.6 * grid.height)));
      var hl = new TX.Heatmap({tensor: ops.left, width: lw, height: grid.height - grid.gap});
      var ht = new TX.Heatmap({tensor: ops.top, width: grid.width - grid.gap, height: th});
      heatmaps.push(hl, ht);
      width = CAPTION + lw + grid.width + 6;
      body = TX.el('div', {class: 'aligned', style: 'grid-template-columns: ' + CAPTION + 'px ' + lw + 'px ' + grid.width +
                                                       'px; grid-template-rows: ' + CAPTION + 'px ' + th + 'px ' +
                                                       grid.height + 'px'}, [
        TX.el('div', {class: 'cap cap-top', style: 'grid-column: 3; grid-row: 1'}, [caption(ops.top)]),
        TX.el('div', {style: 'grid-column: 3; grid-row: 2'}, [ht.canvas]),
        TX.el('div', {class: 'cap cap-left', style: 'grid-column: 1; grid-row: 3'}, [caption(ops.left)]),
        TX.el('div', {style: 'grid-column: 2; grid-row: 3'}, [hl.canvas]),
        TX.el('div', {class: 'grid-cell', style: 'grid-column: 3; grid-row: 3'}, [grid.node])]);
      hl.canvas.title = hl.node.title;
      ht.canvas.title = ht.node.title;
    } else {
      var fit = fitSlices(m, n, z, maxW, maxH - (ops.rest.length ? 150 : 0), m * n * z > TX.MAX_SVG_TILES);
      grid = TX.makeTileGrid({m: m, n: n, z: z, tile: fit.tile, perRow: fit.perRow, tileKey: opts.tileKey});
      body = TX.el('div', {class: 'grid-cell'}, [grid.node]);
      width = grid.width;
    }
    var rest = null;
    if (ops.rest.length) {
      var each = Math.max(60, Math.floor(maxW / ops.rest.length) - 16);
      rest = TX.el('div', {class: 'heatmap-row'}, ops.rest.map(function (tensor) {
        var ratio = clamp(tensor.rows / tensor.cols, 0.1, 10);
        var w = Math.min(each, 130 / ratio), h = Math.min(130, w * ratio);
        var hm = new TX.Heatmap({tensor: tensor, width: w, height: h});
        heatmaps.push(hm);
        return hm.node;
      }));
    }
    var node = TX.el('div', {class: 'kernel-panel', id: opts.idPrefix || null}, [
      TX.el('div', {class: 'panel-title'}, [opts.title]), body, rest]);
    return {node: node, grid: grid, heatmaps: heatmaps, width: width};
  };

  /// z slices of m x n tiles in rows of perRow slices: the largest tile size (px) that fits;
  /// on a canvas it may be a fraction of a pixel (a 1024 x 1 x 32 softmax grid), in SVG 1 px
  /// at least.
  function fitSlices(m, n, z, maxW, maxH, canvas) {
    var pad = z > 1 ? 14 : 0, label = z > 1 ? 12 : 0, best = {tile: 0, perRow: 1};
    for (var per = 1; per <= z; ++per) {
      var rows = Math.ceil(z / per);
      var t = Math.min(((maxW + pad) / per - pad) / n, ((maxH + pad) / rows - pad - label) / m);
      if (t > best.tile) best = {tile: t, perRow: per};
    }
    best.tile = best.tile >= 2 || !canvas ? clamp(Math.floor(best.tile), 1, 44) : Math.max(0.25, Math.floor(best.tile * 4) / 4);
    return best;
  }

  function caption(t) {
    return TX.el('span', {title: t.name + ' (' + t.rows + '\u00d7' + t.cols + '), in ' + t.grid_rows + '\u00d7' +
                                 t.grid_cols + ' cells'}, [
      TX.el('b', {}, [t.name]), ' ' + t.rows + '\u00d7' + t.cols + (t.role === 'intermediate' ? ' intermediate' : '')]);
  }

  /// Updates every heatmap of `panels` from residency bytes at `offset`.
  TX.updateHeatmaps = function (panels, bytes, offset) {
    panels.forEach(function (p) { p.heatmaps.forEach(function (h) { h.update(bytes, offset); }); });
  };
})();
