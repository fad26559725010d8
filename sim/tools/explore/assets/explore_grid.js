// The tile grid of one kernel: one SVG rect per output tile (carrying data-tile, for readers
// of the DOM and for the browser tests), the launch order as numbered steps joined by arrows,
// and an outline on the tile dispatched last. Used for the simulated order (explore_view.js)
// and for the manual mode's clickable grid (explore_manual.js).
//
// Updates touch only the rects whose state changes: stepping through a few thousand tiles
// must not rebuild the SVG.
(function () {
  'use strict';
  var TX = window.TilesimExplore;
  var nextId = 0;

  /// Steps are numbered and joined by arrows up to this many tiles; beyond, colours carry the
  /// order alone (hundreds of arrows per row are noise, and slow).
  TX.MAX_PATH_TILES = 400;

  /// The geometry both grid kinds share (this file's SVG grid, explore_grid_canvas.js's canvas):
  /// z slices of m x n tiles side by side, wrapping onto more rows when they do not fit.
  function layOut(grid, opts) {
    grid.m = opts.m;
    grid.n = opts.n;
    grid.z = Math.max(1, opts.z || 1);
    grid.tile = opts.tile;
    grid.gap = grid.tile >= 7 ? 1 : 0;
    var sliceW = grid.n * grid.tile, sliceH = grid.m * grid.tile, pad = grid.z > 1 ? 14 : 0;
    grid.perRow = opts.perRow || Math.max(1, Math.min(grid.z, Math.floor(((opts.maxWidth || 1e9) + pad) / (sliceW + pad))));
    grid.sliceX = function (z) { return (z % grid.perRow) * (sliceW + pad); };
    grid.sliceY = function (z) { return Math.floor(z / grid.perRow) * (sliceH + pad + (pad ? 12 : 0)) + (pad ? 12 : 0); };
    grid.width = Math.min(grid.z, grid.perRow) * (sliceW + pad) - pad;
    grid.height = grid.sliceY(grid.z - 1) + sliceH;
  }
  TX.layOutGrid = layOut;

  /// opts: {m, n, z, tile (px), tileKey(m, n, z) → data-tile text, maxWidth (px)}.
  function TileGrid(opts) {
    layOut(this, opts);
    this.uid = 'tg' + (nextId++);
    var sliceW = this.n * this.tile;

    var svg = this.node = TX.svg('svg', {class: 'tile-grid' + (this.tile < 8 ? ' small' : ''), width: this.width, height: this.height,
                                         viewBox: '0 0 ' + this.width + ' ' + this.height});
    var defs = TX.svg('defs');
    // The head has a white edge so that it shows on dark tiles as well as light ones.
    var marker = TX.svg('marker', {id: this.uid + '-head', viewBox: '-2 -2 14 14', refX: 8, refY: 5,
                                   markerWidth: 6, markerHeight: 6, orient: 'auto-start-reverse'});
    marker.appendChild(TX.svg('path', {d: 'M0,0 L10,5 L0,10 z', class: 'arrow-head'}));
    defs.appendChild(marker);
    svg.appendChild(defs);
    this.tilesLayer = svg.appendChild(TX.svg('g', {class: 'tiles'}));
    this.pathLayer = svg.appendChild(TX.svg('g', {class: 'path'}));
    this.markLayer = svg.appendChild(TX.svg('g', {class: 'marks'}));

    var count = this.count = this.m * this.n * this.z;
    this.rects = new Array(count);
    this.fills = new Array(count);
    this.classes = new Array(count);
    var frag = document.createDocumentFragment();
    for (var z = 0; z < this.z; ++z) {
      if (this.z > 1 && sliceW >= 32) {
        var label = TX.svg('text', {x: this.sliceX(z), y: this.sliceY(z) - 3, class: 'slice-label'});
        label.textContent = 'z = ' + z;
        frag.appendChild(label);
      }
      for (var r = 0; r < this.m; ++r) for (var c = 0; c < this.n; ++c) {
        var i = (z * this.m + r) * this.n + c;
        var p = this.tileXY(i);
        var rect = TX.svg('rect', {x: p[0], y: p[1], width: this.tile - this.gap, height: this.tile - this.gap,
                                   'data-tile': opts.tileKey(r, c, z), 'data-idx': i, fill: '#eef0f4'});
        this.rects[i] = rect;
        frag.appendChild(rect);
      }
    }
    this.tilesLayer.appendChild(frag);
    this.current = TX.svg('rect', {class: 'current-tile', width: this.tile + 2 - this.gap,
                                   height: this.tile + 2 - this.gap, visibility: 'hidden'});
    this.markLayer.appendChild(this.current);
    this.arrows = [];
    this.labels = [];
    this.pathDone = 0;
  }

  /// Top-left corner of tile i.
  TileGrid.prototype.tileXY = function (i) {
    var c = i % this.n, r = Math.floor(i / this.n) % this.m, z = Math.floor(i / (this.n * this.m));
    return [this.sliceX(z) + c * this.tile, this.sliceY(z) + r * this.tile];
  };
  TileGrid.prototype.index = function (m, n, z) { return ((z || 0) * this.m + m) * this.n + n; };

  TileGrid.prototype.setFill = function (i, colour) {
    if (this.fills[i] !== colour) {
      this.fills[i] = colour;
      this.rects[i].setAttribute('fill', colour);
    }
  };
  /// One CSS class of state per tile ('' for none): pending, running, clicked...
  TileGrid.prototype.setState = function (i, cls) {
    if (this.classes[i] !== cls) {
      this.classes[i] = cls;
      this.rects[i].setAttribute('class', cls);
    }
  };
  /// Outlines tile i (-1: none), the one dispatched or clicked last.
  TileGrid.prototype.markCurrent = function (i) {
    if (i < 0) { this.current.setAttribute('visibility', 'hidden'); return; }
    var p = this.tileXY(i);
    this.current.setAttribute('x', p[0] - 1);
    this.current.setAttribute('y', p[1] - 1);
    this.current.setAttribute('visibility', 'visible');
  };

  /// Draws the order: `tiles` (tile indices, in order) numbered `numbers[k]` and joined by
  /// arrows. Nothing when the grid is too large or the tiles too small to read.
  TileGrid.prototype.setPath = function (tiles, numbers) {
    var layer = this.pathLayer;
    while (layer.firstChild) layer.removeChild(layer.firstChild);
    this.arrows = [];
    this.labels = [];
    this.pathDone = 0;
    this.pathTiles = tiles;
    if (this.m * this.n * this.z > TX.MAX_PATH_TILES || this.tile < 14) return;
    // Numbers need room to be read; arrows alone still show the path on smaller tiles.
    var numbered = this.tile >= 20;
    var half = (this.tile - this.gap) / 2, self = this;
    var centre = function (i) { var p = self.tileXY(i); return [p[0] + half, p[1] + half]; };
    var shorten = numbered ? Math.min(half * 0.62, 10) : half * 0.3;
    var halos = TX.svg('g', {class: 'arrow-halos'}), lines = TX.svg('g', {class: 'arrows'});
    var texts = TX.svg('g', {class: 'step-numbers'});
    var font = Math.max(9, Math.min(14, this.tile * 0.34));
    for (var k = 0; k < tiles.length; ++k) {
      var a = centre(tiles[k]);
      if (k + 1 < tiles.length) {
        var b = centre(tiles[k + 1]);
        var dx = b[0] - a[0], dy = b[1] - a[1], len = Math.sqrt(dx * dx + dy * dy);
        if (len > 2 * shorten) {
          var ux = dx / len, uy = dy / len;
          var d = 'M' + (a[0] + ux * shorten).toFixed(1) + ',' + (a[1] + uy * shorten).toFixed(1) +
                  'L' + (b[0] - ux * shorten).toFixed(1) + ',' + (b[1] - uy * shorten).toFixed(1);
          halos.appendChild(TX.svg('path', {d: d}));
          var line = TX.svg('path', {d: d, class: 'todo', 'marker-end': 'url(#' + this.uid + '-head)'});
          lines.appendChild(line);
          this.arrows.push(line);
        } else {
          this.arrows.push(null);
        }
      }
      var t = null;
      if (numbered) {
        // Long numbers shrink to stay inside their tile (a digit is about 0.6 em wide).
        var label = String(numbers[k]), size = Math.max(7, Math.min(font, 0.85 * this.tile / (0.6 * label.length)));
        t = TX.svg('text', {x: a[0].toFixed(1), y: (a[1] + size * 0.35).toFixed(1), class: 'todo', 'font-size': size.toFixed(1)});
        t.textContent = label;
        texts.appendChild(t);
      }
      this.labels.push(t);
    }
    layer.appendChild(halos);
    layer.appendChild(lines);
    layer.appendChild(texts);
    this.setPathProgress(0);
  };

  /// The first `done` steps of the path are drawn solid, the rest faint (not dispatched yet).
  TileGrid.prototype.setPathProgress = function (done) {
    if (!this.labels.length) { this.pathDone = done; return; }
    var from = Math.min(done, this.pathDone), to = Math.max(done, this.pathDone);
    for (var k = from; k < to && k < this.labels.length; ++k) {
      var cls = k < done ? 'done' : 'todo';
      if (this.labels[k]) this.labels[k].setAttribute('class', cls);
      // The arrow into step k+1 is solid once step k+1 is dispatched.
      if (k >= 1 && this.arrows[k - 1]) this.arrows[k - 1].setAttribute('class', cls);
    }
    this.pathDone = done;
  };

  /// Calls fn(tileIndex, event) on click / hover / leave of a tile (leave: index -1).
  TileGrid.prototype.on = function (type, fn) {
    var svg = this.node;
    var handler = function (event) {
      var idx = event.target.getAttribute && event.target.getAttribute('data-idx');
      fn(idx === null || idx === undefined ? -1 : Number(idx), event);
    };
    if (type === 'click') svg.addEventListener('click', handler);
    if (type === 'hover') {
      svg.addEventListener('mousemove', handler);
      svg.addEventListener('mouseleave', function (event) { fn(-1, event); });
    }
  };

  TX.TileGrid = TileGrid;

  /// Tile size (px) so that an m x n grid fits in maxW x maxH, within [minTile, maxTile].
  TX.fitTile = function (m, n, maxW, maxH, minTile, maxTile) {
    var t = Math.floor(Math.min(maxW / Math.max(1, n), maxH / Math.max(1, m)));
    return Math.max(minTile || 2, Math.min(maxTile || 44, t));
  };
})();
