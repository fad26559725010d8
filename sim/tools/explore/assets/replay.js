// The explorer's manual mode in the page: the simulator's L2 model compiled to WebAssembly
// (sim/tools/explore/wasm/replay_wasm.cpp, built by cmake/explore_wasm.cmake) replays whole blocks
// in the order the user clicks them (docs/explore.md, "Manual mode").
//
// A plain script (no modules, no build step) so that it runs from a file:// page offline;
// it defines one global, TilesimReplay. Node's tests load it with `vm` (tests/sim/tools/explore/).
(function (global) {
  "use strict";

  // Error codes of the module's entry points (replay_wasm.cpp).
  var ERRORS = {
    "-1": "no program loaded",
    "-2": "malformed replay program",
    "-3": "unsupported L2 shape",
    "-4": "reset() not called",
    "-5": "block out of range",
    "-6": "out of memory for the L2 model",
    "-7": "pointer outside the module's memory"
  };
  var TWO32 = 4294967296;

  function check(code, what) {
    if (code !== 0) {
      var e = new Error("TilesimReplay: " + what + ": " + (ERRORS[code] || "error " + code));
      e.code = code;
      throw e;
    }
  }

  function lo32(n) { return n % TWO32; }
  function hi32(n) { return Math.floor(n / TWO32); }

  function TilesimReplay(instance, manual) {
    this.exports_ = instance.exports;
    this.manual_ = manual;
    this.sectorBytes = manual.l2.sector_bytes;
    this.blocks = this.exports_.blocks();
    this.cells = this.exports_.cells();
  }

  /// Base64 (standard alphabet, padding optional, whitespace ignored) to bytes.
  TilesimReplay.decodeBase64 = function (str) {
    str = String(str).replace(/[\s=]/g, "");
    if (typeof atob === "function") {
      var bin = atob(str.length % 4 ? str + "===".slice(0, 4 - (str.length % 4)) : str);
      var out = new Uint8Array(bin.length);
      for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
      return out;
    }
    // Without atob: decode by hand.
    var digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    var bytes = new Uint8Array(Math.floor((str.length * 3) / 4));
    var acc = 0, bits = 0, n = 0;
    for (var j = 0; j < str.length; j++) {
      var v = digits.indexOf(str.charAt(j));
      if (v < 0) throw new Error("TilesimReplay: not base64");
      acc = (acc << 6) | v;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        bytes[n++] = (acc >> bits) & 255;
      }
    }
    return bytes.subarray(0, n);
  };

  /// Instantiates the module (asynchronously: browsers refuse to compile large modules
  /// synchronously on the main thread), loads `manual.program` into it and resets it to a
  /// cold L2. `wasmBytes`: a Uint8Array (TilesimReplay.decodeBase64 of the page's module).
  TilesimReplay.create = async function (wasmBytes, manual) {
    // The module imports nothing (cmake/explore_wasm.cmake keeps it so).
    var result = await WebAssembly.instantiate(wasmBytes, {});
    var r = new TilesimReplay(result.instance, manual);
    r.load_(TilesimReplay.decodeBase64(manual.program));
    r.reset();
    return r;
  };

  /// Copies the packed program (little-endian 32-bit words) into the module.
  TilesimReplay.prototype.load_ = function (bytes) {
    var x = this.exports_;
    if (bytes.length % 4 !== 0) check(-2, "load_program");
    var ptr = x.alloc(bytes.length);
    if (!ptr) check(-6, "load_program");
    // A fresh view after alloc: growing memory detaches the previous buffer.
    new Uint8Array(x.memory.buffer, ptr, bytes.length).set(bytes);
    var code = x.load_program(ptr, bytes.length / 4);
    x.release(ptr);
    check(code, "load_program");
    this.blocks = x.blocks();
    this.cells = x.cells();
  };

  /// A cold L2 of manual.l2, with zeroed totals.
  TilesimReplay.prototype.reset = function () {
    var l2 = this.manual_.l2, seed = this.manual_.seed || 0;
    check(this.exports_.reset(lo32(l2.bytes), hi32(l2.bytes), l2.partitions, l2.line_bytes, l2.sector_bytes,
                              l2.ways, l2.hash_id, l2.replacement_id, l2.far_copy ? 1 : 0,
                              this.manual_.partition || 0, lo32(seed), hi32(seed)),
          "reset");
  };

  /// Runs block b (tile_m * grid_n + tile_n) through the L2: all its requests, in order.
  TilesimReplay.prototype.runBlock = function (b) {
    if (typeof b !== "number" || !(b >= 0 && b < TWO32) || Math.floor(b) !== b) check(-5, "runBlock(" + b + ")");
    check(this.exports_.run_block(b), "runBlock(" + b + ")");
  };

  /// Writes back every dirty sector (as `tilesim run` does when the GPU goes idle).
  TilesimReplay.prototype.flush = function () {
    check(this.exports_.flush(), "flush");
  };

  /// Totals since reset(): sectors requested and hit, DRAM bytes read and written back.
  TilesimReplay.prototype.totals = function () {
    var x = this.exports_;
    return {
      sectors: x.sectors(),
      hit_sectors: x.hit_sectors(),
      dram_read_bytes: x.dram_read_sectors() * this.sectorBytes,
      dram_write_bytes: x.dram_write_sectors() * this.sectorBytes
    };
  };

  /// The fraction of each residency cell's sample lines that the L2 holds, one per cell.
  TilesimReplay.prototype.cellFractions = function () {
    var x = this.exports_, n = this.cells, out = new Float64Array(n);
    if (n === 0) return out;
    var ptr = x.alloc(n * 8);
    if (!ptr) check(-6, "cellFractions");
    var code = x.cell_fractions(ptr);
    if (code === 0) out.set(new Float64Array(x.memory.buffer.slice(ptr, ptr + n * 8)));
    x.release(ptr);
    check(code, "cellFractions");
    return out;
  };

  global.TilesimReplay = TilesimReplay;
})(typeof globalThis !== "undefined" ? globalThis : this);
