// One simulated view (docs/explore.md, View): the kernels' tile grids with the launch order,
// the residency heatmaps, the step control, the cumulative counters, the step chart and the
// per-SM timeline. Ids are prefixed by the view's index (v0-, v1-) for the browser tests.
(function () {
  'use strict';
  var TX = window.TilesimExplore;
  var PLAY_SECONDS = 14;  // a full play-through, whatever the number of steps

  var COLOR_MODES = [
    ['order', 'dispatch order'], ['time', 'dispatch time'], ['hit', 'L2 hit rate of the block'], ['sm', 'SM that ran it']];

  /// v: the view's data; index: 0 or 1; width: px available.
  function View(v, index, width) {
    this.v = v;
    this.index = index;
    this.id = 'v' + index;
    this.width = width;
    this.n = v.steps.t_ns.length;
    this.step = -1;
    this.listeners = [];
    this.residency = TX.decodeBase64(v.residency.data || '');
    this.node = TX.el('section', {class: 'view', id: this.id});
    this.build();
  }

  View.prototype.$ = function (suffix) { return document.getElementById(this.id + '-' + suffix); };

  View.prototype.build = function () {
    var v = this.v, self = this, id = this.id;
    var t = v.total;
    this.node.appendChild(TX.el('h2', {}, [v.label || v.experiment, TX.el('span', {class: 'sub'}, [
      ' ' + v.experiment + (v.point && v.point !== v.label ? ' \u00b7 ' + v.point : '')])]));
    this.node.appendChild(TX.el('p', {class: 'meta'}, [
      v.arch + ', ' + v.num_sms + ' SMs, L2 ' + TX.fmtBytes(v.l2_bytes) + ' \u2014 whole run: DRAM read ',
      TX.el('b', {}, [TX.fmtBytes(t.dram_read_bytes)]), ', written ', TX.el('b', {}, [TX.fmtBytes(t.dram_write_bytes)]),
      ', L2 hit ', TX.el('b', {}, [TX.fmtPct(t.hit_rate)]), ', ', TX.el('b', {}, [TX.fmtTime(v.duration_ns)]),
      ' (' + TX.fmtInt(this.n) + ' blocks)']));

    // The step control, kept in view while scrolling (position: sticky).
    var select = TX.el('select', {id: id + '-color-by'}, COLOR_MODES.map(function (m) {
      return TX.el('option', {value: m[0]}, [m[1]]);
    }));
    select.addEventListener('change', function () { self.recolour(); });
    var slider = TX.el('input', {type: 'range', id: id + '-step-slider', min: 0, max: Math.max(0, this.n - 1),
                                 value: 0, step: 1, 'aria-label': 'step'});
    slider.addEventListener('input', function () { self.setStep(Number(slider.value)); });
    var button = function (suffix, text, title, fn) {
      var b = TX.el('button', {id: id + '-step-' + suffix, type: 'button', title: title}, [text]);
      b.addEventListener('click', fn);
      return b;
    };
    this.playButton = button('play', '\u25b6 play', 'play through every dispatch', function () { self.togglePlay(); });
    this.node.appendChild(TX.el('div', {class: 'controls'}, [
      button('prev', '\u25c0', 'previous dispatch', function () { self.stopPlay(); self.setStep(self.step - 1); }),
      button('next', '\u25b6', 'next dispatch', function () { self.stopPlay(); self.setStep(self.step + 1); }),
      this.playButton, slider,
      TX.el('span', {class: 'step-label', id: id + '-step-label'}),
      TX.el('label', {class: 'color-by'}, ['colour tiles by ', select])]));
    this.slider = slider;
    this.select = select;

    this.node.appendChild(TX.el('div', {class: 'readout'}, [
      TX.el('span', {class: 'stat', id: id + '-cum-dram'}),
      TX.el('span', {class: 'stat', id: id + '-cum-hit'}),
      TX.el('span', {class: 'stat dim', id: id + '-step-block'})]));

    // The grids side by side (a chain's producer and consumer, a fused kernel's parts), each
    // with its operands; a single grid leaves room for the chart beside it.
    var specs = this.specs = TX.panelSpecs(v), np = specs.length, beside = np === 1 && this.width >= 960;
    var panelsW = beside ? Math.floor(this.width * 0.6) : this.width;
    // Wide grids (an FFN's 4 x 112 tiles) are stacked, each as wide as the view.
    var wide = specs.every(function (s) { return s.n * Math.min(s.z, 4) >= 3 * s.m; });
    var each = wide ? panelsW : Math.floor((panelsW - 24 * (np - 1)) / np);
    this.panels = specs.map(function (spec, pi) {
      var p = TX.kernelPanel({
        ops: spec.ops, m: spec.m, n: spec.n, z: spec.z, maxWidth: each,
        maxHeight: Math.min(640, each * (np > 1 ? 1.1 : 1)),
        tileKey: function (m, n, z) { return m + ',' + n + ',' + (spec.sub >= 0 ? spec.sub : z); },
        idPrefix: id + '-kernel-' + pi, title: spec.title});
      p.grid.on('click', function (tile) { if (tile >= 0 && self.blockOf[pi][tile] >= 0) self.setStep(self.blockOf[pi][tile]); });
      p.grid.on('hover', function (tile, event) {
        var b = tile >= 0 ? self.blockOf[pi][tile] : -1;
        if (b >= 0) TX.showTip(event, TX.blockLines(v, b)); else TX.hideTip();
      });
      return p;
    });
    this.indexTiles();
    this.legend = TX.el('div', {class: 'legend-row'});
    var used = this.panels.reduce(function (acc, p) { return acc + p.width + 24; }, 0);
    this.chartWidth = beside ? Math.max(360, Math.min(760, this.width - used - 8)) : Math.min(this.width, 900);
    this.chartBox = TX.el('div', {class: 'chart-box'});
    var xSelect = TX.el('select', {id: id + '-chart-x'}, [TX.el('option', {value: 'step'}, ['dispatch step']),
                                                            TX.el('option', {value: 'time'}, ['simulated time'])]);
    xSelect.addEventListener('change', function () { self.makeChart(xSelect.value); });
    this.node.appendChild(TX.el('div', {class: 'top-row'}, [
      TX.el('div', {class: 'panels'}, this.panels.map(function (p) { return p.node; })),
      TX.el('div', {class: 'side'}, [
        TX.el('h3', {}, ['Cumulative DRAM traffic and L2 hit rate']),
        TX.el('div', {class: 'legend-row'}, [TX.chartLegend(), TX.el('label', {class: 'dim'}, ['x axis ', xSelect])]),
        this.chartBox])]));
    this.node.appendChild(this.legend);
    this.makeChart('step');

    this.gantt = new TX.Gantt({width: this.width, view: v, onPick: function (i) { self.stopPlay(); self.setStep(i); }});
    this.node.appendChild(TX.el('h3', {}, ['Per-SM timeline']));
    var ganttLegend = TX.ganttLegend(v);
    if (this.gantt.note) ganttLegend.appendChild(TX.el('span', {class: 'dim'}, ['(' + this.gantt.note + ')']));
    this.node.appendChild(ganttLegend);
    this.node.appendChild(this.gantt.node);
    this.recolour();
  };

  View.prototype.makeChart = function (x) {
    var self = this;
    this.chart = new TX.StepChart({width: this.chartWidth, height: 260, steps: this.v.steps, x: x,
                                   duration_ns: this.v.duration_ns,
                                   onPick: function (i) { self.stopPlay(); self.setStep(i); }});
    this.chartBox.textContent = '';
    this.chartBox.appendChild(this.chart.node);
    if (this.step >= 0) this.chart.setStep(this.step);
  };

  /// blockOf[panel][tile] = the block (step) that computed the tile; the order path per panel;
  /// and, per panel, how many of its blocks were dispatched by each step (for the arrows).
  View.prototype.indexTiles = function () {
    var v = this.v, b = v.blocks, self = this, specOf = TX.specIndexer(v, this.specs);
    this.tileOf = new Int32Array(this.n);
    this.panelOf = new Int32Array(this.n);
    this.blockOf = this.panels.map(function (p) {
      var a = new Int32Array(p.grid.count);
      a.fill(-1);
      return a;
    });
    var paths = this.panels.map(function () { return []; }), numbers = this.panels.map(function () { return []; });
    this.doneBy = this.panels.map(function () { return new Int32Array(self.n); });
    var counts = this.panels.map(function () { return 0; });
    for (var i = 0; i < this.n; ++i) {
      var p = specOf(i), grid = this.panels[p].grid;
      var tile = grid.index(b.tile_m[i], b.tile_n[i], this.specs[p].sub >= 0 ? 0 : b.tile_z[i]);
      this.panelOf[i] = p;
      this.tileOf[i] = tile;
      this.blockOf[p][tile] = i;
      paths[p].push(tile);
      numbers[p].push(i + 1);
      counts[p] += 1;
      for (var q = 0; q < counts.length; ++q) this.doneBy[q][i] = counts[q];
    }
    this.panels.forEach(function (p, k) { p.grid.setPath(paths[k], numbers[k]); });
  };

  /// Colours of every block for the selected mode: full (dispatched) and pale (not yet).
  View.prototype.recolour = function () {
    var v = this.v, b = v.blocks, n = this.n, mode = this.select.value;
    var dur = Math.max(1, v.duration_ns), colour;
    if (mode === 'time') colour = function (i) { return TX.orderRamp(v.steps.t_ns[i] / dur); };
    else if (mode === 'hit') colour = function (i) {
      return b.sectors[i] > 0 ? TX.hitRamp(b.hit_sectors[i] / b.sectors[i]) : '#c9ced8';
    };
    else if (mode === 'sm') colour = function (i) { return TX.smColour(b.sm[i]); };
    else colour = function (i) { return TX.orderRamp(n > 1 ? i / (n - 1) : 0); };
    this.full = new Array(n);
    this.pale = new Array(n);
    for (var i = 0; i < n; ++i) {
      this.full[i] = colour(i);
      this.pale[i] = TX.pale(this.full[i], 0.8);
    }
    this.legend.textContent = '';
    var L = this.legend;
    if (mode === 'order') L.appendChild(TX.gradientLegend(TX.orderRamp, 'first', 'last', 'dispatch order'));
    if (mode === 'time') L.appendChild(TX.gradientLegend(TX.orderRamp, '0', TX.fmtTime(dur), 'dispatch time'));
    if (mode === 'hit') L.appendChild(TX.gradientLegend(TX.hitRamp, '0 %', '100 %', 'block L2 hit rate'));
    if (mode === 'sm') L.appendChild(TX.el('span', {class: 'legend'}, ['a hue per SM (' + v.num_sms + ' SMs)']));
    L.appendChild(TX.swatch(TX.pale('#3a6fb0', 0.8), 'not dispatched yet'));
    L.appendChild(TX.swatch('#ffffff', 'running', 'running'));
    L.appendChild(TX.swatch('#ffffff', 'dispatched at this step', 'current'));
    L.appendChild(TX.residencyLegend());
    if (this.step >= 0) this.setStep(this.step, true);
  };

  /// Tile fills and states at step i: pending, running (dispatched, not finished at the step's
  /// time), or done. O(blocks) compares; only tiles whose look changes touch the DOM.
  View.prototype.paintTiles = function (i) {
    var b = this.v.blocks, t = this.n ? this.v.steps.t_ns[i] : 0;
    for (var j = 0; j < this.n; ++j) {
      var grid = this.panels[this.panelOf[j]].grid, tile = this.tileOf[j];
      if (j <= i) {
        grid.setFill(tile, this.full[j]);
        grid.setState(tile, b.end_ns[j] > t ? 'running' : '');
      } else {
        grid.setFill(tile, this.pale[j]);
        grid.setState(tile, 'pending');
      }
    }
  };

  /// Shows step i (clamped): tiles, path, heatmaps, counters, chart marker, timeline cursor.
  View.prototype.setStep = function (i, quiet) {
    if (!this.n) return;
    i = Math.max(0, Math.min(this.n - 1, i | 0));
    var v = this.v, s = v.steps, b = v.blocks, self = this;
    if (i !== this.step || quiet) {
      this.paintTiles(i);
      this.panels.forEach(function (p, k) {
        p.grid.setPathProgress(self.doneBy[k][i]);
        p.grid.markCurrent(self.panelOf[i] === k ? self.tileOf[i] : -1);
      });
      var snap = TX.lastAtMost(v.residency.snapshot_steps, i);
      var cells = v.residency.cells;
      if (snap >= 0 && (snap + 1) * cells <= this.residency.length) TX.updateHeatmaps(this.panels, this.residency, snap * cells);
      else TX.updateHeatmaps(this.panels, new Uint8Array(cells), 0);
      this.chart.setStep(i);
      this.gantt.draw(i);
    }
    this.step = i;
    this.slider.value = String(i);
    var dram = this.$('cum-dram'), hit = this.$('cum-hit');
    dram.setAttribute('data-read-bytes', String(s.dram_read_bytes[i]));
    dram.setAttribute('data-write-bytes', String(s.dram_write_bytes[i]));
    dram.setAttribute('data-step', String(i));
    dram.innerHTML = '';
    dram.appendChild(TX.el('span', {class: 'k'}, ['DRAM read ']));
    dram.appendChild(TX.el('b', {}, [TX.fmtBytes(s.dram_read_bytes[i])]));
    dram.appendChild(TX.el('span', {class: 'k'}, [' written back ']));
    dram.appendChild(TX.el('b', {}, [TX.fmtBytes(s.dram_write_bytes[i])]));
    var rate = TX.rate(s.hit_sectors[i], s.sectors[i]);
    hit.setAttribute('data-rate', String(rate));
    hit.innerHTML = '';
    hit.appendChild(TX.el('span', {class: 'k'}, ['L2 hit rate ']));
    hit.appendChild(TX.el('b', {}, [TX.fmtPct(rate)]));
    this.$('step-label').textContent = 'step ' + TX.fmtInt(i + 1) + ' of ' + TX.fmtInt(this.n) + ' \u00b7 t = ' + TX.fmtTime(s.t_ns[i]);
    var k = v.kernels[b.kernel[i]];
    this.$('step-block').textContent = 'dispatched: ' + (v.kernels.length > 1 ? k.name + ' ' : '') + 'tile (' + b.tile_m[i] +
      ', ' + b.tile_n[i] + (k.grid_z > 1 ? ', ' + b.tile_z[i] : '') + ') on SM ' + b.sm[i] + ', its own L2 hit rate ' +
      TX.fmtPct(TX.rate(b.hit_sectors[i], b.sectors[i])) + loadHits(v, b.loads ? b.loads[i] : null);
    if (!quiet) this.listeners.forEach(function (fn) { fn(i); });
  };

  View.prototype.onStep = function (fn) { this.listeners.push(fn); };

  View.prototype.togglePlay = function () {
    if (this.playing) { this.stopPlay(); return; }
    var self = this;
    if (this.step >= this.n - 1) this.setStep(0);
    this.playing = true;
    this.playButton.textContent = '\u275a\u275a pause';
    var perFrame = Math.max(1, Math.round(this.n / (PLAY_SECONDS * 60)));
    var last = 0;
    var tick = function (now) {
      if (!self.playing) return;
      // Small grids step at most 8 times a second, so each step can be seen.
      if (perFrame > 1 || now - last >= Math.max(16, Math.min(125, PLAY_SECONDS * 1000 / self.n))) {
        last = now;
        self.setStep(self.step + perFrame);
        if (self.step >= self.n - 1) { self.stopPlay(); return; }
      }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  };
  View.prototype.stopPlay = function () {
    this.playing = false;
    this.playButton.textContent = '\u25b6 play';
  };

  /// " (loads: A 98.5 % hit, B 40.1 % hit)": which operand's loads hit, per tensor.
  function loadHits(v, loads) {
    if (!loads || !loads.length) return '';
    return ' (loads: ' + loads.map(function (l) {
      return v.tensors[l[0]].name + ' ' + TX.fmtPct(TX.rate(l[2], l[1])) + ' hit';
    }).join(', ') + ')';
  }

  TX.View = View;
})();
