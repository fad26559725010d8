// The per-SM timeline (Gantt) on a canvas: one row per SM (split into lanes when an SM runs
// several blocks at once), each block a bar coloured by kernel, its waiting time (wait_ns,
// drawn at the block's start) hatched, wave starts as dashed lines, the tail (no block left
// to dispatch) shaded, and a cursor at the current step's time. 132 SMs x thousands of blocks
// redraw in a millisecond or two, so every step redraws the whole canvas.
(function () {
  'use strict';
  var TX = window.TilesimExplore;

  /// opts: {width, view (docs/explore.md), onPick(stepIndex)}.
  function Gantt(opts) {
    var v = this.view = opts.view, b = v.blocks, n = b.sm.length;
    // Rows: the SMs that ran a block (all of them but for small grids, where empty rows
    // would only push the blocks apart).
    var used = [], seen = {};
    for (var u = 0; u < n; ++u) if (!seen[b.sm[u]]) { seen[b.sm[u]] = true; used.push(b.sm[u]); }
    used.sort(function (p, q) { return p - q; });
    var sms = Math.max(1, used.length);
    this.smOfRow = used;
    this.rowOf = {};
    used.forEach(function (sm, r) { this.rowOf[sm] = r; }, this);
    this.note = used.length < v.num_sms ? 'only the ' + used.length + ' of ' + v.num_sms + ' SMs that ran a block' : '';
    this.left = 46;
    this.top = 18;
    this.bottom = 26;
    this.plotW = opts.width - this.left - 10;
    // Lanes: blocks that overlap in time on one SM go to different lanes (first free lane).
    var laneEnd = [], lane = new Int32Array(n), lanes = 1;
    this.perSm = [];
    var order = [];
    for (var i = 0; i < n; ++i) order.push(i);
    order.sort(function (p, q) { return b.start_ns[p] - b.start_ns[q] || p - q; });
    order.forEach(function (i) {
      var ends = laneEnd[b.sm[i]] || (laneEnd[b.sm[i]] = []), l = 0;
      while (l < ends.length && ends[l] > b.start_ns[i]) ++l;
      ends[l] = b.end_ns[i];
      lane[i] = l;
      lanes = Math.max(lanes, l + 1);
      (this.perSm[b.sm[i]] || (this.perSm[b.sm[i]] = [])).push(i);
    }, this);
    this.lane = lane;
    this.lanes = lanes;
    this.rows = sms;
    this.rowH = Math.max(2, Math.min(16, Math.floor(520 / sms)));
    this.laneH = this.rowH / lanes;
    this.plotH = this.rowH * sms;
    this.height = this.top + this.plotH + this.bottom;
    this.tMax = Math.max(1, v.duration_ns);
    this.x = d3.scale.linear().domain([0, this.tMax]).range([this.left, this.left + this.plotW]);
    var pair = TX.canvas(opts.width, this.height, 'gantt');
    this.node = pair[0];
    this.ctx = pair[1];
    this.width = opts.width;
    this.marks = this.kernelMarks();
    this.hatch = this.makeHatch();

    var self = this;
    this.node.addEventListener('click', function (event) {
      var t = self.timeAt(event);
      if (t !== null && opts.onPick) opts.onPick(Math.max(0, TX.lastAtMost(v.steps.t_ns, t)));
    });
    this.node.addEventListener('mousemove', function (event) { self.hover(event); });
    this.node.addEventListener('mouseleave', TX.hideTip);
  }

  /// Per kernel: the start of each wave after the first, and the tail: from the moment the
  /// first of its SMs runs out of blocks for good to the kernel's end (SMs idle while others
  /// still work).
  Gantt.prototype.kernelMarks = function () {
    var v = this.view, b = v.blocks, out = [];
    v.kernels.forEach(function (k, ki) {
      var starts = [], lastEnd = {};
      for (var i = 0; i < b.kernel.length; ++i) {
        if (b.kernel[i] !== ki) continue;
        starts[b.position[i]] = b.start_ns[i];
        lastEnd[b.sm[i]] = Math.max(lastEnd[b.sm[i]] || 0, b.end_ns[i]);
      }
      var cap = Math.max(1, v.num_sms * k.blocks_per_sm), waves = [];
      for (var p = cap, w = 2; p < starts.length; p += cap, ++w)
        if (starts[p] !== undefined) waves.push({t: starts[p], label: 'wave ' + w});
      var idle = Math.min.apply(null, Object.keys(lastEnd).map(function (sm) { return lastEnd[sm]; }));
      var tail = isFinite(idle) && k.end_ns - idle > 0.005 * Math.max(1, v.duration_ns) ? [idle, k.end_ns] : null;
      out.push({waves: waves, tail: tail});
    });
    return out;
  };

  Gantt.prototype.makeHatch = function () {
    var c = document.createElement('canvas');
    c.width = c.height = 6;
    var x = c.getContext('2d');
    x.fillStyle = 'rgba(255,255,255,0.55)';
    x.fillRect(0, 0, 6, 6);
    x.strokeStyle = 'rgba(40,40,40,0.55)';
    x.lineWidth = 1.2;
    x.beginPath();
    x.moveTo(0, 6); x.lineTo(6, 0);
    x.stroke();
    return this.ctx.createPattern(c, 'repeat');
  };

  Gantt.prototype.timeAt = function (event) {
    var box = this.node.getBoundingClientRect(), px = event.clientX - box.left;
    if (px < this.left || px > this.left + this.plotW) return null;
    return this.x.invert(px);
  };

  /// Redraws for step `step` (its dispatch time is the cursor; later blocks are faded).
  Gantt.prototype.draw = function (step) {
    var ctx = this.ctx, v = this.view, b = v.blocks, x = this.x, top = this.top, self = this;
    var tNow = step >= 0 && step < v.steps.t_ns.length ? v.steps.t_ns[step] : 0;
    ctx.clearRect(0, 0, this.width, this.height);
    ctx.fillStyle = '#f7f8fb';
    ctx.fillRect(this.left, top, this.plotW, this.plotH);
    // Tails, shaded behind the blocks.
    this.marks.forEach(function (m) {
      if (!m.tail || m.tail[1] <= m.tail[0]) return;
      ctx.fillStyle = 'rgba(214, 69, 65, 0.10)';
      ctx.fillRect(x(m.tail[0]), top, x(m.tail[1]) - x(m.tail[0]), self.plotH);
      ctx.fillStyle = '#b03a36';
      ctx.font = '11px system-ui, sans-serif';
      ctx.textAlign = 'left';
      ctx.fillText('tail', x(m.tail[0]) + 3, top - 5);
    });
    // Blocks: dispatched ones in their kernel's colour, the rest faded.
    var kc = v.kernels.map(function (k, i) { return [TX.kernelColour(i), TX.pale(TX.kernelColour(i), 0.78)]; });
    var lh = this.laneH, gap = lh >= 3 ? 0.5 : 0;
    for (var i = 0; i < b.sm.length; ++i) {
      var x0 = x(b.start_ns[i]), x1 = x(b.end_ns[i]), y = top + this.rowOf[b.sm[i]] * this.rowH + this.lane[i] * lh;
      var w = Math.max(0.8, x1 - x0 - 0.5);
      ctx.fillStyle = kc[b.kernel[i]][i <= step ? 0 : 1];
      ctx.fillRect(x0, y + gap, w, lh - 2 * gap);
      if (b.wait_ns[i] > 0) {
        ctx.fillStyle = this.hatch;
        ctx.fillRect(x0, y + gap, Math.min(w, x(b.start_ns[i] + b.wait_ns[i]) - x0), lh - 2 * gap);
      }
    }
    // Wave starts, over the blocks.
    ctx.setLineDash([4, 3]);
    ctx.strokeStyle = 'rgba(30,35,48,0.55)';
    ctx.fillStyle = '#39404f';
    ctx.font = '11px system-ui, sans-serif';
    ctx.textAlign = 'center';
    // Lines only where waves are far enough apart to tell, labels where they fit.
    this.marks.forEach(function (m) {
      var lastLine = -1e9, lastLabel = -1e9;
      m.waves.forEach(function (wv) {
        var px = Math.round(x(wv.t)) + 0.5;
        if (px - lastLine < 4) return;
        lastLine = px;
        ctx.beginPath(); ctx.moveTo(px, top); ctx.lineTo(px, top + self.plotH); ctx.stroke();
        if (px - lastLabel < 48) return;
        lastLabel = px;
        ctx.fillText(wv.label, px, top - 5);
      });
    });
    ctx.setLineDash([]);
    // The block dispatched at this step, and the cursor.
    if (step >= 0 && step < b.sm.length) {
      var cy = top + this.rowOf[b.sm[step]] * this.rowH + this.lane[step] * lh;
      ctx.strokeStyle = '#e4572e';
      ctx.lineWidth = 2;
      ctx.strokeRect(x(b.start_ns[step]) - 1, cy - 1, Math.max(2, x(b.end_ns[step]) - x(b.start_ns[step])) + 2, lh + 2);
    }
    var cx = Math.round(x(tNow)) + 0.5;
    ctx.strokeStyle = '#e4572e';
    ctx.lineWidth = 1.5;
    ctx.beginPath(); ctx.moveTo(cx, top - 2); ctx.lineTo(cx, top + this.plotH + 2); ctx.stroke();
    ctx.lineWidth = 1;
    this.drawAxes();
  };

  Gantt.prototype.drawAxes = function () {
    var ctx = this.ctx, x = this.x, yb = this.top + this.plotH, rows = this.rows;
    ctx.fillStyle = '#5b6473';
    ctx.strokeStyle = '#9aa3b2';
    ctx.font = '11px system-ui, sans-serif';
    ctx.textAlign = 'center';
    x.ticks(Math.max(2, Math.floor(this.plotW / 90))).forEach(function (t) {
      var px = Math.round(x(t)) + 0.5;
      ctx.beginPath(); ctx.moveTo(px, yb); ctx.lineTo(px, yb + 4); ctx.stroke();
      ctx.fillText(TX.fmtTime(t), px, yb + 15);
    });
    ctx.textAlign = 'right';
    var every = Math.max(1, Math.ceil(12 / this.rowH));
    every = [1, 2, 4, 8, 16, 32, 64].filter(function (e) { return e >= every; })[0] || every;
    for (var r = 0; r < rows; r += every)
      ctx.fillText('SM ' + this.smOfRow[r], this.left - 4, this.top + r * this.rowH + Math.min(this.rowH, 10));
    ctx.strokeRect(this.left + 0.5, this.top + 0.5, this.plotW - 1, this.plotH - 1);
  };

  Gantt.prototype.hover = function (event) {
    var t = this.timeAt(event), box = this.node.getBoundingClientRect(), v = this.view, b = v.blocks;
    var py = event.clientY - box.top - this.top, row = Math.floor(py / this.rowH), sm = this.smOfRow[row];
    if (t === null || row < 0 || row >= this.rows || !this.perSm[sm]) { TX.hideTip(); return; }
    var lane = Math.floor((py - row * this.rowH) / this.laneH), hit = -1;
    this.perSm[sm].forEach(function (i) {
      if (b.start_ns[i] <= t && t < b.end_ns[i] && (this.lanes === 1 || this.lane[i] === lane)) hit = i;
    }, this);
    if (hit < 0) { TX.showTip(event, ['SM ' + sm, TX.fmtTime(t)]); return; }
    TX.showTip(event, TX.blockLines(v, hit));
  };

  TX.Gantt = Gantt;

  /// Tooltip lines describing block i of view v (shared with the tile grids).
  TX.blockLines = function (v, i) {
    var b = v.blocks, k = v.kernels[b.kernel[i]];
    var tile = '(' + b.tile_m[i] + ', ' + b.tile_n[i] + (k.grid_z > 1 ? ', ' + b.tile_z[i] : '') + ')';
    var lines = [k.name + ' tile ' + tile + ' \u00b7 step ' + (i + 1),
                 'SM ' + b.sm[i] + ', ' + TX.fmtTime(b.start_ns[i]) + ' \u2192 ' + TX.fmtTime(b.end_ns[i])];
    if (b.wait_ns[i] > 0) lines.push('waited ' + TX.fmtTime(b.wait_ns[i]));
    lines.push('L2 hit ' + TX.fmtPct(TX.rate(b.hit_sectors[i], b.sectors[i])) + ', DRAM read ' +
               TX.fmtBytes(b.dram_read_bytes[i]));
    return lines;
  };

  TX.ganttLegend = function (v) {
    var items = v.kernels.map(function (k, i) { return TX.swatch(TX.kernelColour(i), k.name); });
    items.push(TX.swatch('repeating-linear-gradient(135deg, #bbb 0 2px, #fff 2px 4px)', 'waiting'));
    items.push(TX.swatch('rgba(214, 69, 65, 0.25)', 'tail: some SMs idle, no block left for them'));
    items.push(TX.swatch('#e4572e', 'current step', 'line'));
    return TX.el('div', {class: 'legend-row'}, items);
  };
})();
