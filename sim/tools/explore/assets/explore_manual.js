// Manual mode (docs/explore.md, view.manual): the researcher clicks tiles of empty grids to
// build a launch order — one GEMM's grid, or a producer/consumer chain's two grids
// (explore_manual_layout.js says which tiles exist and which may come next); each click runs
// that tile through the experiment's L2 in the WebAssembly replay (TilesimReplay, replay.js),
// one block at a time on one SM, from cold. Shows the running DRAM cost, the residency
// heatmaps, the order as numbered arrows and each tile's own cost; when every tile is clicked,
// flushes and shows the totals that `tilesim run` reports for the exported order file and
// experiment.
//
// A click costs one runBlock (the module keeps the L2 of the order so far) and repaints only
// what the click changed, so that it stays interactive on 4096-tile grids; the heatmaps follow
// at the next frame. Undo and whole orders rebuild the prefix (reset + one runBlock per tile)
// and repaint everything, O(n).
(function () {
  'use strict';
  var TX = window.TilesimExplore;
  var FREE = '#eef0f4', BLOCKED = '#d5d9e1';

  function num(x) { return Number(x); }  // the replay's counters may be BigInt

  /// v: the view's data; id: 'v0'...; width: px; replay: a TilesimReplay or null (no module).
  function Manual(v, id, width, replay) {
    this.v = v;
    this.mm = v.manual;
    this.id = id;
    this.replay = replay;
    this.layout = TX.manualLayout(this.mm);
    this.count = this.layout.count;
    this.order = [];
    this.history = [];  // totals after each click
    this.clicked = new Uint8Array(this.count);
    this.pos = new Int32Array(this.count).fill(-1);  // place of each tile in the order
    this.final = null;
    this.node = TX.el('section', {class: 'manual', id: id + '-manual'});
    this.build(width);
    this.update();
  }

  Manual.prototype.build = function (width) {
    var self = this, id = this.id, l2 = this.mm.l2;
    this.node.appendChild(TX.el('h3', {}, [this.layout.chain ? 'Manual mode: click tiles of both grids to build a dataflow order'
                                                             : 'Manual mode: click tiles to build your own order']));
    this.node.appendChild(TX.el('p', {class: 'caption'}, [
      'Blocks run one at a time on one SM, from a cold L2 (' + TX.fmtBytes(l2.bytes) + ', ' + l2.partitions +
      ' partition' + (l2.partitions === 1 ? '' : 's') + ', ' + l2.ways + '-way, ' + l2.replacement + '), in the order you click ' +
      'them. The cost comes from the simulator\u2019s own L2 code, compiled to WebAssembly: it equals what ',
      TX.el('code', {}, ['tilesim run']), ' reports for the exported order.' +
      (this.layout.chain ? ' A consumer tile reads its whole producer row: it can be placed once every producer tile ' +
                           'of its row is (the greyed ones cannot yet).' : '')]));
    if (!this.replay)
      this.node.appendChild(TX.el('p', {class: 'warn'}, [
        'This page has no replay module, so the cost is not shown; the order can still be exported.']));
    var button = function (suffix, text, title, fn) {
      var b = TX.el('button', {id: id + '-manual-' + suffix, type: 'button', title: title}, [text]);
      b.addEventListener('click', fn);
      return b;
    };
    this.node.appendChild(TX.el('div', {class: 'controls'}, [
      button('undo', '\u21b6 undo', 'remove the last tile', function () { self.undo(); }),
      button('reset', 'reset', 'start again from empty grids', function () { self.setOrder([]); }),
      button('simulated', 'use the simulated order', 'the order of the simulation above, run one block at a time' +
             (this.layout.chain ? ' (a consumer tile moved to just after its row\u2019s last producer tile)' : ''),
             function () { self.setOrder(self.simulatedOrder()); }),
      button('fill', 'fill the rest row by row', 'append the tiles not clicked yet, row by row',
             function () { self.setOrder(self.order.concat(self.layout.fill(self.clicked))); })]));
    this.status = TX.el('div', {class: 'dim manual-status', id: id + '-manual-status', 'data-refused': ''});
    this.node.appendChild(this.status);
    this.buildGrids(width);
    this.node.appendChild(TX.el('div', {class: 'legend-row'}, [
      TX.gradientLegend(TX.costRamp, 'free', 'as much as the first tile', 'DRAM bytes of each click'),
      TX.residencyLegend()]));
    this.buildExport(button);
  };

  /// One panel per part (a GEMM: one; a chain: producer and consumer side by side), with the
  /// operand heatmaps of the simulated view's panel for the same grid.
  Manual.prototype.buildGrids = function (width) {
    var self = this, mm = this.mm, id = this.id, parts = this.layout.parts;
    var specs = TX.panelSpecs(this.v).filter(function (s) { return s.kernel === mm.kernel; });
    var each = parts.length > 1 ? Math.max(300, Math.floor((width - 40) / 2)) : Math.min(width, 720);
    var k = this.v.kernels[mm.kernel] || {name: 'kernel'};
    this.panels = parts.map(function (part, pi) {
      var spec = parts.length === 1 ? specs[0] : specs.filter(function (s) { return (s.sub === 0) === (part.kind === 'p'); })[0];
      var panel = TX.kernelPanel({
        ops: spec ? spec.ops : {left: null, top: null, rest: []}, m: part.m, n: part.n, z: 1, maxWidth: each,
        maxHeight: Math.min(560, each * 0.8), tileKey: function (m, n) { return m + ',' + n; },
        idPrefix: id + '-manual-grid' + (part.kind ? '-' + part.kind : ''),
        title: (part.name || k.name) + ': ' + part.m + '\u00d7' + part.n + ' tiles'});
      panel.grid.node.classList.add('clickable');
      panel.grid.on('click', function (i) { if (i >= 0) self.click(part.first + i); });
      panel.grid.on('hover', function (i, event) { self.hover(i < 0 ? -1 : part.first + i, event); });
      panel.part = part;
      return panel;
    });
    this.cost = TX.el('div', {class: 'readout', id: id + '-manual-cost'});
    this.finalBox = TX.el('div', {class: 'final-box'});
    this.node.appendChild(TX.el('div', {class: 'manual-body'}, this.panels.map(function (p) { return p.node; }).concat([
      TX.el('div', {class: 'manual-side'}, [this.cost, this.finalBox])])));
  };

  /// Export: downloads, and the same texts shown in full.
  Manual.prototype.buildExport = function (button) {
    var self = this, mm = this.mm, id = this.id;
    this.orderPre = TX.el('pre', {id: id + '-export-order', class: 'export'});
    this.yamlPre = TX.el('pre', {id: id + '-export-yaml', class: 'export'});
    this.yamlName = (this.v.experiment || 'experiment').replace(/[^A-Za-z0-9_.-]+/g, '_') + '-manual.yaml';
    this.exportOrder = button('export-order', '\u2913 ' + mm.order_file, 'download the order file',
                              function () { TX.download(mm.order_file, self.orderText()); });
    this.exportYaml = button('export-yaml', '\u2913 ' + this.yamlName, 'download the experiment',
                             function () { TX.download(self.yamlName, self.yamlText()); });
    this.node.appendChild(TX.el('div', {class: 'export-box', id: id + '-manual-export'}, [
      TX.el('div', {class: 'controls'}, [TX.el('b', {}, ['Export']), this.exportOrder, this.exportYaml,
        TX.el('span', {class: 'dim'}, ['save both in one folder, then run ',
                                       TX.el('code', {}, ['tilesim run ' + this.yamlName])])]),
      TX.el('div', {class: 'export-texts'}, [
        TX.el('div', {}, [TX.el('div', {class: 'dim'}, [mm.order_file]), this.orderPre]),
        TX.el('div', {}, [TX.el('div', {class: 'dim'}, [this.yamlName]), this.yamlPre])])]));
  };

  Manual.prototype.hover = function (t, event) {
    if (t < 0) { TX.hideTip(); return; }
    var lines = [this.layout.name(t)], at = this.pos[t];
    if (at >= 0) lines.push('step ' + (at + 1) + ', DRAM ' + TX.fmtBytes(this.marginal(at)) + ' for this tile');
    else lines.push(this.layout.blocker(this.clicked, t) || 'click to run it next');
    TX.showTip(event, lines);
  };

  /// The simulated order (the view's blocks of the manual kernel, each tile once), made valid.
  Manual.prototype.simulatedOrder = function () {
    var b = this.v.blocks, out = [];
    for (var i = 0; i < b.kernel.length; ++i)
      if (b.kernel[i] === this.mm.kernel) out.push(this.layout.fromBlock(this.v, i));
    return out;
  };

  Manual.prototype.totalsNow = function () {
    var t = this.replay.totals();
    return {read: num(t.dram_read_bytes), write: num(t.dram_write_bytes), sectors: num(t.sectors),
            hit: num(t.hit_sectors)};
  };
  Manual.prototype.marginal = function (k) {
    var h = this.history;
    if (!h[k]) return NaN;
    var prev = k > 0 ? h[k - 1].read + h[k - 1].write : 0;
    return h[k].read + h[k].write - prev;
  };

  /// Appends one tile: one runBlock, and a repaint of what it changed. A tile already in the
  /// order is ignored; one the layout refuses (a consumer before its producer row) is named
  /// in the status line and not placed.
  Manual.prototype.click = function (t) {
    if (this.clicked[t]) return;
    var why = this.layout.blocker(this.clicked, t);
    this.status.setAttribute('data-refused', why ? this.layout.name(t) : '');
    this.status.textContent = why ? this.layout.name(t) + ' ' + why + '.' : '';
    if (why) return;
    var refinal = !!this.final;
    if (refinal) this.rebuild();  // a flushed L2 is no prefix state: replay from cold
    this.place(t);
    if (this.replay) {
      this.replay.runBlock(t);
      this.history.push(this.totalsNow());
    }
    // The first click sets the colour scale of every tile (its cost is the reference).
    if (this.order.length === 1 || refinal) this.update();
    else this.updateAfterClick(t);
  };

  Manual.prototype.place = function (t) {
    this.clicked[t] = 1;
    this.pos[t] = this.order.length;
    this.order.push(t);
  };

  Manual.prototype.undo = function () {
    if (!this.order.length) return;
    var t = this.order.pop();
    this.clicked[t] = 0;
    this.pos[t] = -1;
    this.history.pop();
    this.rebuild();
    this.update();
  };

  /// Replaces the order (reset, or a whole order made valid by the layout): O(n) runBlocks.
  Manual.prototype.setOrder = function (order) {
    this.order = [];
    this.clicked.fill(0);
    this.pos.fill(-1);
    this.layout.legalize(order).forEach(function (t) { if (!this.clicked[t]) this.place(t); }, this);
    this.history = [];
    this.final = null;
    if (this.replay) {
      this.replay.reset();
      this.order.forEach(function (t) { this.replay.runBlock(t); this.history.push(this.totalsNow()); }, this);
    }
    this.update();
  };

  /// The replay from cold through the current order (after an undo or a flush).
  Manual.prototype.rebuild = function () {
    this.final = null;
    if (!this.replay) return;
    this.replay.reset();
    this.order.forEach(function (t) { this.replay.runBlock(t); }, this);
  };

  /// Grid and local index of tile t.
  Manual.prototype.at = function (t) {
    var p = this.panels[this.layout.partOf(t)];
    return [p.grid, t - p.part.first];
  };

  /// Colours tile t: by its own DRAM cost against the first tile's once placed; free, or
  /// blocked (a consumer whose producer row is not placed yet), before.
  Manual.prototype.paint = function (t, ref) {
    var g = this.at(t), k = this.pos[t];
    if (k >= 0) {
      g[0].setFill(g[1], TX.costRamp(this.replay ? this.marginal(k) / ref : 0.5));
      g[0].setState(g[1], 'clicked');
    } else {
      var blocked = !!this.layout.blocker(this.clicked, t);
      g[0].setFill(g[1], blocked ? BLOCKED : FREE);
      g[0].setState(g[1], blocked ? 'blocked' : 'free');
    }
  };
  Manual.prototype.reference = function () { return this.history.length ? Math.max(1, this.marginal(0)) : 1; };

  /// Repaints everything: after an undo, a whole order, the first click.
  Manual.prototype.update = function () {
    var ref = this.reference();
    for (var t = 0; t < this.count; ++t) this.paint(t, ref);
    this.panels.forEach(function (p) {
      var first = p.part.first, mine = this.order.filter(function (t) { return t - first >= 0 && t - first < p.part.m * p.part.n; });
      p.grid.setPath(mine.map(function (t) { return t - first; }), mine.map(function (t) { return this.pos[t] + 1; }, this));
      p.grid.setPathProgress(mine.length);
    }, this);
    this.refresh();
  };

  /// After one click: the tile, the tiles it unblocked (a chain's consumer row), the path.
  Manual.prototype.updateAfterClick = function (t) {
    var ref = this.reference();
    this.paint(t, ref);
    this.layout.unlocks(this.clicked, t).forEach(function (u) { this.paint(u, ref); }, this);
    var p = this.panels[this.layout.partOf(t)];
    if (p.part.m * p.part.n <= TX.MAX_PATH_TILES) this.update();  // small grids: renumber the path
    else this.refresh();
  };

  /// The parts every change touches: the outline, the readouts, the heatmaps, the export.
  Manual.prototype.refresh = function () {
    var k = this.order.length, complete = k === this.count;
    if (complete && this.replay && !this.final) {
      this.replay.flush();
      this.final = this.totalsNow();
    }
    this.panels.forEach(function (p) { p.grid.markCurrent(-1); });
    if (k) { var g = this.at(this.order[k - 1]); g[0].markCurrent(g[1]); }
    this.showCost();
    this.scheduleResidency();
    this.orderPre.textContent = this.orderText();
    this.yamlPre.textContent = this.yamlText();
    this.exportOrder.disabled = this.exportYaml.disabled = !complete;
    var why = complete ? '' : 'click every tile first: tilesim run needs an order that covers the grid' +
                              (this.layout.chain ? 's' : '');
    this.exportOrder.title = this.exportYaml.title = why;
  };

  Manual.prototype.showCost = function () {
    var c = this.cost, k = this.order.length, last = this.history[k - 1];
    var read = last ? last.read : 0, write = last ? last.write : 0;
    c.setAttribute('data-steps', String(k));
    c.setAttribute('data-read-bytes', this.replay ? String(read) : '');
    c.setAttribute('data-write-bytes', this.replay ? String(write) : '');
    c.textContent = '';
    var stat = function (name, value) {
      c.appendChild(TX.el('div', {class: 'stat'}, [TX.el('span', {class: 'k'}, [name + ' ']), TX.el('b', {}, [value])]));
    };
    stat('tiles', k + ' of ' + this.count);
    if (!this.replay) return;
    stat('DRAM read', TX.fmtBytes(read));
    stat('written back', TX.fmtBytes(write));
    stat('L2 hit rate', TX.fmtPct(last ? TX.rate(last.hit, last.sectors) : NaN));
    if (k) c.appendChild(TX.el('div', {class: 'dim'}, ['last tile cost ' + TX.fmtBytes(this.marginal(k - 1)) + ' of DRAM']));

    this.finalBox.textContent = '';
    if (this.final) {
      var f = this.final;
      this.finalBox.appendChild(TX.el('div', {class: 'final', id: this.id + '-manual-final',
                                              'data-read-bytes': String(f.read), 'data-write-bytes': String(f.write),
                                              'data-sectors': String(f.sectors), 'data-hit-sectors': String(f.hit),
                                              'data-steps': String(k)}, [
        TX.el('div', {class: 'final-head'}, ['Complete order, after the final write-back']),
        TX.el('div', {}, ['DRAM read ', TX.el('b', {}, [TX.fmtBytes(f.read)]), ' (' + TX.fmtInt(f.read) + ' B)']),
        TX.el('div', {}, ['DRAM written ', TX.el('b', {}, [TX.fmtBytes(f.write)]), ' (' + TX.fmtInt(f.write) + ' B)']),
        TX.el('div', {}, ['L2 hit rate ', TX.el('b', {}, [TX.fmtPct(TX.rate(f.hit, f.sectors))])]),
        TX.el('div', {class: 'dim'}, ['= what tilesim run reports for the exported experiment'])]));
    }
  };

  /// The heatmaps are redrawn at the next animation frame, once however many clicks came
  /// before it: probing every cell's sample lines is the larger part of a click's work on big
  /// grids (16384 cells for a 64x64 chain), and the cost readout need not wait for it. The
  /// section's data-residency-ms says how long the last redraw took (bench/explore_click.py).
  Manual.prototype.scheduleResidency = function () {
    if (this.residencyPending) return;
    this.residencyPending = true;
    var self = this;
    requestAnimationFrame(function () {
      self.residencyPending = false;
      var t0 = performance.now();
      self.showResidency();
      self.node.setAttribute('data-residency-ms', (performance.now() - t0).toFixed(2));
    });
  };

  Manual.prototype.showResidency = function () {
    var cells = this.v.residency.cells, bytes = new Uint8Array(cells);
    if (this.replay && this.order.length) {
      var f = this.replay.cellFractions();
      for (var i = 0; i < cells && i < f.length; ++i) bytes[i] = Math.round(255 * Math.max(0, Math.min(1, f[i])));
    }
    TX.updateHeatmaps(this.panels, bytes, 0);
  };

  Manual.prototype.orderText = function () {
    var k = this.order.length;
    var header = ['# tilesim explore: a launch order for ' + (this.v.experiment || 'the experiment') + ', clicked by hand (' +
                  k + ' of ' + this.count + ' tiles)'];
    if (k < this.count) header.push('# incomplete: tilesim run needs every tile');
    return this.layout.text(this.order, header);
  };
  Manual.prototype.yamlText = function () {
    return this.mm.experiment_yaml.split('@ORDER_FILE@').join(this.mm.order_file);
  };

  TX.Manual = Manual;

  /// The section shown instead when the view has no manual mode.
  TX.manualNote = function (v) {
    return TX.el('section', {class: 'manual'}, [TX.el('h3', {}, ['Manual mode']),
      TX.el('p', {class: 'caption'}, ['Not available for this experiment: ' + (v.manual_note || 'no replay program') + '.'])]);
  };
})();
