// Which tile grids a view draws, and which tensors sit beside each (explore_panel.js draws
// them). A kernel's grid is normally its launch grid (grid_m x grid_n x grid_z). A fused
// dataflow kernel launches a flat grid of tickets whose blocks compute tiles of several
// GEMMs, told apart by tile_z (an FFN's GEMM0 tiles at z = 0, GEMM1's at z = 1): its blocks
// do not fit the launch grid, so each z gets its own grid, sized by the tiles its blocks
// compute, with the tensor it writes.
(function () {
  'use strict';
  var TX = window.TilesimExplore;

  function hasCells(t) { return t && t.cell_first >= 0 && t.grid_rows > 0 && t.grid_cols > 0; }

  /// [{kernel, sub (tile_z of a fused kernel's part, -1 for a whole kernel), m, n, z, title,
  /// out (tensor or null), ops: {left, top, rest}}], and spec lookup for blocks.
  TX.panelSpecs = function (v) {
    var b = v.blocks, specs = [];
    v.kernels.forEach(function (k, ki) {
      var fits = true, ext = {};
      for (var i = 0; i < b.kernel.length; ++i) {
        if (b.kernel[i] !== ki) continue;
        if (b.tile_m[i] >= k.grid_m || b.tile_n[i] >= k.grid_n || b.tile_z[i] >= Math.max(1, k.grid_z)) fits = false;
        var e = ext[b.tile_z[i]] || (ext[b.tile_z[i]] = {m: 0, n: 0});
        e.m = Math.max(e.m, b.tile_m[i] + 1);
        e.n = Math.max(e.n, b.tile_n[i] + 1);
      }
      var writes = (k.writes || []).map(function (t) { return v.tensors[t]; });
      var mine = [];
      if (fits) {
        mine.push({kernel: ki, sub: -1, m: k.grid_m, n: k.grid_n, z: Math.max(1, k.grid_z), out: writes[0] || null,
                   title: k.name + ': ' + k.grid_m + '\u00d7' + k.grid_n + (k.grid_z > 1 ? '\u00d7' + k.grid_z : '') +
                          ' tiles, ' + k.blocks_per_sm + ' per SM, ' + k.waves + ' wave' + (k.waves === 1 ? '' : 's')});
      } else {
        var zs = Object.keys(ext).map(Number).sort(function (p, q) { return p - q; });
        zs.forEach(function (z, j) {
          var out = writes.length === zs.length ? writes[j] : writes[0] || null;
          mine.push({kernel: ki, sub: z, m: ext[z].m, n: ext[z].n, z: 1, out: out,
                     title: k.name + (out ? ' \u2192 ' + out.name : ' part ' + z) + ': ' + ext[z].m + '\u00d7' + ext[z].n +
                            ' tiles (blocks with tile_z = ' + z + ')'});
        });
      }
      assignOperands(v, k, mine);
      specs = specs.concat(mine);
    });
    return specs;
  };

  /// The spec index of block i of view v, for specs from panelSpecs.
  TX.specIndexer = function (v, specs) {
    var whole = {}, part = {};
    specs.forEach(function (s, i) { if (s.sub < 0) whole[s.kernel] = i; else part[s.kernel + ':' + s.sub] = i; });
    return function (i) {
      var k = v.blocks.kernel[i];
      return k in whole ? whole[k] : part[k + ':' + v.blocks.tile_z[i]];
    };
  };

  /// Left and top operands of each spec (the textbook matrix-product picture: left.rows =
  /// out.rows, top.cols = out.cols, preferably left.cols = top.rows, the shared K), and the
  /// kernel's other read tensors shown below the grid they most likely feed.
  function assignOperands(v, k, specs) {
    var reads = (k.reads || []).map(function (t) { return v.tensors[t]; }).filter(hasCells);
    var used = [];
    specs.forEach(function (s) {
      s.ops = {left: null, top: null, rest: []};
      if (!s.out || s.z !== 1) return;
      var best = null;
      // Shapes alone are ambiguous when every tensor is square (an FFN with M = d = f): a
      // tensor another part of the kernel writes (the intermediate) is this part's left
      // operand, and operands an earlier part took are someone else's.
      var fed = function (x) { return specs.some(function (o) { return o !== s && o.out === x; }); };
      reads.forEach(function (l) {
        if (l.rows !== s.out.rows) return;
        reads.forEach(function (t) {
          if (t === l || t.cols !== s.out.cols) return;
          var score = (l.cols === t.rows ? 2 : 1) + (fed(l) ? 4 : 0) - (used.indexOf(l) >= 0 ? 3 : 0) -
                      (used.indexOf(t) >= 0 ? 3 : 0);
          if (!best || score > best.score) best = {left: l, top: t, score: score};
        });
      });
      if (best) {
        s.ops.left = best.left;
        s.ops.top = best.top;
        used.push(best.left, best.top);
      }
    });
    reads.forEach(function (t) {
      if (used.indexOf(t) >= 0) return;
      // Another operand of the same product (a gate and an up projection) shares its K.
      var home = specs.filter(function (s) { return s.ops.left && s.ops.left.cols === t.rows; })[0] || specs[0];
      if (home) home.ops.rest.push(t);
    });
  }
})();
