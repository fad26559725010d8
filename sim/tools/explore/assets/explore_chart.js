// The step chart (D3): cumulative DRAM bytes read and written back, and the cumulative L2 hit
// rate, with a marker at the current step. Two x axes: the dispatch step (exact: point i is
// step i's counters), or simulated time, where step i's counters are plotted at the time they
// were read, just before the next dispatch (the end of the run for the last step): with one
// wave every dispatch happens at t = 0 and a time axis alone would show nothing of the steps.
// Clicking the chart moves the step.
(function () {
  'use strict';
  var TX = window.TilesimExplore;
  var MAX_POINTS = 1500;  // a path of more points than pixels only costs time

  /// opts: {width, height, steps (columnar, docs/explore.md), duration_ns, x: 'step' | 'time',
  /// onPick(stepIndex)}.
  function StepChart(opts) {
    var s = opts.steps, n = s.t_ns.length, byTime = opts.x === 'time';
    var margin = {top: 14, right: 54, bottom: 34, left: 60};
    var w = opts.width - margin.left - margin.right, h = opts.height - margin.top - margin.bottom;
    this.steps = s;
    var end = Math.max(1, opts.duration_ns, n ? s.t_ns[n - 1] : 0);
    // Where step i sits on the x axis, in µs or in steps.
    var at = this.at = byTime ? function (i) { return (i + 1 < n ? s.t_ns[i + 1] : end) / 1000; }
                              : function (i) { return i + 1; };
    var stride = Math.max(1, Math.ceil(n / MAX_POINTS));
    var idx = [];
    for (var i = 0; i < n; i += stride) idx.push(i);
    if (n && idx[idx.length - 1] !== n - 1) idx.push(n - 1);

    var bMax = n ? Math.max(1, s.dram_read_bytes[n - 1], s.dram_write_bytes[n - 1]) : 1;
    var x = this.x = d3.scale.linear().domain([0, byTime ? end / 1000 : Math.max(1, n)]).range([0, w]);
    var yb = this.yb = d3.scale.linear().domain([0, bMax / 1e6]).range([h, 0]).nice();
    var yr = this.yr = d3.scale.linear().domain([0, 100]).range([h, 0]);
    var rate = this.rate = function (i) { return 100 * TX.rate(s.hit_sectors[i], s.sectors[i]); };

    var svg = d3.select(TX.svg('svg', {class: 'step-chart', width: opts.width, height: opts.height}));
    this.node = svg.node();
    var g = svg.append('g').attr('transform', 'translate(' + margin.left + ',' + margin.top + ')');
    var xAxis = d3.svg.axis().scale(x).orient('bottom').ticks(Math.max(2, Math.floor(w / 80)));
    if (!byTime) xAxis.tickFormat(d3.format('d'));
    g.append('g').attr('class', 'axis').attr('transform', 'translate(0,' + h + ')').call(xAxis);
    g.append('g').attr('class', 'axis').call(d3.svg.axis().scale(yb).orient('left').ticks(5));
    g.append('g').attr('class', 'axis axis-rate').attr('transform', 'translate(' + w + ',0)')
      .call(d3.svg.axis().scale(yr).orient('right').ticks(5).tickFormat(function (v) { return v + '%'; }));
    g.append('text').attr('class', 'axis-label').attr('x', w / 2).attr('y', h + 30).attr('text-anchor', 'middle')
      .text(byTime ? 'simulated time (\u00b5s)' : 'dispatch step');
    g.append('text').attr('class', 'axis-label').attr('transform', 'rotate(-90)').attr('x', -h / 2).attr('y', -46)
      .attr('text-anchor', 'middle').text('cumulative DRAM (MB)');
    g.append('text').attr('class', 'axis-label axis-rate').attr('transform', 'rotate(90)').attr('x', h / 2)
      .attr('y', -w - 44).attr('text-anchor', 'middle').text('L2 hit rate');

    // Every line starts from nothing at 0.
    var line = function (f, y, from0) {
      var pts = idx.map(function (i) { return [x(at(i)), y(f(i))]; });
      if (from0) pts.unshift([x(0), y(0)]);
      return d3.svg.line()(pts);
    };
    g.append('path').attr('class', 'line-read').attr('d', line(function (i) { return s.dram_read_bytes[i] / 1e6; }, yb, true));
    g.append('path').attr('class', 'line-write').attr('d', line(function (i) { return s.dram_write_bytes[i] / 1e6; }, yb, true));
    g.append('path').attr('class', 'line-rate').attr('d', line(rate, yr, false));

    this.cursor = g.append('line').attr('class', 'cursor').attr('y1', 0).attr('y2', h);
    this.dotRead = g.append('circle').attr('class', 'dot-read').attr('r', 3.5);
    this.dotWrite = g.append('circle').attr('class', 'dot-write').attr('r', 3);
    this.dotRate = g.append('circle').attr('class', 'dot-rate').attr('r', 3.5);

    // Clicks anywhere on the plot area pick the last step at or before that x.
    var self = this;
    g.insert('rect', ':first-child').attr('class', 'hit-area').attr('width', w).attr('height', h)
      .on('click', function () {
        var v = x.invert(d3.mouse(this)[0]), lo = 0, hi = n - 1;
        while (lo < hi) {
          var mid = (lo + hi + 1) >> 1;
          if (at(mid) <= v) lo = mid; else hi = mid - 1;
        }
        if (opts.onPick) opts.onPick(lo);
      });
  }

  StepChart.prototype.setStep = function (i) {
    var s = this.steps;
    if (i < 0 || i >= s.t_ns.length) return;
    var cx = this.x(this.at(i));
    this.cursor.attr('x1', cx).attr('x2', cx);
    this.dotRead.attr('cx', cx).attr('cy', this.yb(s.dram_read_bytes[i] / 1e6));
    this.dotWrite.attr('cx', cx).attr('cy', this.yb(s.dram_write_bytes[i] / 1e6));
    this.dotRate.attr('cx', cx).attr('cy', this.yr(this.rate(i)));
  };

  TX.StepChart = StepChart;

  TX.chartLegend = function () {
    return TX.el('div', {class: 'legend-row'}, [
      TX.swatch('#1f5fa8', 'DRAM read', 'line'), TX.swatch('#8e44ad', 'DRAM written back', 'line'),
      TX.swatch('#d97a1a', 'L2 hit rate (right axis)', 'line')]);
  };
})();
