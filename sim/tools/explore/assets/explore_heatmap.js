// The residency heatmap of one read tensor: its grid of cells (docs/explore.md, `tensors`)
// shaded by the fraction of each cell's lines the L2 holds. Drawn on a canvas through an
// ImageData of one pixel per cell scaled up without smoothing: 4096 cells cost one drawImage.
(function () {
  'use strict';
  var TX = window.TilesimExplore;

  // One colour lookup for the 256 residency levels (bytes of the snapshots).
  var LEVELS = [];
  for (var v = 0; v < 256; ++v) LEVELS.push(d3.rgb(TX.residencyRamp(v / 255)));

  /// opts: {tensor, width, height (px)}.
  function Heatmap(opts) {
    var t = this.tensor = opts.tensor;
    this.width = Math.max(4, Math.round(opts.width));
    this.height = Math.max(4, Math.round(opts.height));
    var pair = TX.canvas(this.width, this.height, 'heatmap');
    this.canvas = pair[0];
    this.ctx = pair[1];
    // More cells than pixels (a long K in a thin strip): each pixel shows the mean of its
    // cells, so that nothing is dropped by nearest-neighbour scaling.
    this.cols = Math.min(t.grid_cols, this.width);
    this.rows = Math.min(t.grid_rows, this.height);
    this.small = document.createElement('canvas');
    this.small.width = this.cols;
    this.small.height = this.rows;
    this.smallCtx = this.small.getContext('2d');
    this.image = this.smallCtx.createImageData(this.cols, this.rows);
    this.sums = new Float64Array(this.cols * this.rows);
    this.counts = new Float64Array(this.cols * this.rows);
    this.pixelOf = new Int32Array(t.grid_rows * t.grid_cols);
    for (var r = 0; r < t.grid_rows; ++r) for (var c = 0; c < t.grid_cols; ++c) {
      var p = Math.floor(r * this.rows / t.grid_rows) * this.cols + Math.floor(c * this.cols / t.grid_cols);
      this.pixelOf[r * t.grid_cols + c] = p;
      this.counts[p] += 1;
    }
    this.values = new Uint8Array(t.grid_rows * t.grid_cols);
    this.node = TX.el('figure', {class: 'heatmap-box', 'data-tensor': t.name}, [
      TX.el('figcaption', {}, [TX.el('b', {}, [t.name]), ' ' + t.rows + '\u00d7' + t.cols +
                               (t.role === 'intermediate' ? ' (intermediate)' : '')]),
      this.canvas]);
    this.node.title = t.name + ': ' + t.grid_rows + '\u00d7' + t.grid_cols + ' cells of ' + t.cell_rows + '\u00d7' +
                      t.cell_cols + ' elements; darker = more of the cell is in L2';
    var self = this;
    this.canvas.addEventListener('mousemove', function (event) { self.hover(event); });
    this.canvas.addEventListener('mouseleave', TX.hideTip);
  }

  /// Shades the cells from `bytes` (0..255 per residency cell), starting at `offset` (the
  /// snapshot's first byte); the tensor's cells are at cell_first + r * grid_cols + c.
  Heatmap.prototype.update = function (bytes, offset) {
    var t = this.tensor, n = t.grid_rows * t.grid_cols, base = offset + t.cell_first;
    var sums = this.sums, px = this.image.data, i;
    sums.fill(0);
    for (i = 0; i < n; ++i) {
      var v = bytes[base + i] | 0;
      this.values[i] = v;
      sums[this.pixelOf[i]] += v;
    }
    for (i = 0; i < sums.length; ++i) {
      var c = LEVELS[Math.round(sums[i] / Math.max(1, this.counts[i]))];
      px[4 * i] = c.r;
      px[4 * i + 1] = c.g;
      px[4 * i + 2] = c.b;
      px[4 * i + 3] = 255;
    }
    this.smallCtx.putImageData(this.image, 0, 0);
    var ctx = this.ctx;
    ctx.imageSmoothingEnabled = false;
    ctx.clearRect(0, 0, this.width, this.height);
    ctx.drawImage(this.small, 0, 0, this.width, this.height);
    // Cell borders when cells are large enough to tell apart.
    var cw = this.width / t.grid_cols, ch = this.height / t.grid_rows;
    if (cw >= 6 && ch >= 6) {
      ctx.strokeStyle = 'rgba(255,255,255,0.85)';
      ctx.lineWidth = 1;
      ctx.beginPath();
      for (var k = 1; k < t.grid_cols; ++k) { ctx.moveTo(k * cw, 0); ctx.lineTo(k * cw, this.height); }
      for (var r = 1; r < t.grid_rows; ++r) { ctx.moveTo(0, r * ch); ctx.lineTo(this.width, r * ch); }
      ctx.stroke();
    }
    ctx.strokeStyle = '#9aa3b2';
    ctx.strokeRect(0.5, 0.5, this.width - 1, this.height - 1);
  };

  Heatmap.prototype.hover = function (event) {
    var t = this.tensor, box = this.canvas.getBoundingClientRect();
    var c = Math.floor((event.clientX - box.left) / box.width * t.grid_cols);
    var r = Math.floor((event.clientY - box.top) / box.height * t.grid_rows);
    if (r < 0 || c < 0 || r >= t.grid_rows || c >= t.grid_cols) { TX.hideTip(); return; }
    var r0 = r * t.cell_rows, c0 = c * t.cell_cols;
    TX.showTip(event, [t.name + ' cell (' + r + ', ' + c + ')',
                       'rows ' + r0 + '\u2013' + (Math.min(t.rows, r0 + t.cell_rows) - 1) +
                       ', cols ' + c0 + '\u2013' + (Math.min(t.cols, c0 + t.cell_cols) - 1),
                       'in L2: ' + Math.round(100 * this.values[r * t.grid_cols + c] / 255) + '\u202f% of its lines']);
  };

  TX.Heatmap = Heatmap;

  /// The legend of the residency shading.
  TX.residencyLegend = function () {
    return TX.gradientLegend(TX.residencyRamp, 'not in L2', 'all in L2', 'L2 residency');
  };
})();
