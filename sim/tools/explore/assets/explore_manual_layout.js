// What the manual mode (explore_manual.js) clicks: one GEMM's grid, or a producer/consumer
// chain fused under `sync: dataflow` (view.manual.chain, docs/explore.md). A layout numbers the
// tiles as the replay program's blocks — a GEMM's tile (m, n) is m * grid_n + n; a chain's
// producer tile (m, n) is m * grid_n + n and its consumer tile (m, j) is grid_m * grid_n +
// m * consumer_n + j — and knows the rules of its order file:
//  - parts: the grids to draw, each {name, kind ('p', 'c' or ''), m, n, first (its first tile)};
//  - blocker(placed, t): why tile t cannot be placed next ('' when it can); unlocks(placed, t):
//    the tiles whose blocker placing t may have lifted. A chain's consumer
//    tile (m, j) reads the whole producer row m (its k-steps wait on every producer tile of the
//    row, workloads/sync/dataflow.cpp), so it is refused until that row is placed: an order that
//    puts it earlier deadlocks the one-SM run `tilesim run` reproduces;
//  - legalize(order): the order with each refused tile moved to the first place it is allowed
//    (a consumer right after its row's last producer tile);
//  - fill(placed): the tiles not placed yet, row by row (a chain: row m's producer tiles, then
//    its consumer tiles, as `sync: {kind: dataflow, after: row}` dispatches them);
//  - text(order, header): the order file (`grid M N` + `m n` lines, or `chain M N N1` + `p m n`
//    / `c m j` lines, workloads/orders/chain_order_file.hpp).
(function () {
  'use strict';
  var TX = window.TilesimExplore;

  function single(mm) {
    var m = mm.grid_m, n = mm.grid_n;
    return {
      chain: false, count: m * n, parts: [{name: '', kind: '', m: m, n: n, first: 0}],
      partOf: function () { return 0; },
      name: function (t) { return 'tile (' + Math.floor(t / n) + ', ' + (t % n) + ')'; },
      blocker: function () { return ''; },
      unlocks: function () { return []; },
      legalize: function (order) { return order.slice(); },
      fill: function (placed) {
        var out = [];
        for (var t = 0; t < m * n; ++t) if (!placed[t]) out.push(t);
        return out;
      },
      text: function (order, header) {
        var lines = header.concat(['grid ' + m + ' ' + n]);
        order.forEach(function (t) { lines.push(Math.floor(t / n) + ' ' + (t % n)); });
        return lines.join('\n') + '\n';
      },
      fromBlock: function (v, i) { return v.blocks.tile_m[i] * n + v.blocks.tile_n[i]; }
    };
  }

  function chain(mm) {
    var m = mm.grid_m, n = mm.grid_n, n1 = mm.chain.consumer_n, P = m * n;
    var tileOf = function (t) {  // [kind, row, column]
      return t < P ? ['p', Math.floor(t / n), t % n] : ['c', Math.floor((t - P) / n1), (t - P) % n1];
    };
    // Producer tiles placed per row: counted from `placed` (a Uint8Array over all tiles).
    var rowPlaced = function (placed, row) {
      var k = 0;
      for (var c = 0; c < n; ++c) k += placed[row * n + c] ? 1 : 0;
      return k;
    };
    var self = {
      chain: true, count: P + m * n1,
      parts: [{name: 'producer (GEMM0)', kind: 'p', m: m, n: n, first: 0},
              {name: 'consumer (GEMM1)', kind: 'c', m: m, n: n1, first: P}],
      partOf: function (t) { return t < P ? 0 : 1; },
      name: function (t) {
        var x = tileOf(t);
        return (x[0] === 'p' ? 'producer' : 'consumer') + ' tile (' + x[1] + ', ' + x[2] + ')';
      },
      blocker: function (placed, t) {
        var x = tileOf(t);
        if (x[0] === 'p') return '';
        var k = rowPlaced(placed, x[1]);
        return k === n ? '' : 'needs every producer tile of row ' + x[1] + ' first (' + k + ' of ' + n + ' placed)';
      },
      unlocks: function (placed, t) {
        var x = tileOf(t), out = [];
        if (x[0] === 'p' && rowPlaced(placed, x[1]) === n)
          for (var j = 0; j < n1; ++j) out.push(P + x[1] * n1 + j);
        return out;
      },
      legalize: function (order) {
        var placed = new Uint8Array(self.count), waiting = [], out = [];
        for (var r = 0; r < m; ++r) waiting.push([]);
        order.forEach(function (t) {
          if (placed[t]) return;
          var x = tileOf(t);
          if (x[0] === 'c' && self.blocker(placed, t)) { waiting[x[1]].push(t); return; }
          placed[t] = 1;
          out.push(t);
          if (x[0] === 'p' && rowPlaced(placed, x[1]) === n)
            waiting[x[1]].splice(0).forEach(function (c) { placed[c] = 1; out.push(c); });
        });
        return out;
      },
      fill: function (placed) {
        var out = [];
        for (var r = 0; r < m; ++r) {
          for (var c = 0; c < n; ++c) if (!placed[r * n + c]) out.push(r * n + c);
          for (var j = 0; j < n1; ++j) if (!placed[P + r * n1 + j]) out.push(P + r * n1 + j);
        }
        return out;
      },
      text: function (order, header) {
        var lines = header.concat(['chain ' + m + ' ' + n + ' ' + n1]);
        order.forEach(function (t) { lines.push(tileOf(t).join(' ')); });
        return lines.join('\n') + '\n';
      },
      // The fused kernel's blocks: tile_z 0 computes producer tiles, tile_z >= 1 consumer tiles.
      fromBlock: function (v, i) {
        var b = v.blocks;
        return b.tile_z[i] === 0 ? b.tile_m[i] * n + b.tile_n[i] : P + b.tile_m[i] * n1 + b.tile_n[i];
      }
    };
    return self;
  }

  /// The layout of view.manual.
  TX.manualLayout = function (mm) { return mm.chain ? chain(mm) : single(mm); };
})();
