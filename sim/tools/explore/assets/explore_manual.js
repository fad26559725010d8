// Manual mode (docs/explore.md, view.manual): the researcher clicks tiles of an empty grid to
// build a launch order; each click runs that block through the experiment's L2 in the
// WebAssembly replay (TilesimReplay, replay.js), one block at a time on one SM, from cold.
// Shows the running DRAM cost, the residency heatmaps, the order as numbered arrows and each
// tile's own cost; when every tile is clicked, flushes and shows the totals that `tilesim run`
// reports for the exported order file and experiment.
//
// A click costs one runBlock; undo rebuilds the prefix (reset + one runBlock per tile), O(n).
(function () {
  'use strict';
  var TX = window.TilesimExplore;
  var FREE = '#eef0f4';

  function num(x) { return Number(x); }  // the replay's counters may be BigInt

  /// v: the view's data; id: 'v0'...; width: px; replay: a TilesimReplay or null (no module).
  function Manual(v, id, width, replay) {
    this.v = v;
    this.mm = v.manual;
    this.id = id;
    this.replay = replay;
    this.count = this.mm.grid_m * this.mm.grid_n;
    this.order = [];
    this.history = [];  // totals after each click
    this.clicked = new Uint8Array(this.count);
    this.final = null;
    this.node = TX.el('section', {class: 'manual', id: id + '-manual'});
    this.build(width);
    this.update();
  }

  Manual.prototype.build = function (width) {
    var self = this, id = this.id, mm = this.mm, v = this.v;
    var l2 = mm.l2;
    this.node.appendChild(TX.el('h3', {}, ['Manual mode: click tiles to build your own order']));
    this.node.appendChild(TX.el('p', {class: 'caption'}, [
      'Blocks run one at a time on one SM, from a cold L2 (' + TX.fmtBytes(l2.bytes) + ', ' + l2.partitions +
      ' partition' + (l2.partitions === 1 ? '' : 's') + ', ' + l2.ways + '-way, ' + l2.replacement + '), in the order you click ' +
      'them. The cost comes from the simulator\u2019s own L2 code, compiled to WebAssembly: it equals what ',
      TX.el('code', {}, ['tilesim run']), ' reports for the exported order.']));
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
      button('reset', 'reset', 'start again from an empty grid', function () { self.setOrder([]); }),
      button('simulated', 'use the simulated order', 'the order of the simulation above, run one block at a time',
             function () { self.setOrder(self.simulatedOrder()); }),
      button('fill', 'fill the rest row by row', 'append the tiles not clicked yet, in row-major order',
             function () { self.fillRest(); })]));

    var k = v.kernels[mm.kernel] || {name: 'kernel'};
    var spec = TX.panelSpecs(v).filter(function (s) { return s.kernel === mm.kernel; })[0];
    this.panel = TX.kernelPanel({
      ops: spec ? spec.ops : {left: null, top: null, rest: []}, m: mm.grid_m, n: mm.grid_n, z: 1, maxWidth: Math.min(width, 720),
      maxHeight: Math.min(560, width * 0.8), tileKey: function (m, n) { return m + ',' + n; },
      idPrefix: id + '-manual-grid', title: k.name + ': ' + mm.grid_m + '\u00d7' + mm.grid_n + ' tiles'});
    this.grid = this.panel.grid;
    this.grid.node.classList.add('clickable');
    this.grid.on('click', function (tile) { if (tile >= 0) self.click(tile); });
    this.grid.on('hover', function (tile, event) {
      if (tile < 0) { TX.hideTip(); return; }
      var lines = ['tile (' + Math.floor(tile / mm.grid_n) + ', ' + (tile % mm.grid_n) + ')'];
      var at = self.order.indexOf(tile);
      if (at < 0) lines.push('click to run it next');
      else lines.push('step ' + (at + 1) + ', DRAM ' + TX.fmtBytes(self.marginal(at)) + ' for this tile');
      TX.showTip(event, lines);
    });
    this.cost = TX.el('div', {class: 'readout', id: id + '-manual-cost'});
    this.finalBox = TX.el('div', {class: 'final-box'});
    this.node.appendChild(TX.el('div', {class: 'manual-body'}, [
      this.panel.node, TX.el('div', {class: 'manual-side'}, [this.cost, this.finalBox])]));
    this.node.appendChild(TX.el('div', {class: 'legend-row'}, [
      TX.gradientLegend(TX.costRamp, 'free', 'as much as a cold block', 'DRAM bytes of each click'),
      TX.residencyLegend()]));

    // Export: downloads, and the same texts shown in full.
    this.orderPre = TX.el('pre', {id: id + '-export-order', class: 'export'});
    this.yamlPre = TX.el('pre', {id: id + '-export-yaml', class: 'export'});
    this.yamlName = (v.experiment || 'experiment').replace(/[^A-Za-z0-9_.-]+/g, '_') + '-manual.yaml';
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

  Manual.prototype.simulatedOrder = function () {
    var b = this.v.blocks, out = [];
    for (var i = 0; i < b.kernel.length; ++i)
      if (b.kernel[i] === this.mm.kernel) out.push(b.tile_m[i] * this.mm.grid_n + b.tile_n[i]);
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

  /// Appends one tile (ignored when already in the order): one runBlock.
  Manual.prototype.click = function (tile) {
    if (this.clicked[tile]) return;
    if (this.final) this.rebuild();  // a flushed L2 is no prefix state: replay from cold
    this.clicked[tile] = 1;
    this.order.push(tile);
    if (this.replay) {
      this.replay.runBlock(tile);
      this.history.push(this.totalsNow());
    }
    this.update();
  };

  Manual.prototype.undo = function () {
    if (!this.order.length) return;
    this.clicked[this.order.pop()] = 0;
    this.history.pop();
    this.rebuild();
    this.update();
  };

  Manual.prototype.fillRest = function () {
    var order = this.order.slice();
    for (var t = 0; t < this.count; ++t) if (!this.clicked[t]) order.push(t);
    this.setOrder(order);
  };

  /// Replaces the order (reset, or a whole order): O(n) runBlocks.
  Manual.prototype.setOrder = function (order) {
    this.order = [];
    this.clicked = new Uint8Array(this.count);
    order.forEach(function (t) { if (!this.clicked[t]) { this.clicked[t] = 1; this.order.push(t); } }, this);
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

  Manual.prototype.update = function () {
    var mm = this.mm, k = this.order.length, complete = k === this.count;
    if (complete && this.replay && !this.final) {
      this.replay.flush();
      this.final = this.totalsNow();
    }
    // Tiles: clicked ones by their own DRAM cost against the first (cold) click's.
    var ref = this.history.length ? Math.max(1, this.marginal(0)) : 1;
    var pos = new Int32Array(this.count);
    pos.fill(-1);
    this.order.forEach(function (t, i) { pos[t] = i; });
    for (var t = 0; t < this.count; ++t) {
      if (pos[t] < 0) {
        this.grid.setFill(t, FREE);
        this.grid.setState(t, 'free');
      } else {
        var c = this.replay ? this.marginal(pos[t]) / ref : 0.5;
        this.grid.setFill(t, TX.costRamp(c));
        this.grid.setState(t, 'clicked');
      }
    }
    this.grid.setPath(this.order, this.order.map(function (t, i) { return i + 1; }));
    this.grid.setPathProgress(k);
    this.grid.markCurrent(k ? this.order[k - 1] : -1);
    this.showCost();
    this.showResidency();
    this.orderPre.textContent = this.orderText();
    this.yamlPre.textContent = this.yamlText();
    this.exportOrder.disabled = this.exportYaml.disabled = !complete;
    var why = complete ? '' : 'click every tile first: tilesim run needs an order that covers the grid';
    this.exportOrder.title = this.exportYaml.title = why;
  };

  Manual.prototype.showCost = function () {
    var c = this.cost, k = this.order.length, last = this.history[k - 1];
    var read = last ? last.read : 0, write = last ? last.write : 0;
    c.setAttribute('data-steps', String(k));
    c.setAttribute('data-read-bytes', this.replay ? String(read) : '');
    c.setAttribute('data-write-bytes', this.replay ? String(write) : '');
    c.textContent = '';
    c.appendChild(TX.el('div', {class: 'stat'}, [TX.el('span', {class: 'k'}, ['tiles ']),
                                                 TX.el('b', {}, [k + ' of ' + this.count])]));
    if (!this.replay) return;
    c.appendChild(TX.el('div', {class: 'stat'}, [TX.el('span', {class: 'k'}, ['DRAM read ']), TX.el('b', {}, [TX.fmtBytes(read)])]));
    c.appendChild(TX.el('div', {class: 'stat'}, [TX.el('span', {class: 'k'}, ['written back ']),
                                                 TX.el('b', {}, [TX.fmtBytes(write)])]));
    c.appendChild(TX.el('div', {class: 'stat'}, [TX.el('span', {class: 'k'}, ['L2 hit rate ']),
                                                 TX.el('b', {}, [TX.fmtPct(last ? TX.rate(last.hit, last.sectors) : NaN)])]));
    if (k) c.appendChild(TX.el('div', {class: 'dim'}, ['last tile cost ' + TX.fmtBytes(this.marginal(k - 1)) + ' of DRAM']));

    this.finalBox.textContent = '';
    if (this.final) {
      var f = this.final;
      this.finalBox.appendChild(TX.el('div', {class: 'final', id: this.id + '-manual-final',
                                              'data-read-bytes': String(f.read), 'data-write-bytes': String(f.write),
                                              'data-steps': String(k)}, [
        TX.el('div', {class: 'final-head'}, ['Complete order, after the final write-back']),
        TX.el('div', {}, ['DRAM read ', TX.el('b', {}, [TX.fmtBytes(f.read)]), ' (' + TX.fmtInt(f.read) + ' B)']),
        TX.el('div', {}, ['DRAM written ', TX.el('b', {}, [TX.fmtBytes(f.write)]), ' (' + TX.fmtInt(f.write) + ' B)']),
        TX.el('div', {}, ['L2 hit rate ', TX.el('b', {}, [TX.fmtPct(TX.rate(f.hit, f.sectors))])]),
        TX.el('div', {class: 'dim'}, ['= what tilesim run reports for the exported experiment'])]));
    }
  };

  Manual.prototype.showResidency = function () {
    var cells = this.v.residency.cells, bytes = new Uint8Array(cells);
    if (this.replay && this.order.length) {
      var f = this.replay.cellFractions();
      for (var i = 0; i < cells && i < f.length; ++i) bytes[i] = Math.round(255 * Math.max(0, Math.min(1, f[i])));
    }
    TX.updateHeatmaps([this.panel], bytes, 0);
  };

  Manual.prototype.orderText = function () {
    var mm = this.mm, k = this.order.length;
    var lines = ['# tilesim explore: a launch order for ' + (this.v.experiment || 'the experiment') + ', clicked by hand (' +
                 k + ' of ' + this.count + ' tiles)'];
    if (k < this.count) lines.push('# incomplete: tilesim run needs every tile of the grid');
    lines.push('grid ' + mm.grid_m + ' ' + mm.grid_n);
    this.order.forEach(function (t) { lines.push(Math.floor(t / mm.grid_n) + ' ' + (t % mm.grid_n)); });
    return lines.join('\n') + '\n';
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
