// Runs the explorer's WebAssembly module under node through the page's own loader
// (sim/tools/explore/assets/replay.js) for tests/sim/tools/explore/test_replay_wasm.cpp.
//
//   node replay_wasm_check.js REPLAY_JS WASM_BASE64_FILE CASES_JSON
//
// CASES_JSON: {cases: [{manual, order}]}, manual as docs/explore.md's view.manual. Prints one
// JSON object: for each case the totals and cell fractions after each block of its order and
// after the final flush, then what the error paths answered.
"use strict";
const fs = require("fs");
const vm = require("vm");

async function main() {
  const [replayJs, wasmFile, casesFile] = process.argv.slice(2);
  // A browser script: run it as one, in this context, so that it sets the global.
  vm.runInThisContext(fs.readFileSync(replayJs, "utf8"), { filename: replayJs });
  const TilesimReplay = globalThis.TilesimReplay;
  const wasm = TilesimReplay.decodeBase64(fs.readFileSync(wasmFile, "utf8"));
  const { cases } = JSON.parse(fs.readFileSync(casesFile, "utf8"));

  const snapshot = (r) => Object.assign(r.totals(), { fractions: Array.from(r.cellFractions()) });
  const out = { cases: [], errors: {} };
  for (const c of cases) {
    const r = await TilesimReplay.create(wasm, c.manual);
    const steps = [];
    for (const b of c.order) {
      r.runBlock(b);
      steps.push(snapshot(r));
    }
    r.flush();
    steps.push(snapshot(r));
    // reset() starts cold again: the same order gives the same first step.
    r.reset();
    const cold = snapshot(r);
    r.runBlock(c.order[0]);
    out.cases.push({ blocks: r.blocks, cells: r.cells, steps, cold, again: snapshot(r) });
  }

  // Error paths: each must answer a code (or a thrown Error carrying it), and leave the module
  // usable.
  const manual = cases[0].manual;
  const err = (f) => {
    try {
      f();
      return 0;
    } catch (e) {
      return e.code === undefined ? String(e) : e.code;
    }
  };
  const r = await TilesimReplay.create(wasm, manual);
  const x = r.exports_;
  const e = out.errors;
  e.run_block_past_end = x.run_block(r.blocks);
  e.run_block_huge = x.run_block(0xffffffff);
  e.runBlock_negative = err(() => r.runBlock(-1));
  e.runBlock_fraction = err(() => r.runBlock(0.5));
  e.cell_fractions_bad_ptr = x.cell_fractions(0x7ffffff0);
  const l2 = manual.l2;
  const reset = (over) => {
    const a = Object.assign({}, l2, over);
    return x.reset(a.bytes % 2 ** 32, Math.floor(a.bytes / 2 ** 32), a.partitions, a.line_bytes, a.sector_bytes,
                   a.ways, a.hash_id, a.replacement_id, a.far_copy ? 1 : 0, 0, 1, 0);
  };
  e.reset_ways_0 = reset({ ways: 0 });
  e.run_block_after_failed_reset = x.run_block(0);
  e.reset_hash_9 = reset({ hash_id: 9 });
  e.reset_replacement_9 = reset({ replacement_id: 9 });
  e.reset_line_100 = reset({ line_bytes: 100 });
  e.reset_sector_4 = reset({ sector_bytes: 4 });
  e.reset_bytes_odd = reset({ bytes: l2.bytes + 128 });
  e.reset_bytes_64g = reset({ bytes: 2 ** 36 });
  e.reset_ok = reset({});

  // Programs: a bad magic, a word count that disagrees with the header, a pointer past memory.
  const good = TilesimReplay.decodeBase64(manual.program);
  const load = (bytes) => {
    const p = x.alloc(bytes.length);
    new Uint8Array(x.memory.buffer, p, bytes.length).set(bytes);
    const code = x.load_program(p, bytes.length / 4);
    x.release(p);
    return code;
  };
  const bad = good.slice();
  bad[0] ^= 1;
  e.load_bad_magic = load(bad);
  e.run_block_without_program = x.run_block(0);
  e.reset_without_program = reset({});
  e.load_truncated = load(good.slice(0, good.length - 4));
  e.load_header_only = load(good.slice(0, 28));
  e.load_past_memory = x.load_program(x.memory.buffer.byteLength - 8, 4);
  e.load_null = x.load_program(0, 6);
  e.create_bad_program = await TilesimReplay.create(wasm, Object.assign({}, manual, { program: "AAAA" }))
    .then(() => 0, (er) => er.code);

  // After all that, the module still replays: the first case's first step again.
  e.load_good = load(good);
  e.reset_after = reset({});
  e.run_after = x.run_block(cases[0].order[0]);
  e.sectors_after = x.sectors();
  process.stdout.write(JSON.stringify(out) + "\n");
}

main().catch((e) => {
  process.stderr.write("replay_wasm_check: " + (e && e.stack ? e.stack : e) + "\n");
  process.exit(1);
});
