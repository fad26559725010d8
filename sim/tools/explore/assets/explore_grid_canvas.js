// The tile grid on a canvas, for grids too large for one SVG rect per tile (an unfused
// attention's QK^T has tens of thousands of tiles): the same interface as TileGrid
// (explore_grid.js) but no per-tile elements, so no data-tile hooks, and no numbered path
// (there would be too many steps to read). Fills are batched: any number of setFill calls
// costs one redraw at the next animation frame.
(function () {
  'use strict';
  var TX = window.TilesimExplore;

  /// Tiles beyond which a grid is drawn on a canvas.
  TX.MAX_SVG_TILES = 8192;

  function CanvasTileGrid(opts) {
    TX.layOutGrid(this, opts);
    this.count = this.m * this.n * this.z;
    this.fills = new Array(this.count);
    this.classes = new Array(this.count);
    this.current = -1;
    var pair = TX.canvas(this.width, this.height, 'tile-canvas');
    this.node = pair[0];
    this.ctx = pair[1];
    this.pending = false;
  }

  CanvasTileGrid.prototype.tileXY = TX.TileGrid.prototype.tileXY;
  CanvasTileGrid.prototype.index = TX.TileGrid.prototype.index;

  CanvasTileGrid.prototype.schedule = function () {
    if (this.pending) return;
    this.pending = true;
    var self = this;
    requestAnimationFrame(function () { self.pending = false; self.draw(); });
  };

  CanvasTileGrid.prototype.draw = function () {
    var ctx = this.ctx, s = this.tile - this.gap;
    ctx.clearRect(0, 0, this.width, this.height);
    for (var z = 0; z < this.z && this.z > 1 && this.n * this.tile >= 32; ++z) {
      ctx.fillStyle = '#6b7383';
      ctx.font = '10px system-ui, sans-serif';
      ctx.fillText('z = ' + z, this.sliceX(z), this.sliceY(z) - 3);
    }
    for (var i = 0; i < this.count; ++i) {
      var p = this.tileXY(i);
      ctx.fillStyle = this.fills[i] || '#eef0f4';
      ctx.fillRect(p[0], p[1], s, s);
    }
    if (this.current >= 0) {
      var c = this.tileXY(this.current);
      ctx.strokeStyle = '#e4572e';
      ctx.lineWidth = 2;
      ctx.strokeRect(c[0] - 1.5, c[1] - 1.5, s + 3, s + 3);
    }
  };

  CanvasTileGrid.prototype.setFill = function (i, colour) {
    if (this.fills[i] !== colour) {
      this.fills[i] = colour;
      this.schedule();
    }
  };
  // States (running, pending) show through the fills alone at this size.
  CanvasTileGrid.prototype.setState = function (i, cls) { this.classes[i] = cls; };
  CanvasTileGrid.prototype.markCurrent = function (i) {
    if (this.current !== i) {
      this.current = i;
      this.schedule();
    }
  };
  CanvasTileGrid.prototype.setPath = function () {};
  CanvasTileGrid.prototype.setPathProgress = function () {};

  /// fn(tileIndex, event) on click / hover / leave (index -1 off the tiles).
  CanvasTileGrid.prototype.on = function (type, fn) {
    var self = this, canvas = this.node;
    var at = function (event) {
      var box = canvas.getBoundingClientRect(), x = event.clientX - box.left, y = event.clientY - box.top;
      for (var z = 0; z < self.z; ++z) {
        var c = Math.floor((x - self.sliceX(z)) / self.tile), r = Math.floor((y - self.sliceY(z)) / self.tile);
        if (c >= 0 && r >= 0 && c < self.n && r < self.m) return self.index(r, c, z);
      }
      return -1;
    };
    if (type === 'click') canvas.addEventListener('click', function (event) { fn(at(event), event); });
    if (type === 'hover') {
      canvas.addEventListener('mousemove', function (event) { fn(at(event), event); });
      canvas.addEventListener('mouseleave', function (event) { fn(-1, event); });
    }
  };

  /// A TileGrid, or a CanvasTileGrid for grids of more than MAX_SVG_TILES tiles.
  TX.makeTileGrid = function (opts) {
    var count = opts.m * opts.n * Math.max(1, opts.z || 1);
    return count > TX.MAX_SVG_TILES ? new CanvasTileGrid(opts) : new TX.TileGrid(opts);
  };
})();
