// Renders the tilesim report from the sweep summary embedded in <script id="summary">: a header,
// a comparison table per group of points, a pivot of speedups, C3 charts, and a table of every
// point. Runs after D3 and C3 (embedded before it); errors land in #errors (prelude.js).
//
// The numbers of the tables are formatted by `fixed` and `CELLS` below, and by the same rules
// in sim/report/html_cells.cpp; the browser test compares the two cell by cell, so change both
// together (docs/report.md lists the rules).
(function () {
  'use strict';

  var S = JSON.parse(document.getElementById('summary').textContent);
  var DASH = '\u2014';
  // 10^d as literals, not Math.pow: C++ multiplies by the very same doubles.
  var POW10 = [1, 10, 100, 1000, 10000, 100000, 1000000];

  /// x·10^d rounded to the nearest integer, halves toward +∞, printed with d decimals.
  function fixed(x, d) {
    if (typeof x !== 'number' || !isFinite(x) || d < 0 || d > 6) return DASH;
    var scaled = x * POW10[d];
    var n = Math.floor(scaled);
    if (scaled - n >= 0.5) n += 1;
    if (Math.abs(n) >= 9007199254740992) return DASH;
    var neg = n < 0;
    var digits = String(Math.abs(n));
    if (d > 0) {
      while (digits.length <= d) digits = '0' + digits;
      digits = digits.slice(0, digits.length - d) + '.' + digits.slice(digits.length - d);
    }
    return (neg ? '-' : '') + digits;
  }

  function num(obj, key) {
    return obj && typeof obj[key] === 'number' ? obj[key] : NaN;
  }
  function cmpOf(p) {
    return p.comparison && typeof p.comparison === 'object' ? p.comparison : null;
  }
  function kernelSum(p, key) {
    return p.result.kernels.reduce(function (acc, k) { return acc + k[key]; }, 0);
  }
  function total(p) { return p.result.total; }
  // The point's lower bound: the largest of its bounds (chain_io_bound_bytes is absent from
  // results written before it existed, as in html_cells.cpp).
  function boundBytes(b) {
    return Math.max(b.compulsory_bytes, b.io_bound_bytes, typeof b.chain_io_bound_bytes === 'number' ? b.chain_io_bound_bytes : 0);
  }

  /// Table cell texts by field (data-field); html_cells.cpp's report_cell mirrors each line.
  var CELLS = {
    point: function (p) { var c = cmpOf(p); return c && c.compared !== '' ? c.compared : p.label !== '' ? p.label : '#' + p.index; },
    label: function (p) { return p.label; },
    time_us: function (p) { return fixed(total(p).duration_ns / 1000, 2); },
    dram_mb: function (p) { return fixed((total(p).dram_read_bytes + total(p).dram_write_bytes) / 1e6, 1); },
    bound_mb: function (p) {
      var b = total(p).bounds;
      return b && typeof b === 'object' ? fixed(boundBytes(b) / 1e6, 1) : DASH;
    },
    dram_over_bound: function (p) { return fixed(num(total(p), 'dram_over_bound'), 2); },
    l2_hit_pct: function (p) { return fixed(total(p).l2_hit_rate * 100, 1); },
    waves: function (p) { return fixed(kernelSum(p, 'waves'), 0); },
    tail_lost_us: function (p) { return fixed(kernelSum(p, 'tail_lost_ns') / 1000, 2); },
    speedup: function (p) { return fixed(num(cmpOf(p), 'speedup'), 3); },
    dram_ratio: function (p) { return fixed(num(cmpOf(p), 'dram_ratio'), 2); },
    rank: function (p) { return fixed(num(cmpOf(p), 'rank'), 0); },
    note: function (p) { var c = cmpOf(p); return c && c.baseline === p.index ? 'baseline' : ''; }
  };
  var TITLES = {
    point: 'point', label: 'point', time_us: 'time µs', dram_mb: 'DRAM MB', bound_mb: 'bound MB',
    dram_over_bound: 'DRAM/bound', l2_hit_pct: 'L2 hit %', waves: 'waves', tail_lost_us: 'tail lost µs',
    speedup: 'speedup ×', dram_ratio: 'DRAM × baseline', rank: 'rank', note: ''
  };
  var TEXT_FIELDS = { point: true, label: true, note: true };

  // ---- small DOM helpers ----
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function add(parent, tag, attrs, text) {
    return parent.appendChild(el(tag, attrs, text));
  }
  function section(id, title) {
    var s = add(root, 'section', { id: 'sec-' + id });
    add(s, 'h2', {}, title);
    return s;
  }
  function notApplicable(parent, text) {
    add(parent, 'p', { class: 'na' }, text);
  }

  // ---- the sweep's shape ----
  var points = S.points;
  var compareKeys = S.compare ? S.compare.keys : [];
  var varying = S.axes.filter(function (a) { return a.labels.length > 1; });
  function axisValue(p, axis) {
    return axis.keys.map(function (k) { return p.axes[k]; }).join(',');
  }
  function isCompared(axis) {
    return axis.keys.some(function (k) { return compareKeys.indexOf(k) >= 0; });
  }
  /// A point's short name for chart axes: the values of the axes that vary ("2048 · 8192,1024").
  function shortLabel(p, withoutCompared) {
    var parts = varying.filter(function (a) { return !(withoutCompared && isCompared(a)); })
      .map(function (a) { return axisValue(p, a); });
    return parts.length ? parts.join(' · ') : (withoutCompared ? 'all points' : p.label || '#' + p.index);
  }
  function shortLegend(withoutCompared) {
    return varying.filter(function (a) { return !(withoutCompared && isCompared(a)); })
      .map(function (a) { return a.keys.join(','); }).join(' · ');
  }
  /// The compared values in the order they first appear (sweep order = the axis's order).
  var comparedValues = [];
  points.forEach(function (p) {
    var c = cmpOf(p);
    // '' = the sweep compares nothing (no compared axis): no pivot column, no chart series.
    if (c && c.compared !== '' && comparedValues.indexOf(c.compared) < 0) comparedValues.push(c.compared);
  });
  /// group label -> compared value -> point
  var byGroup = {};
  points.forEach(function (p) {
    var c = cmpOf(p);
    if (!c) return;
    (byGroup[c.group] = byGroup[c.group] || {})[c.compared] = p;
  });

  // ---- charts ----
  var chartCount = 0;
  function chart(parent, id, title, config, caption) {
    var box = add(parent, 'div', { class: 'chart-box' });
    if (title) add(box, 'h3', {}, title);
    if (caption) add(box, 'p', { class: 'caption' }, caption);
    var div = add(box, 'div', { id: id, class: 'chart' });
    config.bindto = div;
    config.transition = { duration: 0 };  // draw at once: screenshots and DOM dumps see the final chart
    // Rotated tick labels take their height from the plot's: give it back.
    var x = config.axis && config.axis.x;
    if (x && x.height) {
      config.size = { height: 320 + x.height };
      config.padding = { right: 60 };  // the last rotated label runs past the plot's right edge
    }
    chartCount += 1;
    return c3.generate(config);
  }
  /// A category x axis; many categories get rotated ticks (with room for them) and no axis
  /// label, which the ticks would cover: the caption under the chart's title names the axis.
  function categoryAxis(categories, label, many) {
    if (!many) return { type: 'category', categories: categories, label: { text: label, position: 'outer-center' }, tick: { multiline: true } };
    var longest = categories.reduce(function (m, c) { return Math.max(m, String(c).length); }, 0);
    // Past ~40 categories the labels overlap: show every k-th (the tooltip names each bar).
    return { type: 'category', categories: categories,
             tick: { rotate: 50, multiline: false, culling: categories.length > 40 ? { max: 40 } : false },
             height: Math.min(240, 20 + 4.8 * longest) };
  }
  function orNull(x) { return typeof x === 'number' && isFinite(x) ? x : null; }

  // ---- rendering ----
  var root = document.getElementById('report');

  function renderHeader() {
    add(root, 'h1', {}, 'tilesim report: ' + S.experiment);
    var dl = add(root, 'dl', { class: 'meta' });
    function row(k, v) { add(dl, 'dt', {}, k); add(dl, 'dd', {}, v); }
    row('experiment', S.experiment);
    if (S.file) row('file', S.file);
    row('tilesim version', S.tilesim_version);
    row('points', String(points.length));
    row('groups', String(S.groups.length));
    S.axes.forEach(function (a) { row('axis ' + a.keys.join(','), a.labels.join(' | ')); });
    row('compared', S.compare ? S.compare.keys.join(',') + (S.compare.baseline !== null ?
      ' against ' + S.compare.baseline : ' (no baseline)') : 'nothing');
    var nav = add(root, 'nav');
    [['groups', 'tables per group'], ['pivot', 'speedup pivot'], ['charts', 'charts'], ['points', 'all points']]
      .forEach(function (l) { add(nav, 'a', { href: '#sec-' + l[0] }, l[1]); });
  }

  function pointRow(tbody, p, fields, cls) {
    var tr = add(tbody, 'tr', { 'data-point': String(p.index) });
    if (CELLS.note(p) === 'baseline') { tr.setAttribute('data-baseline', '1'); cls.push('baseline'); }
    if (cls.length) tr.className = cls.join(' ');
    fields.forEach(function (f) {
      add(tr, 'td', { 'data-point': String(p.index), 'data-field': f, class: TEXT_FIELDS[f] ? f : 'num' }, CELLS[f](p));
    });
  }
  /// A table of points, one row each; `ranked`: the list is fastest first, mark the first row.
  function pointTable(parent, id, fields, list, ranked, extraAttrs) {
    var wrap = add(parent, 'div', { class: 'table-scroll' });
    var attrs = extraAttrs || {};
    attrs.id = id;
    attrs.class = 'points';
    var t = add(wrap, 'table', attrs);
    var hr = add(add(t, 'thead'), 'tr');
    fields.forEach(function (f) { add(hr, 'th', {}, TITLES[f]); });
    var tbody = add(t, 'tbody');
    list.forEach(function (p, i) { pointRow(tbody, p, fields, ranked && i === 0 && list.length > 1 ? ['best'] : []); });
    return t;
  }

  function renderGroups() {
    var s = section('groups', 'Comparison per group');
    if (!S.groups.length) {
      notApplicable(s, 'This sweep compares nothing: there is no compared axis (see all points below).');
      return;
    }
    add(s, 'p', { class: 'hint' }, 'Each table holds the points that differ only in ' + compareKeys.join(',') +
      ', fastest first; speedup = baseline time / this time; rank 1 = fastest.');
    var fields = ['point', 'time_us', 'dram_mb', 'dram_over_bound', 'dram_ratio', 'l2_hit_pct', 'speedup', 'rank', 'note'];
    S.groups.forEach(function (g, gi) {
      add(s, 'h3', {}, g.label || '(all points)');
      pointTable(s, 'group-' + gi, fields, g.points.map(function (i) { return points[i]; }), true,
                 { 'data-group': String(gi) });
    });
  }

  function renderPivot() {
    var s = section('pivot', 'Speedup over the baseline');
    if (!S.groups.length || !comparedValues.length) {
      notApplicable(s, 'Not applicable: this sweep has no compared axis.');
      return;
    }
    add(s, 'p', { class: 'hint' }, 'Rows: groups; columns: ' + compareKeys.join(',') +
      '; cells: baseline time / this time (' + DASH + ': the group has no such point or no baseline).');
    var wrap = add(s, 'div', { class: 'table-scroll' });
    var t = add(wrap, 'table', { id: 'pivot', class: 'pivot' });
    var hr = add(add(t, 'thead'), 'tr');
    add(hr, 'th', {}, 'group');
    comparedValues.forEach(function (v) { add(hr, 'th', {}, v); });
    var tbody = add(t, 'tbody');
    S.groups.forEach(function (g) {
      var tr = add(tbody, 'tr');
      add(tr, 'th', {}, g.label || '(all points)');
      comparedValues.forEach(function (v) {
        var p = (byGroup[g.label] || {})[v];
        if (!p) { add(tr, 'td', { class: 'num' }, ''); return; }
        var td = add(tr, 'td', { 'data-point': String(p.index), 'data-field': 'speedup', class: 'num' }, CELLS.speedup(p));
        if (CELLS.note(p) === 'baseline') td.className += ' baseline';
      });
    });
  }

  function renderSpeedupChart(s) {
    if (!S.groups.length || !comparedValues.length) {
      notApplicable(s, 'Speedup per ' + (compareKeys.join(',') || 'policy') + ': not applicable, nothing is compared.');
      return;
    }
    var columns = comparedValues.map(function (v) {
      return [v].concat(S.groups.map(function (g) {
        var p = (byGroup[g.label] || {})[v];
        return p ? orNull(num(cmpOf(p), 'speedup')) : null;
      }));
    });
    var cats = S.groups.map(function (g) {
      var first = points[g.points[0]];
      return first ? shortLabel(first, true) : g.label;
    });
    // Speedups cluster around 1: start the axis just below the smallest, so differences show.
    var all = [].concat.apply([], columns.map(function (c) { return c.slice(1); }))
      .filter(function (v) { return v !== null; });
    var low = all.length ? Math.min.apply(null, all.concat([1])) : 0;
    var yMin = low >= 0.5 ? Math.max(0, Math.floor(low * 20) / 20 - 0.05) : 0;
    chart(s, 'chart-speedup', 'Speedup over the baseline per ' + compareKeys.join(',') + ' and group', {
      data: { columns: columns, type: 'bar' },
      axis: { x: categoryAxis(cats, shortLegend(true), cats.length > 8),
              y: { min: yMin, padding: { bottom: 0 }, label: { text: 'speedup ×', position: 'outer-middle' } } },
      grid: { y: { lines: [{ value: 1, text: 'baseline' }] } },
      tooltip: { format: { value: function (v) { return fixed(v, 3) + '×'; } } }
    }, 'x: ' + shortLegend(true) + '; bars: baseline time / this time, so taller is faster' +
       (yMin > 0 ? '; the axis starts at ' + fixed(yMin, 2) + '.' : '.'));
  }

  function renderDramChart(s) {
    var cats = points.map(function (p) { return shortLabel(p, false); });
    var dram = ['DRAM MB'].concat(points.map(function (p) {
      return (total(p).dram_read_bytes + total(p).dram_write_bytes) / 1e6;
    }));
    var columns = [dram];
    var types = { 'DRAM MB': 'bar' };
    var haveBounds = points.some(function (p) { return total(p).bounds && typeof total(p).bounds === 'object'; });
    if (haveBounds) {
      columns.push(['lower bound MB'].concat(points.map(function (p) {
        var b = total(p).bounds;
        return b && typeof b === 'object' ? boundBytes(b) / 1e6 : null;
      })));
      types['lower bound MB'] = 'step';
    }
    chart(s, 'chart-dram', 'DRAM traffic per point against its lower bound (max of compulsory and I/O bound)', {
      data: { columns: columns, types: types },
      axis: { x: categoryAxis(cats, shortLegend(false), cats.length > 8), y: { label: { text: 'MB', position: 'outer-middle' } } },
      line: { step: { type: 'step' } },
      tooltip: { format: { value: function (v) { return fixed(v, 1) + ' MB'; } } }
    }, 'x: ' + shortLegend(false) + '; bars: simulated DRAM reads + writes; steps: the lower bound.');
    if (!haveBounds) add(s, 'p', { class: 'na' }, 'The results carry no traffic bounds, so no bound series is drawn.');
  }

  function renderHitRateCharts(s) {
    function mOf(p) {
      var w = p.config && p.config.workload;
      return w && typeof w.m === 'number' ? w.m : null;
    }
    var ms = [];
    points.forEach(function (p) { var m = mOf(p); if (m !== null && ms.indexOf(m) < 0) ms.push(m); });
    if (ms.length < 2) {
      notApplicable(s, 'L2 hit rate versus M: not applicable, workload.m ' +
        (ms.length ? 'is ' + ms[0] + ' at every point.' : 'is not set at any point.'));
      return;
    }
    ms.sort(function (a, b) { return a - b; });
    // One chart per slice: the points that agree on every axis but M's and the compared one.
    var sliceAxes = S.axes.filter(function (a) { return a.keys.indexOf('workload.m') < 0 && !isCompared(a) && a.labels.length > 1; });
    var slices = {}, order = [];
    points.forEach(function (p) {
      var key = sliceAxes.map(function (a) { return a.keys.join(',') + '=' + axisValue(p, a); }).join(' ');
      if (!slices[key]) { slices[key] = []; order.push(key); }
      slices[key].push(p);
    });
    order.forEach(function (key, si) {
      var series = [], values = {};
      slices[key].forEach(function (p) {
        var c = cmpOf(p), name = c && c.compared !== '' ? c.compared : 'L2 hit %', m = mOf(p);
        if (m === null) return;
        if (!values[name]) { values[name] = {}; series.push(name); }
        if (!(m in values[name])) values[name][m] = total(p).l2_hit_rate * 100;
      });
      var columns = [['M'].concat(ms.map(String))].concat(series.map(function (name) {
        return [name].concat(ms.map(function (m) { return m in values[name] ? values[name][m] : null; }));
      }));
      chart(s, 'chart-hitrate-' + si, 'L2 hit rate versus M' + (key ? ': ' + key : ''), {
        data: { x: 'M', columns: columns, type: 'line' },
        line: { connectNull: true },
        axis: { x: { type: 'category', label: { text: 'workload.m', position: 'outer-center' } },
                y: { label: { text: 'L2 hit %', position: 'outer-middle' } } },
        tooltip: { format: { value: function (v) { return fixed(v, 1) + '%'; } } }
      });
    });
  }

  /// (point, kernel) pairs: kernels are named only when some point has more than one.
  function kernelEntries() {
    var named = points.some(function (p) { return p.result.kernels.length > 1; });
    var out = [];
    points.forEach(function (p) {
      p.result.kernels.forEach(function (k, ki) {
        out.push({ p: p, k: k, ki: ki, label: shortLabel(p, false) + (named ? ' / ' + k.name : '') });
      });
    });
    return out;
  }

  function renderWaveCharts(s) {
    var entries = kernelEntries();
    if (!entries.length) { notApplicable(s, 'Waves: no point ran a kernel.'); return; }
    var cats = entries.map(function (e) { return e.label; });
    var many = cats.length > 8;
    chart(s, 'chart-waves', 'Waves and last-wave utilization per point', {
      data: {
        columns: [['waves'].concat(entries.map(function (e) { return e.k.waves; })),
                  ['last-wave utilization %'].concat(entries.map(function (e) { return e.k.last_wave_utilization * 100; }))],
        types: { waves: 'bar', 'last-wave utilization %': 'line' },
        axes: { waves: 'y', 'last-wave utilization %': 'y2' }
      },
      axis: { x: categoryAxis(cats, shortLegend(false), many), y: { label: { text: 'waves', position: 'outer-middle' } },
              y2: { show: true, min: 0, max: 100, padding: { top: 0, bottom: 0 }, label: { text: '%', position: 'outer-middle' } } },
      tooltip: { format: { value: function (v, r, id) { return id === 'waves' ? String(v) : fixed(v, 1) + '%'; } } }
    }, 'x: ' + shortLegend(false) + '; bars: waves of thread blocks (left axis); line: share of SM slots the last wave fills (right axis).');
    chart(s, 'chart-tail', 'Time lost in the tail (the last wave leaving SM slots idle) per point', {
      data: { columns: [['tail lost µs'].concat(entries.map(function (e) { return e.k.tail_lost_ns / 1000; })),
                        ['kernel time µs'].concat(entries.map(function (e) { return e.k.duration_ns / 1000; }))],
              type: 'bar', hide: ['kernel time µs'] },
      axis: { x: categoryAxis(cats, shortLegend(false), many), y: { label: { text: 'µs', position: 'outer-middle' } } },
      tooltip: { format: { value: function (v) { return fixed(v, 2) + ' µs'; } } }
    }, 'x: ' + shortLegend(false) + '; click "kernel time µs" in the legend to show it next to the tail.');

    // Per-wave detail of one (point, kernel), chosen in a <select>.
    var box = add(s, 'div', { class: 'chart-box' });
    add(box, 'h3', {}, 'Waves of one point: duration and blocks per wave');
    var label = add(box, 'label', {}, 'point ');
    var select = add(label, 'select', { id: 'wave-point' });
    entries.forEach(function (e, i) {
      add(select, 'option', { value: String(i) }, '#' + e.p.index + ' ' + e.p.label + (e.p.result.kernels.length > 1 ? ' / ' + e.k.name : ''));
    });
    var holder = add(box, 'div', { id: 'chart-wave-detail', class: 'chart' });
    chartCount += 1;
    var current = null;
    function draw() {
      var e = entries[Number(select.value)];
      var w = e.k.waves_detail;
      if (current) current.destroy();
      current = c3.generate({
        bindto: holder, transition: { duration: 0 },
        data: {
          x: 'wave',
          columns: [['wave'].concat(w.map(function (d) { return String(d.index); })),
                    ['wave time µs'].concat(w.map(function (d) { return (d.end_ns - d.start_ns) / 1000; })),
                    ['blocks'].concat(w.map(function (d) { return d.blocks; }))],
          types: { 'wave time µs': 'bar', blocks: 'line' },
          axes: { 'wave time µs': 'y', blocks: 'y2' }
        },
        axis: { x: { type: 'category', label: { text: 'wave', position: 'outer-center' } },
                y: { label: { text: 'µs', position: 'outer-middle' } },
                y2: { show: true, min: 0, padding: { bottom: 0 }, label: { text: 'blocks', position: 'outer-middle' } } },
        tooltip: { format: { value: function (v, r, id) { return id === 'blocks' ? String(v) : fixed(v, 2) + ' µs'; } } }
      });
    }
    // Start on the (first) point with the most waves: the one where waves matter most.
    var most = 0;
    entries.forEach(function (e, i) { if (e.k.waves_detail.length > entries[most].k.waves_detail.length) most = i; });
    select.value = String(most);
    select.addEventListener('change', draw);
    draw();
  }

  function renderCharts() {
    var s = section('charts', 'Charts');
    renderSpeedupChart(s);
    renderDramChart(s);
    renderHitRateCharts(s);
    renderWaveCharts(s);
  }

  function renderPoints() {
    var s = section('points', 'All points');
    pointTable(s, 'all-points', ['label', 'time_us', 'dram_mb', 'bound_mb', 'dram_over_bound', 'l2_hit_pct', 'waves',
                                 'tail_lost_us', 'speedup', 'note'], points, false);
  }

  try {
    renderHeader();
    renderGroups();
    renderPivot();
    renderCharts();
    renderPoints();
    document.body.dataset.charts = String(chartCount);
    document.body.dataset.ready = '1';
  } catch (e) {
    window.tilesimRecordError('error while rendering the report: ' + (e && e.stack ? e.stack : e));
    document.body.dataset.ready = 'failed';
  }
})();
