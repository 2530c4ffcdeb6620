// server/ingest/ingest_file.ts
import fs5 from "node:fs/promises";
import path7 from "node:path";

// server/decode/decode_file.ts
import path from "node:path";

// server/decode/decoded_event.ts
function isDirectRowSink(sink) {
  return typeof sink.directRows === "function";
}
function isRawRecordSink(sink) {
  return typeof sink.rawRecords === "function";
}
function isRawTextSink(sink) {
  return typeof sink.rawText === "function";
}
var DecodeError = class extends Error {
  constructor(file2, where, unit, message) {
    super(`${file2}: ${unit} ${where}: ${message}`);
    this.file = file2;
    this.where = where;
    this.unit = unit;
    this.name = "DecodeError";
  }
  file;
  where;
  unit;
};
var TRACE_FLAGS = {
  IRQS_OFF: 1,
  IRQS_NOSUPPORT: 2,
  NEED_RESCHED: 4,
  HARDIRQ: 8,
  SOFTIRQ: 16,
  PREEMPT_RESCHED: 32,
  NMI: 64,
  BH_OFF: 128
};

// server/decode/decompress.ts
import { createReadStream, createWriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import { Readable } from "node:stream";
import { once } from "node:events";
import { createGunzip } from "node:zlib";
import { Decompress as ZstdDecompress } from "fzstd";
import xzModule from "xz-decompress";

// server/decode/sniff.ts
var SNIFF_BYTES = 8192;
var GZIP_MAGIC = [31, 139];
var ZSTD_MAGIC = [40, 181, 47, 253];
var XZ_MAGIC = [253, 55, 122, 88, 90, 0];
var TRACE_DAT_MAGIC = [23, 8, 68, 116, 114, 97, 99, 105, 110, 103];
var MAX_NON_TEXT_SHARE = 0.05;
function startsWith(bytes, magic) {
  if (bytes.length < magic.length) return false;
  for (let i = 0; i < magic.length; i++) if (bytes[i] !== magic[i]) return false;
  return true;
}
function utf8SeqLen(b, i) {
  const c = b[i];
  let n2;
  if (c >= 194 && c <= 223) n2 = 2;
  else if (c >= 224 && c <= 239) n2 = 3;
  else if (c >= 240 && c <= 244) n2 = 4;
  else return 0;
  for (let k = 1; k < n2; k++) {
    if (i + k >= b.length) return n2;
    const cc = b[i + k];
    if (cc < 128 || cc > 191) return 0;
  }
  return n2;
}
function looksLikeText(bytes) {
  const n2 = Math.min(bytes.length, SNIFF_BYTES);
  if (n2 === 0) return true;
  let bad = 0;
  let i = 0;
  while (i < n2) {
    const c = bytes[i];
    if (c === 10 || c === 13 || c === 9 || c >= 32 && c < 127) {
      i++;
      continue;
    }
    if (c === 0) return false;
    if (c >= 128) {
      const len = utf8SeqLen(bytes, i);
      if (len > 0) {
        i += len;
        continue;
      }
    }
    bad++;
    i++;
  }
  return bad <= n2 * MAX_NON_TEXT_SHARE;
}
function sniffInput(firstBytes) {
  if (startsWith(firstBytes, GZIP_MAGIC)) return { compression: "gzip", format: "unknown" };
  if (startsWith(firstBytes, ZSTD_MAGIC)) return { compression: "zstd", format: "unknown" };
  if (startsWith(firstBytes, XZ_MAGIC)) return { compression: "xz", format: "unknown" };
  if (startsWith(firstBytes, TRACE_DAT_MAGIC)) return { compression: null, format: "trace_dat" };
  return { compression: null, format: looksLikeText(firstBytes) ? "text" : "unknown" };
}

// server/decode/decompress.ts
var READ_CHUNK_BYTES = 1 << 20;
var MAX_COMPRESSION_LAYERS = 4;
var { XzReadableStream } = xzModule;
var ByteCounter = class {
  bytes = 0;
  async *wrap(src) {
    for await (const c of src) {
      this.bytes += c.length;
      yield c;
    }
  }
};
function describeError(e) {
  return e instanceof Error ? e.message : String(e);
}
function layerError(file2, kind, layer, counter, e) {
  if (e instanceof DecodeError) return e;
  const where = layer === 0 ? "compressed byte offset" : `byte offset (in decompressed layer ${layer})`;
  return new DecodeError(
    file2,
    counter.bytes,
    "offset",
    `corrupt or truncated ${kind} stream (error surfaced by ${where} ${counter.bytes}): ${describeError(e)}`
  );
}
async function* gunzipLayer(src, file2, layer) {
  const counter = new ByteCounter();
  const input = Readable.from(counter.wrap(src), { objectMode: false });
  const gz = createGunzip();
  let inputError = null;
  input.on("error", (e) => {
    inputError = e;
    gz.destroy(e);
  });
  input.pipe(gz);
  try {
    for await (const chunk of gz) yield chunk;
  } catch (e) {
    if (inputError !== null) throw inputError;
    throw layerError(file2, "gzip", layer, counter, e);
  } finally {
    input.destroy();
    gz.destroy();
  }
}
async function* unzstdLayer(src, file2, layer) {
  const counter = new ByteCounter();
  let out = [];
  const dec = new ZstdDecompress((data) => {
    if (data.length) out.push(data.slice());
  });
  for await (const chunk of counter.wrap(src)) {
    try {
      dec.push(chunk);
    } catch (e) {
      throw layerError(file2, "zstd", layer, counter, e);
    }
    if (out.length) {
      const ready = out;
      out = [];
      for (const c of ready) yield c;
    }
  }
  try {
    dec.push(new Uint8Array(0), true);
  } catch (e) {
    throw layerError(file2, "zstd", layer, counter, e);
  }
  for (const c of out) yield c;
}
async function* unxzLayer(src, file2, layer) {
  const counter = new ByteCounter();
  const it = counter.wrap(src)[Symbol.asyncIterator]();
  const web = new ReadableStream({
    async pull(ctrl) {
      const r = await it.next();
      if (r.done) ctrl.close();
      else ctrl.enqueue(r.value);
    },
    async cancel() {
      await it.return?.(void 0);
    }
  });
  const reader = new XzReadableStream(web).getReader();
  try {
    for (; ; ) {
      let r;
      try {
        r = await reader.read();
      } catch (e) {
        throw layerError(file2, "xz", layer, counter, e);
      }
      if (r.done) break;
      yield r.value;
    }
  } finally {
    reader.releaseLock();
  }
}
function decompressLayer(kind, src, file2, layer) {
  switch (kind) {
    case "gzip":
      return gunzipLayer(src, file2, layer);
    case "zstd":
      return unzstdLayer(src, file2, layer);
    case "xz":
      return unxzLayer(src, file2, layer);
  }
}
async function peek(it, n2) {
  const parts = [];
  let have = 0;
  let done = false;
  while (have < n2) {
    const r = await it.next();
    if (r.done) {
      done = true;
      break;
    }
    parts.push(r.value);
    have += r.value.length;
  }
  const head = parts.length === 1 ? parts[0] : Buffer.concat(parts);
  const rest = (async function* () {
    try {
      if (head.length) yield head;
      if (done) return;
      for (; ; ) {
        const r = await it.next();
        if (r.done) return;
        yield r.value;
      }
    } finally {
      if (!done) await it.return?.(void 0);
    }
  })();
  return { head: head.subarray(0, Math.min(head.length, n2)), rest };
}
async function* readFileChunks(path8) {
  const rs = createReadStream(path8, { highWaterMark: READ_CHUNK_BYTES });
  try {
    for await (const c of rs) yield c;
  } finally {
    rs.destroy();
  }
}
async function openInput(path8, label = path8) {
  const fileBytes = (await stat(path8)).size;
  const compression = [];
  let src = readFileChunks(path8);
  for (; ; ) {
    const { head, rest } = await peek(src[Symbol.asyncIterator](), SNIFF_BYTES);
    const s = sniffInput(head);
    if (s.compression === null) return { compression, format: s.format, fileBytes, chunks: rest };
    if (compression.length >= MAX_COMPRESSION_LAYERS) {
      throw new DecodeError(label, 0, "offset", `more than ${MAX_COMPRESSION_LAYERS} nested compression layers`);
    }
    src = decompressLayer(s.compression, rest, label, compression.length);
    compression.push(s.compression);
  }
}
async function decompressToFile(path8, outPath, label = path8) {
  const opened = await openInput(path8, label);
  const ws = createWriteStream(outPath);
  let bytes = 0;
  try {
    for await (const c of opened.chunks) {
      bytes += c.length;
      if (!ws.write(c)) await once(ws, "drain");
    }
    ws.end();
    await once(ws, "finish");
  } catch (e) {
    ws.destroy();
    throw e;
  }
  return { compression: opened.compression, format: opened.format, bytes };
}

// server/decode/ftrace_text/fields/generic.ts
function isKeyChar(c) {
  return c >= 97 && c <= 122 || c >= 65 && c <= 90 || c >= 48 && c <= 57 || c === 95 || c === 46;
}
function parseDecimal(s) {
  const n2 = s.length;
  if (n2 === 0) return null;
  let i = 0;
  let neg = false;
  const c0 = s.charCodeAt(0);
  if (c0 === 45 || c0 === 43) {
    neg = c0 === 45;
    i = 1;
    if (n2 === 1) return null;
  }
  if (n2 - i <= 15) {
    let v = 0;
    for (; i < n2; i++) {
      const c = s.charCodeAt(i);
      if (c < 48 || c > 57) return null;
      v = v * 10 + (c - 48);
    }
    return neg ? -v : v;
  }
  for (let k = i; k < n2; k++) {
    const c = s.charCodeAt(k);
    if (c < 48 || c > 57) return null;
  }
  const big = BigInt(s);
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}
function parseDecimalRange(t, s, e) {
  const n2 = e - s;
  if (n2 <= 0) return null;
  let i = s;
  let neg = false;
  const c0 = t.charCodeAt(s);
  if (c0 === 45 || c0 === 43) {
    neg = c0 === 45;
    i = s + 1;
    if (n2 === 1) return null;
  }
  if (e - i <= 15) {
    let v = 0;
    for (; i < e; i++) {
      const c = t.charCodeAt(i);
      if (c < 48 || c > 57) return null;
      v = v * 10 + (c - 48);
    }
    return neg ? -v : v;
  }
  return parseDecimal(t.slice(s, e));
}
var RangeMemo = class {
  constructor(bits = 10, perBucket = 8) {
    this.perBucket = perBucket;
    this.mask = (1 << bits) - 1;
    this.keys = Array.from({ length: 1 << bits }, () => []);
    this.keysB = Array.from({ length: 1 << bits }, () => []);
    this.values = Array.from({ length: 1 << bits }, () => []);
  }
  perBucket;
  keys;
  /** keys[i][k] as bytes (asciiBytes), for getB. */
  keysB;
  values;
  mask;
  slot(t, s, e) {
    const len = e - s;
    let h = Math.imul(len, 2654435761) ^ t.charCodeAt(e - 1);
    h = Math.imul(h, 31) + t.charCodeAt(s);
    h = Math.imul(h, 31) + t.charCodeAt(s + (len >> 1));
    if (len > 2) {
      h = Math.imul(h, 31) + t.charCodeAt(e - 2);
      h = Math.imul(h, 31) + t.charCodeAt(e - 3);
    }
    if (len > 6) h = Math.imul(h, 31) + t.charCodeAt(s + (len >> 2));
    return (h ^ h >>> 11 ^ h >>> 21) & this.mask;
  }
  /** slot() on bytes: b[i] === t.charCodeAt(i) for the ASCII text b holds. */
  slotB(b, s, e) {
    const len = e - s;
    let h = Math.imul(len, 2654435761) ^ b[e - 1];
    h = Math.imul(h, 31) + b[s];
    h = Math.imul(h, 31) + b[s + (len >> 1)];
    if (len > 2) {
      h = Math.imul(h, 31) + b[e - 2];
      h = Math.imul(h, 31) + b[e - 3];
    }
    if (len > 6) h = Math.imul(h, 31) + b[s + (len >> 2)];
    return (h ^ h >>> 11 ^ h >>> 21) & this.mask;
  }
  /** get() for the ASCII text whose bytes are `b` (same positions): compares bytes. */
  getB(b, s, e) {
    const i = this.slotB(b, s, e);
    const ks = this.keysB[i];
    const len = e - s;
    for (let k = 0; k < ks.length; k++) {
      const key = ks[k];
      if (key.n === len && sameBytes(b, s, key)) return this.values[i][k];
    }
    return void 0;
  }
  /** The value stored for t.slice(s, e) (e > s), or undefined. */
  get(t, s, e) {
    const i = this.slot(t, s, e);
    const ks = this.keys[i];
    const len = e - s;
    for (let k = 0; k < ks.length; k++) {
      const key = ks[k];
      if (key.length === len && t.startsWith(key, s)) return this.values[i][k];
    }
    return void 0;
  }
  /** Stores value for key === t.slice(s, e). */
  set(t, s, e, key, value) {
    const i = this.slot(t, s, e);
    const ks = this.keys[i];
    const kb = this.keysB[i];
    const vs = this.values[i];
    if (ks.length >= this.perBucket) {
      ks.length = 0;
      kb.length = 0;
      vs.length = 0;
    }
    ks.push(key);
    kb.push(asciiBytes(key));
    vs.push(value);
  }
};
function flat(s) {
  return s.length < 13 ? s : (s + " ").slice(0, -1);
}
var INTERN_MAX_CHARS = 80;
var internMemo = new RangeMemo(12, 4);
function internRange(t, s, e) {
  const len = e - s;
  if (len > INTERN_MAX_CHARS || len <= 0) return t.slice(s, e);
  const hit = internMemo.get(t, s, e);
  if (hit !== void 0) return hit;
  const v = flat(t.slice(s, e));
  internMemo.set(t, s, e, v, v);
  return v;
}
function internBytes(b, s, e) {
  const len = e - s;
  if (len <= 0) return "";
  if (len <= INTERN_MAX_CHARS) {
    const hit = internMemo.getB(b, s, e);
    if (hit !== void 0) return hit;
  }
  const v = latin1(b, s, e);
  if (len <= INTERN_MAX_CHARS) internMemo.set(v, 0, len, v, v);
  return v;
}
var latin1Slice = Buffer.prototype.latin1Slice;
function latin1(b, s, e) {
  return latin1Slice.call(b, s, e);
}
function internAt(b, t, s, e) {
  return b !== null ? internBytes(b, s, e) : internRange(t, s, e);
}
function asciiBytes(s) {
  const n2 = s.length;
  const bytes = new Uint8Array(n2);
  for (let i = 0; i < n2; i++) {
    const c = s.charCodeAt(i);
    bytes[i] = c < 128 ? c : 255;
  }
  const full = n2 >> 2;
  const words = new Int32Array(n2 < 4 ? 0 : full + (n2 & 3 ? 1 : 0));
  const dv = new DataView(bytes.buffer);
  for (let i = 0; i < full; i++) words[i] = dv.getInt32(i * 4, true);
  if (n2 >= 4 && n2 & 3) words[full] = dv.getInt32(n2 - 4, true);
  return { n: n2, bytes, words };
}
var viewOf = null;
var view = new DataView(new ArrayBuffer(8));
function sameBytes(b, s, key) {
  const n2 = key.n;
  if (s + n2 > b.length) return false;
  if (n2 < 4) {
    const kb = key.bytes;
    for (let k = 0; k < n2; k++) if (b[s + k] !== kb[k]) return false;
    return true;
  }
  if (b !== viewOf) {
    viewOf = b;
    view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }
  const dv = view;
  const w = key.words;
  const full = n2 >> 2;
  for (let i = 0; i < full; i++) if (dv.getInt32(s + i * 4, true) !== w[i]) return false;
  return (n2 & 3) === 0 || dv.getInt32(s + n2 - 4, true) === w[full];
}
function parseDecimalRangeB(b, t, s, e) {
  const n2 = e - s;
  if (n2 <= 0) return null;
  let i = s;
  let neg = false;
  const c0 = b[s];
  if (c0 === 45 || c0 === 43) {
    neg = c0 === 45;
    i = s + 1;
    if (n2 === 1) return null;
  }
  if (e - i <= 15) {
    let v = 0;
    for (; i < e; i++) {
      const c = b[i];
      if (c < 48 || c > 57) return null;
      v = v * 10 + (c - 48);
    }
    return neg ? -v : v;
  }
  return parseDecimal(t.slice(s, e));
}
function indexOfChar(t, c, s, e) {
  for (let i = s; i < e; i++) if (t.charCodeAt(i) === c) return i;
  return -1;
}
function sameChars(t, s, str) {
  const n2 = str.length;
  for (let k = 0; k < n2; k++) if (t.charCodeAt(s + k) !== str.charCodeAt(k)) return false;
  return true;
}
function isOtherSpace(c) {
  return c >= 9 && c <= 13 || c === 160 || c === 5760 || c >= 8192 && c <= 8202 || c === 8232 || c === 8233 || c === 8239 || c === 8287 || c === 12288 || c === 65279;
}
function memoize(fn, max = 4096) {
  let cache = /* @__PURE__ */ new Map();
  return (s) => {
    let v = cache.get(s);
    if (v === void 0) {
      const key = flat(s);
      v = flat(fn(key));
      if (cache.size >= max) cache = /* @__PURE__ */ new Map();
      cache.set(key, v);
    }
    return v;
  };
}
function parseHex(s) {
  let t = s;
  if (t.startsWith("0x") || t.startsWith("0X")) t = t.slice(2);
  if (t.length === 0 || !/^[0-9a-fA-F]+$/.test(t)) return null;
  if (t.length <= 13) return parseInt(t, 16);
  const big = BigInt("0x" + t);
  return big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}
function parseNumeric(s) {
  const d = parseDecimal(s);
  if (d !== null) return d;
  if (s.startsWith("0x") || s.startsWith("0X")) return parseHex(s);
  return null;
}
function normalizePointer(s) {
  let t = s;
  if (t.startsWith("0x") || t.startsWith("0X")) t = t.slice(2);
  if (t.length === 0 || !/^[0-9a-fA-F]+$/.test(t)) return null;
  t = t.toLowerCase().replace(/^0+(?=.)/, "");
  return "0x" + t;
}
function bareSymbol(s) {
  let t = s.trim();
  const sp = t.indexOf(" ");
  if (sp >= 0) t = t.slice(0, sp);
  const plus = t.indexOf("+");
  if (plus > 0) t = t.slice(0, plus);
  if (t.startsWith("0x") || t.startsWith("0X")) return normalizePointer(t) ?? t;
  return t;
}
function splitKeyValues(text) {
  const n2 = text.length;
  const starts = [];
  const eqs = [];
  let i = 0;
  while (i < n2) {
    let j = i;
    while (j < n2 && isKeyChar(text.charCodeAt(j))) j++;
    if (j > i && j < n2 && text.charCodeAt(j) === 61) {
      starts.push(i);
      eqs.push(j);
    }
    const sp = text.indexOf(" ", j);
    if (sp < 0) break;
    i = sp + 1;
    while (i < n2 && text.charCodeAt(i) === 32) i++;
  }
  const pairs = [];
  for (let k = 0; k < starts.length; k++) {
    const key = text.slice(starts[k], eqs[k]);
    let end = k + 1 < starts.length ? starts[k + 1] : n2;
    while (end > eqs[k] + 1 && text.charCodeAt(end - 1) === 32) end--;
    pairs.push([key, text.slice(eqs[k] + 1, end)]);
  }
  return { pairs, firstKeyAt: starts.length ? starts[0] : n2 };
}
var MAX_BUILDER_KEYS = 40;
var MAX_BUILDERS = 64;
var KvSpec = class {
  constructor(rename = {}, strings = /* @__PURE__ */ new Set(), numeric = /* @__PURE__ */ new Set()) {
    this.rename = rename;
    this.strings = strings;
    this.numeric = numeric;
  }
  rename;
  strings;
  numeric;
  rules = /* @__PURE__ */ new Map();
  builders = /* @__PURE__ */ new Map();
  /** Key sequences built lately, most recent first: the likely keys of the next event. */
  recent = [];
  /** Scratch: rules and values of the event being parsed. */
  seq = [];
  vals = [];
  rule(printed) {
    let r = this.rules.get(printed);
    if (r === void 0) {
      printed = flat(printed);
      const key = this.rename[printed] ?? printed;
      r = { printed, eq: printed + "=", eqB: asciiBytes(printed + "="), key, kind: this.strings.has(key) ? 1 : this.numeric.has(key) ? 2 : 0 };
      if (this.rules.size < 1024) this.rules.set(printed, r);
    }
    return r;
  }
  /** Moves recent[i] to the front. */
  promote(i) {
    const r = this.recent;
    const ent = r[i];
    for (let k = i; k > 0; k--) r[k] = r[k - 1];
    r[0] = ent;
  }
  /** Builds the fields object from seq/vals (n pairs). */
  build(n2) {
    const seq = this.seq;
    const recent = this.recent;
    for (let r = 0; r < recent.length; r++) {
      const rules = recent[r].rules;
      if (rules.length !== n2) continue;
      let same = true;
      for (let i = 0; i < n2; i++) {
        if (rules[i] !== seq[i]) {
          same = false;
          break;
        }
      }
      if (same) {
        if (r > 0) this.promote(r);
        return recent[0].builder(this.vals);
      }
    }
    if (n2 > MAX_BUILDER_KEYS) {
      const out = {};
      for (let i = 0; i < n2; i++) out[seq[i].key] = this.vals[i];
      return out;
    }
    const sig = seq.slice(0, n2).map((r) => r.key).join("\0");
    let b = this.builders.get(sig);
    if (b === void 0) {
      const body = seq.slice(0, n2).map((r, i) => `${JSON.stringify(r.key)}: v[${i}]`).join(", ");
      b = new Function("v", `return { ${body} };`);
      if (this.builders.size < MAX_BUILDERS) this.builders.set(sig, b);
    }
    if (recent.length >= MAX_RECENT_SEQS) recent.pop();
    recent.unshift({ rules: seq.slice(0, n2), builder: b });
    return b(this.vals);
  }
};
var MAX_RECENT_SEQS = 4;
var AUTO_SPEC = new KvSpec();
function convertRange(r, t, s, e) {
  if (r.kind === 1) return internRange(t, s, e);
  const d = parseDecimalRange(t, s, e);
  if (d !== null) return d;
  if (r.kind === 2) {
    const v = t.slice(s, e);
    return parseNumeric(v) ?? v;
  }
  if (e - s >= 2 && t.charCodeAt(s) === 34 && t.charCodeAt(e - 1) === 34) return t.slice(s + 1, e - 1);
  return t.slice(s, e);
}
function convertRangeB(r, b, t, s, e) {
  if (r.kind === 1) return internBytes(b, s, e);
  const d = parseDecimalRangeB(b, t, s, e);
  if (d !== null) return d;
  return convertRange(r, t, s, e);
}
function kvObject(text, spec = AUTO_SPEC) {
  return kvRange(text, 0, text.length, spec);
}
var NO_RULES = [];
function kvFast(t, s, n2, rules, vals) {
  const m = rules.length;
  let p = s;
  for (let k = 0; ; k++) {
    const rule = rules[k];
    const eq = rule.eq;
    if (k > 0 && !t.startsWith(eq, p)) return false;
    const v0 = p + eq.length;
    if (v0 > n2) return false;
    if (rule.kind !== 1) {
      let q = v0;
      let v = 0;
      let c = 0;
      while (q < n2 && (c = t.charCodeAt(q)) >= 48 && c <= 57) {
        v = v * 10 + (c - 48);
        q++;
      }
      if (q > v0 && q - v0 <= 15) {
        if (q === n2) {
          if (k !== m - 1) return false;
          vals[k] = v;
          return true;
        }
        if (c === 32 && k !== m - 1) {
          let r2 = q + 1;
          while (r2 < n2 && t.charCodeAt(r2) === 32) r2++;
          vals[k] = v;
          p = r2;
          continue;
        }
      }
    }
    const sp = t.indexOf(" ", v0);
    if (k === m - 1) {
      if (sp >= 0 && sp < n2) return false;
      vals[k] = convertRange(rule, t, v0, n2);
      return true;
    }
    if (sp < 0 || sp >= n2) return false;
    let r = sp + 1;
    while (r < n2 && t.charCodeAt(r) === 32) r++;
    vals[k] = convertRange(rule, t, v0, sp);
    p = r;
  }
}
function kvSpansB(b, s, n2, rules, nums, starts, ends) {
  const m = rules.length;
  let p = s;
  for (let k = 0; k < m; k++) {
    const rule = rules[k];
    const eq = rule.eqB;
    if (k > 0 && !sameBytes(b, p, eq)) return false;
    const v0 = p + eq.n;
    if (v0 > n2) return false;
    let q = v0;
    let v = NaN;
    if (rule.kind !== 1) {
      let c = 0;
      v = 0;
      while (q < n2 && (c = b[q]) >= 48 && c <= 57) {
        v = v * 10 + (c - 48);
        q++;
      }
      if (q === v0 || q - v0 > 15 || q < n2 && c !== 32) v = NaN;
    }
    while (q < n2 && b[q] !== 32) q++;
    const last = k === m - 1;
    if (last ? q < n2 : q >= n2) return false;
    nums[k] = v;
    starts[k] = v0;
    ends[k] = q;
    if (!last) {
      p = q + 1;
      while (p < n2 && b[p] === 32) p++;
    }
  }
  return true;
}
var spanNums = new Float64Array(16);
var spanStarts = new Int32Array(16);
var spanEnds = new Int32Array(16);
function kvFastB(b, t, s, n2, rules, vals) {
  const m = rules.length;
  if (m > spanNums.length) {
    spanNums = new Float64Array(m);
    spanStarts = new Int32Array(m);
    spanEnds = new Int32Array(m);
  }
  if (!kvSpansB(b, s, n2, rules, spanNums, spanStarts, spanEnds)) return false;
  for (let k = 0; k < m; k++) {
    const v = spanNums[k];
    vals[k] = v === v ? v : convertRangeB(rules[k], b, t, spanStarts[k], spanEnds[k]);
  }
  return true;
}
function kvRangeB(b, text, s, n2, spec = AUTO_SPEC) {
  if (b === null) return kvRange(text, s, n2, spec);
  const recent = spec.recent;
  for (let r = 0; r < recent.length; r++) {
    const ent = recent[r];
    if (sameBytes(b, s, ent.rules[0].eqB) && kvFastB(b, text, s, n2, ent.rules, spec.vals)) {
      if (r > 0) spec.promote(r);
      return ent.builder(spec.vals);
    }
  }
  return kvSlow(text, s, n2, spec);
}
function kvRange(text, s, n2, spec = AUTO_SPEC) {
  const recent = spec.recent;
  for (let r = 0; r < recent.length; r++) {
    const ent = recent[r];
    if (text.startsWith(ent.rules[0].eq, s) && kvFast(text, s, n2, ent.rules, spec.vals)) {
      if (r > 0) spec.promote(r);
      return ent.builder(spec.vals);
    }
  }
  return kvSlow(text, s, n2, spec);
}
function kvSlow(text, s, n2, spec) {
  const recent = spec.recent;
  const seq = spec.seq;
  const vals = spec.vals;
  const known = recent.length > 0 ? recent[0].rules : NO_RULES;
  const knownLen = known.length;
  let pairs = 0;
  let rule = null;
  let valStart = 0;
  let i = s;
  while (i < n2) {
    let j = i;
    let c = 0;
    while (j < n2 && isKeyChar(c = text.charCodeAt(j))) j++;
    if (j > i && j < n2 && c === 61) {
      if (rule !== null) {
        let e2 = i;
        while (e2 > valStart && text.charCodeAt(e2 - 1) === 32) e2--;
        seq[pairs] = rule;
        vals[pairs] = convertRange(rule, text, valStart, e2);
        pairs++;
      }
      let r = null;
      if (pairs < knownLen) {
        const cand = known[pairs];
        if (cand.printed.length === j - i && sameChars(text, i, cand.printed)) r = cand;
      }
      rule = r ?? spec.rule(text.slice(i, j));
      valStart = j + 1;
    }
    let sp = text.indexOf(" ", j);
    if (sp < 0 || sp >= n2) break;
    while (sp < n2 && text.charCodeAt(sp) === 32) sp++;
    i = sp;
  }
  if (rule === null) return null;
  let e = n2;
  while (e > valStart && text.charCodeAt(e - 1) === 32) e--;
  seq[pairs] = rule;
  vals[pairs] = convertRange(rule, text, valStart, e);
  pairs++;
  return spec.build(pairs);
}
function addKeyValues(text, out, spec = AUTO_SPEC) {
  const o = kvObject(text, spec);
  if (o === null) return 0;
  let k = 0;
  for (const key in o) {
    out[key] = o[key];
    k++;
  }
  return k;
}
var parseGeneric = (args) => kvObject(args) ?? {};
function parseGenericRange(t, s, e, _args, b = null) {
  return kvRangeB(b, t, s, e) ?? {};
}
var RANGE_PARSERS = /* @__PURE__ */ new Map();
function ranged(rp) {
  const fp = (t) => rp(t, 0, t.length, t, null);
  RANGE_PARSERS.set(fp, rp);
  return fp;
}
function trimStart(t, s, e) {
  while (s < e && t.charCodeAt(s) === 32) s++;
  return s < e && isOtherSpace(t.charCodeAt(s)) ? -1 : s;
}
function trimEnd(t, s, e) {
  while (e > s && t.charCodeAt(e - 1) === 32) e--;
  return e > s && isOtherSpace(t.charCodeAt(e - 1)) ? -1 : e;
}

// server/decode/ftrace_text/fields/sched.ts
function int(s) {
  const v = parseDecimal(s.trim());
  return typeof v === "number" ? v : null;
}
function commColonPid(s) {
  const c = s.lastIndexOf(":");
  if (c < 0) return null;
  const pid = int(s.slice(c + 1));
  if (pid === null) return null;
  return [s.slice(0, c).trim(), pid];
}
function intFast(t, s, e) {
  const a = trimStart(t, s, e);
  if (a < 0) return NaN;
  const b = trimEnd(t, a, e);
  if (b < 0) return NaN;
  const v = parseDecimalRange(t, a, b);
  return typeof v === "number" ? v : NaN;
}
function between(text, key, nextKey, from = 0) {
  const k = text.indexOf(key, from);
  if (k < 0) return null;
  const vs = k + key.length;
  if (nextKey === null) return [text.slice(vs).trim(), text.length];
  const nk = text.lastIndexOf(nextKey);
  if (nk < vs) return null;
  return [text.slice(vs, nk), nk];
}
function switchKernelFast(t, s, e, b) {
  const arrow = t.indexOf(" ==> next_comm=", s);
  if (arrow < 0 || arrow + 15 > e) return null;
  const pp = t.lastIndexOf(" prev_pid=", arrow - 10);
  if (pp < s + 10) return null;
  const ppr = t.lastIndexOf(" prev_prio=", arrow - 11);
  if (ppr < pp + 10) return null;
  const ps = t.lastIndexOf(" prev_state=", arrow - 12);
  if (ps < ppr + 11) return null;
  const ns = arrow + 5;
  const np = t.lastIndexOf(" next_pid=", e - 10);
  if (np < ns + 10) return null;
  const npr = t.lastIndexOf(" next_prio=", e - 11);
  if (npr < np + 10) return null;
  const prevPid = intFast(t, pp + 10, ppr);
  const prevPrio = intFast(t, ppr + 11, ps);
  const nextPid = intFast(t, np + 10, npr);
  const nextPrio = intFast(t, npr + 11, e);
  if (prevPid !== prevPid || prevPrio !== prevPrio || nextPid !== nextPid || nextPrio !== nextPrio) return null;
  const st = trimStart(t, ps + 12, arrow);
  if (st < 0) return null;
  const se = trimEnd(t, st, arrow);
  if (se < 0) return null;
  return {
    prev_comm: internAt(b, t, s + 10, pp),
    prev_pid: prevPid,
    prev_prio: prevPrio,
    prev_state: internAt(b, t, st, se),
    next_comm: internAt(b, t, ns + 10, np),
    next_pid: nextPid,
    next_prio: nextPrio
  };
}
function parseSwitchKernel(t) {
  const arrow = t.indexOf(" ==> next_comm=");
  if (arrow < 0) return null;
  const prev = t.slice(0, arrow);
  const next = t.slice(arrow + 5);
  const pc = between(prev, "prev_comm=", " prev_pid=");
  if (!pc) return null;
  const pp = between(prev, " prev_pid=", " prev_prio=", pc[1]);
  const ppr = pp && between(prev, " prev_prio=", " prev_state=", pp[1]);
  const ps = ppr && between(prev, " prev_state=", null, ppr[1]);
  const nc = between(next, "next_comm=", " next_pid=");
  const np = nc && between(next, " next_pid=", " next_prio=", nc[1]);
  const npr = np && between(next, " next_prio=", null, np[1]);
  if (!pp || !ppr || !ps || !nc || !np || !npr) return null;
  const prevPid = int(pp[0]);
  const prevPrio = int(ppr[0]);
  const nextPid = int(np[0]);
  const nextPrio = int(npr[0]);
  if (prevPid === null || prevPrio === null || nextPid === null || nextPrio === null) return null;
  return {
    prev_comm: pc[0],
    prev_pid: prevPid,
    prev_prio: prevPrio,
    prev_state: ps[0],
    next_comm: nc[0],
    next_pid: nextPid,
    next_prio: nextPrio
  };
}
var REPORT_STATE = { Z: "X", X: "Z", x: "P", W: "I" };
function reportPrevState(s) {
  let out = "";
  for (const ch of s) out += REPORT_STATE[ch] ?? ch;
  return out;
}
function plainState(t, s, e) {
  for (let i = s; i < e; i++) {
    const c = t.charCodeAt(i);
    if (c >= 128 || c === 90 || c === 88 || c === 120 || c === 87) return false;
  }
  return true;
}
var cpA = { s: 0, e: 0, pid: 0 };
var cpB = { s: 0, e: 0, pid: 0 };
function commPidFast(t, s, e, out) {
  const c = t.lastIndexOf(":", e - 1);
  if (c < s) return false;
  const pid = intFast(t, c + 1, e);
  if (pid !== pid) return false;
  const a = trimStart(t, s, c);
  if (a < 0) return false;
  const b = trimEnd(t, a, c);
  if (b < 0) return false;
  out.s = a;
  out.e = b;
  out.pid = pid;
  return true;
}
function switchReportFast(t, s, e, b) {
  const arrow = t.lastIndexOf(" ==> ", e - 5);
  if (arrow < s) return null;
  const pb = t.lastIndexOf(" [", arrow - 2);
  if (pb < s) return null;
  const pbe = indexOfChar(t, 93, pb, arrow);
  if (pbe < 0) return null;
  const prevPrio = intFast(t, pb + 2, pbe);
  if (prevPrio !== prevPrio) return null;
  const st = trimStart(t, pbe + 1, arrow);
  if (st < 0) return null;
  const se = trimEnd(t, st, arrow);
  if (se < 0 || se === st || !plainState(t, st, se)) return null;
  if (!commPidFast(t, s, pb, cpA)) return null;
  const ns = trimStart(t, arrow + 5, e);
  if (ns < 0) return null;
  const ne = trimEnd(t, ns, e);
  if (ne < 0) return null;
  const nb = t.lastIndexOf(" [", ne - 2);
  if (nb < ns) return null;
  const nbe = indexOfChar(t, 93, nb, ne);
  if (nbe < 0) return null;
  const nextPrio = intFast(t, nb + 2, nbe);
  if (nextPrio !== nextPrio) return null;
  if (!commPidFast(t, ns, nb, cpB)) return null;
  return {
    prev_comm: internAt(b, t, cpA.s, cpA.e),
    prev_pid: cpA.pid,
    prev_prio: prevPrio,
    prev_state: internAt(b, t, st, se),
    next_comm: internAt(b, t, cpB.s, cpB.e),
    next_pid: cpB.pid,
    next_prio: nextPrio
  };
}
function parseSwitchReport(t) {
  const arrow = t.lastIndexOf(" ==> ");
  if (arrow < 0) return null;
  const prev = t.slice(0, arrow);
  const next = t.slice(arrow + 5).trim();
  const pb = prev.lastIndexOf(" [");
  if (pb < 0) return null;
  const pbe = prev.indexOf("]", pb);
  if (pbe < 0) return null;
  const prevPrio = int(prev.slice(pb + 2, pbe));
  const prevState = prev.slice(pbe + 1).trim();
  const pcp = commColonPid(prev.slice(0, pb));
  const nb = next.lastIndexOf(" [");
  if (nb < 0) return null;
  const nbe = next.indexOf("]", nb);
  if (nbe < 0) return null;
  const nextPrio = int(next.slice(nb + 2, nbe));
  const ncp = commColonPid(next.slice(0, nb));
  if (!pcp || !ncp || prevPrio === null || nextPrio === null || prevState === "") return null;
  return {
    prev_comm: pcp[0],
    prev_pid: pcp[1],
    prev_prio: prevPrio,
    prev_state: reportPrevState(prevState),
    next_comm: ncp[0],
    next_pid: ncp[1],
    next_prio: nextPrio
  };
}
var parseSchedSwitch = ranged((t, s, e, args, b) => t.startsWith("prev_comm=", s) ? switchKernelFast(t, s, e, b) ?? parseSwitchKernel(args) : switchReportFast(t, s, e, b) ?? parseSwitchReport(args));
var COMM_SPEC = new KvSpec({}, /* @__PURE__ */ new Set(["comm"]));
function parseWakeupKernel(t, s, e, b) {
  const out = kvRangeB(b, t, s, e, COMM_SPEC);
  if (out === null) return null;
  if (typeof out.pid !== "number" || typeof out.prio !== "number" || typeof out.target_cpu !== "number") return null;
  if (typeof out.comm !== "string") return null;
  return out;
}
function wakeupReportFast(t, s, e, bytes) {
  const b = t.lastIndexOf(" [", e - 2);
  if (b < s) return null;
  const be = indexOfChar(t, 93, b, e);
  if (be < 0) return null;
  if (!commPidFast(t, s, b, cpA)) return null;
  const prio = intFast(t, b + 2, be);
  if (prio !== prio) return null;
  let p = be + 1;
  while (p < e && t.charCodeAt(p) === 32) p++;
  let success = 0;
  let target = 0;
  let hasSuccess = false;
  let hasTarget = false;
  while (p < e) {
    let q = p;
    while (q < e && t.charCodeAt(q) !== 32) q++;
    if (t.startsWith("CPU:", p) && q - p > 4) {
      const v = intFast(t, p + 4, q);
      if (v !== v || hasTarget) return null;
      target = v;
      hasTarget = true;
    } else if (t.startsWith("success=", p) && q - p > 8) {
      const v = intFast(t, p + 8, q);
      if (v !== v || hasSuccess || hasTarget) return null;
      success = v;
      hasSuccess = true;
    } else return null;
    p = q;
    while (p < e && t.charCodeAt(p) === 32) p++;
  }
  const comm = internAt(bytes, t, cpA.s, cpA.e);
  const pid = cpA.pid;
  if (!hasSuccess) return hasTarget ? { comm, pid, prio, target_cpu: target } : { comm, pid, prio };
  return hasTarget ? { comm, pid, prio, success, target_cpu: target } : { comm, pid, prio, success };
}
function parseWakeupReport(t) {
  const b = t.lastIndexOf(" [");
  if (b < 0) return null;
  const be = t.indexOf("]", b);
  if (be < 0) return null;
  const cp = commColonPid(t.slice(0, b));
  const prio = int(t.slice(b + 2, be));
  if (!cp || prio === null) return null;
  const out = { comm: cp[0], pid: cp[1], prio };
  const rest = t.slice(be + 1).trim();
  for (const tok of rest.split(" ")) {
    if (tok === "") continue;
    if (tok.startsWith("success=")) {
      const v = int(tok.slice(8));
      if (v === null) return null;
      out.success = v;
    } else if (tok.startsWith("CPU:")) {
      const v = int(tok.slice(4));
      if (v === null) return null;
      out.target_cpu = v;
    } else return null;
  }
  return out;
}
var parseSchedWakeup = ranged((t, s, e, args, b) => t.startsWith("comm=", s) ? parseWakeupKernel(t, s, e, b) : wakeupReportFast(t, s, e, b) ?? parseWakeupReport(args));
var parseSchedMigrateTask = ranged((t, s, e, _args, b) => {
  const out = kvRangeB(b, t, s, e, COMM_SPEC);
  if (out === null) return null;
  if (typeof out.pid !== "number" || typeof out.prio !== "number" || typeof out.orig_cpu !== "number" || typeof out.dest_cpu !== "number") return null;
  return typeof out.comm === "string" ? out : null;
});
var FORK_SPEC = new KvSpec({ comm: "parent_comm", pid: "parent_pid" }, /* @__PURE__ */ new Set(["parent_comm", "child_comm"]));
var parseSchedProcessFork = ranged((t, s, e) => {
  const out = kvRange(t, s, e, FORK_SPEC);
  if (out === null) return null;
  if (typeof out.parent_pid !== "number" || typeof out.child_pid !== "number") return null;
  return out;
});
var parseSchedProcessExit = ranged((t, s, e) => {
  const out = kvRange(t, s, e, COMM_SPEC);
  if (out === null) return null;
  if (typeof out.pid !== "number" || typeof out.comm !== "string") return null;
  if (out.group_dead === "true") out.group_dead = 1;
  else if (out.group_dead === "false") out.group_dead = 0;
  return out;
});

// server/decode/ftrace_text/fields/shrink_slab.ts
var START_LABELS = {
  "nid": "nid",
  "objects to shrink": "nr_objects_to_shrink",
  "gfp_flags": "gfp_flags",
  "pgs_scanned": "pgs_scanned",
  "lru_pgs": "lru_pgs",
  "cache items": "cache_items",
  "delta": "delta",
  "total_scan": "total_scan",
  "priority": "priority"
};
var END_LABELS = {
  "nid": "nid",
  "unused scan count": "unused_scan",
  "new scan count": "new_scan",
  "total_scan": "total_scan",
  "last shrinker return val": "retval"
};
var STRING_FIELDS = /* @__PURE__ */ new Set(["gfp_flags"]);
var MAX_LABEL_WORDS = 4;
function parseShrink(t, labels, required) {
  const colon = t.indexOf(": ");
  const headEnd = colon >= 0 ? colon : t.endsWith(":") ? t.length - 1 : -1;
  if (headEnd < 0) return null;
  const head = t.slice(0, headEnd).trim();
  const sp = head.lastIndexOf(" ");
  if (sp < 0) return null;
  const shr = normalizePointer(head.slice(sp + 1));
  if (shr === null) return null;
  const out = { shr, shrink: bareSymbol(head.slice(0, sp)) };
  const toks = t.slice(headEnd + 1).split(" ");
  let label = "";
  let words = 0;
  for (let i = 0; i < toks.length; i++) {
    const tok = toks[i];
    if (tok === "") continue;
    const cand = label ? label + " " + tok : tok;
    const key = cand.endsWith(":") ? cand.slice(0, -1) : cand;
    const field = labels[key];
    if (field !== void 0) {
      let j = i + 1;
      while (j < toks.length && toks[j] === "") j++;
      if (j >= toks.length) return null;
      const v = toks[j];
      if (STRING_FIELDS.has(field)) out[field] = v;
      else {
        const n2 = parseDecimal(v);
        if (n2 === null) return null;
        out[field] = n2;
      }
      i = j;
      label = "";
      words = 0;
      continue;
    }
    label = cand;
    if (++words >= MAX_LABEL_WORDS) return null;
  }
  if (label !== "") return null;
  for (const k of required) if (out[k] === void 0) return null;
  return out;
}
function labelTable(labels, required) {
  const requiredBits = /* @__PURE__ */ Object.create(null);
  required.forEach((k, i) => requiredBits[k] = 1 << i);
  return { labels: Object.entries(labels), required, requiredBits, allRequired: (1 << required.length) - 1, template: null };
}
function matchLabel(t, ls, te, table) {
  const labels = table.labels;
  outer: for (let k = 0; k < labels.length; k++) {
    const label = labels[k][0];
    const n2 = label.length;
    let p = ls;
    for (let q = 0; q < n2; q++) {
      if (p >= te) continue outer;
      const lc = label.charCodeAt(q);
      if (lc === 32) {
        if (t.charCodeAt(p) !== 32) continue outer;
        while (p < te && t.charCodeAt(p) === 32) p++;
      } else {
        if (t.charCodeAt(p) !== lc) continue outer;
        p++;
      }
    }
    if (p === te) return labels[k][1];
  }
  return void 0;
}
var normalizePtr = memoize((s) => normalizePointer(s) ?? "");
var bareSym = memoize(bareSymbol);
var heads = new RangeMemo(10, 4);
function readHead(t, s, headEnd, b) {
  const hit = b !== null ? heads.getB(b, s, headEnd) : heads.get(t, s, headEnd);
  if (hit !== void 0) return hit;
  let firstSp = -1;
  let lastSp = -1;
  for (let i = s; i < headEnd; i++) {
    const c = t.charCodeAt(i);
    if (c === 32) {
      if (firstSp < 0) firstSp = i;
      lastSp = i;
    } else if (c < 33 || c > 126) return null;
  }
  if (lastSp < 0 || firstSp === s || lastSp === headEnd - 1) return null;
  const shr = normalizePtr(t.slice(lastSp + 1, headEnd));
  if (shr === "") return null;
  let symEnd = firstSp;
  const plus = indexOfChar(t, 43, s, firstSp);
  if (plus > s) symEnd = plus;
  const head = { shr, shrink: bareSym(t.slice(s, symEnd)) };
  heads.set(t, s, headEnd, flat(t.slice(s, headEnd)), head);
  return head;
}
var templateVals = [];
function useTemplateB(tp, b, t, p, e, head) {
  const lits = tp.litsB;
  const vals = templateVals;
  for (let k = 0; k < lits.length; k++) {
    const lit = lits[k];
    if (!sameBytes(b, p, lit)) return null;
    const v = p + lit.n;
    if (v >= e || b[v] === 32) return null;
    let ve = v + 1;
    while (ve < e && b[ve] !== 32) ve++;
    if (tp.text[k]) vals[k] = internBytes(b, v, ve);
    else {
      const n2 = parseDecimalRangeB(b, t, v, ve);
      if (n2 === null) return null;
      vals[k] = n2;
    }
    p = ve;
  }
  if (p !== e) return null;
  return tp.build(head.shr, head.shrink, vals);
}
function useTemplate(tp, t, p, e, head) {
  const lits = tp.lits;
  const vals = templateVals;
  for (let k = 0; k < lits.length; k++) {
    const lit = lits[k];
    if (!t.startsWith(lit, p)) return null;
    const v = p + lit.length;
    if (v >= e || t.charCodeAt(v) === 32) return null;
    let ve = t.indexOf(" ", v);
    if (ve < 0 || ve > e) ve = e;
    if (tp.text[k]) vals[k] = internRange(t, v, ve);
    else {
      const n2 = parseDecimalRange(t, v, ve);
      if (n2 === null) return null;
      vals[k] = n2;
    }
    p = ve;
  }
  if (p !== e) return null;
  return tp.build(head.shr, head.shrink, vals);
}
function makeTemplate(lits, fields) {
  const body = fields.map((f, i) => `${JSON.stringify(f)}: v[${i}]`).join(", ");
  return {
    lits,
    litsB: lits.map(asciiBytes),
    fields,
    text: fields.map((f) => STRING_FIELDS.has(f)),
    build: new Function("a", "b", "v", `return { shr: a, shrink: b, ${body} };`)
  };
}
function sameStrings(a, b) {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
function shrinkFast(t, s, e, table, b) {
  let headEnd = t.indexOf(": ", s);
  if (headEnd < 0 || headEnd + 1 >= e) {
    if (e > s && t.charCodeAt(e - 1) === 58) headEnd = e - 1;
    else return null;
  }
  if (headEnd <= s) return null;
  const head = readHead(t, s, headEnd, b);
  if (head === null) return null;
  let p = headEnd + 1;
  const tp = table.template;
  if (tp !== null) {
    const out2 = b !== null ? useTemplateB(tp, b, t, p, e, head) : useTemplate(tp, t, p, e, head);
    if (out2 !== null) return out2;
  }
  const out = { shr: head.shr, shrink: head.shrink };
  const lits = [];
  const fields = [];
  let litStart = p;
  let seen = 0;
  const bits = table.requiredBits;
  let labelStart = -1;
  let words = 0;
  for (; ; ) {
    while (p < e && t.charCodeAt(p) === 32) p++;
    if (p >= e) break;
    let q = p;
    while (q < e && t.charCodeAt(q) !== 32) q++;
    if (labelStart < 0) labelStart = p;
    const te = t.charCodeAt(q - 1) === 58 ? q - 1 : q;
    const field = matchLabel(t, labelStart, te, table);
    if (field !== void 0) {
      let v = q;
      while (v < e && t.charCodeAt(v) === 32) v++;
      if (v >= e) return null;
      let ve = v;
      while (ve < e && t.charCodeAt(ve) !== 32) ve++;
      if (STRING_FIELDS.has(field)) out[field] = internRange(t, v, ve);
      else {
        const n2 = parseDecimalRange(t, v, ve);
        if (n2 === null) return null;
        out[field] = n2;
      }
      seen |= bits[field] ?? 0;
      lits.push(flat(t.slice(litStart, v)));
      fields.push(field);
      p = ve;
      litStart = ve;
      labelStart = -1;
      words = 0;
      continue;
    }
    if (++words >= MAX_LABEL_WORDS) return null;
    p = q;
  }
  if (labelStart >= 0 || seen !== table.allRequired) return null;
  if (litStart === e && (tp === null || !sameStrings(tp.lits, lits) || !sameStrings(tp.fields, fields))) {
    table.template = makeTemplate(lits, fields);
  }
  return out;
}
var START_REQUIRED = ["nr_objects_to_shrink", "cache_items", "delta", "total_scan"];
var END_REQUIRED = ["unused_scan", "new_scan", "total_scan", "retval"];
var START_TABLE = labelTable(START_LABELS, START_REQUIRED);
var END_TABLE = labelTable(END_LABELS, END_REQUIRED);
var parseShrinkSlabStart = ranged(
  (t, s, e, args, b) => shrinkFast(t, s, e, START_TABLE, b) ?? parseShrink(args, START_LABELS, START_REQUIRED)
);
var parseShrinkSlabEnd = ranged(
  (t, s, e, args, b) => shrinkFast(t, s, e, END_TABLE, b) ?? parseShrink(args, END_LABELS, END_REQUIRED)
);

// server/decode/ftrace_text/fields/vmscan.ts
var RENAME = {
  flags: "reclaim_flags",
  nr_activate_anon: "nr_activate0",
  nr_activate_file: "nr_activate1",
  usect_delayed: "usec_delayed",
  classzone: "highest_zoneidx"
};
var STRINGS = /* @__PURE__ */ new Set(["reclaim_flags", "gfp_flags", "reason", "lru"]);
var NUMERIC = /* @__PURE__ */ new Set(["pfn"]);
var SPEC = new KvSpec(RENAME, STRINGS, NUMERIC);
var VMSCAN_KV_SHAPES = /* @__PURE__ */ new Map();
function kv(required) {
  const keys = required.slice();
  const numeric = required.map((k) => !STRINGS.has(k));
  const parser = ranged((t, s, e, _args, b) => {
    const out = kvRangeB(b, t, s, e, SPEC);
    if (out === null) return null;
    for (let i = 0; i < keys.length; i++) {
      const v = out[keys[i]];
      if (v === void 0) return null;
      if (numeric[i] && typeof v === "string") return null;
    }
    return out;
  });
  VMSCAN_KV_SHAPES.set(parser, { spec: SPEC, required: keys });
  return parser;
}
var parseKswapdSleep = kv(["nid"]);
var parseKswapdWake = kv(["nid", "order"]);
var parseWakeupKswapd = kv(["nid", "order", "gfp_flags"]);
var parseReclaimBegin = kv(["order", "gfp_flags"]);
var parseReclaimEnd = kv(["nr_reclaimed"]);
var parseLruShrinkInactive = kv(["nid", "nr_scanned", "nr_reclaimed", "priority", "reclaim_flags"]);
var parseLruShrinkActive = kv(["nid", "nr_taken", "priority", "reclaim_flags"]);
var parseLruIsolate = kv(["order", "nr_requested", "nr_scanned", "nr_taken"]);
var parseReclaimPages = kv(["nid", "nr_scanned", "nr_reclaimed"]);
var parseThrottled = kv(["nid", "usec_timeout", "usec_delayed", "reason"]);
var parseWriteFolio = ranged((t, s, e, _args, b) => {
  const out = kvRangeB(b, t, s, e, SPEC);
  if (out === null) return null;
  if (typeof out.pfn !== "number" && typeof out.pfn !== "bigint") return null;
  if (typeof out.reclaim_flags !== "string") return null;
  delete out.page;
  return out;
});

// server/decode/ftrace_text/fields/workqueue.ts
var SPEC2 = new KvSpec({}, /* @__PURE__ */ new Set(["workqueue", "function"]));
function parseWorkqueueSlow(t) {
  if (!t.startsWith("work struct")) return null;
  let p = 11;
  if (t.charCodeAt(p) === 61 || t.charCodeAt(p) === 32) p++;
  let q = t.indexOf(" ", p);
  if (q < 0) q = t.length;
  let ptr = t.slice(p, q);
  if (ptr.endsWith(":")) ptr = ptr.slice(0, -1);
  const work = normalizePointer(ptr);
  if (work === null) return null;
  let rest = t.slice(q).trim();
  if (rest.startsWith("function ")) rest = "function=" + rest.slice(9).trim();
  const out = kvObject(rest, SPEC2) ?? {};
  out.work = work;
  if (typeof out.function === "string") out.function = bareSymbol(out.function);
  return out;
}
var normalizePtr2 = memoize((s) => normalizePointer(s) ?? "");
var bareSym2 = memoize(bareSymbol);
function workqueueFast(t, s, e) {
  if (e - s < 12 || !t.startsWith("work struct", s)) return null;
  let p = s + 11;
  const c = t.charCodeAt(p);
  if (c === 61 || c === 32) p++;
  let q = indexOfChar(t, 32, p, e);
  if (q < 0) q = e;
  const pe = q > p && t.charCodeAt(q - 1) === 58 ? q - 1 : q;
  if (pe <= p) return null;
  const work = normalizePtr2(internRange(t, p, pe));
  if (work === "") return null;
  const rs = trimStart(t, q, e);
  if (rs < 0) return null;
  const re = trimEnd(t, rs, e);
  if (re < 0) return null;
  if (rs === re) return { work };
  if (t.startsWith("function ", rs) && rs + 9 <= re) {
    const fs7 = trimStart(t, rs + 9, re);
    if (fs7 < 0 || fs7 >= re || indexOfChar(t, 61, fs7, re) >= 0) return null;
    return { function: bareSym2(internRange(t, fs7, re)), work };
  }
  const out = kvRange(t, rs, re, SPEC2);
  if (out === null) return { work };
  out.work = work;
  if (typeof out.function === "string") out.function = bareSym2(out.function);
  return out;
}
var parseWorkqueue = ranged((t, s, e, args) => workqueueFast(t, s, e) ?? parseWorkqueueSlow(args));

// server/decode/ftrace_text/fields/writeback.ts
var STRINGS2 = /* @__PURE__ */ new Set(["name", "bdi", "reason", "state"]);
var NUMERIC2 = /* @__PURE__ */ new Set(["range_start", "range_end"]);
var WORK_RENAME = { kupdate: "for_kupdate", background: "for_background" };
var INODE_RENAME = { index: "writeback_index", to_write: "nr_to_write" };
var QUEUE_IO_RENAME = { enqueue: "moved" };
var WBC_RENAME = {
  towrt: "nr_to_write",
  skip: "pages_skipped",
  mode: "sync_mode",
  kupd: "for_kupdate",
  bgrd: "for_background",
  cyclic: "range_cyclic",
  start: "range_start",
  end: "range_end"
};
var GLOBAL_RENAME = {
  dirty: "nr_dirty",
  writeback: "nr_writeback",
  bg_thresh: "background_thresh",
  background: "background_thresh",
  thresh: "dirty_thresh",
  limit: "dirty_limit",
  dirtied: "nr_dirtied",
  written: "nr_written"
};
function devT(s) {
  const m = /^(\d+)[:,](\d+)$/.exec(s.trim());
  if (!m) return null;
  return Number(m[1]) * 1048576 + Number(m[2]);
}
function bdiPrefix(t, out, nameField) {
  if (!t.startsWith("bdi ")) return t;
  const c = t.indexOf(": ", 4);
  const end = c >= 0 ? c : t.endsWith(":") ? t.length - 1 : -1;
  if (end < 0) return null;
  let name = t.slice(4, end);
  const br = /^(.*)\[(\d+)\]$/.exec(name);
  if (br) {
    name = br[1];
    out.bdi_id = Number(br[2]);
  }
  out[nameField] = name;
  return t.slice(end + 1).trim();
}
function bdiKv(rename, nameField = "name") {
  const spec = new KvSpec(rename, STRINGS2, NUMERIC2);
  return (t) => {
    const out = {};
    const rest = bdiPrefix(t, out, nameField);
    if (rest === null) return null;
    const { firstKeyAt } = splitKeyValues(rest);
    const pre = rest.slice(0, firstKeyAt).trim();
    if (pre.startsWith("sb_dev ")) {
      const d = devT(pre.slice(7));
      if (d === null) return null;
      out.sb_dev = d;
    } else if (pre !== "") return null;
    addKeyValues(rest.slice(firstKeyAt), out, spec);
    return out;
  };
}
var parseWriteback = bdiKv(void 0);
var parseWritebackWork = bdiKv(WORK_RENAME);
var parseWritebackSingleInode = bdiKv(INODE_RENAME);
var parseWritebackQueueIo = bdiKv(QUEUE_IO_RENAME);
var parseWbcWritepage = bdiKv(WBC_RENAME);
var parseBalanceDirtyPages = bdiKv(void 0, "bdi");
var GLOBAL_SPEC = new KvSpec(GLOBAL_RENAME);
var parseGlobalDirtyState = (t) => {
  const out = {};
  if (addKeyValues(t, out, GLOBAL_SPEC) === 0) return null;
  return out;
};
var parseWritebackInode = (t) => {
  const tok = t.trim().split(/ +/);
  if (tok.length < 10 || tok[0] !== "dev" || tok[2] !== "ino" || tok[4] !== "dirtied" || tok[6] !== "state" || tok[8] !== "mode") return null;
  const dev = devT(tok[1]);
  const ino = parseDecimal(tok[3]);
  const dirtied = parseDecimal(tok[5]);
  const mode = /^[0-7]+$/.test(tok[9]) ? parseInt(tok[9], 8) : null;
  if (dev === null || ino === null || dirtied === null || mode === null) return null;
  return { dev, ino, dirtied_when: dirtied, state: tok[7], mode };
};
var parseWritebackPagesWritten = (t) => {
  const v = parseDecimal(t.trim());
  return v === null ? null : { pages: v };
};

// server/decode/ftrace_text/fields/index.ts
var FIELD_PARSERS = {
  sched_switch: parseSchedSwitch,
  sched_wakeup: parseSchedWakeup,
  sched_wakeup_new: parseSchedWakeup,
  sched_waking: parseSchedWakeup,
  sched_migrate_task: parseSchedMigrateTask,
  sched_process_fork: parseSchedProcessFork,
  sched_process_exit: parseSchedProcessExit,
  mm_vmscan_kswapd_sleep: parseKswapdSleep,
  mm_vmscan_kswapd_wake: parseKswapdWake,
  mm_vmscan_wakeup_kswapd: parseWakeupKswapd,
  mm_vmscan_direct_reclaim_begin: parseReclaimBegin,
  mm_vmscan_memcg_reclaim_begin: parseReclaimBegin,
  mm_vmscan_memcg_softlimit_reclaim_begin: parseReclaimBegin,
  mm_vmscan_node_reclaim_begin: parseReclaimBegin,
  mm_vmscan_direct_reclaim_end: parseReclaimEnd,
  mm_vmscan_memcg_reclaim_end: parseReclaimEnd,
  mm_vmscan_memcg_softlimit_reclaim_end: parseReclaimEnd,
  mm_vmscan_node_reclaim_end: parseReclaimEnd,
  mm_vmscan_lru_shrink_inactive: parseLruShrinkInactive,
  mm_vmscan_lru_shrink_active: parseLruShrinkActive,
  mm_vmscan_lru_isolate: parseLruIsolate,
  mm_vmscan_writepage: parseWriteFolio,
  mm_vmscan_write_folio: parseWriteFolio,
  mm_vmscan_throttled: parseThrottled,
  mm_vmscan_reclaim_pages: parseReclaimPages,
  mm_shrink_slab_start: parseShrinkSlabStart,
  mm_shrink_slab_end: parseShrinkSlabEnd,
  workqueue_queue_work: parseWorkqueue,
  workqueue_activate_work: parseWorkqueue,
  workqueue_execute_start: parseWorkqueue,
  workqueue_execute_end: parseWorkqueue,
  writeback_dirty_page: parseWriteback,
  writeback_dirty_folio: parseWriteback,
  writeback_queue: parseWritebackWork,
  writeback_exec: parseWritebackWork,
  writeback_start: parseWritebackWork,
  writeback_written: parseWritebackWork,
  writeback_wait: parseWritebackWork,
  writeback_single_inode: parseWritebackSingleInode,
  writeback_single_inode_start: parseWritebackSingleInode,
  writeback_queue_io: parseWritebackQueueIo,
  wbc_writepage: parseWbcWritepage,
  balance_dirty_pages: parseBalanceDirtyPages,
  bdi_dirty_ratelimit: parseBalanceDirtyPages,
  global_dirty_state: parseGlobalDirtyState,
  writeback_dirty_inode_enqueue: parseWritebackInode,
  writeback_sb_inodes_requeue: parseWritebackInode,
  sb_mark_inode_writeback: parseWritebackInode,
  sb_clear_inode_writeback: parseWritebackInode,
  writeback_pages_written: parseWritebackPagesWritten
};
var SYSTEM_PREFIXES = [
  ["sched_", "sched"],
  ["mm_vmscan_", "vmscan"],
  ["mm_shrink_slab_", "vmscan"],
  ["workqueue_", "workqueue"],
  ["writeback_", "writeback"],
  ["balance_dirty_pages", "writeback"],
  ["global_dirty_state", "writeback"],
  ["bdi_dirty_ratelimit", "writeback"],
  ["wbc_writepage", "writeback"],
  ["track_foreign_dirty", "writeback"],
  ["flush_foreign", "writeback"],
  ["sb_mark_inode_writeback", "writeback"],
  ["sb_clear_inode_writeback", "writeback"],
  ["folio_wait_writeback", "writeback"],
  ["inode_foreign_history", "writeback"],
  ["inode_switch_wbs", "writeback"],
  ["mm_page_alloc", "kmem"],
  ["mm_page_free", "kmem"],
  ["kmalloc", "kmem"],
  ["kmem_cache_", "kmem"],
  ["kfree", "kmem"],
  ["xfs_", "xfs"],
  ["ext4_", "ext4"],
  ["irq_handler_", "irq"],
  ["softirq_", "irq"],
  ["block_", "block"],
  ["timer_", "timer"],
  ["hrtimer_", "timer"],
  ["damon_", "damon"],
  ["mm_compaction_", "compaction"],
  ["oom_score_adj_update", "oom"],
  ["mark_victim", "oom"],
  ["cpu_idle", "power"],
  ["cpu_frequency", "power"]
];
var systemCache = /* @__PURE__ */ new Map();
function systemOf(name) {
  const hit = systemCache.get(name);
  if (hit !== void 0) return hit;
  let sys = null;
  if (name === "kernel_stack" || name === "user_stack" || name === "function" || name === "print" || name === "bprint" || name === "bputs") sys = "ftrace";
  else {
    for (const [p, s] of SYSTEM_PREFIXES) {
      if (name.startsWith(p)) {
        sys = s;
        break;
      }
    }
  }
  systemCache.set(name, sys);
  return sys;
}
function nameHashStep(h, c) {
  return Math.imul(h, 31) + c | 0;
}
function hashOf(s) {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = nameHashStep(h, s.charCodeAt(i));
  return h;
}
function writebackBdiRange(t, s, e, args, b) {
  if (args.startsWith("bdi ")) return parseWriteback(args) ?? parseGeneric(args);
  return parseGenericRange(t, s, e, args, b);
}
function rangeParserFor(name) {
  const p = FIELD_PARSERS[name];
  if (p) {
    const r = RANGE_PARSERS.get(p);
    if (r !== void 0) return r;
    return (_t, _s, _e, args) => p(args);
  }
  if (systemOf(name) === "writeback") return writebackBdiRange;
  return parseGenericRange;
}
var NAME_BUCKETS = 1024;
var MAX_NAMES = 8192;
var nameBuckets = Array.from({ length: NAME_BUCKETS }, () => []);
var nameCount = 0;
function newNameInfo(name, hash) {
  return { name, system: systemOf(name), parse: rangeParserFor(name), hash };
}
function eventNameAt(t, s, e, hash) {
  const bucket = nameBuckets[hash & NAME_BUCKETS - 1];
  const len = e - s;
  for (let i = 0; i < bucket.length; i++) {
    const info2 = bucket[i];
    if (info2.hash === hash && info2.name.length === len && sameChars(t, s, info2.name)) return info2;
  }
  const info = newNameInfo(flat(t.slice(s, e)), hash);
  if (nameCount < MAX_NAMES) {
    bucket.push(info);
    nameCount++;
  }
  return info;
}
function eventNameInfo(name) {
  return eventNameAt(name, 0, name.length, hashOf(name));
}

// server/decode/ftrace_text/line_reader.ts
import { isAscii } from "node:buffer";
var MAX_LINE_BYTES = 1 << 20;
var EXCERPT_CHARS = 200;
var NL = 10;
function asBuffer(u) {
  return Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}
var LineSplitter = class {
  constructor(handler, maxLineBytes = MAX_LINE_BYTES) {
    this.handler = handler;
    this.maxLineBytes = maxLineBytes;
  }
  handler;
  maxLineBytes;
  lineNo = 0;
  /** Offset of the next unconsumed byte in the stream. */
  offset = 0;
  /** Partial line carried over from previous chunks. */
  carry = [];
  carryBytes = 0;
  /** Set while discarding an over-long line. */
  longLine = null;
  first = true;
  /** Bytes consumed so far (including a pending partial line). */
  get bytesSeen() {
    return this.offset + this.carryBytes + (this.longLine ? this.longLine.bytes : 0);
  }
  push(chunkIn) {
    let chunk = asBuffer(chunkIn);
    if (chunk.length === 0) return;
    if (this.first) {
      this.first = false;
      if (chunk.length >= 3 && chunk[0] === 239 && chunk[1] === 187 && chunk[2] === 191) {
        this.offset += 3;
        chunk = chunk.subarray(3);
      }
    }
    let pos = 0;
    const len = chunk.length;
    if (this.longLine) {
      const nl = chunk.indexOf(NL);
      if (nl < 0) {
        this.longLine.bytes += len;
        return;
      }
      this.longLine.bytes += nl;
      this.finishLongLine(nl + 1);
      pos = nl + 1;
    } else if (this.carryBytes > 0) {
      const nl = chunk.indexOf(NL);
      if (nl < 0) {
        this.addCarry(chunk);
        return;
      }
      this.carry.push(chunk.subarray(0, nl + 1));
      const lineBuf = Buffer.concat(this.carry, this.carryBytes + nl + 1);
      this.carry = [];
      this.carryBytes = 0;
      if (lineBuf.length - 1 > this.maxLineBytes) {
        this.longLine = { lineNo: this.lineNo + 1, offset: this.offset, excerpt: excerptOf(lineBuf), bytes: lineBuf.length - 1 };
        this.finishLongLine(lineBuf.length);
      } else {
        this.emitBlock(lineBuf, 0, lineBuf.length);
      }
      pos = nl + 1;
    }
    if (pos >= len) return;
    const lastNl = chunk.lastIndexOf(NL);
    if (lastNl >= pos) {
      this.emitBlock(chunk, pos, lastNl + 1);
      pos = lastNl + 1;
    }
    if (pos < len) this.addCarry(chunk.subarray(pos));
  }
  /** Flushes a final line without terminator. */
  end() {
    if (this.longLine) {
      this.finishLongLine(0);
      return;
    }
    if (this.carryBytes > 0) {
      const buf = Buffer.concat(this.carry, this.carryBytes);
      this.carry = [];
      this.carryBytes = 0;
      const text = stripCr(buf.toString("utf8"));
      this.lineNo++;
      this.handler.line(text, this.lineNo, this.offset);
      this.offset += buf.length;
    }
  }
  addCarry(part) {
    if (this.carryBytes + part.length > this.maxLineBytes) {
      const head = Buffer.concat([...this.carry, part]);
      this.longLine = { lineNo: this.lineNo + 1, offset: this.offset, excerpt: excerptOf(head), bytes: head.length };
      this.carry = [];
      this.carryBytes = 0;
      return;
    }
    this.carry.push(Buffer.from(part));
    this.carryBytes += part.length;
  }
  /** Reports the over-long line; `consumedTerminator` bytes of newline are accounted. */
  finishLongLine(consumedTerminator) {
    const l = this.longLine;
    this.longLine = null;
    this.lineNo = l.lineNo;
    this.handler.tooLong(l.lineNo, l.offset, l.excerpt, l.bytes);
    this.offset = l.offset + l.bytes + (consumedTerminator > 0 ? 1 : 0);
  }
  /** Emits the complete lines in buf[start, end) (end is just past a '\n'). */
  emitBlock(buf, start, end) {
    const h = this.handler;
    const bytes = buf.subarray(start, end);
    if (isAscii(bytes)) {
      const base = this.offset;
      const n2 = bytes.length;
      let p2 = 0;
      let lineNo = this.lineNo;
      while (p2 < n2) {
        const nl = bytes.indexOf(NL, p2);
        let e = nl;
        if (e > p2 && bytes[e - 1] === 13) e--;
        lineNo++;
        h.asciiLine(bytes, p2, e, lineNo, base + p2);
        p2 = nl + 1;
      }
      this.lineNo = lineNo;
      this.offset = base + n2;
      return;
    }
    let p = start;
    while (p < end) {
      const nl = buf.indexOf(NL, p);
      const lineText = stripCr(buf.toString("utf8", p, nl));
      this.lineNo++;
      h.line(lineText, this.lineNo, this.offset);
      this.offset += nl + 1 - p;
      p = nl + 1;
    }
  }
};
function stripCr(s) {
  const n2 = s.length;
  if (n2 > 0 && s.charCodeAt(n2 - 1) === 13) return s.slice(0, n2 - 1);
  if (n2 > 0 && s.charCodeAt(n2 - 1) === 10) return stripCr(s.slice(0, n2 - 1));
  return s;
}
function excerptOf(buf) {
  return buf.toString("utf8", 0, Math.min(buf.length, EXCERPT_CHARS * 2)).slice(0, EXCERPT_CHARS).replace(/[\r\n]+$/, "");
}
function excerpt(line) {
  return line.length <= EXCERPT_CHARS ? line : line.slice(0, EXCERPT_CHARS);
}

// server/decode/ftrace_text/parse_event_line.ts
function newEventLine() {
  return { comm: null, pid: 0, tgid: null, cpu: 0, flags: null, preemptCount: null, secs: 0, nsec: 0, name: "", nameInfo: null, args: "", argsText: "", argsStart: 0, argsEnd: 0, argsBytes: null, instance: null };
}
var SP = 32;
var C0 = 48;
var C9 = 57;
function isDigit(c) {
  return c >= C0 && c <= C9;
}
function hexVal(c) {
  if (c >= C0 && c <= C9) return c - C0;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}
var FRAC_SCALE = [1e9, 1e8, 1e7, 1e6, 1e5, 1e4, 1e3, 100, 10, 1];
function irqsOffBits(c) {
  switch (c) {
    case 46:
      return 0;
    // .
    case 100:
      return TRACE_FLAGS.IRQS_OFF;
    // d
    case 68:
      return TRACE_FLAGS.IRQS_OFF | TRACE_FLAGS.BH_OFF;
    // D
    case 98:
      return TRACE_FLAGS.BH_OFF;
    // b
    case 88:
      return TRACE_FLAGS.IRQS_NOSUPPORT;
    // X
    default:
      return -1;
  }
}
function needReschedBits(c, style) {
  switch (c) {
    case 46:
      return 0;
    // .
    case 78:
      return style === "kernel" ? TRACE_FLAGS.NEED_RESCHED | TRACE_FLAGS.PREEMPT_RESCHED : TRACE_FLAGS.NEED_RESCHED;
    // N
    case 110:
      return TRACE_FLAGS.NEED_RESCHED;
    // n
    case 112:
      return TRACE_FLAGS.PREEMPT_RESCHED;
    // p
    case 76:
      return 2 | TRACE_FLAGS.PREEMPT_RESCHED;
    // L: lazy + preempt
    case 108:
      return 2;
    // l: lazy
    case 98:
      return TRACE_FLAGS.NEED_RESCHED | 2;
    // b: need + lazy
    case 66:
      return TRACE_FLAGS.NEED_RESCHED | 2 | TRACE_FLAGS.PREEMPT_RESCHED;
    // B
    default:
      return -1;
  }
}
function hardSoftBits(c) {
  switch (c) {
    case 46:
      return 0;
    // .
    case 104:
      return TRACE_FLAGS.HARDIRQ;
    // h
    case 115:
      return TRACE_FLAGS.SOFTIRQ;
    // s
    case 72:
      return TRACE_FLAGS.HARDIRQ | TRACE_FLAGS.SOFTIRQ;
    // H
    case 122:
      return TRACE_FLAGS.NMI;
    // z
    case 90:
      return TRACE_FLAGS.NMI | TRACE_FLAGS.HARDIRQ;
    // Z
    case 98:
      return TRACE_FLAGS.BH_OFF;
    // b
    default:
      return -1;
  }
}
function parseFlagsToken(line, start, end, style, out) {
  const n2 = end - start;
  if (n2 < 4 || n2 > 6) return false;
  const a = irqsOffBits(line.charCodeAt(start));
  const b = needReschedBits(line.charCodeAt(start + 1), style);
  const c = hardSoftBits(line.charCodeAt(start + 2));
  if (a < 0 || b < 0 || c < 0) return false;
  const d = line.charCodeAt(start + 3);
  const depth = d === 46 ? 0 : hexVal(d);
  if (depth < 0) return false;
  let migrate = 0;
  if (n2 >= 5) {
    const m = line.charCodeAt(start + 4);
    migrate = m === 46 ? 0 : hexVal(m);
    if (migrate < 0) return false;
  }
  out.flags = a | b | c;
  out.preemptCount = depth | migrate << 4;
  return true;
}
function parseTail(line, p, out, n2) {
  let secs = 0;
  const s0 = p;
  let c = 0;
  while (p < n2 && isDigit(c = line.charCodeAt(p))) {
    secs = secs * 10 + (c - C0);
    p++;
  }
  const intDigits = p - s0;
  if (intDigits === 0) return false;
  let nsec = 0;
  if (p < n2 && c === 46) {
    p++;
    const f0 = p;
    let frac = 0;
    while (p < n2 && isDigit(c = line.charCodeAt(p))) {
      if (p - f0 < 9) frac = frac * 10 + (c - C0);
      p++;
    }
    const k = p - f0;
    if (k === 0) return false;
    nsec = frac * FRAC_SCALE[Math.min(k, 9)];
    if (intDigits > 15) return false;
  } else {
    if (intDigits > 15) {
      const v = BigInt(line.slice(s0, p));
      secs = Number(v / 1000000000n);
      nsec = Number(v % 1000000000n);
    } else {
      nsec = secs % 1e9;
      secs = Math.floor(secs / 1e9);
    }
  }
  if (p >= n2 || line.charCodeAt(p) !== 58) return false;
  p++;
  if (p < n2 && line.charCodeAt(p) !== SP) return false;
  while (p < n2 && line.charCodeAt(p) === SP) p++;
  out.secs = secs;
  out.nsec = nsec;
  const nameStart = p;
  const colon = line.indexOf(":", p);
  if (colon > p && colon < n2) {
    const known = namesByText.get(line, p, colon);
    if (known !== void 0) return setNamed(line, colon + 1, n2, known, out);
  }
  let h = 0;
  while (p < n2) {
    c = line.charCodeAt(p);
    if (c === 58 || c === SP) break;
    h = nameHashStep(h, c);
    p++;
  }
  if (p < n2 && c === 58 && p > nameStart) {
    const info = eventNameAt(line, nameStart, p, h);
    namesByText.set(line, nameStart, p, info.name, info);
    return setNamed(line, p + 1, n2, info, out);
  }
  const rest = line.slice(nameStart, n2).trim();
  if (rest.startsWith("<stack trace>")) return setSpecial(out, "kernel_stack", "");
  if (rest.startsWith("<user stack trace>")) return setSpecial(out, "user_stack", "");
  if (rest.indexOf(" <-") > 0) return setSpecial(out, "function", rest);
  return false;
}
var namesByText = new RangeMemo(10, 4);
function setNamed(line, p, n2, info, out) {
  out.nameInfo = info;
  out.name = info.name;
  while (p < n2 && line.charCodeAt(p) === SP) p++;
  let e = n2;
  while (e > p && line.charCodeAt(e - 1) === SP) e--;
  out.args = p === 0 && e === line.length ? line : line.slice(p, e);
  out.argsText = line;
  out.argsStart = p;
  out.argsEnd = e;
  out.argsBytes = null;
  return true;
}
function setSpecial(out, name, args) {
  const info = eventNameInfo(name);
  out.nameInfo = info;
  out.name = info.name;
  out.args = args;
  out.argsText = args;
  out.argsStart = 0;
  out.argsEnd = args.length;
  out.argsBytes = null;
  return true;
}
var commsByText = new RangeMemo(10, 4);
function parseCommPid(line, from, end, out) {
  let e = end;
  let pid = 0;
  let mult = 1;
  while (e >= from) {
    const c = line.charCodeAt(e);
    if (!isDigit(c)) break;
    pid += (c - C0) * mult;
    mult *= 10;
    e--;
  }
  if (e === end || e < from || line.charCodeAt(e) !== 45) return false;
  let comm = e > from ? commsByText.get(line, from, e) : void 0;
  if (comm === void 0) {
    let s = from;
    while (s < e && line.charCodeAt(s) === SP) s++;
    comm = line.slice(s, e);
    if (e > from) {
      comm = flat(comm);
      commsByText.set(line, from, e, flat(line.slice(from, e)), comm);
    }
  }
  out.comm = comm === "<...>" ? null : comm;
  out.pid = pid;
  return true;
}
function parseNormalLine(line, style, out, allowInstancePrefix, start = 0, end = line.length) {
  const n2 = end;
  let b = indexOfBracket(line, start, n2);
  let cpu = 0;
  let j = 0;
  for (; ; ) {
    if (b < 0) return false;
    j = b + 1;
    cpu = 0;
    let c = 0;
    while (j < n2 && isDigit(c = line.charCodeAt(j))) {
      cpu = cpu * 10 + (c - C0);
      j++;
    }
    if (j > b + 1 && j < n2 && c === 93 && b > start && line.charCodeAt(b - 1) === SP) break;
    b = indexOfBracket(line, b + 1, n2);
  }
  out.cpu = cpu;
  let e = b - 1;
  while (e >= start && line.charCodeAt(e) === SP) e--;
  out.tgid = null;
  if (e >= start && line.charCodeAt(e) === 41) {
    const o = line.lastIndexOf("(", e);
    if (o < start) return false;
    let t = 0;
    let digits = 0;
    for (let k = o + 1; k < e; k++) {
      const c = line.charCodeAt(k);
      if (isDigit(c)) {
        t = t * 10 + (c - C0);
        digits++;
      } else if (c !== SP && c !== 45) return false;
    }
    out.tgid = digits > 0 ? t : null;
    e = o - 1;
    while (e >= start && line.charCodeAt(e) === SP) e--;
  }
  let from = start;
  out.instance = null;
  if (allowInstancePrefix) {
    let s = start;
    while (s < e && line.charCodeAt(s) === SP) s++;
    const colon = line.indexOf(": ", s);
    if (colon > s && colon < e) {
      const pfx = line.slice(s, colon);
      if (pfx.indexOf(" ") < 0) {
        out.instance = pfx;
        from = colon + 2;
      }
    }
  }
  if (!parseCommPid(line, from, e, out)) return false;
  let p = j + 1;
  while (p < n2 && line.charCodeAt(p) === SP) p++;
  if (p >= n2) return false;
  out.flags = null;
  out.preemptCount = null;
  if (!isDigit(line.charCodeAt(p))) {
    let q = p;
    while (q < n2 && line.charCodeAt(q) !== SP) q++;
    if (!parseFlagsToken(line, p, q, style, out)) return false;
    p = q;
    while (p < n2 && line.charCodeAt(p) === SP) p++;
  }
  return parseTail(line, p, out, n2);
}
function indexOfBracket(line, from, end) {
  const b = line.indexOf("[", from);
  return b < end ? b : -1;
}
function parseLatencyLine(line, style, out, start = 0, end = line.length) {
  const n2 = end;
  let d = indexOfDash(line, start, n2);
  while (d >= 0) {
    let p = d + 1;
    let pid = 0;
    while (p < n2 && isDigit(line.charCodeAt(p))) {
      pid = pid * 10 + (line.charCodeAt(p) - C0);
      p++;
    }
    if (p > d + 1 && p < n2 && line.charCodeAt(p) === SP) {
      while (p < n2 && line.charCodeAt(p) === SP) p++;
      let cpu = 0;
      const c0 = p;
      while (p < n2 && isDigit(line.charCodeAt(p))) {
        cpu = cpu * 10 + (line.charCodeAt(p) - C0);
        p++;
      }
      if (p > c0 && p < n2 && line.charCodeAt(p) !== SP) {
        let q = p;
        while (q < n2 && line.charCodeAt(q) !== SP) q++;
        if (parseFlagsToken(line, p, q, style, out)) {
          let s = start;
          while (s < d && line.charCodeAt(s) === SP) s++;
          const comm = line.slice(s, d);
          out.comm = comm === "<...>" ? null : comm;
          out.pid = pid;
          out.cpu = cpu;
          out.tgid = null;
          out.instance = null;
          while (q < n2 && line.charCodeAt(q) === SP) q++;
          return parseTail(line, q, out, n2);
        }
      }
    }
    d = indexOfDash(line, d + 1, n2);
  }
  return false;
}
function indexOfDash(line, from, end) {
  for (let i = from; i < end; i++) if (line.charCodeAt(i) === 45) return i;
  return -1;
}
function parseFlagsTokenB(b, start, end, style, out) {
  const n2 = end - start;
  if (n2 < 4 || n2 > 6) return false;
  const x = irqsOffBits(b[start]);
  const y = needReschedBits(b[start + 1], style);
  const z = hardSoftBits(b[start + 2]);
  if (x < 0 || y < 0 || z < 0) return false;
  const d = b[start + 3];
  const depth = d === 46 ? 0 : hexVal(d);
  if (depth < 0) return false;
  let migrate = 0;
  if (n2 >= 5) {
    const m = b[start + 4];
    migrate = m === 46 ? 0 : hexVal(m);
    if (migrate < 0) return false;
  }
  out.flags = x | y | z;
  out.preemptCount = depth | migrate << 4;
  return true;
}
function parseTailB(b, p, out, n2) {
  let secs = 0;
  const s0 = p;
  let c = 0;
  while (p < n2 && (c = b[p]) >= C0 && c <= C9) {
    secs = secs * 10 + (c - C0);
    p++;
  }
  const intDigits = p - s0;
  if (intDigits === 0 || p >= n2 || c !== 46 || intDigits > 15) return false;
  p++;
  const f0 = p;
  let frac = 0;
  while (p < n2 && (c = b[p]) >= C0 && c <= C9) {
    if (p - f0 < 9) frac = frac * 10 + (c - C0);
    p++;
  }
  const k = p - f0;
  if (k === 0) return false;
  if (p >= n2 || c !== 58) return false;
  p++;
  if (p < n2 && b[p] !== SP) return false;
  while (p < n2 && b[p] === SP) p++;
  out.secs = secs;
  out.nsec = frac * FRAC_SCALE[k < 9 ? k : 9];
  let colon = p;
  while (colon < n2 && (c = b[colon]) !== 58 && c !== SP) colon++;
  if (colon === p || colon >= n2 || c !== 58) return false;
  const known = namesByText.getB(b, p, colon);
  if (known === void 0) return false;
  let a = colon + 1;
  while (a < n2 && b[a] === SP) a++;
  let e = n2;
  while (e > a && b[e - 1] === SP) e--;
  out.nameInfo = known;
  out.name = known.name;
  out.args = "";
  out.argsText = null;
  out.argsStart = a;
  out.argsEnd = e;
  out.argsBytes = b;
  return true;
}
function parseCommPidB(b, from, end, out) {
  let e = end;
  let pid = 0;
  let mult = 1;
  let c = 0;
  while (e >= from && (c = b[e]) >= C0 && c <= C9) {
    pid += (c - C0) * mult;
    mult *= 10;
    e--;
  }
  if (e === end || e <= from || c !== 45) return false;
  let comm = commsByText.getB(b, from, e);
  if (comm === void 0) {
    let s = from;
    while (s < e && b[s] === SP) s++;
    comm = latin1(b, s, e);
    const padded = latin1(b, from, e);
    commsByText.set(padded, 0, padded.length, padded, comm);
  }
  out.comm = comm === "<...>" ? null : comm;
  out.pid = pid;
  return true;
}
function parseNormalLineB(b, style, out, start, end) {
  const n2 = end;
  let br = start;
  let cpu = 0;
  let j = 0;
  for (; ; ) {
    while (br < n2 && b[br] !== 91) br++;
    if (br >= n2) return false;
    j = br + 1;
    cpu = 0;
    let c2 = 0;
    while (j < n2 && (c2 = b[j]) >= C0 && c2 <= C9) {
      cpu = cpu * 10 + (c2 - C0);
      j++;
    }
    if (j > br + 1 && j < n2 && c2 === 93 && br > start && b[br - 1] === SP) break;
    br++;
  }
  let e = br - 1;
  while (e >= start && b[e] === SP) e--;
  out.cpu = cpu;
  out.tgid = null;
  if (e >= start && b[e] === 41) {
    let o = e - 1;
    while (o >= start && b[o] !== 40) o--;
    if (o < start) return false;
    let t = 0;
    let digits = 0;
    for (let k = o + 1; k < e; k++) {
      const c2 = b[k];
      if (c2 >= C0 && c2 <= C9) {
        t = t * 10 + (c2 - C0);
        digits++;
      } else if (c2 !== SP && c2 !== 45) return false;
    }
    out.tgid = digits > 0 ? t : null;
    e = o - 1;
    while (e >= start && b[e] === SP) e--;
  }
  out.instance = null;
  if (!parseCommPidB(b, start, e, out)) return false;
  let p = j + 1;
  while (p < n2 && b[p] === SP) p++;
  if (p >= n2) return false;
  out.flags = null;
  out.preemptCount = null;
  const c = b[p];
  if (c < C0 || c > C9) {
    let q = p;
    while (q < n2 && b[q] !== SP) q++;
    if (!parseFlagsTokenB(b, p, q, style, out)) return false;
    p = q;
    while (p < n2 && b[p] === SP) p++;
  }
  return parseTailB(b, p, out, n2);
}
function eventArgs(ev) {
  if (ev.argsText === null) {
    ev.argsText = ev.args = latin1(ev.argsBytes, ev.argsStart, ev.argsEnd);
    ev.argsStart = 0;
    ev.argsEnd = ev.args.length;
    ev.argsBytes = null;
  }
  return ev.args;
}
function parseLostLine(line) {
  const t = line.trim();
  if (t.startsWith("CPU:")) {
    let p = 4;
    let cpu = 0;
    const s = p;
    while (p < t.length && isDigit(t.charCodeAt(p))) cpu = cpu * 10 + (t.charCodeAt(p++) - C0);
    if (p === s) return null;
    const rest = t.slice(p).trim();
    let m = /^\[LOST (\d+) EVENTS\]$/.exec(rest);
    if (m) return { cpu, count: Number(m[1]) };
    m = /^\[(\d+) EVENTS DROPPED\]$/.exec(rest);
    if (m) return { cpu, count: Number(m[1]) };
    if (rest === "[EVENTS DROPPED]" || rest === "[LOST EVENTS]") return { cpu, count: null };
    return null;
  }
  if (t.startsWith("#####")) {
    const m = /^#+ CPU (\d+) buffer started #+$/.exec(t);
    if (m) return { cpu: Number(m[1]), count: null };
  }
  return null;
}

// server/decode/ftrace_text/decode_ftrace_text.ts
var PROGRESS_EVERY_BYTES = 8 << 20;
var MAX_SKIPPED_BEFORE_FIRST_EVENT = 1e4;
var FtraceTextDecoder = class {
  constructor(sink, label) {
    this.sink = sink;
    this.label = label;
  }
  sink;
  label;
  ev = newEventLine();
  format = null;
  formatVersion = null;
  headerCpus = null;
  meta = {};
  emptyCpus = [];
  headerSent = false;
  early = [];
  baseSecs = 0;
  /** Which line grammar matched last: try it first. */
  latencyMode = false;
  instancePrefixes = false;
  instances = /* @__PURE__ */ new Set();
  lastTs = [];
  /** Event held back so continuation lines (` => func` stack frames) can join its raw text. */
  held = null;
  /** The sink's taker of events with their text unparsed (RawTextSink), null if none. */
  raw = null;
  rawTakes = /* @__PURE__ */ new Map();
  /** The block of lines raw.page() was last given. */
  rawPage = null;
  /** The last event went to raw.record(): continuation lines go there too. */
  lastRaw = false;
  /** Without a raw taker: the block of lines last decoded into a string, and that string. */
  blockTextOf = null;
  blockText = "";
  summary = {
    format: "tracefs_text",
    lines: 0,
    events: 0,
    outOfOrderLines: 0,
    firstOutOfOrderLine: null,
    unparsedEvents: 0,
    unparsedByName: {},
    skippedLines: 0,
    lostEventNotices: 0,
    maxCpu: -1,
    instances: [],
    bytes: 0
  };
  /**
   * libtraceevent 1.7 (trace-cmd 3.x report -l) prints the flags column
   * exactly as the kernel does (checked against trace.dat flags on a real
   * recording): one reading for every producer.
   */
  get flagStyle() {
    return "kernel";
  }
  /** An ASCII line, block[start, end): the common event lines are read on its bytes, the rest as a string. */
  onAsciiLine(block, start, end, lineNo) {
    if (end > start && block[start] !== 35 && !this.latencyMode && !this.instancePrefixes && parseNormalLineB(block, this.flagStyle, this.ev, start, end)) {
      this.summary.lines = lineNo;
      this.acceptEvent(lineNo);
      return;
    }
    this.onLine(latin1(block, start, end), lineNo);
  }
  /** Any line, as a string (the definition of every line's reading). */
  onLine(line, lineNo) {
    this.summary.lines = lineNo;
    if (line.length === 0) return;
    if (line.charCodeAt(0) === 35) {
      this.onHashLine(line, lineNo);
      return;
    }
    if (this.tryEvent(line, 0, line.length, lineNo)) return;
    this.onOtherLine(line, lineNo);
  }
  tryEvent(line, start, end, lineNo) {
    const ev = this.ev;
    const style = this.flagStyle;
    let ok;
    if (this.latencyMode) {
      ok = parseLatencyLine(line, style, ev, start, end);
      if (!ok && parseNormalLine(line, style, ev, this.instancePrefixes, start, end)) {
        ok = true;
        this.latencyMode = false;
      }
    } else {
      ok = parseNormalLine(line, style, ev, this.instancePrefixes, start, end);
      if (!ok && parseLatencyLine(line, style, ev, start, end)) {
        ok = true;
        this.latencyMode = true;
      }
    }
    if (!ok) return false;
    this.acceptEvent(lineNo);
    return true;
  }
  /** The line just parsed into this.ev is an event. */
  acceptEvent(lineNo) {
    if (!this.headerSent) this.sendHeader(this.ev);
    this.emitEvent(this.ev, lineNo);
  }
  onHashLine(line, lineNo) {
    const lost = parseLostLine(line);
    if (lost) {
      this.lost(lost.cpu, lost.count, lineNo);
      return;
    }
    this.flushHeld();
    if (this.headerSent) return;
    if (this.format === null) this.format = "tracefs_text";
    let m = /^#\s*tracer:\s*(\S+)/.exec(line);
    if (m) {
      this.meta.tracer = m[1];
      return;
    }
    m = /^#\s*entries-in-buffer\/entries-written:\s*(\d+)\/(\d+)\s+#P:(\d+)/.exec(line);
    if (m) {
      this.meta.entries_in_buffer = m[1];
      this.meta.entries_written = m[2];
      this.headerCpus = Number(m[3]);
      return;
    }
  }
  onOtherLine(line, lineNo) {
    const t = line.trim();
    if (t.length === 0) return;
    if (t.startsWith("=> ") && this.held) {
      this.held.raw = this.held.raw ? this.held.raw + "\n" + t : t;
      return;
    }
    if (t.startsWith("=> ") && this.lastRaw) {
      this.raw.continuation(t);
      return;
    }
    const lost = parseLostLine(t);
    if (lost) {
      this.lost(lost.cpu, lost.count, lineNo);
      return;
    }
    this.flushHeld();
    let m = /^(?:(\S+): )?cpus=(\d+)$/.exec(t);
    if (m) {
      this.setReport();
      if (this.headerCpus === null) this.headerCpus = Number(m[2]);
      if (m[1] !== void 0) this.instancePrefixes = true;
      return;
    }
    m = /^version = (\S+)$/.exec(t);
    if (m) {
      this.setReport();
      this.formatVersion = m[1];
      return;
    }
    m = /^CPU (\d+) is empty$/.exec(t);
    if (m) {
      this.setReport();
      this.emptyCpus.push(Number(m[1]));
      if (this.headerSent) this.meta.empty_cpus = this.emptyCpus.join(",");
      return;
    }
    if (/^CPU:\d+ \[SUBBUFFER START\]/.test(t)) return;
    if (this.format === "trace_cmd_report" && !this.instancePrefixes && /^\S+: /.test(t)) {
      this.instancePrefixes = true;
      if (this.tryEvent(line, 0, line.length, lineNo)) return;
      this.instancePrefixes = false;
    }
    this.skip(lineNo, "not an ftrace event line", line);
  }
  setReport() {
    if (this.format === null || !this.headerSent && this.format === "tracefs_text") this.format = "trace_cmd_report";
  }
  sendHeader(ev) {
    if (this.format === null) this.format = "tracefs_text";
    this.summary.format = this.format;
    this.baseSecs = ev.secs;
    if (this.emptyCpus.length) this.meta.empty_cpus = this.emptyCpus.join(",");
    if (this.latencyMode) this.meta.text_layout = "latency";
    if (ev.instance !== null) this.meta.instances = ev.instance;
    const header = {
      format: this.format,
      formatVersion: this.formatVersion,
      cpus: this.headerCpus,
      tsBaseNs: BigInt(ev.secs) * 1000000000n,
      meta: this.meta
    };
    this.sink.header(header);
    this.headerSent = true;
    this.raw = isRawTextSink(this.sink) ? this.sink.rawText() : null;
    for (const p of this.early) {
      if (p.kind === "lost") this.sink.lostEvents(p.cpu, p.count, p.where);
      else this.sink.skipped(p.problem);
    }
    this.early.length = 0;
  }
  emitEvent(ev, lineNo) {
    this.flushHeld();
    const ts = (ev.secs - this.baseSecs) * 1e9 + ev.nsec;
    const cpu = ev.cpu;
    const s = this.summary;
    if (cpu > s.maxCpu) {
      s.maxCpu = cpu;
      while (this.lastTs.length <= cpu) this.lastTs.push(-Infinity);
    }
    if (ts < this.lastTs[cpu]) {
      s.outOfOrderLines++;
      if (s.firstOutOfOrderLine === null) s.firstOutOfOrderLine = lineNo;
    } else this.lastTs[cpu] = ts;
    if (ev.instance !== null && !this.instances.has(ev.instance)) this.instances.add(flat(ev.instance));
    const info = ev.nameInfo;
    if (this.raw !== null && this.takesRaw(info)) {
      const bytes = ev.argsBytes;
      if (bytes !== null) {
        if (bytes !== this.rawPage) {
          this.raw.page(bytes, 0, bytes.length);
          this.rawPage = bytes;
        }
        this.raw.record(info.name, info.system, ts, cpu, ev.pid, ev.comm, ev.tgid, ev.flags, ev.preemptCount, lineNo, ev.argsStart, ev.argsEnd - ev.argsStart);
      } else {
        this.raw.recordText(info.name, info.system, ts, cpu, ev.pid, ev.comm, ev.tgid, ev.flags, ev.preemptCount, lineNo, ev.args);
      }
      this.lastRaw = true;
      s.events++;
      return;
    }
    const name = info.name;
    let args;
    let fields;
    const block = ev.argsBytes;
    if (block !== null && this.raw === null) {
      if (this.blockTextOf !== block) {
        this.blockText = latin1(block, 0, block.length);
        this.blockTextOf = block;
      }
      args = this.blockText.slice(ev.argsStart, ev.argsEnd);
      fields = info.parse(this.blockText, ev.argsStart, ev.argsEnd, args, block);
    } else {
      args = eventArgs(ev);
      fields = info.parse(ev.argsText, ev.argsStart, ev.argsEnd, args, null);
    }
    if (fields === null) {
      s.unparsedEvents++;
      s.unparsedByName[name] = (s.unparsedByName[name] ?? 0) + 1;
    }
    this.held = {
      ts,
      cpu,
      pid: ev.pid,
      comm: ev.comm,
      tgid: ev.tgid,
      name,
      system: info.system,
      flags: ev.flags,
      preemptCount: ev.preemptCount,
      fields,
      raw: args,
      where: lineNo
    };
    s.events++;
  }
  takesRaw(info) {
    let t = this.rawTakes.get(info);
    if (t === void 0) this.rawTakes.set(info, t = this.raw.takes(info.name));
    return t;
  }
  flushHeld() {
    this.lastRaw = false;
    if (this.held) {
      const e = this.held;
      this.held = null;
      this.sink.event(e);
    }
  }
  lost(cpu, count, where) {
    this.flushHeld();
    this.summary.lostEventNotices++;
    if (this.headerSent) this.sink.lostEvents(cpu, count, where);
    else this.early.push({ kind: "lost", cpu, count, where });
  }
  skip(where, reason, line) {
    this.flushHeld();
    this.summary.skippedLines++;
    const problem = { where, unit: "line", reason, excerpt: excerpt(line) };
    if (this.headerSent) this.sink.skipped(problem);
    else {
      this.early.push({ kind: "skipped", problem });
      if (this.summary.skippedLines >= MAX_SKIPPED_BEFORE_FIRST_EVENT) {
        throw new DecodeError(this.label, where, "line", `no ftrace events found in the first ${where} lines (${this.summary.skippedLines} unrecognised lines)`);
      }
    }
  }
  finish() {
    this.flushHeld();
    if (!this.headerSent) {
      const first = this.early.find((p) => p.kind === "skipped");
      const where = first && first.kind === "skipped" ? first.problem.where : Math.max(1, this.summary.lines);
      const what = this.summary.lines === 0 ? "the input is empty" : `${this.summary.lines} lines, none of them an event line`;
      throw new DecodeError(this.label, where, "line", `no ftrace events found (${what})`);
    }
    this.summary.instances = [...this.instances];
    return this.summary;
  }
};
async function decodeFtraceText(chunks, sink, opts) {
  const dec = new FtraceTextDecoder(sink, opts.fileLabel);
  const splitter = new LineSplitter({
    asciiLine: (block, start, end, lineNo) => dec.onAsciiLine(block, start, end, lineNo),
    line: (text, lineNo) => dec.onLine(text, lineNo),
    tooLong: (lineNo, _offset, ex, bytes2) => dec.skip(lineNo, `line of ${bytes2} bytes exceeds the line length limit`, ex)
  });
  const total = opts.totalBytes ?? null;
  let bytes = 0;
  let nextProgress = PROGRESS_EVERY_BYTES;
  for await (const chunk of chunks) {
    splitter.push(chunk);
    bytes += chunk.length;
    if (opts.onProgress && bytes >= nextProgress) {
      opts.onProgress(bytes, total);
      nextProgress = bytes + PROGRESS_EVERY_BYTES;
    }
  }
  splitter.end();
  const summary = dec.finish();
  summary.bytes = bytes;
  opts.onProgress?.(bytes, total);
  return summary;
}

// server/decode/trace_dat/byte_cursor.ts
var TraceDatFormatError = class extends Error {
  constructor(where, message) {
    super(message);
    this.where = where;
    this.name = "TraceDatFormatError";
  }
  where;
};
var TWO_POW_32 = 4294967296;
var ByteCursor = class {
  constructor(buf, littleEndian, fileBase, positionsAreVirtual = false) {
    this.buf = buf;
    this.littleEndian = littleEndian;
    this.fileBase = fileBase;
    this.positionsAreVirtual = positionsAreVirtual;
  }
  buf;
  littleEndian;
  fileBase;
  positionsAreVirtual;
  pos = 0;
  get remaining() {
    return this.buf.length - this.pos;
  }
  where() {
    return this.positionsAreVirtual ? this.fileBase : this.fileBase + this.pos;
  }
  fail(message) {
    throw new TraceDatFormatError(this.where(), message);
  }
  need(n2, what) {
    if (n2 < 0 || this.pos + n2 > this.buf.length) {
      this.fail(`truncated: need ${n2} bytes for ${what}, ${this.remaining} left`);
    }
  }
  u8() {
    this.need(1, "u8");
    return this.buf[this.pos++];
  }
  u16() {
    this.need(2, "u16");
    const v = this.littleEndian ? this.buf.readUInt16LE(this.pos) : this.buf.readUInt16BE(this.pos);
    this.pos += 2;
    return v;
  }
  u32() {
    this.need(4, "u32");
    const v = this.littleEndian ? this.buf.readUInt32LE(this.pos) : this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }
  /**
   * A u64 as a number. Sizes and offsets above 2^53 cannot be valid in any
   * file we can read, so they are reported as damage rather than rounded.
   */
  u64(what = "u64") {
    this.need(8, what);
    const v = readU64Number(this.buf, this.pos, this.littleEndian);
    if (v === null) this.fail(`${what} too large`);
    this.pos += 8;
    return v;
  }
  u64big() {
    this.need(8, "u64");
    const v = this.littleEndian ? this.buf.readBigUInt64LE(this.pos) : this.buf.readBigUInt64BE(this.pos);
    this.pos += 8;
    return v;
  }
  bytes(n2, what = "bytes") {
    this.need(n2, what);
    const b = this.buf.subarray(this.pos, this.pos + n2);
    this.pos += n2;
    return b;
  }
  /** A NUL-terminated string (latin1 keeps arbitrary bytes 1:1). */
  cstring(what = "string") {
    const end = this.buf.indexOf(0, this.pos);
    if (end < 0) this.fail(`unterminated ${what}`);
    const s = this.buf.toString("utf8", this.pos, end);
    this.pos = end + 1;
    return s;
  }
  expectString(expected) {
    const at = this.where();
    const b = this.bytes(expected.length, JSON.stringify(expected));
    if (b.toString("latin1") !== expected) {
      throw new TraceDatFormatError(at, `expected ${JSON.stringify(expected)}, found ${JSON.stringify(b.toString("latin1"))}`);
    }
  }
};
function readU64Number(buf, pos, littleEndian) {
  const b = buf;
  const lo = littleEndian ? b.readUInt32LE(pos) : b.readUInt32BE(pos + 4);
  const hi = littleEndian ? b.readUInt32LE(pos + 4) : b.readUInt32BE(pos);
  if (hi >= 2097152) return null;
  return hi * TWO_POW_32 + lo;
}
function hexExcerpt(buf, start, len = 32) {
  const end = Math.min(buf.length, start + len);
  const parts = [];
  for (let i = Math.max(0, start); i < end; i++) parts.push(buf[i].toString(16).padStart(2, "0"));
  return parts.join(" ");
}

// server/decode/trace_dat/decompress.ts
import { inflateSync } from "node:zlib";
import { decompress as zstdDecompress } from "fzstd";
import { spawn } from "node:child_process";
var MAX_UNCOMPRESSED = 512 * 1024 * 1024;
var DecompressError = class extends Error {
};
function decompress(algorithm, input, expectedSize) {
  if (!Number.isSafeInteger(expectedSize) || expectedSize < 0 || expectedSize > MAX_UNCOMPRESSED) {
    throw new DecompressError(`implausible uncompressed size ${expectedSize}`);
  }
  let out;
  try {
    switch (algorithm) {
      case "none":
        out = input;
        break;
      case "zstd":
        out = zstdDecompress(input, new Uint8Array(expectedSize));
        break;
      case "zlib":
        out = inflateSync(input, { maxOutputLength: Math.max(1, expectedSize) });
        break;
      default:
        throw new DecompressError(`unsupported compression algorithm ${JSON.stringify(algorithm)}`);
    }
  } catch (e) {
    if (e instanceof DecompressError) throw e;
    throw new DecompressError(`${algorithm} decompression failed: ${e.message}`);
  }
  if (out.length !== expectedSize) {
    throw new DecompressError(`${algorithm} produced ${out.length} bytes, expected ${expectedSize}`);
  }
  return Buffer.isBuffer(out) ? out : Buffer.from(out.buffer, out.byteOffset, out.length);
}
var nativeZstdMissing = Boolean(process.env.STALLSCOPE_NO_NATIVE_ZSTD);
function nativeZstdUsable() {
  return !nativeZstdMissing;
}
var FLUSH_PAD = (() => {
  const size = 132 * 1024;
  const b = Buffer.alloc(8 + size);
  b.writeUInt32LE(407710288, 0);
  b.writeUInt32LE(size, 4);
  return b;
})();
var ZstdPipe = class _ZstdPipe {
  child;
  jobs = [];
  dead = false;
  inputEnded = false;
  timer = null;
  lastProgress = 0;
  stalls = 0;
  constructor() {
    this.child = spawn("zstd", ["-d", "-c", "-q"], { stdio: ["pipe", "pipe", "pipe"] });
    this.child.stderr.resume();
    this.child.stdin.on("error", () => this.fail());
    this.child.on("error", (e) => {
      if (e.code === "ENOENT") nativeZstdMissing = true;
      this.fail();
    });
    this.child.on("close", () => this.fail());
    this.child.stdout.on("data", (d) => this.onData(d));
  }
  static create() {
    if (nativeZstdMissing) return null;
    try {
      return new _ZstdPipe();
    } catch {
      nativeZstdMissing = true;
      return null;
    }
  }
  get usable() {
    return !this.dead;
  }
  /**
   * Decompresses concatenated frames totalling `size` bytes of output; null on
   * any failure. `last`: no more input will follow, so end zstd's input (it
   * then flushes without padding).
   */
  decompress(frames, size, last = false) {
    if (this.dead || this.inputEnded || size > MAX_UNCOMPRESSED) return Promise.resolve(null);
    return new Promise((resolve) => {
      this.jobs.push({ out: Buffer.allocUnsafe(size), got: 0, resolve });
      if (size === 0) this.onData(Buffer.alloc(0));
      for (const f of frames) this.child.stdin.write(f);
      if (last) {
        this.inputEnded = true;
        this.child.stdin.end();
      } else this.child.stdin.write(FLUSH_PAD);
      this.armTimer();
    });
  }
  onData(d) {
    this.lastProgress = Date.now();
    let p = 0;
    while (p < d.length || this.jobs.length > 0 && this.jobs[0].got === this.jobs[0].out.length) {
      const job = this.jobs[0];
      if (!job) {
        this.fail();
        return;
      }
      const n2 = Math.min(d.length - p, job.out.length - job.got);
      d.copy(job.out, job.got, p, p + n2);
      job.got += n2;
      p += n2;
      if (job.got === job.out.length) {
        this.jobs.shift();
        job.resolve(job.out);
      }
    }
    if (this.jobs.length === 0) this.disarmTimer();
  }
  /** Nudges a stalled batch with more padding; gives up (never hangs) after ~5 s without output. */
  armTimer() {
    if (this.timer) return;
    this.lastProgress = Date.now();
    this.stalls = 0;
    this.timer = setInterval(() => {
      if (this.jobs.length === 0) return this.disarmTimer();
      if (Date.now() - this.lastProgress < 20) return;
      if (++this.stalls > 250) {
        this.fail();
        return;
      }
      if (!this.inputEnded) this.child.stdin.write(FLUSH_PAD);
    }, 20);
  }
  disarmTimer() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
  fail() {
    if (!this.dead) {
      this.dead = true;
      this.child.kill();
    }
    this.disarmTimer();
    for (const j of this.jobs.splice(0)) j.resolve(null);
  }
  close() {
    this.disarmTimer();
    if (!this.dead) {
      this.dead = true;
      if (!this.inputEnded) this.child.stdin.end();
      setTimeout(() => this.child.kill(), 1e3).unref();
    }
    for (const j of this.jobs.splice(0)) j.resolve(null);
  }
};
async function zstdNativeOnce(data, size) {
  const pipe = ZstdPipe.create();
  if (!pipe) return null;
  try {
    return await pipe.decompress([data], size, true);
  } finally {
    pipe.close();
  }
}

// server/decode/trace_dat/ring_buffer_page.ts
var TYPE_PADDING = 29;
var TYPE_TIME_EXTEND = 30;
var TYPE_TIME_STAMP = 31;
var COMMIT_MASK = (1 << 27) - 1;
var MISSED_EVENTS = 2147483648;
var MISSED_STORED = 1073741824;
var TWO_POW_27 = 134217728;
var TWO_POW_322 = 4294967296;
var PageRecords = class {
  count = 0;
  ts;
  /** Offset of the record's data (event payload) in the buffer. */
  dataOff;
  dataLen;
  /** Offset of the record's header in the buffer (for `where`). */
  recOff;
  /** 0: none, >0: count, -1: events were lost but the count is unknown. */
  lost = 0;
  /** First damage found in the page, if any (decoding stops there). */
  error = null;
  errorOff = 0;
  constructor(pageSize) {
    const max = (pageSize >> 2) + 1;
    this.ts = new Float64Array(max);
    this.dataOff = new Int32Array(max);
    this.dataLen = new Int32Array(max);
    this.recOff = new Int32Array(max);
  }
};
function decodePage(buf, start, pageSize, layout, littleEndian, base, out) {
  out.count = 0;
  out.lost = 0;
  out.error = null;
  const tsPos = start + layout.timestampOffset;
  const tsLo = littleEndian ? buf.readUInt32LE(tsPos) : buf.readUInt32BE(tsPos + 4);
  const tsHi = littleEndian ? buf.readUInt32LE(tsPos + 4) : buf.readUInt32BE(tsPos);
  let ts = (tsHi - base.hi) * TWO_POW_322 + (tsLo - base.lo);
  const cPos = start + layout.commitOffset;
  const commit = littleEndian ? buf.readUInt32LE(cPos) : buf.readUInt32BE(cPos + (layout.commitSize === 8 ? 4 : 0));
  let size = commit & COMMIT_MASK;
  const dataStart = start + layout.dataOffset;
  const maxData = pageSize - layout.dataOffset;
  if (size > maxData) {
    out.error = `page commit size ${size} exceeds page data size ${maxData}`;
    out.errorOff = cPos;
    size = maxData;
  }
  const end = dataStart + size;
  if (commit & MISSED_EVENTS) {
    if (commit & MISSED_STORED && end + layout.commitSize <= start + pageSize) {
      const lo = littleEndian ? buf.readUInt32LE(end) : buf.readUInt32BE(end + layout.commitSize - 4);
      const hi = layout.commitSize === 8 ? littleEndian ? buf.readUInt32LE(end + 4) : buf.readUInt32BE(end) : 0;
      out.lost = hi * TWO_POW_322 + lo;
    } else out.lost = -1;
  }
  const ts_ = out.ts;
  const dOff = out.dataOff;
  const dLen = out.dataLen;
  const rOff = out.recOff;
  let n2 = 0;
  let p = dataStart;
  while (p < end) {
    if (p + 4 > end) {
      out.error = "record header crosses the end of page data";
      out.errorOff = p;
      break;
    }
    const rec = p;
    const h = littleEndian ? buf.readUInt32LE(p) : buf.readUInt32BE(p);
    const typeLen = littleEndian ? h & 31 : h >>> 27;
    const delta = littleEndian ? h >>> 5 : h & 134217727;
    p += 4;
    if (typeLen >= 1 && typeLen <= 28) {
      const len = typeLen << 2;
      if (p + len > end) {
        out.error = `record of ${len} bytes crosses the end of page data`;
        out.errorOff = rec;
        break;
      }
      ts += delta;
      ts_[n2] = ts;
      dOff[n2] = p;
      dLen[n2] = len;
      rOff[n2] = rec;
      n2++;
      p += len;
    } else if (typeLen === 0) {
      if (p + 4 > end) {
        out.error = "record length crosses the end of page data";
        out.errorOff = rec;
        break;
      }
      const raw = littleEndian ? buf.readUInt32LE(p) : buf.readUInt32BE(p);
      p += 4;
      const len = (raw - 4 + 3 & ~3) >>> 0;
      if (raw < 4 || p + len > end) {
        out.error = `bad record length ${raw}`;
        out.errorOff = rec;
        break;
      }
      ts += delta;
      ts_[n2] = ts;
      dOff[n2] = p;
      dLen[n2] = len;
      rOff[n2] = rec;
      n2++;
      p += len;
    } else if (typeLen === TYPE_TIME_EXTEND) {
      if (p + 4 > end) {
        out.error = "time extend crosses the end of page data";
        out.errorOff = rec;
        break;
      }
      const ext = littleEndian ? buf.readUInt32LE(p) : buf.readUInt32BE(p);
      p += 4;
      ts += ext * TWO_POW_27 + delta;
    } else if (typeLen === TYPE_TIME_STAMP) {
      if (p + 4 > end) {
        out.error = "absolute timestamp crosses the end of page data";
        out.errorOff = rec;
        break;
      }
      const ext = littleEndian ? buf.readUInt32LE(p) : buf.readUInt32BE(p);
      p += 4;
      const low59 = BigInt(ext) << 27n | BigInt(delta);
      const pageTs = BigInt(tsHi) << 32n | BigInt(tsLo);
      const abs = pageTs & ~((1n << 59n) - 1n) | low59;
      ts = Number(abs - (BigInt(base.hi) << 32n | BigInt(base.lo)));
    } else {
      if (delta === 0) break;
      if (p + 4 > end) break;
      const len = littleEndian ? buf.readUInt32LE(p) : buf.readUInt32BE(p);
      if (len === 0 || p + len > end) {
        if (p + len > end) {
          out.error = `padding of ${len} bytes crosses the end of page data`;
          out.errorOff = rec;
        }
        break;
      }
      p += len;
    }
  }
  out.count = n2;
  void TYPE_PADDING;
}
function pageTimestamp(buf, start, layout, littleEndian) {
  const tsPos = start + layout.timestampOffset;
  return {
    lo: littleEndian ? buf.readUInt32LE(tsPos) : buf.readUInt32BE(tsPos + 4),
    hi: littleEndian ? buf.readUInt32LE(tsPos + 4) : buf.readUInt32BE(tsPos)
  };
}

// server/decode/trace_dat/cpu_stream.ts
var BLOCK_PAGES = 32;
var NATIVE_BATCH_BYTES = 1 << 20;
var COMPRESSED_WINDOW = 1 << 20;
var MAX_PIPES = 4;
var CpuStream = class {
  constructor(cfg) {
    this.cfg = cfg;
    this.cpu = cfg.cpu;
    this.order = cfg.order;
    this.recs = new PageRecords(cfg.pageSize);
    this.filePos = cfg.offset;
    this.declaredEnd = cfg.offset + cfg.size + (cfg.compressed ? 4 : 0);
    this.regionEnd = Math.min(this.declaredEnd, cfg.src.size);
    if (this.declaredEnd > cfg.src.size) {
      cfg.report({
        where: cfg.src.size,
        unit: "offset",
        reason: `cpu ${cfg.cpu} data truncated: file ends ${this.declaredEnd - cfg.src.size} bytes before the end of this CPU's data (offset ${cfg.offset}, size ${cfg.size})`,
        excerpt: ""
      });
    }
  }
  cfg;
  cpu;
  order;
  recs;
  /** Index of the current record in recs. */
  idx = 0;
  block = Buffer.alloc(0);
  blockWhere = 0;
  blockCompressed = false;
  pagePos = 0;
  queue = [];
  pending = [];
  readChain = Promise.resolve();
  readsDone = false;
  finished = false;
  /** Next file position to read from. */
  filePos;
  regionEnd;
  declaredEnd;
  chunksLeft = -1;
  /** Header of the next chunk, read together with the previous chunk's data. */
  nextChunkHeader = null;
  win = Buffer.alloc(0);
  winStart = 0;
  pipe = null;
  pipesStarted = 0;
  /** File bytes consumed so far (progress). */
  bytesDone = 0;
  base = { hi: 0, lo: 0 };
  /**
   * `where` of a record: its file offset, or for a compressed chunk the
   * offset of the chunk (records inside it have no file position of their own).
   */
  recordWhere(recOffInBlock) {
    return this.blockCompressed ? this.blockWhere : this.blockWhere + recOffInBlock;
  }
  /** Loads the first block without decoding, to learn the first page timestamp. */
  async firstPageTimestamp() {
    if (!await this.loadBlock()) return null;
    if (this.block.length - this.pagePos < this.cfg.pageSize) return null;
    return pageTimestamp(this.block, this.pagePos, this.cfg.layout, this.cfg.littleEndian);
  }
  /**
   * Moves to the next page that has records, synchronously within the current
   * block. Returns false when the block is used up (call refill()).
   */
  nextPageSync() {
    const ps = this.cfg.pageSize;
    const recs = this.recs;
    while (this.pagePos + ps <= this.block.length) {
      const start = this.pagePos;
      this.pagePos += ps;
      decodePage(this.block, start, ps, this.cfg.layout, this.cfg.littleEndian, this.base, recs);
      if (recs.lost !== 0) this.cfg.lost(this.cpu, recs.lost > 0 ? recs.lost : null, this.recordWhere(start));
      if (recs.error !== null) {
        this.cfg.report({
          where: this.recordWhere(recs.errorOff),
          unit: "offset",
          reason: `cpu ${this.cpu}: corrupt ring-buffer page${this.blockCompressed ? ` (page at ${start} of the chunk decompressed from this offset)` : ""}: ${recs.error}; rest of page skipped`,
          excerpt: hexExcerpt(this.block, recs.errorOff, 24)
        });
      }
      this.idx = 0;
      if (recs.count > 0) return true;
    }
    if (this.pagePos < this.block.length) {
      const rest = this.block.length - this.pagePos;
      this.cfg.report({
        where: this.recordWhere(this.pagePos),
        unit: "offset",
        reason: `cpu ${this.cpu}: partial page of ${rest} bytes (page size ${ps}) skipped`,
        excerpt: hexExcerpt(this.block, this.pagePos, 24)
      });
      this.pagePos = this.block.length;
    }
    recs.count = 0;
    this.idx = 0;
    return false;
  }
  /** Where the current page (the one recs holds) starts in `block`. */
  get pageStart() {
    return this.pagePos - this.cfg.pageSize;
  }
  get pageSize() {
    return this.cfg.pageSize;
  }
  /** Loads the next block and its first non-empty page; false at end of data. */
  async refill() {
    for (; ; ) {
      if (!await this.loadBlock()) return false;
      if (this.nextPageSync()) return true;
    }
  }
  /** Stops the zstd helper process, if any. */
  close() {
    this.pipe?.close();
    this.pipe = null;
  }
  /** Makes the next block current. False at the end. */
  async loadBlock() {
    if (this.pagePos < this.block.length) return true;
    while (this.queue.length === 0) {
      if (this.finished) return false;
      this.topUp();
      const fetched = await this.pending.shift();
      if ("error" in fetched) {
        const e = fetched.error;
        if (!(e instanceof TraceDatFormatError)) throw e;
        this.cfg.report({ where: e.where, unit: "offset", reason: `cpu ${this.cpu}: ${e.message}; rest of this CPU's data skipped`, excerpt: "" });
        this.finished = true;
        return false;
      }
      this.queue = fetched.blocks;
      if (fetched.end) this.finished = true;
      else this.topUp();
    }
    const b = this.queue.shift();
    this.block = b.buf;
    this.blockWhere = b.where;
    this.blockCompressed = b.compressed;
    this.pagePos = 0;
    return true;
  }
  /**
   * Keeps `depth` fetches in flight. File reads are chained (they share the
   * read position); decompression of a batch overlaps with the next reads, and
   * the zstd pipe returns batches in order.
   */
  topUp() {
    const depth = this.cfg.compressed && this.cfg.algorithm === "zstd" && nativeZstdUsable() ? 4 : 2;
    while (this.pending.length < depth && !this.readsDone) {
      const next = () => this.cfg.compressed ? this.readChunks() : this.readPages();
      const read = this.readChain.then(next);
      this.readChain = read.then(
        () => void 0,
        () => void 0
      );
      this.pending.push(
        read.then(async (r) => {
          if (r.end) this.readsDone = true;
          if ("blocks" in r) return r;
          return { blocks: await this.decompressChunks(r.chunks, r.end), end: r.end };
        }).then(
          (r) => r,
          (error) => {
            this.readsDone = true;
            return { error };
          }
        )
      );
      if (this.pending.length >= depth) break;
    }
  }
  async readPages() {
    const avail = this.regionEnd - this.filePos;
    if (avail <= 0) return { blocks: [], end: true };
    const len = Math.min(avail, BLOCK_PAGES * this.cfg.pageSize);
    const at = this.filePos;
    this.filePos += len;
    const buf = await this.cfg.src.read(at, len, `cpu ${this.cpu} pages`);
    this.bytesDone += len;
    return { blocks: [{ buf, where: at, compressed: false }], end: this.filePos >= this.regionEnd };
  }
  async readChunks() {
    if (this.readsDone) return { chunks: [], end: true };
    const src = this.cfg.src;
    const le = this.cfg.littleEndian;
    if (this.chunksLeft < 0) {
      if (this.regionEnd - this.filePos < 12) return { chunks: [], end: true };
      const b = await src.read(this.filePos, 12, "chunk count");
      this.chunksLeft = le ? b.readUInt32LE(0) : b.readUInt32BE(0);
      this.nextChunkHeader = b.subarray(4, 12);
      this.filePos += 4;
      this.bytesDone += 4;
    }
    const chunks = [];
    let end = false;
    const native = this.cfg.algorithm === "zstd" && nativeZstdUsable();
    let batchBytes = 0;
    while (chunks.length === 0 || native && batchBytes < this.cfg.batchBytes) {
      if (this.chunksLeft <= 0) {
        end = true;
        break;
      }
      const at = this.filePos;
      const h = this.nextChunkHeader;
      if (!h || this.regionEnd - at < 8) {
        if (this.regionEnd >= this.declaredEnd) {
          this.cfg.report({ where: at, unit: "offset", reason: `cpu ${this.cpu}: ${this.chunksLeft} compressed chunks missing`, excerpt: "" });
        }
        end = true;
        break;
      }
      const csize = le ? h.readUInt32LE(0) : h.readUInt32BE(0);
      const usize = le ? h.readUInt32LE(4) : h.readUInt32BE(4);
      this.chunksLeft--;
      if (csize > this.regionEnd - at - 8) {
        this.cfg.report({
          where: at,
          unit: "offset",
          reason: `cpu ${this.cpu}: compressed chunk of ${csize} bytes runs past the end of the data (${this.regionEnd - at - 8} bytes left); rest of this CPU's data skipped`,
          excerpt: hexExcerpt(h, 0, 8)
        });
        end = true;
        break;
      }
      const withNext = this.chunksLeft > 0 && this.regionEnd - (at + 8 + csize) >= 8 ? 8 : 0;
      const data = await this.windowed(at + 8, csize + withNext);
      this.nextChunkHeader = withNext ? data.subarray(csize) : null;
      this.filePos = at + 8 + csize;
      this.bytesDone += 8 + csize;
      if (usize > MAX_UNCOMPRESSED || usize % this.cfg.pageSize !== 0) {
        this.cfg.report({ where: at, unit: "offset", reason: `cpu ${this.cpu}: compressed chunk claims implausible size ${usize}; chunk skipped`, excerpt: hexExcerpt(h, 0, 8) });
        continue;
      }
      chunks.push({ where: at, data: data.subarray(0, csize), usize });
      batchBytes += usize;
    }
    return { chunks, end };
  }
  /**
   * Compressed data is read in windows of ~1 MiB rather than one read per
   * chunk (thousands of small async reads cost more than the copies).
   */
  async windowed(at, len) {
    const rel = at - this.winStart;
    if (rel >= 0 && rel + len <= this.win.length) return this.win.subarray(rel, rel + len);
    const want = Math.min(Math.max(len, COMPRESSED_WINDOW), this.regionEnd - at);
    this.win = await this.cfg.src.read(at, want, "compressed chunk");
    this.winStart = at;
    return this.win.subarray(0, len);
  }
  async decompressChunks(chunks, last) {
    if (chunks.length === 0) return [];
    if (this.cfg.algorithm === "zstd" && nativeZstdUsable()) {
      if ((!this.pipe || !this.pipe.usable) && this.pipesStarted < MAX_PIPES) {
        this.pipe = ZstdPipe.create();
        this.pipesStarted++;
      }
      const total = chunks.reduce((a, c) => a + c.usize, 0);
      const out = this.pipe?.usable ? await this.pipe.decompress(chunks.map((c) => c.data), total, last) : null;
      if (out) {
        let p = 0;
        return chunks.map((c) => {
          const buf = out.subarray(p, p + c.usize);
          p += c.usize;
          return { buf, where: c.where, compressed: true };
        });
      }
    }
    const blocks = [];
    for (const c of chunks) {
      try {
        blocks.push({ buf: decompress(this.cfg.algorithm, c.data, c.usize), where: c.where, compressed: true });
      } catch (e) {
        if (!(e instanceof DecompressError)) throw e;
        this.cfg.report({ where: c.where, unit: "offset", reason: `cpu ${this.cpu}: bad compressed chunk (${e.message}); chunk skipped`, excerpt: hexExcerpt(c.data, 0, 16) });
      }
    }
    return blocks;
  }
};

// server/decode/trace_dat/print_fmt.ts
var U64 = (1n << 64n) - 1n;
var PUNCT = ["<<=", ">>=", "...", "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--"];
function isIdentChar(c) {
  return c >= 48 && c <= 57 || c >= 65 && c <= 90 || c >= 97 && c <= 122 || c === 95;
}
function tokenize(src) {
  const out = [];
  let i = 0;
  const n2 = src.length;
  while (i < n2) {
    const c = src[i];
    if (c === " " || c === "	" || c === "\n" || c === "\r") {
      i++;
      continue;
    }
    if (c === '"') {
      let s = "";
      i++;
      while (i < n2 && src[i] !== '"') {
        if (src[i] === "\\" && i + 1 < n2) {
          const e = src[i + 1];
          i += 2;
          if (e === "n") s += "\n";
          else if (e === "t") s += "	";
          else if (e === "r") s += "\r";
          else if (e === "0" || e >= "1" && e <= "7") {
            let oct = e;
            while (oct.length < 3 && i < n2 && src[i] >= "0" && src[i] <= "7") oct += src[i++];
            s += String.fromCharCode(parseInt(oct, 8));
          } else if (e === "x") {
            let hex = "";
            while (hex.length < 2 && i < n2 && /[0-9a-fA-F]/.test(src[i])) hex += src[i++];
            s += String.fromCharCode(parseInt(hex || "0", 16));
          } else s += e;
        } else s += src[i++];
      }
      i++;
      const prev = out[out.length - 1];
      if (prev && prev.t === "str") prev.v += s;
      else out.push({ t: "str", v: s });
      continue;
    }
    if (c === "'") {
      let j = i + 1;
      let v = 0;
      if (src[j] === "\\") {
        const e = src[j + 1];
        v = e === "n" ? 10 : e === "t" ? 9 : e === "0" ? 0 : (e ?? "").charCodeAt(0);
        j += 2;
      } else {
        v = (src[j] ?? "").charCodeAt(0);
        j++;
      }
      i = j + 1;
      out.push({ t: "num", v: BigInt(v) });
      continue;
    }
    const cc = c.charCodeAt(0);
    if (cc >= 48 && cc <= 57) {
      const m = /^(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)([uUlL]*)/.exec(src.slice(i, i + 40));
      if (m) {
        const lit = m[1];
        let v;
        if (/^0[xX]/.test(lit)) v = BigInt(lit);
        else if (lit.length > 1 && lit[0] === "0") v = BigInt("0o" + lit.slice(1));
        else v = BigInt(lit);
        out.push({ t: "num", v });
        i += m[0].length;
        continue;
      }
    }
    if (cc >= 65 && cc <= 90 || cc >= 97 && cc <= 122 || cc === 95) {
      let j = i + 1;
      while (j < n2 && isIdentChar(src.charCodeAt(j))) j++;
      out.push({ t: "id", v: src.slice(i, j) });
      i = j;
      continue;
    }
    let p = c;
    for (const cand of PUNCT) {
      if (src.startsWith(cand, i)) {
        p = cand;
        break;
      }
    }
    out.push({ t: "p", v: p });
    i += p.length;
  }
  return out;
}
var TYPE_WORDS = /* @__PURE__ */ new Set([
  "unsigned",
  "signed",
  "int",
  "long",
  "short",
  "char",
  "void",
  "bool",
  "_Bool",
  "const",
  "volatile",
  "u8",
  "u16",
  "u32",
  "u64",
  "s8",
  "s16",
  "s32",
  "s64",
  "__u8",
  "__u16",
  "__u32",
  "__u64",
  "__s8",
  "__s16",
  "__s32",
  "__s64",
  "struct",
  "enum",
  "union"
]);
function isTypeWord(w) {
  return TYPE_WORDS.has(w) || /_t$/.test(w);
}
var BIN_PREC = {
  "||": 1,
  "&&": 2,
  "|": 3,
  "^": 4,
  "&": 5,
  "==": 6,
  "!=": 6,
  "<": 7,
  ">": 7,
  "<=": 7,
  ">=": 7,
  "<<": 8,
  ">>": 8,
  "+": 9,
  "-": 9,
  "*": 10,
  "/": 10,
  "%": 10
};
var Parser = class {
  constructor(toks) {
    this.toks = toks;
  }
  toks;
  i = 0;
  get done() {
    return this.i >= this.toks.length;
  }
  peek(o = 0) {
    return this.toks[this.i + o];
  }
  isP(v, o = 0) {
    const t = this.peek(o);
    return t !== void 0 && t.t === "p" && t.v === v;
  }
  expectP(v) {
    if (!this.isP(v)) throw new Error(`expected ${v}`);
    this.i++;
  }
  eatP(v) {
    if (this.isP(v)) {
      this.i++;
      return true;
    }
    return false;
  }
  /** Comma-separated top-level expressions until the end. */
  parseList() {
    const items = [];
    while (!this.done) {
      items.push(this.parseExpr());
      if (!this.eatP(",")) break;
    }
    if (!this.done) throw new Error("trailing tokens");
    return items;
  }
  parseExpr() {
    return this.parseTernary();
  }
  parseTernary() {
    const c = this.parseBin(1);
    if (this.eatP("?")) {
      const t = this.parseExpr();
      this.expectP(":");
      const f = this.parseTernary();
      return { k: "tern", c, t, f };
    }
    return c;
  }
  parseBin(minPrec) {
    let l = this.parseUnary();
    for (; ; ) {
      const t = this.peek();
      if (!t || t.t !== "p") break;
      const prec = BIN_PREC[t.v];
      if (prec === void 0 || prec < minPrec) break;
      this.i++;
      const r = this.parseBin(prec + 1);
      l = { k: "bin", op: t.v, l, r };
    }
    return l;
  }
  /** `( type-words [*]* )` at the current position: returns the type text and its token length. */
  castAhead() {
    if (!this.isP("(")) return null;
    let j = 1;
    const words = [];
    for (; ; ) {
      const t = this.peek(j);
      if (!t) return null;
      if (t.t === "id") {
        words.push(t.v);
        j++;
      } else if (t.t === "p" && t.v === "*") {
        words.push("*");
        j++;
      } else break;
    }
    if (!this.isP(")", j) || words.length === 0) return null;
    const first = words[0];
    const ok = words.every((w) => w === "*" || isTypeWord(w) || words[0] === "struct" || words[0] === "enum" || words[0] === "union");
    if (!ok || first === "*") return null;
    return { type: words.join(" "), len: j + 1 };
  }
  parseUnary() {
    const t = this.peek();
    if (!t) throw new Error("unexpected end");
    if (t.t === "p") {
      if (t.v === "-" || t.v === "+" || t.v === "~" || t.v === "!" || t.v === "*" || t.v === "&") {
        this.i++;
        return { k: "un", op: t.v, e: this.parseUnary() };
      }
      const cast = this.castAhead();
      if (cast) {
        this.i += cast.len;
        return { k: "cast", type: cast.type, e: this.parseUnary() };
      }
    }
    if (t.t === "id" && t.v === "sizeof") {
      this.i++;
      const cast = this.castAhead();
      if (cast) {
        this.i += cast.len;
        return { k: "call", name: "sizeof", args: [] };
      }
      return { k: "call", name: "sizeof", args: [this.parseUnary()] };
    }
    return this.parsePostfix();
  }
  parsePostfix() {
    let e = this.parsePrimary();
    for (; ; ) {
      if (this.isP("->") || this.isP(".")) {
        this.i++;
        const name = this.peek();
        if (!name || name.t !== "id") throw new Error("expected member name");
        this.i++;
        if (e.k === "id" && e.name === "REC") e = { k: "field", name: name.v };
        else e = { k: "member", e, name: name.v };
      } else if (this.isP("[")) {
        this.i++;
        const idx = this.parseExpr();
        this.expectP("]");
        e = { k: "index", e, i: idx };
      } else if (this.isP("(") && e.k === "id") {
        this.i++;
        const args = [];
        if (!this.isP(")")) {
          for (; ; ) {
            args.push(this.parseExpr());
            if (!this.eatP(",")) break;
          }
        }
        this.expectP(")");
        e = { k: "call", name: e.name, args };
      } else break;
    }
    return e;
  }
  parsePrimary() {
    const t = this.peek();
    if (!t) throw new Error("unexpected end");
    this.i++;
    if (t.t === "num") return { k: "num", v: t.v };
    if (t.t === "str") return { k: "str", v: t.v };
    if (t.t === "id") return { k: "id", name: t.v };
    if (t.v === "(") {
      const e = this.parseExpr();
      this.expectP(")");
      return e;
    }
    if (t.v === "{") {
      const items = [];
      if (!this.isP("}")) {
        for (; ; ) {
          items.push(this.parseExpr());
          if (!this.eatP(",")) break;
          if (this.isP("}")) break;
        }
      }
      this.expectP("}");
      return { k: "list", items };
    }
    throw new Error(`unexpected ${t.v}`);
  }
};
var noFields = () => void 0;
function truthy(v) {
  if (typeof v === "bigint") return v !== 0n;
  return v !== null && v !== void 0;
}
function toU64(v) {
  return v & U64;
}
function evaluate(node, field) {
  switch (node.k) {
    case "num":
      return node.v;
    case "str":
      return node.v;
    case "null":
      return null;
    case "field":
      return field(node.name);
    case "id":
      return void 0;
    case "cast": {
      const v = evaluate(node.e, field);
      if (typeof v !== "bigint") {
        if (v === void 0 && node.type.includes("*")) return void 0;
        return v;
      }
      return castValue(node.type, v);
    }
    case "un": {
      const v = evaluate(node.e, field);
      if (node.op === "!") return v === void 0 ? void 0 : truthy(v) ? 0n : 1n;
      if (typeof v !== "bigint") return void 0;
      if (node.op === "-") return toU64(-v);
      if (node.op === "+") return v;
      if (node.op === "~") return toU64(~v);
      return void 0;
    }
    case "bin": {
      if (node.op === "&&" || node.op === "||") {
        const l2 = evaluate(node.l, field);
        if (l2 === void 0) return void 0;
        if (node.op === "&&" && !truthy(l2)) return 0n;
        if (node.op === "||" && truthy(l2)) return 1n;
        const r2 = evaluate(node.r, field);
        return r2 === void 0 ? void 0 : truthy(r2) ? 1n : 0n;
      }
      const l = evaluate(node.l, field);
      const r = evaluate(node.r, field);
      if (typeof l !== "bigint" || typeof r !== "bigint") {
        if ((node.op === "==" || node.op === "!=") && typeof l === "string" && typeof r === "string") {
          return l === r === (node.op === "==") ? 1n : 0n;
        }
        return void 0;
      }
      switch (node.op) {
        case "|":
          return l | r;
        case "&":
          return l & r;
        case "^":
          return l ^ r;
        case "+":
          return toU64(l + r);
        case "-":
          return toU64(l - r);
        case "*":
          return toU64(l * r);
        case "/":
          return r === 0n ? void 0 : l / r;
        case "%":
          return r === 0n ? void 0 : l % r;
        case "<<":
          return r >= 64n ? 0n : toU64(l << r);
        case ">>":
          return r >= 64n ? 0n : l >> r;
        case "==":
          return l === r ? 1n : 0n;
        case "!=":
          return l !== r ? 1n : 0n;
        case "<":
          return l < r ? 1n : 0n;
        case ">":
          return l > r ? 1n : 0n;
        case "<=":
          return l <= r ? 1n : 0n;
        case ">=":
          return l >= r ? 1n : 0n;
        default:
          return void 0;
      }
    }
    case "tern": {
      const c = evaluate(node.c, field);
      if (c === void 0) return void 0;
      return evaluate(truthy(c) ? node.t : node.f, field);
    }
    case "call": {
      if (node.name === "__print_flags") return printFlags(node, field);
      if (node.name === "__print_symbolic") return printSymbolic(node, field);
      return void 0;
    }
    default:
      return void 0;
  }
}
function castValue(type, v) {
  const t = type.replace(/\b(const|volatile)\b/g, "").trim();
  if (t.includes("*")) return toU64(v);
  if (/^(unsigned )?char$|^(u8|__u8|s8|__s8|bool|_Bool)$/.test(t)) return toU64(/^(u8|__u8|unsigned char|bool|_Bool)$/.test(t) ? v & 0xffn : BigInt.asIntN(8, v));
  if (/short|^(u16|__u16|s16|__s16)$/.test(t)) return toU64(/unsigned|u16/.test(t) ? v & 0xffffn : BigInt.asIntN(16, v));
  if (/^(unsigned( int)?|u32|__u32|uint32_t|gfp_t|unsigned int)$/.test(t)) return v & 0xffffffffn;
  if (/^(int|signed|signed int|s32|__s32|int32_t|pid_t)$/.test(t)) return toU64(BigInt.asIntN(32, v));
  return toU64(v);
}
var tableCache = /* @__PURE__ */ new WeakMap();
function tableOf(node, from) {
  const cached = tableCache.get(node);
  if (cached) return cached;
  const entries = [];
  for (const item of node.args.slice(from)) {
    if (item.k !== "list" || item.items.length < 2) continue;
    const v = evaluate(item.items[0], noFields);
    const s = evaluate(item.items[1], noFields);
    if (typeof s !== "string") break;
    entries.push({ value: typeof v === "bigint" ? toU64(v) : 0n, name: s });
  }
  tableCache.set(node, entries);
  return entries;
}
function printFlags(node, field) {
  if (node.args.length < 2) return void 0;
  let val = evaluate(node.args[0], field);
  if (typeof val !== "bigint") return void 0;
  val = toU64(val);
  const delimV = evaluate(node.args[1], noFields);
  const delim = typeof delimV === "string" ? delimV : "";
  let out = "";
  let printed = false;
  for (const e of tableOf(node, 2)) {
    if (val === 0n && e.value === 0n) {
      out += e.name;
      break;
    }
    if (e.value !== 0n && (val & e.value) === e.value) {
      if (printed) out += delim;
      out += e.name;
      printed = true;
      val &= ~e.value;
    }
  }
  if (val !== 0n) {
    if (printed) out += delim;
    out += "0x" + val.toString(16);
  }
  return out;
}
function printSymbolic(node, field) {
  if (node.args.length < 1) return void 0;
  let val = evaluate(node.args[0], field);
  if (typeof val !== "bigint") return void 0;
  val = toU64(val);
  for (const e of tableOf(node, 1)) if (e.value === val) return e.name;
  return "0x" + val.toString(16);
}
var CONV_RE = /%([-+ #0]*)(\*|\d+)?(?:\.(\*|\d+))?(hh|h|ll|l|L|z|Z|j|t)?([diouxXcspneEfgG%])/g;
var P_EXT = "SsfFBKxMmIiUhbEdDaNgRrV";
function parseConversions(fmt, args) {
  const convs = [];
  let argIdx = 0;
  let last = 0;
  let before = "";
  CONV_RE.lastIndex = 0;
  for (let m = CONV_RE.exec(fmt); m; m = CONV_RE.exec(fmt)) {
    const spec = m[5];
    if (spec === "%") continue;
    before += fmt.slice(last, m.index);
    let end = m.index + m[0].length;
    let ext = "";
    if (spec === "p") {
      const c = fmt[end];
      if (c && P_EXT.includes(c)) {
        ext = c;
        end++;
      }
    }
    if (m[2] === "*") argIdx++;
    if (m[3] === "*") argIdx++;
    convs.push({ before, spec, ext, arg: args[argIdx] ?? null });
    argIdx++;
    before = "";
    last = end;
    CONV_RE.lastIndex = end;
  }
  return convs;
}
function unwrap(n2) {
  while (n2.k === "cast") n2 = n2.e;
  return n2;
}
function fieldRefs(n2, out) {
  switch (n2.k) {
    case "field":
      out.add(n2.name);
      break;
    case "call":
      for (const a of n2.args) fieldRefs(a, out);
      break;
    case "un":
    case "cast":
      fieldRefs(n2.e, out);
      break;
    case "bin":
      fieldRefs(n2.l, out);
      fieldRefs(n2.r, out);
      break;
    case "tern":
      fieldRefs(n2.c, out);
      fieldRefs(n2.t, out);
      fieldRefs(n2.f, out);
      break;
    case "list":
      for (const a of n2.items) fieldRefs(a, out);
      break;
    case "member":
      fieldRefs(n2.e, out);
      break;
    case "index":
      fieldRefs(n2.e, out);
      fieldRefs(n2.i, out);
      break;
    default:
      break;
  }
  return out;
}
function hasSymbolicCall(n2) {
  switch (n2.k) {
    case "call":
      return n2.name === "__print_flags" || n2.name === "__print_symbolic" || n2.args.some(hasSymbolicCall);
    case "un":
    case "cast":
      return hasSymbolicCall(n2.e);
    case "bin":
      return hasSymbolicCall(n2.l) || hasSymbolicCall(n2.r);
    case "tern":
      return hasSymbolicCall(n2.c) || hasSymbolicCall(n2.t) || hasSymbolicCall(n2.f);
    default:
      return false;
  }
}
function analyzePrintFmt(printFmt) {
  const info = { symbolFields: /* @__PURE__ */ new Set(), pointerFields: /* @__PURE__ */ new Set(), symbolic: /* @__PURE__ */ new Map() };
  if (!printFmt) return info;
  let items;
  try {
    items = new Parser(tokenize(printFmt)).parseList();
  } catch {
    return info;
  }
  const fmtNode = items[0];
  if (!fmtNode || fmtNode.k !== "str") return info;
  const convs = parseConversions(fmtNode.v, items.slice(1));
  for (const c of convs) {
    if (!c.arg || c.spec !== "p") continue;
    const u = unwrap(c.arg);
    if (u.k !== "field") continue;
    if ("SsfFB".includes(c.ext) && c.ext !== "") info.symbolFields.add(u.name);
    else if (c.ext === "" || c.ext === "x" || c.ext === "K") info.pointerFields.add(u.name);
  }
  for (let i = 0; i < convs.length; i++) {
    const c = convs[i];
    const owner = stringPartOwner(c);
    if (owner === null) continue;
    const group = [c.arg];
    let j = i + 1;
    while (j < convs.length && convs[j].before === "" && stringPartOwner(convs[j]) === owner) {
      group.push(convs[j].arg);
      j++;
    }
    if (group.some(hasSymbolicCall) && !info.symbolic.has(owner)) {
      info.symbolic.set(owner, makeRenderer(owner, group));
    }
    i = j - 1;
  }
  return info;
}
function stringPartOwner(c) {
  if (c.spec !== "s" || !c.arg) return null;
  if (unwrap(c.arg).k === "field") return null;
  const refs = fieldRefs(c.arg, /* @__PURE__ */ new Set());
  if (refs.size !== 1) return null;
  return refs.values().next().value;
}
function makeRenderer(fieldName, parts) {
  return (raw) => {
    const lookup = (name) => name === fieldName ? raw : void 0;
    let out = "";
    for (const p of parts) {
      const v = evaluate(p, lookup);
      if (typeof v !== "string") return void 0;
      out += v;
    }
    return out;
  };
}

// server/decode/trace_dat/event_decoder.ts
var TWO_POW_323 = 4294967296;
var HEX8 = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
function makeHelpers(littleEndian, kallsyms) {
  const rd32 = littleEndian ? (b, p) => (b[p] | b[p + 1] << 8 | b[p + 2] << 16) + b[p + 3] * 16777216 : (b, p) => (b[p + 3] | b[p + 2] << 8 | b[p + 1] << 16) + b[p] * 16777216;
  const rdS32 = littleEndian ? (b, p) => b[p] | b[p + 1] << 8 | b[p + 2] << 16 | b[p + 3] << 24 : (b, p) => b[p + 3] | b[p + 2] << 8 | b[p + 1] << 16 | b[p] << 24;
  const loOff = littleEndian ? 0 : 4;
  const hiOff = littleEndian ? 4 : 0;
  const hex32 = (v) => {
    return v.toString(16);
  };
  const ptrHex = (hi, lo) => {
    if (hi === 0) return "0x" + hex32(lo);
    return "0x" + hi.toString(16) + HEX8[lo >>> 24] + HEX8[lo >>> 16 & 255] + HEX8[lo >>> 8 & 255] + HEX8[lo & 255];
  };
  const readNum = (b, p, elem, signed) => {
    switch (elem) {
      case 1:
        return signed ? b.readInt8(p) : b.readUInt8(p);
      case 2:
        return signed ? littleEndian ? b.readInt16LE(p) : b.readInt16BE(p) : littleEndian ? b.readUInt16LE(p) : b.readUInt16BE(p);
      case 4:
        return signed ? rdS32(b, p) : rd32(b, p);
      default:
        return signed ? h.s64(b, p) : h.u64(b, p);
    }
  };
  const cache = /* @__PURE__ */ new Map();
  const decodeStr = (b, p, end) => {
    let e = p;
    let h2 = 2166136261;
    while (e < end) {
      const c = b[e];
      if (c === 0) break;
      h2 = Math.imul(h2 ^ c, 16777619);
      e++;
    }
    const len = e - p;
    if (len === 0) return "";
    if (len > 64) return b.toString("utf8", p, e);
    const key = (h2 ^ len) >>> 0;
    const hit = cache.get(key);
    if (hit !== void 0 && hit.bytes.length === len) {
      const hb = hit.bytes;
      let i = 0;
      while (i < len && hb[i] === b[p + i]) i++;
      if (i === len) return hit.s;
    }
    const str = b.toString("utf8", p, e);
    if (cache.size > 1 << 16) cache.clear();
    cache.set(key, { bytes: Uint8Array.prototype.slice.call(b, p, e), s: str });
    return str;
  };
  const dynLoc = (b, recOff, recLen, fieldPos, fieldEnd, relative) => {
    const v = rd32(b, fieldPos);
    let start = (v & 65535) + (relative ? fieldEnd : recOff);
    let len = v >>> 16;
    const recEnd = recOff + recLen;
    if (start > recEnd) return null;
    if (start + len > recEnd) len = recEnd - start;
    if (start < recOff) start = recOff;
    return [start, len];
  };
  const h = {
    u64(b, p) {
      const lo = rd32(b, p + loOff);
      const hi = rd32(b, p + hiOff);
      if (hi < 2097152) return hi * TWO_POW_323 + lo;
      return BigInt(hi) << 32n | BigInt(lo);
    },
    s64(b, p) {
      const lo = rd32(b, p + loOff);
      const hi = rdS32(b, p + hiOff);
      if (hi >= -2097152 && hi < 2097152) return hi * TWO_POW_323 + lo;
      return BigInt(hi) << 32n | BigInt(lo);
    },
    ptr64(b, p) {
      return ptrHex(rd32(b, p + hiOff), rd32(b, p + loOff));
    },
    ptr32(b, p) {
      return "0x" + hex32(rd32(b, p));
    },
    sym64(b, p) {
      const hi = rd32(b, p + hiOff);
      const lo = rd32(b, p + loOff);
      return kallsyms.lookup(hi, lo) ?? ptrHex(hi, lo);
    },
    sym32(b, p) {
      const lo = rd32(b, p);
      return kallsyms.lookup(0, lo) ?? "0x" + hex32(lo);
    },
    cstr(b, p, max) {
      return decodeStr(b, p, p + max);
    },
    dynstr(b, recOff, recLen, fieldPos, fieldEnd, relative) {
      const loc = dynLoc(b, recOff, recLen, fieldPos, fieldEnd, relative);
      if (!loc) return "";
      return decodeStr(b, loc[0], loc[0] + loc[1]);
    },
    arr(b, p, count, elem, signed) {
      const parts = [];
      for (let i = 0; i < count; i++) parts.push(String(readNum(b, p + i * elem, elem, signed)));
      return "[" + parts.join(",") + "]";
    },
    dynarr(b, recOff, recLen, fieldPos, fieldEnd, relative, elem, signed) {
      const loc = dynLoc(b, recOff, recLen, fieldPos, fieldEnd, relative);
      if (!loc || elem <= 0) return "[]";
      return h.arr(b, loc[0], Math.floor(loc[1] / elem), elem, signed);
    },
    sym: []
  };
  return h;
}
function memoSymbolic(render, signedSize) {
  const small = new Array(SMALL_SYMBOLIC).fill(void 0);
  const cache = /* @__PURE__ */ new Map();
  return (raw) => {
    const isSmall = typeof raw === "number" && raw >= 0 && raw < SMALL_SYMBOLIC;
    const hit = isSmall ? small[raw] : cache.get(raw);
    if (hit !== void 0) return hit;
    let big = typeof raw === "bigint" ? raw : BigInt(raw);
    big = BigInt.asUintN(64, big);
    void signedSize;
    const s = render(big);
    const v = s === void 0 ? raw : s;
    if (isSmall) small[raw] = v;
    else if (cache.size < 4096) cache.set(raw, v);
    return v;
  };
}
var SMALL_SYMBOLIC = 1024;
function compileEvent(fmt, helpers, littleEndian, longSize, rows = null) {
  const info = analyzePrintFmt(fmt.printFmt);
  const E = littleEndian ? "LE" : "BE";
  const fastParts = [];
  const safeParts = [];
  const exprs = /* @__PURE__ */ new Map();
  let minLen = 0;
  for (const f of fmt.fields) {
    const fe = fieldExpr(f, info.symbolFields, info.pointerFields, info.symbolic, helpers, E, longSize);
    if (fe === null) continue;
    const { expr } = fe;
    exprs.set(f.name, fe);
    const key = JSON.stringify(f.name);
    const end = f.offset + f.size;
    if (end > minLen) minLen = end;
    fastParts.push(`${key}: ${expr}`);
    safeParts.push(`if (n >= ${end}) r[${key}] = ${expr};`);
  }
  const fastSrc = `return function fast(b, o, n) { return { ${fastParts.join(", ")} }; };`;
  const safeSrc = `return function safe(b, o, n) { const r = {}; ${safeParts.join(" ")} return r; };`;
  const fast = new Function("h", fastSrc)(helpers);
  const safe = new Function("h", safeSrc)(helpers);
  let direct = null;
  if (rows !== null) {
    const parts = rows.fields.map(({ names, column, kind }) => {
      const fe = names.map((n2) => exprs.get(n2)).find((x) => x !== void 0);
      return fe === void 0 ? `w.absent(${Number(column)});` : columnWrite(fe, Number(column), kind, littleEndian);
    });
    const src = `return function direct(b, o, n, w) { const A = w.arrays, r = w.row; let v, a; ${parts.join(" ")} };`;
    const read = new Function("h", src)(helpers);
    direct = { rows, read };
  }
  const commRegistrations = [];
  if (fmt.system === "sched") {
    const byName = new Map(fmt.fields.map((f) => [f.name, f]));
    const pairs = fmt.name === "sched_switch" ? [["prev_pid", "prev_comm"], ["next_pid", "next_comm"]] : fmt.name === "sched_wakeup" || fmt.name === "sched_wakeup_new" ? [["pid", "comm"]] : [];
    for (const [p, c] of pairs) {
      const pf = byName.get(p);
      const cf = byName.get(c);
      if (pf && cf && pf.size === 4 && cf.kind === "string") commRegistrations.push({ pidOff: pf.offset, commOff: cf.offset, commSize: cf.size });
    }
  }
  return { id: fmt.id, name: fmt.name, system: fmt.system, minLen, fast, safe, direct, commRegistrations };
}
function columnWrite(fe, col, kind, le) {
  const int2 = fe.int;
  if (int2 !== null) {
    if (kind === "i32") {
      return `A[${col}][r] = ${int2.size === 8 ? word(int2.at, le ? 0 : 4, le) : fe.expr};`;
    }
    if (kind === "i64") {
      if (int2.size === 8) {
        return `a = A[${col}]; a[2 * r] = ${word(int2.at, le ? 0 : 4, le)}; a[2 * r + 1] = ${word(int2.at, le ? 4 : 0, le)};`;
      }
      return `v = ${fe.expr}; a = A[${col}]; a[2 * r] = v; a[2 * r + 1] = ${int2.signed ? "v >> 31" : "0"};`;
    }
    if (kind === "f64" && int2.size <= 4) return `A[${col}][r] = ${fe.expr};`;
  }
  if (kind === "text" && fe.key !== null) return `if (!w.keyed(${col}, ${fe.key.lo}, ${fe.key.hi})) w.text(${col}, ${fe.expr});`;
  return `w.value(${col}, ${fe.expr});`;
}
function word(at, delta, le) {
  const p = delta === 0 ? at : `${at} + ${delta}`;
  const byte = (i) => `b[${p} + ${le ? i : 3 - i}]`;
  return `(${byte(0)} | (${byte(1)} << 8) | (${byte(2)} << 16) | (${byte(3)} << 24))`;
}
function keyOf(size, at, num, le) {
  if (size === 8) return { lo: word(at, le ? 0 : 4, le), hi: word(at, le ? 4 : 0, le) };
  return { lo: `(${num} | 0)`, hi: "0" };
}
function fieldExpr(f, symbolFields, pointerFields, symbolic, helpers, E, longSize) {
  const at = `o + ${f.offset}`;
  const le = E === "LE";
  const other = (expr) => ({ expr, int: null, key: null });
  switch (f.kind) {
    case "string":
      return other(`h.cstr(b, ${at}, ${f.size})`);
    case "dynstring":
      if (f.size < 4) return null;
      return other(`h.dynstr(b, o, n, ${at}, ${at} + ${f.size}, ${f.relative})`);
    case "dynarray":
      if (f.size < 4) return null;
      return other(`h.dynarr(b, o, n, ${at}, ${at} + ${f.size}, ${f.relative}, ${f.elemSize}, ${f.signed})`);
    case "array":
      if (f.elemSize <= 0 || ![1, 2, 4, 8].includes(f.elemSize)) return null;
      return other(`h.arr(b, ${at}, ${f.size / f.elemSize}, ${f.elemSize}, ${f.signed})`);
    case "opaque":
      return null;
    case "pointer":
    case "int": {
      const size = f.size;
      if (size !== 1 && size !== 2 && size !== 4 && size !== 8) return null;
      const num = numExpr(size, f.signed, at, E);
      if (symbolFields.has(f.name) && (size === 8 || size === 4)) {
        return { expr: size === 8 ? `h.sym64(b, ${at})` : `h.sym32(b, ${at})`, int: null, key: keyOf(size, at, num, le) };
      }
      if (f.kind === "pointer" || pointerFields.has(f.name)) {
        if (size === 8) return { expr: `h.ptr64(b, ${at})`, int: null, key: keyOf(size, at, num, le) };
        if (size === 4) return { expr: `h.ptr32(b, ${at})`, int: null, key: keyOf(size, at, num, le) };
      }
      const render = symbolic.get(f.name);
      if (render) {
        const idx = helpers.sym.length;
        helpers.sym.push(memoSymbolic(render, f.signed ? size : null));
        return { expr: `h.sym[${idx}](${num})`, int: null, key: keyOf(size, at, num, le) };
      }
      void longSize;
      return { expr: num, int: { size, signed: f.signed, at }, key: null };
    }
  }
}
function numExpr(size, signed, at, E) {
  const le = E === "LE";
  const byte = (i) => `b[${at} + ${le ? i : size - 1 - i}]`;
  switch (size) {
    case 1:
      return signed ? `((b[${at}] << 24) >> 24)` : `b[${at}]`;
    case 2:
      return signed ? `(((${byte(0)} | (${byte(1)} << 8)) << 16) >> 16)` : `(${byte(0)} | (${byte(1)} << 8))`;
    case 4:
      return signed ? `(${byte(0)} | (${byte(1)} << 8) | (${byte(2)} << 16) | (${byte(3)} << 24))` : `((${byte(0)} | (${byte(1)} << 8) | (${byte(2)} << 16)) + ${byte(3)} * 16777216)`;
    default:
      return signed ? `h.s64(b, ${at})` : `h.u64(b, ${at})`;
  }
}

// server/decode/trace_dat/event_format.ts
var FIELD_RE = /^\s*field:(.*?);\s*offset:(\d+);\s*size:(\d+);(?:\s*signed:(-?\d+);)?/;
var FormatParseError = class extends Error {
};
function parseEventFormat(text, system) {
  const lines = text.split("\n");
  let name = null;
  let id = null;
  const commonFields = [];
  const fields = [];
  let printFmt = null;
  let seenBlank = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith("name:")) name = line.slice(5).trim();
    else if (line.startsWith("ID:")) id = Number(line.slice(3).trim());
    else if (line.startsWith("print fmt:")) {
      printFmt = [line.slice("print fmt:".length), ...lines.slice(i + 1)].join("\n").trim();
      break;
    } else if (/^\s*field:/.test(line)) {
      const f = parseFieldLine(line);
      if (!f) continue;
      if (!seenBlank && f.name.startsWith("common_")) commonFields.push(f);
      else fields.push(f);
    } else if (line.trim() === "" && commonFields.length > 0) {
      seenBlank = true;
    }
  }
  if (name === null || name === "") throw new FormatParseError("format has no name");
  if (id === null || !Number.isInteger(id) || id < 0 || id > 65535) throw new FormatParseError(`format ${name} has no valid ID`);
  return { id, name, system, commonFields, fields, printFmt };
}
function parseFieldLine(line) {
  const m = FIELD_RE.exec(line);
  if (!m) return null;
  const decl = m[1].trim();
  const offset = Number(m[2]);
  const size = Number(m[3]);
  const signed = m[4] !== void 0 ? m[4] === "1" : false;
  const dm = /^(.*?)([A-Za-z_][A-Za-z0-9_]*)\s*(\[[^\]]*\])?\s*$/.exec(decl);
  if (!dm) return null;
  let baseType = dm[1].trim();
  const fieldName = dm[2];
  const arraySuffix = dm[3];
  const isDataLoc = /\b__data_loc\b/.test(baseType);
  const isRelLoc = /\b__rel_loc\b/.test(baseType);
  const type = arraySuffix ? `${baseType}${arraySuffix}` : baseType;
  let kind;
  let elemSize = size;
  if (isDataLoc || isRelLoc) {
    baseType = baseType.replace(/\b__(data|rel)_loc\b/, "").trim();
    const elemType = baseType.replace(/\[\s*\]$/, "").trim();
    if (/\bchar\b/.test(elemType)) {
      kind = "dynstring";
      elemSize = 1;
    } else {
      kind = "dynarray";
      elemSize = scalarSizeOf(elemType) ?? 0;
    }
  } else if (arraySuffix) {
    const n2 = Number(arraySuffix.slice(1, -1).trim());
    if (/\bchar\b/.test(baseType) && !baseType.includes("*")) {
      kind = "string";
      elemSize = 1;
    } else {
      kind = "array";
      elemSize = Number.isInteger(n2) && n2 > 0 ? size / n2 : scalarSizeOf(baseType) ?? 0;
      if (![1, 2, 4, 8].includes(elemSize) && !baseType.includes("*")) kind = "opaque";
      if (baseType.includes("*")) elemSize = Number.isInteger(n2) && n2 > 0 ? size / n2 : 8;
    }
  } else if (baseType.includes("*")) {
    kind = "pointer";
  } else if (size === 1 || size === 2 || size === 4 || size === 8) {
    kind = "int";
  } else {
    kind = "opaque";
  }
  return { name: fieldName, type, offset, size, signed, kind, elemSize, relative: isRelLoc };
}
function scalarSizeOf(type) {
  const t = type.replace(/\b(const|volatile|unsigned|signed)\b/g, " ").replace(/\s+/g, " ").trim();
  if (t.includes("*")) return null;
  switch (t) {
    case "char":
    case "u8":
    case "s8":
    case "__u8":
    case "__s8":
    case "bool":
      return 1;
    case "short":
    case "u16":
    case "s16":
    case "__u16":
    case "__s16":
      return 2;
    case "":
    case "int":
    case "u32":
    case "s32":
    case "__u32":
    case "__s32":
    case "pid_t":
      return 4;
    case "long long":
    case "u64":
    case "s64":
    case "__u64":
    case "__s64":
      return 8;
    default:
      return null;
  }
}
function parseHeaderPage(text, longSize) {
  const fallbackCommit = longSize === 4 ? 4 : 8;
  const layout = { timestampOffset: 0, commitOffset: 8, commitSize: fallbackCommit, dataOffset: 8 + fallbackCommit };
  if (!text) return layout;
  for (const line of text.split("\n")) {
    const m = /field:\s*(.*?)\s+(\w+);\s*offset:(\d+);\s*size:(\d+);/.exec(line);
    if (!m) continue;
    const [, , name, off, size] = m;
    if (name === "timestamp") layout.timestampOffset = Number(off);
    else if (name === "commit") {
      layout.commitOffset = Number(off);
      layout.commitSize = Number(size);
    } else if (name === "data") layout.dataOffset = Number(off);
  }
  return layout;
}

// server/decode/trace_dat/file_source.ts
import { open } from "node:fs/promises";
var FileSource = class _FileSource {
  constructor(fh, size) {
    this.fh = fh;
    this.size = size;
  }
  fh;
  size;
  static async open(path8) {
    const fh = await open(path8, "r");
    try {
      const st = await fh.stat();
      return new _FileSource(fh, st.size);
    } catch (e) {
      await fh.close();
      throw e;
    }
  }
  /** Reads exactly len bytes at offset or throws TraceDatFormatError (truncated). */
  async read(offset, len, what) {
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(len) || offset < 0 || len < 0) {
      throw new TraceDatFormatError(Math.max(0, Math.min(offset, this.size)), `invalid ${what} range (${offset}, ${len})`);
    }
    if (offset + len > this.size) {
      throw new TraceDatFormatError(Math.min(offset, this.size), `truncated: ${what} needs ${len} bytes at offset ${offset}, file has ${this.size}`);
    }
    const buf = Buffer.allocUnsafe(len);
    let done = 0;
    while (done < len) {
      const { bytesRead } = await this.fh.read(buf, done, len - done, offset + done);
      if (bytesRead === 0) throw new TraceDatFormatError(offset + done, `unexpected end of file reading ${what}`);
      done += bytesRead;
    }
    return buf;
  }
  /** Reads up to len bytes (fewer at end of file). */
  async readUpTo(offset, len) {
    const n2 = Math.max(0, Math.min(len, this.size - offset));
    if (n2 === 0) return Buffer.alloc(0);
    return this.read(offset, n2, "data");
  }
  async close() {
    await this.fh.close();
  }
};

// server/decode/trace_dat/kallsyms.ts
var Kallsyms = class _Kallsyms {
  hi;
  lo;
  names;
  memo = /* @__PURE__ */ new Map();
  constructor(hi, lo, names) {
    this.hi = hi;
    this.lo = lo;
    this.names = names;
  }
  get size() {
    return this.names.length;
  }
  static parse(text) {
    const his = [];
    const los = [];
    const names = [];
    if (text) {
      let start = 0;
      const n2 = text.length;
      while (start < n2) {
        let end = text.indexOf("\n", start);
        if (end < 0) end = n2;
        const sp1 = text.indexOf(" ", start);
        const lineStart = start;
        start = end + 1;
        if (sp1 <= lineStart || sp1 > lineStart + 16 || sp1 >= end) continue;
        const type = text.charCodeAt(sp1 + 1);
        if (type === 65 || type === 97 || text.charCodeAt(sp1 + 2) !== 32) continue;
        let name = text.slice(sp1 + 3, end);
        const tab = name.indexOf("	");
        if (tab >= 0) name = name.slice(0, tab);
        if (name.endsWith("\r")) name = name.slice(0, -1);
        if (name === "") continue;
        const digits = sp1 - lineStart;
        const hi = digits > 8 ? parseInt(text.slice(lineStart, sp1 - 8), 16) : 0;
        const lo = parseInt(text.slice(Math.max(lineStart, sp1 - 8), sp1), 16);
        if (Number.isNaN(hi) || Number.isNaN(lo)) continue;
        if (hi === 0 && lo === 0) continue;
        his.push(hi);
        los.push(lo);
        names.push(name);
      }
    }
    const order = Array.from({ length: names.length }, (_, i) => i);
    order.sort((a, b) => his[a] - his[b] || los[a] - los[b]);
    const hiA = new Uint32Array(order.length);
    const loA = new Uint32Array(order.length);
    const sortedNames = new Array(order.length);
    order.forEach((j, i) => {
      hiA[i] = his[j];
      loA[i] = los[j];
      sortedNames[i] = names[j];
    });
    return new _Kallsyms(hiA, loA, sortedNames);
  }
  /** Symbol containing the address (nearest at or below it), or null. */
  lookup(hi, lo) {
    let byLo = this.memo.get(hi);
    if (!byLo) {
      byLo = /* @__PURE__ */ new Map();
      this.memo.set(hi, byLo);
    }
    const hit = byLo.get(lo);
    if (hit !== void 0) return hit;
    const found = this.search(hi, lo);
    if (byLo.size < 1e5) byLo.set(lo, found);
    return found;
  }
  search(hi, lo) {
    let l = 0;
    let r = this.names.length - 1;
    let best = -1;
    while (l <= r) {
      const m = l + r >> 1;
      const mh = this.hi[m];
      const ml = this.lo[m];
      if (mh < hi || mh === hi && ml <= lo) {
        best = m;
        l = m + 1;
      } else r = m - 1;
    }
    return best >= 0 ? this.names[best] : null;
  }
};

// server/decode/trace_dat/read_file_header.ts
var TRACE_DAT_MAGIC2 = Buffer.from([23, 8, 68, ...Buffer.from("tracing")]);
var OPT = {
  DONE: 0,
  DATE: 1,
  CPUSTAT: 2,
  BUFFER: 3,
  TRACECLOCK: 4,
  UNAME: 5,
  HOOK: 6,
  OFFSET: 7,
  CPUCOUNT: 8,
  VERSION: 9,
  PROCMAPS: 10,
  TRACEID: 11,
  TIME_SHIFT: 12,
  GUEST: 13,
  TSC2NSEC: 14,
  STRINGS: 15,
  HEADER_INFO: 16,
  FTRACE_EVENTS: 17,
  EVENT_FORMATS: 18,
  KALLSYMS: 19,
  PRINTK: 20,
  CMDLINES: 21,
  BUFFER_TEXT: 22
};
var SECTION_FLAG_COMPRESSED = 1;
var AsyncCursor = class {
  constructor(src, pos, littleEndian) {
    this.src = src;
    this.pos = pos;
    this.littleEndian = littleEndian;
  }
  src;
  pos;
  littleEndian;
  window = Buffer.alloc(0);
  windowStart = 0;
  async ensure(n2, what) {
    const rel = this.pos - this.windowStart;
    if (rel >= 0 && rel + n2 <= this.window.length) return this.window.subarray(rel, rel + n2);
    if (this.pos + n2 > this.src.size) {
      throw new TraceDatFormatError(Math.min(this.pos, this.src.size), `truncated: ${what} needs ${n2} bytes at ${this.pos}, file has ${this.src.size}`);
    }
    const len = Math.min(Math.max(n2, 1 << 16), this.src.size - this.pos);
    this.window = await this.src.read(this.pos, len, what);
    this.windowStart = this.pos;
    return this.window.subarray(0, n2);
  }
  async bytes(n2, what) {
    const b = await this.ensure(n2, what);
    this.pos += n2;
    return b;
  }
  async u16(what) {
    const b = await this.bytes(2, what);
    return this.littleEndian ? b.readUInt16LE(0) : b.readUInt16BE(0);
  }
  async u32(what) {
    const b = await this.bytes(4, what);
    return this.littleEndian ? b.readUInt32LE(0) : b.readUInt32BE(0);
  }
  async u64(what) {
    const at = this.pos;
    const b = await this.bytes(8, what);
    const c = new ByteCursor(b, this.littleEndian, at);
    return c.u64(what);
  }
  async cstring(what, max = 4096) {
    const start = this.pos;
    const avail = Math.min(max, this.src.size - start);
    const b = await this.ensure(avail, what);
    const end = b.indexOf(0);
    if (end < 0) throw new TraceDatFormatError(start, `unterminated ${what}`);
    this.pos = start + end + 1;
    return b.toString("utf8", 0, end);
  }
  async expect(s) {
    const at = this.pos;
    const b = await this.bytes(s.length, JSON.stringify(s));
    if (b.toString("latin1") !== s) {
      throw new TraceDatFormatError(at, `expected ${JSON.stringify(s)}, found ${JSON.stringify(b.toString("latin1"))}`);
    }
  }
  /** A length-prefixed blob whose length must fit in the file. */
  async sizedText(size, what) {
    if (size > this.src.size - this.pos) {
      throw new TraceDatFormatError(this.pos, `${what} claims ${size} bytes, only ${this.src.size - this.pos} left in file`);
    }
    const at = this.pos;
    const b = size <= 1 << 16 ? await this.bytes(size, what) : await this.src.read(at, size, what);
    this.pos = at + size;
    return b.toString("utf8");
  }
};
async function readInitial(src) {
  const head = await src.readUpTo(0, 64);
  if (head.length < TRACE_DAT_MAGIC2.length || !head.subarray(0, TRACE_DAT_MAGIC2.length).equals(TRACE_DAT_MAGIC2)) {
    throw new TraceDatFormatError(0, `not a trace.dat file (bad magic: ${hexExcerpt(head, 0, 10)})`);
  }
  const vEnd = head.indexOf(0, 10);
  if (vEnd < 0 || vEnd > 20) throw new TraceDatFormatError(10, "unreadable version string");
  const versionText = head.toString("latin1", 10, vEnd);
  const version = Number(versionText);
  if (!/^\d+$/.test(versionText) || version !== 6 && version !== 7) {
    throw new TraceDatFormatError(10, `unsupported trace.dat version ${JSON.stringify(versionText)} (6 and 7 are supported)`);
  }
  let p = vEnd + 1;
  if (head.length < p + 6) throw new TraceDatFormatError(p, "truncated initial header");
  const endian = head[p];
  const longSize = head[p + 1];
  if (endian > 1) throw new TraceDatFormatError(p, `bad endianness flag ${endian}`);
  if (longSize !== 4 && longSize !== 8) throw new TraceDatFormatError(p + 1, `bad long size ${longSize}`);
  const littleEndian = endian === 0;
  p += 2;
  const pageSize = littleEndian ? head.readUInt32LE(p) : head.readUInt32BE(p);
  if (pageSize < 256 || pageSize > 1 << 24 || (pageSize & pageSize - 1) !== 0) {
    throw new TraceDatFormatError(p, `implausible page size ${pageSize}`);
  }
  return { version, littleEndian, longSize, pageSize, end: p + 4 };
}
function emptyInfo(init, fileSize) {
  return {
    version: init.version,
    littleEndian: init.littleEndian,
    longSize: init.longSize,
    pageSize: init.pageSize,
    fileSize,
    compression: null,
    headerPage: null,
    headerEvent: null,
    formats: [],
    kallsyms: null,
    printk: null,
    cmdlines: null,
    cpuCount: null,
    uname: null,
    traceClock: null,
    traceCmdVersion: null,
    date: null,
    tsOffset: 0n,
    tsc2nsec: false,
    buffers: [],
    problems: []
  };
}
async function readTraceDatHeader(src) {
  const init = await readInitial(src);
  const info = emptyInfo(init, src.size);
  if (init.version === 6) await readV6(src, init, info);
  else await readV7(src, init, info);
  return info;
}
async function readHeaderInfoSeq(c, info) {
  await c.expect("header_page\0");
  info.headerPage = await c.sizedText(await c.u64("header_page size"), "header_page");
  await c.expect("header_event\0");
  info.headerEvent = await c.sizedText(await c.u64("header_event size"), "header_event");
}
async function readFormatsSeq(c, info, system) {
  const count = await c.u32(`${system} format count`);
  if (count > (info.fileSize - c.pos) / 8) throw new TraceDatFormatError(c.pos - 4, `implausible ${system} format count ${count}`);
  for (let i = 0; i < count; i++) {
    const size = await c.u64("format size");
    const where = c.pos;
    info.formats.push({ system, text: await c.sizedText(size, `${system} format`), where });
  }
}
async function readV6(src, init, info) {
  const c = new AsyncCursor(src, init.end, init.littleEndian);
  await readHeaderInfoSeq(c, info);
  await readFormatsSeq(c, info, "ftrace");
  const systems = await c.u32("event system count");
  if (systems > info.fileSize - c.pos) throw new TraceDatFormatError(c.pos - 4, `implausible system count ${systems}`);
  for (let s = 0; s < systems; s++) {
    const name = await c.cstring("system name");
    await readFormatsSeq(c, info, name);
  }
  info.kallsyms = await c.sizedText(await c.u32("kallsyms size"), "kallsyms");
  info.printk = await c.sizedText(await c.u32("printk size"), "printk formats");
  info.cmdlines = await c.sizedText(await c.u64("cmdlines size"), "saved cmdlines");
  const cpus = await c.u32("cpu count");
  if (cpus > 65536) throw new TraceDatFormatError(c.pos - 4, `implausible cpu count ${cpus}`);
  info.cpuCount = cpus;
  let label = (await c.bytes(10, "section label")).toString("latin1");
  const v6Buffers = [];
  if (label === "options  \0") {
    for (let n2 = 0; ; n2++) {
      if (n2 > 1e5) throw new TraceDatFormatError(c.pos, "too many options");
      const id = await c.u16("option id");
      if (id === OPT.DONE) break;
      const size = await c.u32("option size");
      const at = c.pos;
      if (size > info.fileSize - at) throw new TraceDatFormatError(at, `option ${id} claims ${size} bytes`);
      const data = await src.read(at, size, `option ${id}`);
      c.pos = at + size;
      applyOption(id, new ByteCursor(data, init.littleEndian, at), info, v6Buffers, 6);
    }
    label = (await c.bytes(10, "section label")).toString("latin1");
  }
  if (label === "latency  \0") {
    info.problems.push({ where: c.pos, unit: "offset", reason: "latency-format trace.dat (text data) is not decoded", excerpt: "" });
    return;
  }
  if (label !== "flyrecord\0") throw new TraceDatFormatError(c.pos - 10, `expected "flyrecord", found ${JSON.stringify(label)}`);
  info.buffers.push({ name: "", clock: info.traceClock, pageSize: init.pageSize, compressed: false, cpus: await readCpuTable(c, cpus) });
  for (const b of v6Buffers) {
    try {
      const bc = new AsyncCursor(src, b.offset, init.littleEndian);
      await bc.expect("flyrecord\0");
      info.buffers.push({ name: b.name, clock: info.traceClock, pageSize: init.pageSize, compressed: false, cpus: await readCpuTable(bc, cpus) });
    } catch (e) {
      if (!(e instanceof TraceDatFormatError)) throw e;
      info.problems.push({ where: e.where, unit: "offset", reason: `buffer ${JSON.stringify(b.name)}: ${e.message}`, excerpt: "" });
    }
  }
}
async function readCpuTable(c, cpus) {
  const out = [];
  for (let cpu = 0; cpu < cpus; cpu++) {
    const offset = await c.u64("cpu data offset");
    const size = await c.u64("cpu data size");
    out.push({ cpu, offset, size });
  }
  return out;
}
async function readSection(src, offset, info, expectId) {
  const hdr = new ByteCursor(await src.read(offset, 16, "section header"), info.littleEndian, offset);
  const id = hdr.u16();
  const flags = hdr.u16();
  hdr.u32();
  const size = hdr.u64("section size");
  if (expectId !== null && id !== expectId) throw new TraceDatFormatError(offset, `expected section ${expectId}, found section id ${id}`);
  const bodyAt = offset + 16;
  if (size > info.fileSize - bodyAt) throw new TraceDatFormatError(offset, `section ${id} claims ${size} bytes, file has ${info.fileSize - bodyAt} after it`);
  if (!(flags & SECTION_FLAG_COMPRESSED)) {
    return { id, flags, where: offset, data: new ByteCursor(await src.read(bodyAt, size, `section ${id}`), info.littleEndian, bodyAt) };
  }
  if (size < 8) throw new TraceDatFormatError(offset, `compressed section ${id} too small`);
  const raw = await src.read(bodyAt, size, `section ${id}`);
  const zc = new ByteCursor(raw, info.littleEndian, bodyAt);
  const csize = zc.u32();
  const usize = zc.u32();
  if (csize > size - 8) throw new TraceDatFormatError(bodyAt, `compressed section ${id}: ${csize} bytes of data claimed, ${size - 8} present`);
  if (usize > MAX_UNCOMPRESSED) throw new TraceDatFormatError(bodyAt, `compressed section ${id}: implausible size ${usize}`);
  let body;
  try {
    const algo = info.compression?.name ?? "none";
    const native = algo === "zstd" && usize > 1 << 20 ? await zstdNativeOnce(raw.subarray(8, 8 + csize), usize) : null;
    body = native ?? decompress(algo, raw.subarray(8, 8 + csize), usize);
  } catch (e) {
    if (e instanceof DecompressError) throw new TraceDatFormatError(bodyAt, `section ${id}: ${e.message}`);
    throw e;
  }
  return { id, flags, where: offset, data: new ByteCursor(body, info.littleEndian, offset, true) };
}
async function readV7(src, init, info) {
  const head = new ByteCursor(await src.readUpTo(init.end, 512), init.littleEndian, init.end);
  const name = head.cstring("compression name");
  const version = head.cstring("compression version");
  info.compression = { name, version };
  if (name !== "none" && name !== "zstd" && name !== "zlib") {
    throw new TraceDatFormatError(init.end, `unsupported compression ${JSON.stringify(name)}`);
  }
  let next = head.u64("options offset");
  const sectionOffsets = /* @__PURE__ */ new Map();
  const bufferOptions = [];
  const seen = /* @__PURE__ */ new Set();
  let firstOptions = true;
  let optionsChainBroken = false;
  let scanFrom = 0;
  while (next !== 0) {
    if (seen.has(next) || seen.size > 1e4) {
      info.problems.push({ where: next, unit: "offset", reason: "options sections form a loop", excerpt: "" });
      break;
    }
    seen.add(next);
    let sec;
    try {
      sec = await readSection(src, next, info, OPT.DONE);
    } catch (e) {
      if (!(e instanceof TraceDatFormatError)) throw e;
      if (firstOptions) throw e;
      info.problems.push({ where: e.where, unit: "offset", reason: `options section unreadable: ${e.message}`, excerpt: "" });
      optionsChainBroken = true;
      break;
    }
    firstOptions = false;
    if (!sec.data.positionsAreVirtual) scanFrom = Math.max(scanFrom, sec.data.fileBase + sec.data.buf.length);
    next = 0;
    const c = sec.data;
    try {
      while (c.remaining > 0) {
        const id = c.u16();
        const size = c.u32();
        const at = c.where();
        const data = new ByteCursor(c.bytes(size, `option ${id}`), info.littleEndian, at, c.positionsAreVirtual);
        if (id === OPT.DONE) {
          next = data.u64("next options offset");
          break;
        }
        if (id >= OPT.HEADER_INFO && id <= OPT.CMDLINES) sectionOffsets.set(id, data.u64("section offset"));
        else if (id === OPT.BUFFER) bufferOptions.push(parseV7BufferOption(data, init.pageSize));
        else applyOption(id, data, info, [], 7);
      }
    } catch (e) {
      if (!(e instanceof TraceDatFormatError)) throw e;
      info.problems.push({ where: e.where, unit: "offset", reason: `damaged option: ${e.message}`, excerpt: "" });
    }
  }
  const need = async (id, what, optional, parse) => {
    const off = sectionOffsets.get(id);
    if (off === void 0) {
      if (!optional) throw new TraceDatFormatError(0, `no ${what} section`);
      return;
    }
    try {
      const sec = await readSection(src, off, info, id);
      parse(sec.data);
    } catch (e) {
      if (!(e instanceof TraceDatFormatError) || !optional) throw e;
      info.problems.push({ where: e.where, unit: "offset", reason: `${what} section unreadable: ${e.message}`, excerpt: "" });
    }
  };
  await need(OPT.HEADER_INFO, "header info", true, (c) => {
    c.expectString("header_page\0");
    info.headerPage = c.bytes(c.u64("header_page size")).toString("utf8");
    c.expectString("header_event\0");
    info.headerEvent = c.bytes(c.u64("header_event size")).toString("utf8");
  });
  const readFormats = (c, system) => {
    const count = c.u32();
    if (count > c.remaining / 8) c.fail(`implausible ${system} format count ${count}`);
    for (let i = 0; i < count; i++) {
      const size = c.u64("format size");
      const where = c.where();
      info.formats.push({ system, text: c.bytes(size, `${system} format`).toString("utf8"), where });
    }
  };
  await need(OPT.FTRACE_EVENTS, "ftrace formats", true, (c) => readFormats(c, "ftrace"));
  await need(OPT.EVENT_FORMATS, "event formats", false, (c) => {
    const systems = c.u32();
    if (systems > c.remaining) c.fail(`implausible system count ${systems}`);
    for (let s = 0; s < systems; s++) readFormats(c, c.cstring("system name"));
  });
  await need(OPT.KALLSYMS, "kallsyms", true, (c) => {
    info.kallsyms = c.bytes(c.u32(), "kallsyms").toString("utf8");
  });
  await need(OPT.PRINTK, "printk formats", true, (c) => {
    info.printk = c.bytes(c.u32(), "printk formats").toString("utf8");
  });
  await need(OPT.CMDLINES, "saved cmdlines", true, (c) => {
    info.cmdlines = c.bytes(c.u64("cmdlines size"), "saved cmdlines").toString("utf8");
  });
  for (const b of bufferOptions) {
    let compressed = false;
    try {
      const hdr = new ByteCursor(await src.read(b.offset, 16, "buffer section header"), info.littleEndian, b.offset);
      const id = hdr.u16();
      const flags = hdr.u16();
      if (id !== OPT.BUFFER) throw new TraceDatFormatError(b.offset, `expected buffer section, found section id ${id}`);
      compressed = (flags & SECTION_FLAG_COMPRESSED) !== 0 && info.compression.name !== "none";
    } catch (e) {
      if (!(e instanceof TraceDatFormatError)) throw e;
      compressed = info.compression.name !== "none";
      info.problems.push({ where: e.where, unit: "offset", reason: `buffer ${JSON.stringify(b.name)}: ${e.message}`, excerpt: "" });
    }
    info.buffers.push({ name: b.name, clock: b.clock, pageSize: b.pageSize, compressed, cpus: b.cpus });
  }
  if (optionsChainBroken && !info.buffers.some((b) => b.cpus.some((c) => c.size > 0))) {
    const salvaged = await salvageV7Buffers(src, info, scanFrom);
    if (salvaged.length > 0) {
      info.buffers.push(...salvaged);
      info.problems.push({
        where: salvaged[0].cpus[0]?.offset ?? scanFrom,
        unit: "offset",
        reason: `buffer descriptions missing (truncated file): per-CPU data located by scanning; CPU numbers inferred as 0..${salvaged[0].cpus.length - 1} in file order`,
        excerpt: ""
      });
    }
  }
  if (!info.buffers.some((b) => b.cpus.some((c) => c.size > 0))) {
    info.problems.push({ where: info.fileSize, unit: "offset", reason: "no per-CPU trace data found (file truncated before its data or buffer descriptions?)", excerpt: "" });
  }
}
async function salvageV7Buffers(src, info, scanFrom) {
  const out = [];
  const scanEnd = Math.min(info.fileSize, scanFrom + (16 << 20));
  let pos = scanFrom;
  const le = info.littleEndian;
  const algo = info.compression?.name ?? "none";
  while (pos + 16 <= scanEnd) {
    const win = await src.readUpTo(pos, Math.min(1 << 20, scanEnd - pos));
    let found = -1;
    for (let i = 0; i + 16 <= win.length; i++) {
      const id = le ? win.readUInt16LE(i) : win.readUInt16BE(i);
      if (id !== OPT.BUFFER) continue;
      const flags2 = le ? win.readUInt16LE(i + 2) : win.readUInt16BE(i + 2);
      if (flags2 > 1) continue;
      const size2 = readU64Number(win, i + 8, le);
      if (size2 === null || size2 === 0 || size2 > 2 ** 45) continue;
      found = i;
      break;
    }
    if (found < 0) {
      pos += Math.max(1, win.length - 15);
      continue;
    }
    const hdrAt = pos + found;
    const flags = le ? win.readUInt16LE(found + 2) : win.readUInt16BE(found + 2);
    const size = readU64Number(win, found + 8, le);
    const compressed = (flags & SECTION_FLAG_COMPRESSED) !== 0 && algo !== "none";
    const regionEnd = Math.min(info.fileSize, hdrAt + 16 + size);
    const cpus = compressed ? await walkCompressedCpus(src, info, alignUp(hdrAt + 16, info.pageSize), regionEnd) : await walkPageCpus(src, info, alignUp(hdrAt + 16, info.pageSize), regionEnd);
    if (cpus.length > 0) {
      out.push({ name: "", clock: info.traceClock, pageSize: info.pageSize, compressed, cpus });
      pos = regionEnd;
    } else pos = hdrAt + 1;
  }
  return out;
}
function alignUp(v, a) {
  return Math.ceil(v / a) * a;
}
async function walkCompressedCpus(src, info, start, end) {
  const le = info.littleEndian;
  const cpus = [];
  let off = start;
  const maxCpus = info.cpuCount ?? 4096;
  while (off + 4 <= end && cpus.length < maxCpus) {
    const cb = await src.read(off, 4, "chunk count");
    const count = le ? cb.readUInt32LE(0) : cb.readUInt32BE(0);
    if (count === 0 || count > 1 << 24) break;
    let p = off + 4;
    for (let i = 0; i < count && p + 8 <= end; i++) {
      const h = await src.read(p, 8, "chunk header");
      const csize = le ? h.readUInt32LE(0) : h.readUInt32BE(0);
      const usize = le ? h.readUInt32LE(4) : h.readUInt32BE(4);
      if (usize % info.pageSize !== 0 || usize === 0 || usize > MAX_UNCOMPRESSED) {
        p = -1;
        break;
      }
      p += 8 + csize;
    }
    if (p < 0) break;
    cpus.push({ cpu: cpus.length, offset: off, size: p - off - 4 });
    off = alignUp(p, info.pageSize);
  }
  return cpus;
}
async function walkPageCpus(src, info, start, end) {
  const le = info.littleEndian;
  const ps = info.pageSize;
  const cpus = [];
  let cpuStart = start;
  let lastTs = -1n;
  for (let off = start; off < end; off += ps) {
    const b = await src.readUpTo(off, 8);
    if (b.length < 8) break;
    const ts = le ? b.readBigUInt64LE(0) : b.readBigUInt64BE(0);
    if (ts < lastTs) {
      cpus.push({ cpu: cpus.length, offset: cpuStart, size: off - cpuStart });
      cpuStart = off;
    }
    lastTs = ts;
  }
  if (end > cpuStart) cpus.push({ cpu: cpus.length, offset: cpuStart, size: end - cpuStart });
  return cpus;
}
function parseV7BufferOption(c, defaultPageSize) {
  const offset = c.u64("buffer offset");
  const name = c.cstring("buffer name");
  const clock = c.cstring("buffer clock");
  let pageSize = defaultPageSize;
  const rest = c.remaining;
  if (rest >= 8) {
    const maybeCount = c.littleEndian ? c.buf.readUInt32LE(c.pos + 4) : c.buf.readUInt32BE(c.pos + 4);
    if (rest === 8 + maybeCount * 20) pageSize = c.u32();
  }
  const count = c.u32();
  if (count * 20 > c.remaining) c.fail(`buffer ${JSON.stringify(name)}: ${count} CPUs claimed, option too short`);
  const cpus = [];
  for (let i = 0; i < count; i++) {
    const cpu = c.u32();
    const off = c.u64("cpu data offset");
    const size = c.u64("cpu data size");
    cpus.push({ cpu, offset: off, size });
  }
  return { offset, name, clock: clock || null, pageSize, cpus };
}
function cstr(c) {
  const b = c.buf.subarray(c.pos);
  const end = b.indexOf(0);
  return b.toString("utf8", 0, end < 0 ? b.length : end);
}
function applyOption(id, c, info, v6Buffers, version) {
  switch (id) {
    case OPT.DATE:
      info.date = cstr(c);
      break;
    case OPT.TRACECLOCK: {
      const m = /\[([^\]]+)\]/.exec(cstr(c));
      info.traceClock = m ? m[1] : cstr(c).trim() || null;
      break;
    }
    case OPT.UNAME:
      info.uname = cstr(c);
      break;
    case OPT.VERSION:
      info.traceCmdVersion = cstr(c);
      break;
    case OPT.CPUCOUNT:
      info.cpuCount = c.u32();
      break;
    case OPT.OFFSET: {
      const s = cstr(c).trim();
      if (/^-?\d+$/.test(s)) info.tsOffset = BigInt(s);
      break;
    }
    case OPT.TSC2NSEC:
      info.tsc2nsec = true;
      break;
    case OPT.BUFFER:
      if (version === 6) {
        const offset = c.u64("buffer offset");
        v6Buffers.push({ offset, name: c.cstring("buffer name") });
      }
      break;
    default:
      break;
  }
}

// server/decode/trace_dat/decode_trace_dat.ts
var MAX_UNKNOWN_REPORTS = 100;
async function decodeTraceDat(path8, sink, opts) {
  const label = opts.fileLabel;
  let src;
  const streams = [];
  try {
    src = await FileSource.open(path8);
  } catch (e) {
    throw new DecodeError(label, 0, "offset", `cannot open: ${e.message}`);
  }
  try {
    let info;
    try {
      info = await readTraceDatHeader(src);
    } catch (e) {
      if (e instanceof TraceDatFormatError) throw new DecodeError(label, e.where, "offset", e.message);
      throw new DecodeError(label, 0, "offset", `unreadable trace.dat header: ${e.message}`);
    }
    await decodeBody(src, info, sink, opts, streams);
  } finally {
    for (const s of streams) s.close();
    await src.close();
  }
}
var CommTable = class _CommTable {
  map = /* @__PURE__ */ new Map();
  known = new Uint8Array(1 << 22);
  // pid_max on 64-bit kernels
  has(pid) {
    return pid >= 0 && pid < this.known.length ? this.known[pid] === 1 : this.map.has(pid);
  }
  set(pid, comm) {
    this.map.set(pid, comm);
    if (pid >= 0 && pid < this.known.length) this.known[pid] = 1;
  }
  static parse(text) {
    const t = new _CommTable();
    if (!text) return t;
    for (const line of text.split("\n")) {
      const sp = line.indexOf(" ");
      if (sp <= 0) continue;
      const pid = Number(line.slice(0, sp));
      if (Number.isInteger(pid)) t.set(pid, line.slice(sp + 1));
    }
    return t;
  }
};
async function decodeBody(src, info, sink, opts, streams) {
  const label = opts.fileLabel;
  const deferred = [...info.problems];
  const formats = [];
  const formatTexts = [];
  for (const f of info.formats) {
    try {
      const parsed = parseEventFormat(f.text, f.system);
      formats.push(parsed);
      formatTexts.push({ id: parsed.id, name: parsed.name, system: parsed.system, text: f.text });
    } catch (e) {
      if (!(e instanceof FormatParseError)) throw e;
      deferred.push({ where: f.where, unit: "offset", reason: `unparsable ${f.system} event format: ${e.message}`, excerpt: f.text.slice(0, 200) });
    }
  }
  if (formats.length === 0) throw new DecodeError(label, 0, "offset", "no readable event formats");
  const kallsyms = Kallsyms.parse(info.kallsyms);
  const helpers = makeHelpers(info.littleEndian, kallsyms);
  const byId = new Array(65536);
  const directSink = isDirectRowSink(sink) ? sink : null;
  for (const f of formats) {
    try {
      byId[f.id] = compileEvent(f, helpers, info.littleEndian, info.longSize, directSink?.directRows(f.name, f.system) ?? null);
    } catch (e) {
      deferred.push({ where: 0, unit: "offset", reason: `cannot compile reader for ${f.system}:${f.name}: ${e.message}`, excerpt: "" });
    }
  }
  const common = formats.find((f) => f.commonFields.length > 0)?.commonFields ?? [];
  const cf = (name, dOff, dSize) => {
    const f = common.find((c) => c.name === name);
    return f ? { off: f.offset, size: f.size } : { off: dOff, size: dSize };
  };
  const typeF = cf("common_type", 0, 2);
  const flagsF = cf("common_flags", 2, 1);
  const preemptF = cf("common_preempt_count", 3, 1);
  const pidF = cf("common_pid", 4, 4);
  const le = info.littleEndian;
  if (typeF.size !== 2 || flagsF.size !== 1 || preemptF.size !== 1 || pidF.size !== 4) {
    throw new DecodeError(label, 0, "offset", "unsupported common field layout");
  }
  const typeOff = typeF.off;
  const flagsOff = flagsF.off;
  const preemptOff = preemptF.off;
  const pidOff = pidF.off;
  const commonLen = Math.max(typeOff + 2, flagsOff + 1, preemptOff + 1, pidOff + 4);
  const comms = CommTable.parse(info.cmdlines);
  const layout = parseHeaderPage(info.headerPage, info.longSize);
  const report = (p) => deferred.push(p);
  let headerSent = false;
  const lostQueue = [];
  const lost = (cpu, count, where) => {
    if (headerSent) sink.lostEvents(cpu, count, where);
    else lostQueue.push([cpu, count, where]);
  };
  const instanceNames = [];
  let maxCpu = -1;
  let totalBytes = 0;
  const nStreams = info.buffers.reduce((a, b) => a + b.cpus.filter((c) => c.size > 0).length, 0);
  const batchBytes = Math.max(1 << 20, Math.min(NATIVE_BATCH_BYTES, Math.floor((64 << 20) / (2 * Math.max(1, nStreams)))));
  for (const b of info.buffers) {
    if (b.cpus.some((c) => c.size > 0)) instanceNames.push(b.name === "" ? "(top)" : b.name);
    for (const c of b.cpus) {
      if (c.size <= 0) continue;
      if (c.offset >= src.size) {
        report({ where: src.size, unit: "offset", reason: `cpu ${c.cpu} data at offset ${c.offset} lies beyond the end of the file (truncated)`, excerpt: "" });
        continue;
      }
      maxCpu = Math.max(maxCpu, c.cpu);
      totalBytes += Math.min(c.size, src.size - c.offset);
      streams.push(
        new CpuStream({
          src,
          cpu: c.cpu,
          order: streams.length,
          offset: c.offset,
          size: c.size,
          compressed: b.compressed,
          algorithm: info.compression?.name ?? "none",
          pageSize: b.pageSize,
          layout,
          littleEndian: le,
          report,
          lost,
          batchBytes
        })
      );
    }
  }
  let baseHi = -1;
  let baseLo = 0;
  for (const s of streams) {
    const t = await s.firstPageTimestamp();
    if (t && (baseHi < 0 || t.hi < baseHi || t.hi === baseHi && t.lo < baseLo)) {
      baseHi = t.hi;
      baseLo = t.lo;
    }
  }
  if (baseHi < 0) {
    baseHi = 0;
    baseLo = 0;
  }
  for (const s of streams) s.base = { hi: baseHi, lo: baseLo };
  const tsBaseNs = (BigInt(baseHi) << 32n | BigInt(baseLo)) + info.tsOffset;
  const meta = {
    page_size: String(info.pageSize),
    long_size: String(info.longSize),
    endian: info.littleEndian ? "little" : "big",
    compression: info.compression ? `${info.compression.name}${info.compression.version ? " " + info.compression.version : ""}` : "none"
  };
  if (info.uname) meta.kernel = info.uname;
  if (info.traceClock) {
    meta.clock = info.traceClock;
    meta.trace_clock = info.traceClock;
  } else {
    const bc = info.buffers.find((b) => b.clock)?.clock;
    if (bc) {
      meta.clock = bc;
      meta.trace_clock = bc;
    }
  }
  if (info.traceCmdVersion) meta.trace_cmd_version = info.traceCmdVersion;
  if (info.date) meta.date = info.date;
  if (info.cpuCount !== null) meta.cpu_count = String(info.cpuCount);
  if (info.tsOffset !== 0n) meta.ts_offset = info.tsOffset.toString();
  if (info.tsc2nsec) meta.tsc2nsec = "present (timestamps not converted)";
  if (instanceNames.length > 0) meta.instances = instanceNames.join(",");
  meta.kallsyms_entries = String(kallsyms.size);
  sink.header({
    format: "trace_dat",
    formatVersion: String(info.version),
    cpus: info.cpuCount ?? (maxCpu >= 0 ? maxCpu + 1 : null),
    tsBaseNs,
    meta
  });
  headerSent = true;
  for (const [c, n2, w] of lostQueue) sink.lostEvents(c, n2, w);
  const raw = isRawRecordSink(sink) ? sink.rawRecords({ format: "trace_dat", littleEndian: le, longSize: info.longSize, formats: formatTexts, kallsyms: info.kallsyms }) : null;
  const takenRaw = new Uint8Array(65536);
  if (raw !== null) {
    for (const f of formats) if (byId[f.id] !== void 0 && raw.takes(f.id)) takenRaw[f.id] = 1;
  }
  const flushProblems = () => {
    for (const p of deferred) sink.skipped(p);
    deferred.length = 0;
  };
  flushProblems();
  const active = [];
  for (const s of streams) {
    if (s.nextPageSync() || await s.refill()) active.push(s);
  }
  flushProblems();
  const onProgress = opts.onProgress;
  let progressTick = 0;
  const bytesDone = () => streams.reduce((a, s) => a + s.bytesDone, 0);
  let unknownCount = 0;
  let shortCount = 0;
  let lastYield = performance.now();
  let lastPid = -1;
  let lastComm = null;
  while (active.length > 0) {
    let best = active[0];
    let bestTs = best.recs.ts[best.idx];
    let secondTs = Infinity;
    let secondOrder = Infinity;
    for (let i = 1; i < active.length; i++) {
      const s2 = active[i];
      const t = s2.recs.ts[s2.idx];
      if (t < bestTs || t === bestTs && s2.order < best.order) {
        secondTs = bestTs;
        secondOrder = best.order;
        best = s2;
        bestTs = t;
      } else if (t < secondTs || t === secondTs && s2.order < secondOrder) {
        secondTs = t;
        secondOrder = s2.order;
      }
    }
    const s = best;
    const recs = s.recs;
    const cpu = s.cpu;
    const order = s.order;
    let more = true;
    for (; ; ) {
      const buf = s.block;
      if (raw !== null) raw.page(buf, s.pageStart, s.pageStart + s.pageSize);
      const tsA = recs.ts;
      const offA = recs.dataOff;
      const lenA = recs.dataLen;
      const count = recs.count;
      let i = s.idx;
      for (; i < count; i++) {
        const ts = tsA[i];
        if (ts > secondTs || ts === secondTs && order > secondOrder) break;
        const off = offA[i];
        const len = lenA[i];
        const where = s.recordWhere(recs.recOff[i]);
        if (len < commonLen) {
          sink.skipped({ where, unit: "offset", reason: `cpu ${cpu}: record of ${len} bytes is too short for an event`, excerpt: hexExcerpt(buf, off, 16) });
          continue;
        }
        const type = le ? buf[off + typeOff] | buf[off + typeOff + 1] << 8 : buf[off + typeOff] << 8 | buf[off + typeOff + 1];
        const ev = byId[type];
        if (ev === void 0) {
          unknownCount++;
          if (unknownCount <= MAX_UNKNOWN_REPORTS) {
            sink.skipped({ where, unit: "offset", reason: `cpu ${cpu}: unknown event id ${type}`, excerpt: hexExcerpt(buf, off, 16) });
          }
          continue;
        }
        const p = off + pidOff;
        const pid = le ? buf[p] | buf[p + 1] << 8 | buf[p + 2] << 16 | buf[p + 3] << 24 : buf[p] << 24 | buf[p + 1] << 16 | buf[p + 2] << 8 | buf[p + 3];
        let comm;
        if (pid === lastPid) comm = lastComm;
        else {
          comm = pid === 0 ? "<idle>" : comms.map.get(pid) ?? null;
          lastPid = pid;
          lastComm = comm;
        }
        const direct = ev.direct;
        if (takenRaw[type] === 1) {
          if (len < ev.minLen) shortCount++;
          raw.record(type, ts, cpu, pid, comm, buf[off + flagsOff], buf[off + preemptOff], where, off, len);
        } else if (direct !== null && len >= ev.minLen) {
          const rows = direct.rows;
          rows.begin(ts, cpu, pid, comm, buf[off + flagsOff], buf[off + preemptOff], where);
          direct.read(buf, off, len, rows);
          rows.end();
        } else {
          let fields;
          if (len >= ev.minLen) fields = ev.fast(buf, off, len);
          else {
            shortCount++;
            fields = ev.safe(buf, off, len);
          }
          const event = {
            ts,
            cpu,
            pid,
            comm,
            tgid: null,
            name: ev.name,
            system: ev.system,
            flags: buf[off + flagsOff],
            preemptCount: buf[off + preemptOff],
            fields,
            raw: null,
            where
          };
          sink.event(event);
        }
        if (ev.commRegistrations.length > 0 && registerComms(ev, buf, off, len, le, comms)) lastPid = -1;
      }
      s.idx = i;
      if (i < count) break;
      if (!s.nextPageSync()) {
        const now = performance.now();
        if (now - lastYield > 0.5) {
          await new Promise((r) => setImmediate(r));
          lastYield = performance.now();
        }
        if (++progressTick % 16 === 0 && onProgress) onProgress(bytesDone(), totalBytes);
        more = await s.refill();
        if (deferred.length > 0) flushProblems();
        if (!more) break;
      }
      if (recs.ts[s.idx] > secondTs) break;
    }
    if (!more) active.splice(active.indexOf(s), 1);
  }
  flushProblems();
  if (unknownCount > MAX_UNKNOWN_REPORTS) {
    sink.skipped({ where: src.size, unit: "offset", reason: `${unknownCount - MAX_UNKNOWN_REPORTS} more records with unknown event ids skipped (first ${MAX_UNKNOWN_REPORTS} reported individually)`, excerpt: "" });
  }
  if (shortCount > 0) {
    sink.skipped({ where: src.size, unit: "offset", reason: `${shortCount} records were shorter than their event format: fields beyond the record end omitted`, excerpt: "" });
  }
  if (onProgress) onProgress(bytesDone(), totalBytes);
}
function registerComms(ev, buf, off, len, le, comms) {
  let added = false;
  for (const r of ev.commRegistrations) {
    if (r.pidOff + 4 > len || r.commOff + r.commSize > len) continue;
    const pid = le ? buf.readInt32LE(off + r.pidOff) : buf.readInt32BE(off + r.pidOff);
    if (pid === 0 || comms.has(pid)) continue;
    let e = off + r.commOff;
    const end = e + r.commSize;
    const start = e;
    while (e < end && buf[e] !== 0) e++;
    comms.set(pid, buf.toString("utf8", start, e));
    added = true;
  }
  return added;
}

// server/decode/decode_file.ts
async function decodeFile(file2, sink, opts) {
  const { label } = opts;
  const progress = (done, total) => opts.onProgress?.("decoding", done, total);
  const opened = await openInput(file2, label);
  if (opened.format === "unknown") {
    throw new DecodeError(label, 0, "offset", "not a trace: neither trace.dat nor ftrace text (binary content)");
  }
  if (opened.format === "text") {
    const r = await decodeFtraceText(opened.chunks, sink, {
      fileLabel: label,
      totalBytes: opened.compression.length ? null : opened.fileBytes,
      onProgress: progress
    });
    return { compression: opened.compression, outOfOrderLines: r?.outOfOrderLines ?? 0 };
  }
  await opened.chunks[Symbol.asyncIterator]().return?.(void 0);
  let datPath = file2;
  if (opened.compression.length > 0) {
    opts.onProgress?.("decompressing", 0, null);
    datPath = path.join(opts.scratchDir, "decompressed.dat");
    await decompressToFile(file2, datPath, label);
  }
  await decodeTraceDat(datPath, sink, { fileLabel: label, onProgress: progress });
  return { compression: opened.compression, outOfOrderLines: 0 };
}

// server/engine/engine.ts
import { DuckDBInstance } from "@duckdb/node-api";
async function openDuckDb(path8, opts = {}) {
  const config = {};
  if (opts.readOnly) config.access_mode = "READ_ONLY";
  if (opts.threads) config.threads = String(opts.threads);
  if (opts.memoryLimit) config.memory_limit = opts.memoryLimit;
  if (opts.tempDirectory) config.temp_directory = opts.tempDirectory;
  const instance = await DuckDBInstance.create(path8, config);
  const connection = await instance.connect();
  return new DuckDbEngine(instance, connection);
}
var DuckDbEngine = class {
  constructor(instance, connection) {
    this.instance = instance;
    this.connection = connection;
  }
  instance;
  connection;
  async query(sql, params) {
    const reader = await this.connection.runAndReadAll(sql, params);
    return reader.getRowObjectsJS();
  }
  async exec(sql) {
    await this.connection.run(sql);
  }
  close() {
    this.connection.closeSync();
    this.instance.closeSync();
  }
};

// server/model/derive_model.ts
import fs from "node:fs";
import path2 from "node:path";
import { fileURLToPath } from "node:url";
var MODEL_DIR = path2.resolve(path2.dirname(fileURLToPath(import.meta.url)), "../../queries/model");
var DERIVE_STEPS = ["derive_sched.sql", "derive_slices.sql"];
async function deriveModel(engine) {
  const timings = {};
  for (const step of DERIVE_STEPS) {
    const file2 = path2.join(MODEL_DIR, step);
    if (!fs.existsSync(file2)) continue;
    const started = performance.now();
    try {
      await engine.exec(fs.readFileSync(file2, "utf8"));
    } catch (err) {
      throw new Error(`queries/model/${step}: ${err.message}`);
    }
    timings[step] = performance.now() - started;
  }
  return timings;
}

// server/model/column_chunk.ts
var CHUNK_ROWS = 2048;
var TWO_32 = 4294967296;
function bytesPerRow(kind) {
  return kind === "i32" ? 4 : kind === "i64" || kind === "f64" ? 8 : kind === "bool" ? 1 : 0;
}
var EMPTY_INTS = new Int32Array(0);
var EMPTY_FLOATS = new Float64Array(0);
var EMPTY_BYTES = new Uint8Array(0);
var ColumnChunk = class {
  /** Called with each full chunk (and the last partial one on flush()). */
  constructor(columns, onChunk) {
    this.columns = columns;
    this.onChunk = onChunk;
    this.allocate();
  }
  columns;
  onChunk;
  buffers = [];
  /**
   * The current chunk's value arrays by column, for code that writes rows
   * straight into them (typed_rows.ts): i32 and i64 columns an Int32Array
   * (i64: low 32 bits at 2 * row, high 32 bits at 2 * row + 1), f64 a
   * Float64Array, others empty. Replaced at every flush.
   */
  arrays = [];
  buffer = new ArrayBuffer(0);
  /** Rows filled so far in the current chunk. */
  rows = 0;
  /** Rows ever written (all chunks). */
  count = 0;
  allocate() {
    const offsets = [];
    let size = 0;
    for (const c of this.columns) {
      offsets.push(size);
      size += Math.ceil(bytesPerRow(c.kind) * CHUNK_ROWS / 8) * 8;
    }
    const validityStart = size;
    size += this.columns.length * (CHUNK_ROWS / 8);
    const buffer = new ArrayBuffer(size);
    new Uint32Array(buffer, validityStart).fill(4294967295);
    this.buffer = buffer;
    this.buffers = this.columns.map((c, i) => {
      const at = offsets[i];
      const validityOffset = validityStart + i * (CHUNK_ROWS / 8);
      return {
        kind: c.kind,
        is64: c.kind === "i64",
        ints: c.kind === "i32" ? new Int32Array(buffer, at, CHUNK_ROWS) : c.kind === "i64" ? new Int32Array(buffer, at, CHUNK_ROWS * 2) : EMPTY_INTS,
        floats: c.kind === "f64" ? new Float64Array(buffer, at, CHUNK_ROWS) : EMPTY_FLOATS,
        bytes: c.kind === "bool" ? new Uint8Array(buffer, at, CHUNK_ROWS) : EMPTY_BYTES,
        strings: c.kind === "str" ? new Array(CHUNK_ROWS).fill(null) : [],
        validity: new Uint32Array(buffer, validityOffset, CHUNK_ROWS / 32),
        hasNull: false,
        dataOffset: c.kind === "str" ? -1 : at,
        validityOffset
      };
    });
    this.arrays = this.buffers.map((b) => b.kind === "f64" ? b.floats : b.ints);
  }
  /**
   * Sets column `col` of the current row from any value: integers must be
   * exact (|v| < 2^53, or bigint); null/undefined writes SQL NULL.
   */
  set(col, value) {
    const buf = this.buffers[col];
    if (value === null || value === void 0) {
      this.setNull(col);
      return;
    }
    switch (buf.kind) {
      case "i32":
        buf.ints[this.rows] = Number(value);
        break;
      case "i64":
        if (typeof value === "bigint") {
          buf.ints[this.rows * 2] = Number(BigInt.asIntN(32, value));
          buf.ints[this.rows * 2 + 1] = Number(BigInt.asIntN(32, value >> 32n));
        } else writeI64Number(buf.ints, this.rows, Number(value));
        break;
      case "f64":
        buf.floats[this.rows] = Number(value);
        break;
      case "str":
        buf.strings[this.rows] = String(value);
        break;
      case "bool":
        buf.bytes[this.rows] = value ? 1 : 0;
        break;
    }
  }
  /** Fast path for integer columns (i32 or i64). */
  setInt(col, value) {
    const buf = this.buffers[col];
    if (buf.is64) writeI64Number(buf.ints, this.rows, value);
    else buf.ints[this.rows] = value;
  }
  /** A number into a numeric column of any kind. */
  setNumber(col, value) {
    const buf = this.buffers[col];
    if (buf.is64) writeI64Number(buf.ints, this.rows, value);
    else if (buf.kind === "i32") buf.ints[this.rows] = value;
    else buf.floats[this.rows] = value;
  }
  setNull(col) {
    const buf = this.buffers[col];
    const row = this.rows;
    buf.validity[row >>> 5] &= ~(1 << (row & 31));
    buf.hasNull = true;
  }
  endRow() {
    this.rows++;
    this.count++;
    if (this.rows === CHUNK_ROWS) this.flush();
  }
  /** Hands over the rows filled so far (if any) and starts a new chunk. */
  flush() {
    if (this.rows === 0) return;
    const data = {
      rows: this.rows,
      buffer: this.buffer,
      columns: this.buffers.map((b) => ({
        kind: b.kind,
        dataOffset: b.dataOffset,
        strings: b.kind === "str" ? b.strings : null,
        validityOffset: b.hasNull ? b.validityOffset : -1
      }))
    };
    this.rows = 0;
    this.allocate();
    this.onChunk(data);
  }
};
function chunkTransferList(data) {
  return [data.buffer];
}
function writeI64Number(ints, row, value) {
  const hi = Math.floor(value / TWO_32);
  ints[row * 2] = value - hi * TWO_32;
  ints[row * 2 + 1] = hi;
}

// server/model/model_layout.ts
var FTRACE_EVENT_TABLE = 0;
var ARGS_TABLE = 1;
var FIRST_TYPED_TABLE = 2;
var FLAGS_UNKNOWN = 1 << 16;
var PREEMPT_UNKNOWN = 1 << 17;
function packCommon(flags, preemptCount) {
  if (flags === null && preemptCount === null) return null;
  return (flags === null ? FLAGS_UNKNOWN : flags & 255) | (preemptCount === null ? PREEMPT_UNKNOWN : (preemptCount & 255) << 8);
}

// server/model/record_batch.ts
var CONTINUATION = -1;
var COMMON_NULL = -1;
var PAGE_BYTES = 0;
var OWN_TEXT = 1;
var INTS = 7;
var NUMS = 3;
var BATCH_RECORDS = 8192;
var PAGE_SLOTS = 16;
var RecordBatchWriter = class {
  /**
   * `batchBytes`: page bytes per batch, at least one page (trace.dat: 1 MiB =
   * 256 pages of 4 KiB, a batch holds ~140; text: a block of lines is up to 1 MiB).
   */
  constructor(onBatch, batchBytes = 1 << 20) {
    this.onBatch = onBatch;
    this.batchBytes = batchBytes;
    this.bytes = new Uint8Array(batchBytes);
  }
  onBatch;
  batchBytes;
  ints = new Int32Array(BATCH_RECORDS * INTS);
  nums = new Float64Array(BATCH_RECORDS * NUMS);
  bytes;
  count = 0;
  bytePos = 0;
  names = [];
  /** The current page (page()); where its copy is in `bytes` (-1: none in this batch) and which page offset that is. */
  pageBuf = null;
  pageStart = 0;
  pageEnd = 0;
  pageCopy = -1;
  pageCopyBase = 0;
  /** Pages copied into this batch: [buf, start, position in bytes, page offset copied from]. */
  slotBuf = new Array(PAGE_SLOTS).fill(null);
  slotStart = new Float64Array(PAGE_SLOTS);
  slotCopy = new Float64Array(PAGE_SLOTS);
  slotBase = new Float64Array(PAGE_SLOTS);
  slotNext = 0;
  /** The records added next lie in buf[start, end). */
  page(buf, start, end) {
    this.pageBuf = buf;
    this.pageStart = start;
    this.pageEnd = end;
    this.pageCopy = -1;
    for (let k = 0; k < PAGE_SLOTS; k++) {
      if (this.slotBuf[k] === buf && this.slotStart[k] === start) {
        this.pageCopy = this.slotCopy[k];
        this.pageCopyBase = this.slotBase[k];
        return;
      }
    }
  }
  /** A name (text records' format) the batch's reader has not been told yet. */
  name(nameId, name, system) {
    this.names.push([nameId, name, system]);
  }
  /** A record at buf[off, off + len) of the current page. */
  add(format, id, ts, cpu, utid, common, where, off, len) {
    if (this.count === BATCH_RECORDS) this.flush();
    if (this.pageCopy < 0 || off < this.pageCopyBase) this.copyPage(off);
    this.put(format, id, ts, cpu, utid, common, where, this.pageCopy + (off - this.pageCopyBase), len, PAGE_BYTES);
  }
  /** A record whose text travels on its own (not in a page). */
  addText(format, id, ts, cpu, utid, common, where, text) {
    if (this.count === BATCH_RECORDS) this.flush();
    const encoded = Buffer.from(text, "utf8");
    this.reserve(encoded.length);
    this.bytes.set(encoded, this.bytePos);
    this.put(format, id, ts, cpu, utid, common, where, this.bytePos, encoded.length, OWN_TEXT);
    this.bytePos += encoded.length;
  }
  /** A continuation line of the last record. */
  continuation(text) {
    this.addText(CONTINUATION, 0, 0, 0, 0, COMMON_NULL, 0, text);
  }
  put(format, id, ts, cpu, utid, common, where, at, len, kind) {
    const n2 = this.count++;
    const ints = this.ints;
    const i = n2 * INTS;
    ints[i] = format;
    ints[i + 1] = cpu;
    ints[i + 2] = utid;
    ints[i + 3] = common;
    ints[i + 4] = at;
    ints[i + 5] = len;
    ints[i + 6] = kind;
    const nums = this.nums;
    const k = n2 * NUMS;
    nums[k] = id;
    nums[k + 1] = ts;
    nums[k + 2] = where;
  }
  /** Room for `len` more bytes in this batch (a new batch if needed). */
  reserve(len) {
    if (this.bytePos + len <= this.bytes.length) return;
    this.flush();
    if (len > this.bytes.length) this.bytes = new Uint8Array(len);
  }
  copyPage(from) {
    const len = this.pageEnd - from;
    this.reserve(len);
    this.bytes.set(this.pageBuf.subarray(from, this.pageEnd), this.bytePos);
    this.pageCopy = this.bytePos;
    this.pageCopyBase = from;
    this.bytePos += len;
    const k = this.slotNext;
    this.slotNext = (k + 1) % PAGE_SLOTS;
    this.slotBuf[k] = this.pageBuf;
    this.slotStart[k] = this.pageStart;
    this.slotCopy[k] = this.pageCopy;
    this.slotBase[k] = from;
  }
  /** Hands over the records added since the last batch (if any). */
  flush() {
    this.slotBuf.fill(null);
    this.pageCopy = -1;
    if (this.count === 0) return;
    const batch = {
      count: this.count,
      ints: this.ints.buffer,
      nums: this.nums.buffer,
      bytes: this.bytes.buffer,
      bytesUsed: this.bytePos,
      names: this.names
    };
    this.ints = new Int32Array(BATCH_RECORDS * INTS);
    this.nums = new Float64Array(BATCH_RECORDS * NUMS);
    this.bytes = new Uint8Array(this.batchBytes);
    this.names = [];
    this.count = 0;
    this.bytePos = 0;
    this.onBatch(batch);
  }
};
function batchTransferList(b) {
  return [b.ints, b.nums, b.bytes];
}

// server/model/typed_rows.ts
var TWO_322 = 4294967296;
var TypedRows = class {
  baseHi = 0;
  baseLo = 0;
  targets = /* @__PURE__ */ new Map();
  dicts;
  constructor(layout, onChunk) {
    this.dicts = Array.from({ length: layout.dictCount }, () => /* @__PURE__ */ new Map());
    layout.typed.forEach((t, i) => {
      this.targets.set(t.table, {
        layout: t,
        chunk: new ColumnChunk(t.columns, (d) => onChunk(FIRST_TYPED_TABLE + i, d)),
        writeFields: compileFieldWriter(t)
      });
    });
  }
  /** The absolute ns that row timestamps are relative to (TraceHeader.tsBaseNs). */
  setBase(tsBaseNs) {
    this.baseHi = Number(tsBaseNs >> 32n);
    this.baseLo = Number(tsBaseNs & 0xffffffffn);
  }
  target(table) {
    return this.targets.get(table);
  }
  /** The typed tables, in layout order. */
  tables() {
    return [...this.targets.keys()];
  }
  /** Dictionary id of an event name in the table's `event` column, -1 if it has none. */
  eventValue(t, name) {
    return t.layout.eventColumn >= 0 ? this.internIn(t.layout.eventDict, name) : -1;
  }
  /** Starts a row: id, ts, cpu, utid and event columns. */
  head(t, id, ts, cpu, utid, eventValue) {
    const c = t.chunk;
    const A = c.arrays;
    const r = c.rows;
    const ids = A[0];
    const idHi = Math.floor(id / TWO_322);
    ids[2 * r] = id - idHi * TWO_322;
    ids[2 * r + 1] = idHi;
    this.writeTsAt(A[1], r, ts);
    A[2][r] = cpu;
    A[3][r] = utid;
    if (eventValue >= 0) A[t.layout.eventColumn][r] = eventValue;
  }
  /** The row's field columns from a fields object (columns the event lacks are NULL). */
  fields(t, fields) {
    t.writeFields(t.chunk, fields, this.internInBound);
  }
  /** The storage-only columns after the documented ones (model_store.ts STORAGE_EXTRA_COLUMNS); ends the row. */
  tail(t, common, where) {
    const c = t.chunk;
    const width = t.layout.width;
    const A = c.arrays;
    const r = c.rows;
    if (common === null) c.setNull(width);
    else A[width][r] = common;
    const w = A[width + 1];
    const whereHi = Math.floor(where / TWO_322);
    w[2 * r] = where - whereHi * TWO_322;
    w[2 * r + 1] = whereHi;
    c.endRow();
  }
  internInBound = (dict, s) => this.internIn(dict, s);
  /** Id of a string in one typed column's dictionary (ids in order of first appearance). */
  internIn(dict, s) {
    const map = this.dicts[dict];
    let id = map.get(s);
    if (id === void 0) {
      id = map.size;
      map.set(s, id);
    }
    return id;
  }
  /** Hands over every partial chunk. */
  flush() {
    for (const t of this.targets.values()) t.chunk.flush();
  }
  /** The dictionaries: dicts[dict][id] = string. */
  dictLists() {
    return this.dicts.map((m) => [...m.keys()]);
  }
  /** Writes absolute ts = base + rel into a BIGINT column, without bigint: rel is an exact number < 2^53. */
  writeTs(chunk, col, rel) {
    this.writeTsAt(chunk.arrays[col], chunk.rows, rel);
  }
  writeTsAt(ints, row, rel) {
    const relHi = Math.floor(rel / TWO_322);
    let lo = this.baseLo + (rel - relHi * TWO_322);
    let hi = this.baseHi + relHi;
    if (lo >= TWO_322) {
      lo -= TWO_322;
      hi += 1;
    }
    ints[2 * row] = lo;
    ints[2 * row + 1] = hi;
  }
};
var KEY_SLOTS = 256;
var TableRowWriter = class {
  constructor(rows, target, name) {
    this.rows = rows;
    this.target = target;
    this.name = name;
    const layout = target.layout;
    this.chunk = target.chunk;
    const n2 = layout.columns.length;
    this.fields = layout.fieldColumns.map((c) => ({
      names: [c.name, ...c.aliases],
      column: c.index,
      kind: c.dict >= 0 ? "text" : layout.columns[c.index].kind
    }));
    this.dictOf = new Int32Array(n2).fill(-1);
    for (const c of layout.fieldColumns) this.dictOf[c.index] = c.dict;
    this.lastString = new Array(n2).fill(null);
    this.lastId = new Int32Array(n2);
    this.keyLo = new Float64Array(n2 * KEY_SLOTS).fill(NaN);
    this.keyHi = new Float64Array(n2 * KEY_SLOTS).fill(NaN);
    this.keyId = new Int32Array(n2 * KEY_SLOTS);
    this.missSlot = new Int32Array(n2);
    this.missLo = new Float64Array(n2);
    this.missHi = new Float64Array(n2);
  }
  rows;
  target;
  name;
  fields;
  arrays = [];
  row = 0;
  chunk;
  /** Dictionary per column index, -1 for numeric columns. */
  dictOf;
  /** Per dictionary column: the last string written and its id. */
  lastString;
  lastId;
  /**
   * Per text column, a direct-mapped cache from the integer a text was made
   * from (flag bits, symbol or pointer address; lo/hi halves) to its
   * dictionary id: the text is built and looked up only on a miss.
   */
  keyLo;
  keyHi;
  keyId;
  /** Per column: the slot and key of the last missed keyed() call, for text(). */
  missSlot;
  missLo;
  missHi;
  eventValue = -2;
  common = 0;
  where = 0;
  /** Starts a row; `common` is packCommon(flags, preemptCount). */
  startRow(id, ts, cpu, utid, common, where) {
    if (this.eventValue === -2) this.eventValue = this.rows.eventValue(this.target, this.name);
    this.common = common;
    this.where = where;
    this.arrays = this.chunk.arrays;
    this.row = this.chunk.rows;
    this.rows.head(this.target, id, ts, cpu, utid, this.eventValue);
  }
  keyed(column, lo, hi) {
    const slot = column * KEY_SLOTS + (Math.imul(lo ^ Math.imul(hi, 2246822507), 2654435761) >>> 24);
    if (this.keyLo[slot] === lo && this.keyHi[slot] === hi) {
      this.arrays[column][this.row] = this.keyId[slot];
      return true;
    }
    this.missSlot[column] = slot;
    this.missLo[column] = lo;
    this.missHi[column] = hi;
    return false;
  }
  text(column, v) {
    const id = this.rows.internIn(this.dictOf[column], typeof v === "string" ? v : String(v));
    const slot = this.missSlot[column];
    this.keyLo[slot] = this.missLo[column];
    this.keyHi[slot] = this.missHi[column];
    this.keyId[slot] = id;
    this.arrays[column][this.row] = id;
  }
  /** storeFieldValue(), with a last-value cache for dictionary strings. */
  value(column, v) {
    const dict = this.dictOf[column];
    if (dict < 0) {
      storeFieldValue(this.chunk, column, dict, v, this.rows.internInBound);
      return;
    }
    const str = typeof v === "string" ? v : String(v);
    if (this.lastString[column] !== str) {
      this.lastString[column] = str;
      this.lastId[column] = this.rows.internIn(dict, str);
    }
    this.chunk.setInt(column, this.lastId[column]);
  }
  absent(column) {
    this.chunk.setNull(column);
  }
  /** All field columns of the current row from a fields object (short records, text). */
  allFields(fields) {
    this.rows.fields(this.target, fields);
  }
  end() {
    this.rows.tail(this.target, this.common, this.where);
  }
};
function commonOf(flags, preemptCount) {
  return packCommon(flags, preemptCount);
}
function compileFieldWriter(layout) {
  const lines = ["let v;"];
  for (const col of layout.fieldColumns) {
    const i = col.index;
    lines.push(`v = f[${JSON.stringify(col.name)}];`);
    for (const a of col.aliases) lines.push(`if (v === undefined) v = f[${JSON.stringify(a)}];`);
    lines.push(`if (v === undefined) c.setNull(${i}); else store(c, ${i}, ${col.dict}, v, internIn);`);
  }
  const make = new Function("store", `return function writeFields_${layout.table}(c, f, internIn) {
${lines.join("\n")}
};`);
  return make(storeFieldValue);
}
function storeFieldValue(c, column, dict, v, internIn) {
  if (dict >= 0) c.setInt(column, internIn(dict, typeof v === "string" ? v : String(v)));
  else if (typeof v === "number") c.setNumber(column, v);
  else if (typeof v === "string") c.set(column, parseIntegerText(v));
  else c.set(column, v);
}
function parseIntegerText(s) {
  if (/^-?\d+$/.test(s)) {
    const n2 = Number(s);
    return Number.isSafeInteger(n2) ? n2 : BigInt(s);
  }
  if (/^0x[0-9a-f]+$/i.test(s)) {
    const b = BigInt(s);
    return b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : BigInt.asIntN(64, b);
  }
  return null;
}

// server/model/typed_tables.ts
var EVENT_TABLE = {
  mm_vmscan_memcg_reclaim_begin: "mm_vmscan_direct_reclaim_begin",
  mm_vmscan_memcg_softlimit_reclaim_begin: "mm_vmscan_direct_reclaim_begin",
  mm_vmscan_node_reclaim_begin: "mm_vmscan_direct_reclaim_begin",
  mm_vmscan_memcg_reclaim_end: "mm_vmscan_direct_reclaim_end",
  mm_vmscan_memcg_softlimit_reclaim_end: "mm_vmscan_direct_reclaim_end",
  mm_vmscan_node_reclaim_end: "mm_vmscan_direct_reclaim_end",
  mm_vmscan_writepage: "mm_vmscan_write_folio",
  writeback_dirty_page: "writeback_dirty_folio",
  writeback_queue: "writeback_work",
  writeback_exec: "writeback_work",
  writeback_start: "writeback_work",
  writeback_written: "writeback_work",
  writeback_wait: "writeback_work",
  writeback_single_inode_start: "writeback_single_inode",
  sched_process_free: "sched_process_wait"
};
var TYPED_TABLES = [
  "mm_vmscan_kswapd_sleep",
  "mm_vmscan_kswapd_wake",
  "mm_vmscan_wakeup_kswapd",
  "mm_vmscan_direct_reclaim_begin",
  "mm_vmscan_direct_reclaim_end",
  "mm_vmscan_lru_shrink_inactive",
  "mm_vmscan_lru_shrink_active",
  "mm_vmscan_lru_isolate",
  "mm_shrink_slab_start",
  "mm_shrink_slab_end",
  "mm_vmscan_write_folio",
  "mm_vmscan_throttled",
  "sched_switch",
  "sched_waking",
  "sched_wakeup",
  "sched_wakeup_new",
  "sched_migrate_task",
  "sched_process_fork",
  "sched_process_exit",
  "sched_stat_runtime",
  "sched_process_exec",
  "sched_process_wait",
  "workqueue_queue_work",
  "workqueue_activate_work",
  "workqueue_execute_start",
  "workqueue_execute_end",
  "writeback_dirty_folio",
  "writeback_work",
  "balance_dirty_pages",
  "global_dirty_state",
  "writeback_single_inode"
];
var FIELD_ALIASES = {
  mm_vmscan_lru_shrink_inactive: {
    nr_activate_anon: ["nr_activate0"],
    nr_activate_file: ["nr_activate1"],
    reclaim_flags: ["flags"]
  },
  mm_vmscan_lru_shrink_active: { reclaim_flags: ["flags"] },
  mm_vmscan_write_folio: { reclaim_flags: ["flags"] },
  mm_vmscan_lru_isolate: {
    highest_zoneidx: ["classzone_idx", "classzone"]
  },
  mm_vmscan_throttled: { usec_delayed: ["usect_delayed"] },
  mm_shrink_slab_start: {
    nr_objects_to_shrink: ["objects_to_shrink"]
  },
  mm_shrink_slab_end: {
    unused_scan: ["unused_scan_cnt"],
    new_scan: ["new_scan_cnt"],
    retval: ["shrinker_retval"]
  },
  workqueue_queue_work: { cpu_target: ["cpu"] },
  // writeback events name the backing device field `name` and print it as `bdi`.
  writeback_dirty_folio: { bdi: ["name"] },
  writeback_work: { bdi: ["name"], kupdate: ["for_kupdate"], background: ["for_background"] },
  global_dirty_state: { dirty: ["nr_dirty"], writeback: ["nr_writeback"] },
  writeback_single_inode: {
    bdi: ["name"],
    index: ["writeback_index"],
    to_write: ["nr_to_write"]
  },
  balance_dirty_pages: {
    bdi_setpoint: ["wb_setpoint"],
    bdi_dirty: ["wb_dirty"]
  }
};
function typedTableFor(eventName) {
  const mapped = EVENT_TABLE[eventName];
  if (mapped) return mapped;
  return TYPED_TABLES.includes(eventName) ? eventName : null;
}

// server/model/model_builder.ts
var MAX_PROBLEMS_KEPT = 1e3;
var TASK_NAME_FIELDS = {
  sched_switch: [
    ["prev_comm", "prev_pid"],
    ["next_comm", "next_pid"]
  ],
  sched_waking: [["comm", "pid"]],
  sched_wakeup: [["comm", "pid"]],
  sched_wakeup_new: [["comm", "pid"]],
  sched_migrate_task: [["comm", "pid"]],
  sched_process_fork: [
    ["parent_comm", "parent_pid"],
    ["child_comm", "child_pid"]
  ],
  sched_process_exit: [["comm", "pid"]]
};
function rowsNeedOnlyFields(table) {
  return TASK_NAME_FIELDS[table] === void 0;
}
var TEXT_BATCH_BYTES = 2 << 20;
var ModelBuilder = class {
  constructor(layout, onChunk, rawTarget = null) {
    this.rawTarget = rawTarget;
    this.ftraceEvent = new ColumnChunk(layout.ftraceEvent, (d) => onChunk(FTRACE_EVENT_TABLE, d));
    this.args = new ColumnChunk(layout.args, (d) => onChunk(ARGS_TABLE, d));
    this.typed = new TypedRows(layout, onChunk);
    this.lastThread = this.threadOf(0);
  }
  rawTarget;
  headerInfo = null;
  nextId = 0;
  ftraceEvent;
  args;
  typed;
  /** Per event name, in order of first appearance (index = name_id): one lookup per event. */
  names = /* @__PURE__ */ new Map();
  nameList = [];
  strings = /* @__PURE__ */ new Map();
  threads = /* @__PURE__ */ new Map();
  threadList = [];
  nameHistory = [];
  /** [cpu, events, firstTs, lastTs] by CPU number (a Map: text may name any CPU number). */
  cpus = /* @__PURE__ */ new Map();
  lastCpu = null;
  lastThread;
  lost = [];
  problems = [];
  problemCount = 0;
  unparsed = 0;
  rawBatches = null;
  /** Events handed over so far. */
  get eventCount() {
    return this.nextId;
  }
  // ---- EventSink ---------------------------------------------------------
  header(header) {
    if (this.headerInfo) return;
    this.headerInfo = header;
    this.typed.setBase(header.tsBaseNs);
  }
  event(e) {
    if (!this.headerInfo) throw new Error("decoder sent an event before the header");
    const id = this.nextId++;
    const info = this.nameInfo(e.name, e.system);
    const utid = this.startEvent(info, e.ts, e.cpu, e.pid, e.comm, e.tgid);
    const target = info.target;
    const fields = e.fields;
    if (fields === null) this.unparsed++;
    if (target !== null && fields !== null) {
      this.writeTyped(target, id, e, utid, info, fields);
      return;
    }
    const hasArgs = fields !== null && hasKeys(fields);
    writeFtraceEventRow(this.ftraceEvent, this.typed, id, e.ts, e.cpu, utid, info.id, e.flags, e.preemptCount, hasArgs ? id : null, e.raw, e.where);
    if (hasArgs) this.writeArgs(id, fields);
  }
  /** DirectRowSink: events whose typed rows need nothing beyond their own fields. */
  directRows(name, system) {
    const table = typedTableFor(name);
    const target = table ? this.typed.target(table) : void 0;
    if (target === void 0 || !rowsNeedOnlyFields(target.layout.table)) return null;
    return new BuilderDirectRows(this, this.typed, target, name, system);
  }
  /**
   * RawRecordSink: with a RawRecordTarget, the records of every format whose
   * typed rows need only their own fields are framed here and decoded on the
   * target's thread.
   */
  rawRecords(spec) {
    const target = this.rawTarget;
    if (target === null || !this.headerInfo) return null;
    const taken = new Map(spec.formats.filter((f) => this.rawTable(f.name) !== null).map((f) => [f.id, f]));
    if (taken.size === 0) return null;
    const batches = this.rawBatches = new RecordBatchWriter((b) => target.batch(b));
    target.start(spec, this.headerInfo.tsBaseNs, [...new Set([...taken.values()].map((f) => this.rawTable(f.name)))]);
    const byFormat = [];
    return {
      takes: (formatId) => taken.has(formatId),
      page: (buf, start, end) => batches.page(buf, start, end),
      record: (formatId, ts, cpu, pid, comm, flags, preemptCount, where, off, len) => {
        let info = byFormat[formatId];
        if (info === void 0) {
          const f = taken.get(formatId);
          info = byFormat[formatId] = this.nameInfo(f.name, f.system);
        }
        const utid = this.frame(info, ts, cpu, pid, comm, null);
        batches.add(formatId, this.framedId, ts, cpu, utid, commonOf(flags, preemptCount), where, off, len);
      }
    };
  }
  /**
   * RawTextSink: with a RawRecordTarget, text events of typed tables whose
   * rows need only their own fields are framed here; their argument text is
   * parsed on the target's thread, by the decoder's own parsers.
   */
  rawText() {
    const target = this.rawTarget;
    if (target === null || !this.headerInfo) return null;
    const tables = this.typed.tables().filter(rowsNeedOnlyFields);
    if (tables.length === 0) return null;
    const batches = this.rawBatches = new RecordBatchWriter((b) => target.batch(b), TEXT_BATCH_BYTES);
    target.start({ format: "text" }, this.headerInfo.tsBaseNs, tables);
    const nameOf = (name, system) => {
      const info = this.nameInfo(name, system);
      if (!info.rawNamed) {
        batches.name(info.id, name, system);
        info.rawNamed = true;
      }
      return info;
    };
    return {
      takes: (name) => this.rawTable(name) !== null,
      page: (buf, start, end) => batches.page(buf, start, end),
      record: (name, system, ts, cpu, pid, comm, tgid, flags, preemptCount, where, off, len) => {
        const info = nameOf(name, system);
        const utid = this.frame(info, ts, cpu, pid, comm, tgid);
        batches.add(info.id, this.framedId, ts, cpu, utid, packCommon(flags, preemptCount) ?? COMMON_NULL, where, off, len);
      },
      recordText: (name, system, ts, cpu, pid, comm, tgid, flags, preemptCount, where, args) => {
        const info = nameOf(name, system);
        const utid = this.frame(info, ts, cpu, pid, comm, tgid);
        batches.addText(info.id, this.framedId, ts, cpu, utid, packCommon(flags, preemptCount) ?? COMMON_NULL, where, args);
      },
      continuation: (text) => batches.continuation(text)
    };
  }
  /** The typed table an event's rows go to when the raw target takes them, else null. */
  rawTable(name) {
    const table = typedTableFor(name);
    return table !== null && this.typed.target(table) !== void 0 && rowsNeedOnlyFields(table) ? table : null;
  }
  /** The per-name record of an event name (registered on its first event). */
  nameInfo(name, system) {
    return this.names.get(name) ?? this.newName(name, system);
  }
  /** Id of the event frame() framed last. */
  framedId = -1;
  /**
   * Frames an event whose typed row is written elsewhere (a TableRowWriter
   * here, or the field worker): assigns its id (framedId), finds its
   * thread, counts it. Returns the utid.
   */
  frame(info, ts, cpu, pid, comm, tgid) {
    if (!this.headerInfo) throw new Error("decoder sent an event before the header");
    this.framedId = this.nextId++;
    return this.startEvent(info, ts, cpu, pid, comm, tgid);
  }
  /** Bookkeeping every event shares: its thread (named from the line prefix), per-name and per-CPU counts. */
  startEvent(info, ts, cpuNo, pid, comm, tgid) {
    let thread = this.lastThread;
    if (thread.tid !== pid) thread = this.lastThread = this.threadOf(pid);
    if (tgid !== null && tgid > 0 && thread.tgid === null) thread.tgid = tgid;
    if (comm !== null && thread.name === null && comm !== "<...>" && comm !== "") {
      thread.name = comm;
      this.nameHistory.push({ utid: thread.utid, ts, name: comm });
    }
    info.count++;
    let cpu = this.lastCpu;
    if (cpu === null || cpu[0] !== cpuNo) cpu = this.lastCpu = this.cpus.get(cpuNo) ?? null;
    if (cpu === null) this.cpus.set(cpuNo, [cpuNo, 1, ts, ts]);
    else {
      cpu[1]++;
      if (ts < cpu[2]) cpu[2] = ts;
      if (ts > cpu[3]) cpu[3] = ts;
    }
    return thread.utid;
  }
  /** First event of a name: its name_id and typed table. */
  newName(name, system) {
    const table = typedTableFor(name);
    const target = table ? this.typed.target(table) ?? null : null;
    const info = { name, id: this.nameList.length, system, count: 0, target, eventValue: -2, rawNamed: false };
    this.names.set(name, info);
    this.nameList.push(info);
    return info;
  }
  lostEvents(cpu, count, where) {
    this.lost.push({ cpu, count, where });
  }
  skipped(problem) {
    this.problemCount++;
    if (this.problems.length < MAX_PROBLEMS_KEPT) this.problems.push({ ...problem, excerpt: problem.excerpt.slice(0, 200) });
  }
  /**
   * Hands over the last partial chunks (and raw batch) and everything
   * learned. With a RawRecordTarget, the dictionaries of the tables it
   * filled are the field worker's, merged by the store (mergeDicts).
   */
  finish() {
    this.ftraceEvent.flush();
    this.args.flush();
    this.typed.flush();
    this.rawBatches?.flush();
    return {
      header: this.headerInfo,
      eventsTotal: this.nextId,
      eventNames: this.nameList.map((n2) => [n2.name, n2.system, n2.count]),
      strings: [...this.strings.keys()],
      dicts: this.typed.dictLists(),
      threads: this.threadList,
      nameHistory: this.nameHistory,
      cpus: [...this.cpus.values()],
      lost: this.lost,
      problems: this.problems,
      problemCount: this.problemCount,
      unparsed: this.unparsed
    };
  }
  // ---- rows --------------------------------------------------------------
  writeTyped(t, id, e, utid, name, fields) {
    if (name.eventValue === -2) name.eventValue = this.typed.eventValue(t, name.name);
    this.typed.head(t, id, e.ts, e.cpu, utid, name.eventValue);
    this.typed.fields(t, fields);
    this.typed.tail(t, packCommon(e.flags, e.preemptCount), e.where);
    const nameFields = TASK_NAME_FIELDS[t.layout.table];
    if (nameFields) {
      for (let k = 0; k < nameFields.length; k++) {
        const comm = fields[nameFields[k][0]];
        const pid = fields[nameFields[k][1]];
        if (typeof comm === "string" && typeof pid === "number") this.noteTaskComm(this.threadOf(pid), comm, e.ts);
      }
      if (t.layout.table === "sched_process_fork" && typeof fields.child_pid === "number") {
        this.threadOf(fields.child_pid).forkTs = e.ts;
      } else if (t.layout.table === "sched_process_exit" && typeof fields.pid === "number") {
        this.threadOf(fields.pid).exitTs = e.ts;
      }
    }
  }
  writeArgs(id, fields) {
    const a = this.args;
    let index = 0;
    for (const key in fields) {
      const v = fields[key];
      a.setInt(0, id);
      a.setInt(1, index++);
      a.setInt(2, this.intern(key));
      if (typeof v === "string") {
        a.setNull(3);
        a.setInt(4, this.intern(v));
      } else {
        a.set(3, v);
        a.setNull(4);
      }
      a.endRow();
    }
  }
  intern(s) {
    let sid = this.strings.get(s);
    if (sid === void 0) {
      sid = this.strings.size;
      this.strings.set(s, sid);
    }
    return sid;
  }
  // ---- threads -----------------------------------------------------------
  threadOf(tid) {
    let t = this.threads.get(tid);
    if (!t) {
      t = { utid: this.threadList.length, tid, name: null, tgid: null, forkTs: null, exitTs: null };
      this.threads.set(tid, t);
      this.threadList.push(t);
    }
    return t;
  }
  /** Names printed by scheduler events are authoritative: record changes. */
  noteTaskComm(t, comm, ts) {
    if (t.name === comm || comm === "" || comm === "<...>") return;
    t.name = comm;
    this.nameHistory.push({ utid: t.utid, ts, name: comm });
  }
};
var BuilderDirectRows = class extends TableRowWriter {
  constructor(builder, rows, target, eventName, system) {
    super(rows, target, eventName);
    this.builder = builder;
    this.eventName = eventName;
    this.system = system;
  }
  builder;
  eventName;
  system;
  info = null;
  begin(ts, cpu, pid, comm, flags, preemptCount, where) {
    const info = this.info ?? (this.info = this.builder.nameInfo(this.eventName, this.system));
    const utid = this.builder.frame(info, ts, cpu, pid, comm, null);
    this.startRow(this.builder.framedId, ts, cpu, utid, commonOf(flags, preemptCount), where);
  }
};
function writeFtraceEventRow(fe, typed, id, ts, cpu, utid, nameId, flags, preemptCount, argSetId, raw, where) {
  fe.setInt(0, id);
  typed.writeTs(fe, 1, ts);
  fe.setInt(2, cpu);
  fe.setInt(3, utid);
  fe.setInt(4, nameId);
  fe.set(5, flags);
  fe.set(6, preemptCount);
  fe.set(7, argSetId);
  fe.set(8, raw);
  fe.setInt(9, where);
  fe.endRow();
}
function hasKeys(o) {
  for (const _ in o) return true;
  return false;
}

// server/model/model_store.ts
import fs2 from "node:fs";
import path3 from "node:path";
import { fileURLToPath as fileURLToPath2 } from "node:url";

// server/model/column_appender.ts
import duckdb from "@duckdb/node-bindings";
import {
  BIGINT,
  BOOLEAN,
  DOUBLE,
  DuckDBDataChunk,
  INTEGER,
  VARCHAR
} from "@duckdb/node-api";
var FLUSH_EVERY_CHUNKS = 8;
var DUCK_TYPE = {
  i32: INTEGER,
  i64: BIGINT,
  f64: DOUBLE,
  str: VARCHAR,
  bool: BOOLEAN
};
var ColumnAppender = class _ColumnAppender {
  constructor(appender, columns) {
    this.appender = appender;
    this.columns = columns;
    this.chunk = DuckDBDataChunk.create(
      columns.map((c) => DUCK_TYPE[c.kind]),
      CHUNK_ROWS
    );
  }
  appender;
  columns;
  chunk;
  /** Rows appended so far. */
  count = 0;
  chunksSinceFlush = 0;
  static async create(connection, table, columns) {
    return new _ColumnAppender(await connection.createAppender(table), columns);
  }
  append(data) {
    const n2 = data.rows;
    const chunk = this.chunk;
    chunk.reset();
    duckdb.data_chunk_set_size(chunk.chunk, n2);
    for (let c = 0; c < data.columns.length; c++) {
      const col = data.columns[c];
      const vector = duckdb.data_chunk_get_vector(chunk.chunk, c);
      const hasNull = col.validityOffset >= 0;
      if (col.kind === "str") {
        const strings = col.strings;
        const valid = hasNull ? new Uint32Array(data.buffer, col.validityOffset, CHUNK_ROWS / 32) : null;
        for (let r = 0; r < n2; r++) {
          const s = strings[r];
          if (s !== null && (!valid || (valid[r >>> 5] & 1 << (r & 31)) !== 0)) {
            duckdb.vector_assign_string_element(vector, r, s);
          }
        }
      } else {
        const bytesPerRow2 = col.kind === "i32" ? 4 : col.kind === "bool" ? 1 : 8;
        duckdb.copy_data_to_vector(vector, 0, data.buffer, col.dataOffset, n2 * bytesPerRow2);
      }
      if (hasNull) {
        duckdb.vector_ensure_validity_writable(vector);
        duckdb.copy_data_to_vector_validity(vector, 0, data.buffer, col.validityOffset, Math.ceil(n2 / 64) * 8);
      }
    }
    this.appender.appendDataChunk(chunk);
    this.count += n2;
    if (++this.chunksSinceFlush === FLUSH_EVERY_CHUNKS) {
      this.appender.flushSync();
      this.chunksSinceFlush = 0;
    }
  }
  close() {
    this.appender.flushSync();
    this.appender.closeSync();
  }
};
async function appendRows(connection, table, columns, rows) {
  const appender = await ColumnAppender.create(connection, table, columns);
  const chunk = new ColumnChunk(columns, (d) => appender.append(d));
  for (const r of rows) {
    r.forEach((v, i) => chunk.set(i, v));
    chunk.endRow();
  }
  chunk.flush();
  appender.close();
}

// server/model/model_store.ts
var QUERIES_DIR = path3.resolve(path3.dirname(fileURLToPath2(import.meta.url)), "../../queries");
var SCHEMA_SQL_PATH = path3.join(QUERIES_DIR, "schema.sql");
var STORAGE_EXTRA_COLUMNS = [
  { name: "common", kind: "i32" },
  { name: "source_where", kind: "i64" }
];
var FTRACE_EVENT_COLUMNS = [
  { name: "id", kind: "i64" },
  { name: "ts", kind: "i64" },
  { name: "cpu", kind: "i32" },
  { name: "utid", kind: "i32" },
  { name: "name_id", kind: "i32" },
  { name: "common_flags", kind: "i32" },
  { name: "preempt_count", kind: "i32" },
  { name: "arg_set_id", kind: "i64" },
  { name: "raw", kind: "str" },
  { name: "source_where", kind: "i64" }
];
var ARGS_COLUMNS = [
  { name: "arg_set_id", kind: "i64" },
  { name: "arg_index", kind: "i32" },
  { name: "key_sid", kind: "i32" },
  { name: "int_value", kind: "i64" },
  { name: "string_sid", kind: "i32" }
];
var ModelStore = class _ModelStore {
  constructor(engine, layout, appenders) {
    this.engine = engine;
    this.layout = layout;
    this.appenders = appenders;
  }
  engine;
  layout;
  appenders;
  /**
   * Creates the schema in an empty database and opens the appenders.
   * `schemaSqlPath` is passed by the store worker, whose bundled code cannot
   * find queries/ from its own location.
   */
  static async create(engine, schemaSqlPath = SCHEMA_SQL_PATH) {
    await engine.exec(fs2.readFileSync(schemaSqlPath, "utf8"));
    const typed = await createTypedStorage(engine);
    const con = engine.connection;
    const appenders = [
      await ColumnAppender.create(con, "_ftrace_event", FTRACE_EVENT_COLUMNS),
      await ColumnAppender.create(con, "_args", ARGS_COLUMNS)
    ];
    for (const t of typed) appenders.push(await ColumnAppender.create(con, `_stage_${t.table}`, t.columns));
    const dictCount = typed.reduce((n2, t) => Math.max(n2, ...t.viewColumns.map((c) => c.dict + 1)), 0);
    return new _ModelStore(engine, { ftraceEvent: FTRACE_EVENT_COLUMNS, args: ARGS_COLUMNS, typed, dictCount }, appenders);
  }
  /**
   * An ingest's load: schema and events in one transaction, so appended row
   * groups are written straight to the database file once, instead of to the
   * WAL at every appender flush and again at the checkpoint. End it with
   * commitLoad().
   */
  static async beginLoad(engine, schemaSqlPath = SCHEMA_SQL_PATH) {
    await engine.exec("SET write_buffer_row_group_count = 1");
    await engine.exec("BEGIN TRANSACTION");
    return _ModelStore.create(engine, schemaSqlPath);
  }
  /** finish(), then commits the load beginLoad() started. */
  async commitLoad(r) {
    const summary = await this.finish(r);
    await this.engine.exec("COMMIT");
    return summary;
  }
  append(table, data) {
    this.appenders[table].append(data);
  }
  /** Closes the appenders and writes the whole-trace tables. */
  async finish(r) {
    for (const a of this.appenders) a.close();
    const con = this.engine.connection;
    const base = r.header?.tsBaseNs ?? 0n;
    const abs = (rel) => base + BigInt(rel);
    await appendRows(con, "_string", [
      { name: "sid", kind: "i32" },
      { name: "str", kind: "str" }
    ], r.strings.map((s, sid) => [sid, s]));
    for (const t of this.layout.typed) await createTypedView(this.engine, t, r.dicts);
    await appendRows(con, "_event_name", [
      { name: "name_id", kind: "i32" },
      { name: "name", kind: "str" },
      { name: "system", kind: "str" }
    ], r.eventNames.map(([name, system], id) => [id, name, system]));
    await createFtraceEventView(this.engine, this.layout.typed, r);
    const tgids = [...new Set(r.threads.map((t) => t.tgid).filter((g) => g !== null))].sort((a, b) => a - b);
    const upidOf = new Map(tgids.map((pid, i) => [pid, i]));
    const byTid = new Map(r.threads.map((t) => [t.tid, t]));
    await appendRows(con, "thread", [
      { name: "utid", kind: "i32" },
      { name: "tid", kind: "i32" },
      { name: "name", kind: "str" },
      { name: "upid", kind: "i32" },
      { name: "start_ts", kind: "i64" },
      { name: "end_ts", kind: "i64" },
      { name: "is_main_thread", kind: "bool" }
    ], r.threads.map((t) => [
      t.utid,
      t.tid,
      t.tid === 0 ? t.name ?? "swapper" : t.name,
      t.tgid === null ? null : upidOf.get(t.tgid),
      t.forkTs === null ? null : abs(t.forkTs),
      t.exitTs === null ? null : abs(t.exitTs),
      t.tgid === null ? null : t.tgid === t.tid
    ]));
    await appendRows(con, "process", [
      { name: "upid", kind: "i32" },
      { name: "pid", kind: "i32" },
      { name: "name", kind: "str" }
    ], tgids.map((pid) => [upidOf.get(pid), pid, byTid.get(pid)?.name ?? null]));
    await appendRows(con, "thread_name_history", [
      { name: "utid", kind: "i32" },
      { name: "ts", kind: "i64" },
      { name: "name", kind: "str" }
    ], r.nameHistory.map((h) => [h.utid, abs(h.ts), h.name]));
    const cpuRows = [...r.cpus].sort((a, b) => a[0] - b[0]);
    await appendRows(con, "cpu", [
      { name: "ucpu", kind: "i32" },
      { name: "cpu", kind: "i32" },
      { name: "event_count", kind: "i64" },
      { name: "first_ts", kind: "i64" },
      { name: "last_ts", kind: "i64" }
    ], cpuRows.map(([cpu, n2, first, last]) => [cpu, cpu, n2, abs(first), abs(last)]));
    await appendRows(con, "lost_events", [
      { name: "cpu", kind: "i32" },
      { name: "ts", kind: "i64" },
      { name: "count", kind: "i64" },
      { name: "source_where", kind: "i64" }
    ], r.lost.map((l) => [l.cpu, null, l.count, l.where]));
    await appendRows(con, "ingest_problem", [
      { name: "source_where", kind: "i64" },
      { name: "unit", kind: "str" },
      { name: "reason", kind: "str" },
      { name: "excerpt", kind: "str" }
    ], r.problems.map((p) => [p.where, p.unit, p.reason, p.excerpt]));
    let firstTs = null;
    let lastTs = null;
    for (const [, , first, last] of cpuRows) {
      if (firstTs === null || abs(first) < firstTs) firstTs = abs(first);
      if (lastTs === null || abs(last) > lastTs) lastTs = abs(last);
    }
    const eventsByName = {};
    for (const [name, , count] of [...r.eventNames].sort((a, b) => a[0].localeCompare(b[0]))) eventsByName[name] = count;
    const maxCpu = cpuRows.length ? cpuRows[cpuRows.length - 1][0] + 1 : 0;
    return {
      format: r.header?.format ?? "unknown",
      formatVersion: r.header?.formatVersion ?? null,
      cpus: Math.max(r.header?.cpus ?? 0, maxCpu),
      eventsTotal: r.eventsTotal,
      eventsByName,
      firstTsNs: firstTs,
      lastTsNs: lastTs,
      lostEvents: r.lost.reduce((s, l) => s + (l.count ?? 0), 0),
      lostEventNotices: r.lost.length,
      unparsedEvents: r.unparsed,
      skippedInputs: r.problemCount,
      firstSkipped: r.problems.slice(0, 10),
      meta: { ...r.header?.meta ?? {} }
    };
  }
};
async function createTypedStorage(engine) {
  const rows = await engine.query(
    `SELECT table_name, column_name, data_type FROM duckdb_columns()
     WHERE schema_name = 'main' AND table_name IN (${TYPED_TABLES.map(sqlString).join(", ")})
     ORDER BY table_name, column_index`
  );
  const colsOf = /* @__PURE__ */ new Map();
  for (const r of rows) {
    let list = colsOf.get(r.table_name);
    if (!list) colsOf.set(r.table_name, list = []);
    list.push(r);
  }
  let dictCount = 0;
  const ddl = [];
  const layouts = TYPED_TABLES.map((table) => {
    const cols = colsOf.get(table) ?? [];
    const leading = cols.slice(0, 4).map((c) => c.column_name).join(",");
    if (leading !== "id,ts,cpu,utid") throw new Error(`schema.sql: ${table} must start with id, ts, cpu, utid`);
    const aliases = FIELD_ALIASES[table] ?? {};
    const columns = [];
    const fieldColumns = [];
    const viewColumns = [];
    let eventColumn = -1;
    let eventDict = -1;
    cols.forEach((c, index) => {
      const isString = c.data_type === "VARCHAR";
      const dict = isString ? dictCount++ : -1;
      const kind = isString || c.data_type === "INTEGER" ? "i32" : c.data_type === "DOUBLE" ? "f64" : "i64";
      columns.push({ name: c.column_name, kind });
      viewColumns.push({ name: c.column_name, dict });
      if (c.column_name === "event") {
        eventColumn = index;
        eventDict = dict;
      } else if (index >= 4) fieldColumns.push({ index, name: c.column_name, aliases: aliases[c.column_name] ?? [], dict });
    });
    if (eventColumn < 0 && Object.values(EVENT_TABLE).includes(table)) {
      throw new Error(`schema.sql: ${table} receives several events (typed_tables.ts EVENT_TABLE) and needs an event column`);
    }
    const width = columns.length;
    columns.push(...STORAGE_EXTRA_COLUMNS);
    const columnDdl = columns.map((s) => `"${s.name}" ${s.kind === "i32" ? "INTEGER" : s.kind === "f64" ? "DOUBLE" : "BIGINT"}`).join(", ");
    ddl.push(`DROP TABLE ${table}; CREATE TABLE _stage_${table} (${columnDdl});`);
    return { table, columns, fieldColumns, eventColumn, eventDict, width, viewColumns };
  });
  await engine.exec(ddl.join("\n"));
  return layouts;
}
var INLINE_DICT_MAX = 2e4;
async function createTypedView(engine, t, dicts) {
  const select = [];
  const joins = [];
  for (const c of t.viewColumns) {
    if (c.dict < 0) {
      select.push(`s."${c.name}"`);
      continue;
    }
    const words = dicts[c.dict] ?? [];
    if (words.length === 0) {
      select.push(`CAST(NULL AS VARCHAR) AS "${c.name}"`);
    } else if (words.length <= INLINE_DICT_MAX) {
      select.push(`list_extract([${words.map(sqlString).join(",")}], s."${c.name}" + 1) AS "${c.name}"`);
    } else {
      const dictTable = `_dict_${t.table}_${c.name}`;
      await engine.exec(`CREATE TABLE ${dictTable} (id INTEGER, str VARCHAR)`);
      await appendRows(engine.connection, dictTable, [
        { name: "id", kind: "i32" },
        { name: "str", kind: "str" }
      ], words.map((w, i) => [i, w]));
      joins.push(`LEFT JOIN ${dictTable} d_${c.name} ON d_${c.name}.id = s."${c.name}"`);
      select.push(`d_${c.name}.str AS "${c.name}"`);
    }
  }
  await engine.exec(`CREATE VIEW ${t.table} AS SELECT ${select.join(", ")} FROM _stage_${t.table} s ${joins.join(" ")}`);
}
function sqlString(s) {
  return `'${s.replace(/\u0000/g, "").replace(/'/g, "''")}'`;
}
async function createFtraceEventView(engine, typed, r) {
  const nameIds = new Map(r.eventNames.map(([name], id) => [name, id]));
  const branches = [
    "SELECT id, ts, cpu, utid, name_id, common_flags, preempt_count, arg_set_id, raw, source_where FROM _ftrace_event",
    ...typed.map((t) => {
      const common = `CASE WHEN common & ${FLAGS_UNKNOWN} = 0 THEN common & 255 END, CASE WHEN common & ${PREEMPT_UNKNOWN} = 0 THEN (common >> 8) & 255 END`;
      return `SELECT id, ts, cpu, utid, ${nameIdOf(t, r, nameIds)}, ${common}, NULL, NULL, source_where FROM _stage_${t.table}`;
    })
  ];
  await engine.exec(
    `CREATE OR REPLACE VIEW ftrace_event AS
     SELECT e.id, e.ts, e.cpu, e.cpu AS ucpu, e.utid, n.name, n.system, e.common_flags,
            e.preempt_count, e.arg_set_id, e.raw, e.source_where
     FROM (${branches.join("\n UNION ALL ")}) e JOIN _event_name n USING (name_id)`
  );
}
function nameIdOf(t, r, nameIds) {
  if (t.eventColumn >= 0) {
    const ids = (r.dicts[t.eventDict] ?? []).map((name) => nameIds.get(name) ?? "NULL");
    return ids.length === 0 ? "NULL::INTEGER" : `list_extract([${ids.join(", ")}]::INTEGER[], "event" + 1)`;
  }
  const names = r.eventNames.filter(([name, , count]) => count > 0 && typedTableFor(name) === t.table);
  return names.length === 1 ? String(nameIds.get(names[0][0])) : "NULL::INTEGER";
}

// server/ingest/content_hash.ts
import { createHash } from "node:crypto";
import { createReadStream as createReadStream2 } from "node:fs";
import { Worker } from "node:worker_threads";
async function hashFile(file2, onBytes) {
  const hash = createHash("sha256");
  let done = 0;
  for await (const chunk of createReadStream2(file2, { highWaterMark: 1 << 22 })) {
    hash.update(chunk);
    done += chunk.length;
    onBytes?.(done);
  }
  return hash.digest("hex");
}
var HASH_THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const fs = require('node:fs');
try {
  const hash = createHash('sha256');
  const fd = fs.openSync(workerData.file, 'r');
  try {
    const buf = Buffer.allocUnsafe(4 << 20);
    let n;
    while ((n = fs.readSync(fd, buf, 0, buf.length, null)) > 0) hash.update(buf.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  parentPort.postMessage({ sha256: hash.digest('hex') });
} catch (err) {
  parentPort.postMessage({ error: (err && err.message) || String(err) });
}
`;
function hashFileOnThread(file2) {
  const started = performance.now();
  let seconds = null;
  const worker = new Worker(HASH_THREAD_SOURCE, { eval: true, workerData: { file: file2 } });
  const sha256 = new Promise((resolve, reject) => {
    worker.once("message", (m) => {
      seconds = (performance.now() - started) / 1e3;
      if (m.sha256) resolve(m.sha256);
      else reject(new Error(`${file2}: cannot hash: ${m.error}`));
    });
    worker.once("error", (err) => reject(err));
    worker.once("exit", (code) => reject(new Error(`${file2}: hashing stopped (thread exit ${code})`)));
  });
  sha256.catch(() => void 0);
  return {
    sha256,
    seconds: () => seconds,
    cancel: () => void worker.terminate()
  };
}

// server/ingest/data_dir.ts
import os from "node:os";
import path4 from "node:path";
function resolveDataDir(explicit) {
  if (explicit) return path4.resolve(explicit);
  if (process.env.STALLSCOPE_DATA_DIR) return path4.resolve(process.env.STALLSCOPE_DATA_DIR);
  const xdg = process.env.XDG_DATA_HOME || path4.join(os.homedir(), ".local", "share");
  return path4.join(xdg, "stallscope");
}
var TRACE_ID = /^[0-9a-f]{64}$/;
function isTraceId(id) {
  return TRACE_ID.test(id);
}
function dataDirPaths(root) {
  const traces = path4.join(root, "traces");
  return {
    root,
    traces,
    tmp: path4.join(root, "tmp"),
    traceDir(id) {
      if (!isTraceId(id)) throw new Error(`not a trace id: ${JSON.stringify(id).slice(0, 80)}`);
      return path4.join(traces, id);
    }
  };
}

// server/ingest/field_worker_client.ts
import { MessageChannel, Worker as Worker2 } from "node:worker_threads";

// server/ingest/field_protocol.ts
var BATCHES_CONSUMED = 0;
var FIELD_FAILED = 1;
var MAX_BATCHES_IN_FLIGHT = 8;

// server/ingest/wait_for_counter.ts
var WorkerStalled = class extends Error {
};
var STALL_MS = 6e4;
function waitForCounter(shared, counter, target, failedFlag, who) {
  let last = Atomics.load(shared, counter);
  let idleMs = 0;
  while (last < target) {
    if (Atomics.load(shared, failedFlag) !== 0) throw new WorkerStalled(`${who} failed`);
    if (Atomics.wait(shared, counter, last, 1e3) === "timed-out") {
      idleMs += 1e3;
      if (idleMs >= STALL_MS) throw new WorkerStalled(`${who} stopped consuming rows for ${STALL_MS / 1e3} s`);
    } else idleMs = 0;
    last = Atomics.load(shared, counter);
  }
}

// server/ingest/worker_bundle.ts
import { createHash as createHash2 } from "node:crypto";
import fs3 from "node:fs/promises";
import os2 from "node:os";
import path5 from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath as fileURLToPath3 } from "node:url";
var SERVER_DIR = fileURLToPath3(new URL("..", import.meta.url));
var requireHere = createRequire(import.meta.url);
var bundled = /* @__PURE__ */ new Map();
function workerBundle(name) {
  let b = bundled.get(name);
  if (!b) {
    b = buildBundle(name).catch((err) => {
      bundled.delete(name);
      throw err;
    });
    bundled.set(name, b);
  }
  return b;
}
async function workerEntry(name) {
  return workerBundle(name).catch(() => new URL(`./${name}.mjs`, import.meta.url));
}
async function buildBundle(name) {
  const file2 = path5.join(os2.tmpdir(), `stallscope-${name.replace("_", "-")}-${await inputStamp()}.mjs`);
  try {
    await fs3.access(file2);
    return file2;
  } catch {
  }
  const esbuild = await import("esbuild");
  const result = await esbuild.build({
    entryPoints: [path5.join(SERVER_DIR, "ingest", `${name}.ts`)],
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    write: false,
    logLevel: "silent",
    plugins: [
      {
        name: "duckdb-by-absolute-path",
        setup(build) {
          build.onResolve({ filter: /^@duckdb\/node-bindings$/ }, (args) => ({
            path: requireHere.resolve(args.path),
            external: true
          }));
        }
      }
    ],
    // Some bundled CommonJS packages call require() on node builtins.
    banner: { js: "import { createRequire as __stallscopeRequire } from 'node:module'; const require = __stallscopeRequire(import.meta.url);" }
  });
  const tmp = `${file2}.${process.pid}.tmp`;
  await fs3.writeFile(tmp, result.outputFiles[0].contents);
  await fs3.rename(tmp, file2);
  return file2;
}
var stamp = null;
function inputStamp() {
  stamp ??= computeInputStamp();
  return stamp;
}
async function computeInputStamp() {
  const serverDir = SERVER_DIR;
  const hash = createHash2("sha256");
  const sources = (await fs3.readdir(serverDir, { recursive: true })).filter((f) => f.endsWith(".ts")).sort();
  for (const f of sources) {
    const st2 = await fs3.stat(path5.join(serverDir, f));
    hash.update(`${f}\0${st2.size}\0${st2.mtimeMs}
`);
  }
  const schema = path5.join(SERVER_DIR, "..", "queries", "schema.sql");
  const st = await fs3.stat(schema);
  hash.update(`schema.sql\0${st.size}\0${st.mtimeMs}
`);
  hash.update(requireHere.resolve("@duckdb/node-bindings"));
  for (const pkg of ["@duckdb/node-api", "esbuild"]) {
    hash.update(`${pkg}@${requireHere(`${pkg}/package.json`).version}
`);
  }
  return hash.digest("hex").slice(0, 16);
}

// server/ingest/worker_replies.ts
function workerReplies(worker, who) {
  const queue = [];
  let failure = null;
  let exit = () => {
  };
  const exitSeen = new Promise((r) => exit = r);
  let wake = null;
  const notify = () => {
    wake?.();
    wake = null;
  };
  worker.on("message", (m) => {
    queue.push(m);
    notify();
  });
  worker.on("error", (err) => {
    failure ??= err;
    notify();
  });
  worker.on("exit", (code) => {
    failure ??= new Error(`${who} exited with code ${code}`);
    notify();
    exit();
  });
  return {
    exited: (ms) => Promise.race([exitSeen, new Promise((r) => setTimeout(r, ms).unref())]),
    async expect(type) {
      for (; ; ) {
        const m = queue.shift();
        if (m?.type === "error") throw new Error(`${who}: ${m.message}`);
        if (m?.type === type) return m;
        if (m) throw new Error(`${who}: expected '${type}', got '${m.type}'`);
        if (failure) throw failure;
        await new Promise((r) => wake = r);
      }
    }
  };
}

// server/ingest/field_worker_client.ts
var FieldWorkerClient = class _FieldWorkerClient {
  constructor(layout, store, workerPath) {
    this.layout = layout;
    this.store = store;
    this.workerPath = workerPath;
  }
  layout;
  store;
  workerPath;
  worker = null;
  replies = null;
  counters = new Int32Array(new SharedArrayBuffer(8));
  posted = 0;
  closed = null;
  /** Ready to start the thread when the decoder offers raw records (finds or builds its bundle now). */
  static async prepare(layout, store) {
    return new _FieldWorkerClient(layout, store, await workerEntry("field_worker"));
  }
  /** Whether raw records were offered (the thread runs). */
  get started() {
    return this.worker !== null;
  }
  start(spec, tsBaseNs, tables) {
    if (this.worker) throw new Error("field worker started twice");
    const { port1, port2 } = new MessageChannel();
    this.store.attachFieldChannel(port2);
    const input = {
      layout: this.layout,
      spec,
      tsBaseNs: tsBaseNs.toString(),
      tables,
      control: this.counters.buffer,
      storeControl: this.store.control,
      storePort: port1
    };
    this.worker = new Worker2(this.workerPath, { workerData: input, transferList: [port1] });
    this.replies = workerReplies(this.worker, "field worker");
  }
  /** Hands a batch over (transferred). Blocks while MAX_BATCHES_IN_FLIGHT wait in the thread's queue. */
  batch(b) {
    waitForCounter(this.counters, BATCHES_CONSUMED, this.posted - MAX_BATCHES_IN_FLIGHT + 1, FIELD_FAILED, "the field worker");
    this.worker.postMessage({ type: "batch", batch: b }, batchTransferList(b));
    this.posted++;
  }
  /** Whether the thread flagged a failure (its error comes from finish()). */
  failed() {
    return Atomics.load(this.counters, FIELD_FAILED) !== 0;
  }
  /** After the last batch: resolves once every chunk and the dictionaries are on their way to the store. */
  async finish() {
    if (!this.worker) return;
    this.worker.postMessage({ type: "finish" });
    await this.replies.expect("done");
  }
  /** The thread's own error, after it flagged a failure. */
  async rethrowFailure() {
    await this.replies?.expect("done");
    throw new Error("field worker: stopped without an error");
  }
  /** Stops the thread. Idempotent. */
  close() {
    this.closed ??= (async () => {
      if (!this.worker) return;
      this.worker.postMessage({ type: "abort" });
      await this.worker.terminate();
    })();
    return this.closed;
  }
};

// server/ingest/layout_cache.ts
import fs4 from "node:fs/promises";
import os3 from "node:os";
import path6 from "node:path";
async function cacheFile() {
  return path6.join(os3.tmpdir(), `stallscope-layout-${await inputStamp()}.json`);
}
async function cachedLayout() {
  try {
    return JSON.parse(await fs4.readFile(await cacheFile(), "utf8"));
  } catch {
    return null;
  }
}
async function rememberLayout(layout) {
  try {
    const file2 = await cacheFile();
    const tmp = `${file2}.${process.pid}.tmp`;
    await fs4.writeFile(tmp, JSON.stringify(layout));
    await fs4.rename(tmp, file2);
  } catch {
  }
}

// server/ingest/store_worker_client.ts
import { Worker as Worker3 } from "node:worker_threads";

// server/ingest/store_protocol.ts
var CONSUMED = 0;
var FAILED = 1;
var CONTROL_BYTES = 12;
var MAX_IN_FLIGHT = 48;

// server/ingest/store_worker_client.ts
var StoreWorkerClient = class _StoreWorkerClient {
  constructor(worker, counters, replies) {
    this.worker = worker;
    this.counters = counters;
    this.replies = replies;
  }
  worker;
  counters;
  replies;
  posted = 0;
  finished = false;
  closed = null;
  layout = null;
  /** Starts the worker: it opens the database and creates the schema right away. */
  static async start(target, expectedLayout = null) {
    const workerPath = await workerEntry("store_worker");
    const control = new SharedArrayBuffer(CONTROL_BYTES);
    const input = { ...target, schemaSqlPath: SCHEMA_SQL_PATH, control, expectedLayout };
    const worker = new Worker3(workerPath, { workerData: input });
    return new _StoreWorkerClient(worker, new Int32Array(control), workerReplies(worker, "store worker"));
  }
  /** The tables' layout, once the schema exists. */
  ready() {
    this.layout ??= this.replies.expect("ready").then((m) => m.layout);
    return this.layout;
  }
  /**
   * Hands a chunk over (its buffers are transferred). Blocks while
   * MAX_IN_FLIGHT chunks (a few MB) wait in the worker's queue, so memory
   * stays bounded however fast decoding runs; the builder's chunk callback is
   * synchronous, hence Atomics.wait.
   */
  append(table, data) {
    this.waitUntilConsumed(this.posted - MAX_IN_FLIGHT + 1);
    this.worker.postMessage({ type: "chunk", table, data }, chunkTransferList(data));
    this.posted++;
  }
  /** The control buffer the field worker waits on (FIELD_CHUNKS_CONSUMED, FAILED). */
  get control() {
    return this.counters.buffer;
  }
  /** Chunks will also come from the field worker, on this port (its other end is the field worker's). */
  attachFieldChannel(port) {
    this.worker.postMessage({ type: "fieldChannel", port }, [port]);
  }
  /** Writes the whole-trace tables and commits; the worker then closes the database. */
  async finish(result) {
    await this.ready();
    this.worker.postMessage({ type: "finish", result });
    const done = await this.replies.expect("done");
    this.finished = true;
    return done.summary;
  }
  /** Whether the worker flagged a failure (rethrowFailure() gives its error). */
  failed() {
    return Atomics.load(this.counters, FAILED) !== 0;
  }
  /**
   * The worker's own error, after a WorkerStalled: throws it (or a
   * plain failure if it left without one).
   */
  async rethrowFailure() {
    await this.ready();
    await this.replies.expect("done");
    throw new Error("store worker: stopped without an error");
  }
  /** Stops the worker; unless finished, it first closes the database (a second at most). Idempotent. */
  close() {
    this.closed ??= (async () => {
      if (!this.finished) {
        this.worker.postMessage({ type: "abort" });
        await this.replies.exited(1e3);
      }
      await this.worker.terminate();
    })();
    return this.closed;
  }
  waitUntilConsumed(consumed) {
    waitForCounter(this.counters, CONSUMED, consumed, FAILED, "the store worker");
  }
};

// server/ingest/ingest_file.ts
var IngestError = class extends Error {
  constructor(file2, cause) {
    super(`${file2}: building the trace model failed: ${cause?.message ?? String(cause)}`, { cause });
    this.file = file2;
    this.name = "IngestError";
  }
  file;
};
async function ingestFile(file2, opts = {}) {
  const started = performance.now();
  const label = file2;
  let stat2;
  try {
    stat2 = await fs5.stat(file2);
  } catch (err) {
    throw new DecodeError(label, 0, "offset", `cannot read: ${err.code ?? err}`);
  }
  if (!stat2.isFile()) throw new DecodeError(label, 0, "offset", "not a regular file");
  const report = opts.onProgress ?? (() => {
  });
  const dirs = dataDirPaths(resolveDataDir(opts.dataDir));
  if (opts.contentSha256 !== void 0 && !isTraceId(opts.contentSha256)) {
    throw new Error(`contentSha256 must be 64 lowercase hex digits, got ${JSON.stringify(opts.contentSha256)}`);
  }
  const hashFirst = opts.contentSha256 !== void 0 || inFlightSizes.has(stat2.size) || !opts.force && await libraryHasSize(dirs, stat2.size);
  report({ phase: hashFirst ? "hashing" : "decoding", bytesDone: 0, bytesTotal: stat2.size, events: 0 });
  const work = await openWorkspace(dirs.tmp, useStoreWorker(opts, stat2.size));
  let handedOver = false;
  inFlightSizes.set(stat2.size, (inFlightSizes.get(stat2.size) ?? 0) + 1);
  try {
    const common = { file: file2, label, sizeBytes: stat2.size, work, opts, report, started, dirs };
    if (!hashFirst) {
      const hashing = hashFileOnThread(file2);
      handedOver = true;
      try {
        return await wrapBuildError(label, buildIntoPlace({ ...common, id: hashing.sha256, hashSeconds: () => hashing.seconds() ?? 0, hashOverlapped: true }));
      } finally {
        hashing.cancel();
      }
    }
    const id = opts.contentSha256 ?? await hashFile(file2, (n2) => report({ phase: "hashing", bytesDone: n2, bytesTotal: stat2.size, events: 0 }));
    const hashSeconds = (performance.now() - started) / 1e3;
    const finalDir = dirs.traceDir(id);
    if (!opts.force) {
      const earlier = await reuseExisting(finalDir, id, stat2.size, report);
      if (earlier) return earlier;
      const running = inFlight.get(finalDir);
      if (running) {
        await running.catch(() => void 0);
        const after = await reuseExisting(finalDir, id, stat2.size, report);
        if (after) return after;
      }
    }
    const build = buildIntoPlace({ ...common, id: Promise.resolve(id), hashSeconds: () => hashSeconds, hashOverlapped: false });
    handedOver = true;
    inFlight.set(finalDir, build);
    try {
      return await wrapBuildError(label, build);
    } finally {
      if (inFlight.get(finalDir) === build) inFlight.delete(finalDir);
    }
  } finally {
    const n2 = (inFlightSizes.get(stat2.size) ?? 1) - 1;
    if (n2 > 0) inFlightSizes.set(stat2.size, n2);
    else inFlightSizes.delete(stat2.size);
    if (!handedOver) await work.discard();
  }
}
async function wrapBuildError(label, build) {
  try {
    return await build;
  } catch (err) {
    if (err instanceof DecodeError) throw err;
    throw new IngestError(label, err);
  }
}
async function reuseExisting(finalDir, id, sizeBytes, report) {
  const existing = await readSummary(finalDir);
  if (!existing) return null;
  report({ phase: "done", bytesDone: sizeBytes, bytesTotal: sizeBytes, events: existing.eventsTotal });
  return { id, dbPath: path7.join(finalDir, "trace.duckdb"), summary: existing, reused: true };
}
async function libraryHasSize(dirs, sizeBytes) {
  let ids;
  try {
    ids = await fs5.readdir(dirs.traces);
  } catch {
    return false;
  }
  for (const id of ids) {
    if (!isTraceId(id)) continue;
    const s = await readSummary(path7.join(dirs.traces, id));
    if (s === null || s.sizeBytes === sizeBytes) return true;
  }
  return false;
}
var INGEST_MEMORY_LIMIT = process.env.STALLSCOPE_INGEST_MEMORY ?? "256MB";
var STORE_WORKER_MIN_BYTES = 16 << 20;
function useStoreWorker(opts, sizeBytes) {
  const env = process.env.STALLSCOPE_STORE_WORKER;
  return opts.worker ?? (env === "1" ? true : env === "0" ? false : sizeBytes >= STORE_WORKER_MIN_BYTES);
}
var inFlight = /* @__PURE__ */ new Map();
var inFlightSizes = /* @__PURE__ */ new Map();
async function buildIntoPlace(x) {
  const { opts, report, work } = x;
  const workDir = work.dir;
  try {
    const { summary, id } = await buildTrace(x.file, x.label, x.id, x.sizeBytes, work, opts, report);
    const finalDir = x.dirs.traceDir(id);
    summary.seconds.hash = x.hashSeconds();
    if (x.hashOverlapped) summary.seconds.hashOverlapped = true;
    summary.seconds.total = (performance.now() - x.started) / 1e3;
    await fs5.writeFile(path7.join(workDir, "info.json"), JSON.stringify(summary, null, 2));
    await fs5.mkdir(path7.dirname(finalDir), { recursive: true });
    if (!opts.force) {
      const theirs = await reuseExisting(finalDir, id, x.sizeBytes, report);
      if (theirs) {
        await work.discard();
        return theirs;
      }
    }
    const old = `${finalDir}.old-${process.pid}`;
    await fs5.rm(old, { recursive: true, force: true });
    await fs5.rename(finalDir, old).catch(() => void 0);
    await fs5.rename(workDir, finalDir);
    await fs5.rm(old, { recursive: true, force: true });
    report({ phase: "done", bytesDone: x.sizeBytes, bytesTotal: x.sizeBytes, events: summary.eventsTotal });
    return { id, dbPath: path7.join(finalDir, "trace.duckdb"), summary, reused: false };
  } catch (err) {
    await work.discard();
    throw err;
  }
}
async function openWorkspace(tmpRoot, withStoreWorker) {
  await fs5.mkdir(tmpRoot, { recursive: true });
  const dir = await fs5.mkdtemp(path7.join(tmpRoot, `ingest-${process.pid}-`));
  const target = {
    dbPath: path7.join(dir, "trace.duckdb"),
    // A fixed memory cap keeps peak memory independent of the trace's size:
    // past it DuckDB writes to disk and spills derive's sorts to the work dir.
    memoryLimit: INGEST_MEMORY_LIMIT,
    tempDirectory: path7.join(dir, "spill")
  };
  let store = null;
  let layout = null;
  try {
    if (withStoreWorker) {
      layout = await cachedLayout();
      store = await StoreWorkerClient.start(target, layout);
      void workerEntry("field_worker");
    }
  } catch (err) {
    await fs5.rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    dir,
    target,
    store,
    cachedLayout: layout,
    async discard() {
      await store?.close();
      await fs5.rm(dir, { recursive: true, force: true });
    }
  };
}
async function readSummary(traceDir) {
  try {
    const text = await fs5.readFile(path7.join(traceDir, "info.json"), "utf8");
    await fs5.access(path7.join(traceDir, "trace.duckdb"));
    return JSON.parse(text);
  } catch {
    return null;
  }
}
async function buildTrace(file2, label, idReady, sizeBytes, work, opts, report) {
  const { dir: workDir, target } = work;
  const loaded = work.store ? await loadOnStoreWorker(file2, label, workDir, work.store, work.cachedLayout, report) : await loadInProcess(file2, label, workDir, target, report);
  await work.store?.close();
  await fs5.rm(path7.join(workDir, "decompressed.dat"), { force: true });
  const engine = await openDuckDb(target.dbPath, { memoryLimit: target.memoryLimit, tempDirectory: target.tempDirectory });
  try {
    await engine.exec("BEGIN TRANSACTION");
    report({ phase: "deriving", bytesDone: 0, bytesTotal: null, events: loaded.writerSummary.eventsTotal });
    const deriveStarted = performance.now();
    await deriveModel(engine);
    const deriveSeconds = (performance.now() - deriveStarted) / 1e3;
    const id = await idReady;
    const summary = toSummary(loaded.writerSummary, {
      id,
      name: opts.name ?? path7.basename(file2),
      sourcePath: path7.resolve(file2),
      sizeBytes,
      compression: loaded.compression,
      outOfOrderLines: loaded.outOfOrderLines,
      decodeSeconds: loaded.decodeSeconds,
      deriveSeconds
    });
    await writeTraceInfo(engine, summary);
    const commitStarted = performance.now();
    await engine.exec("COMMIT");
    await engine.exec("CHECKPOINT");
    summary.seconds.setup = loaded.setupSeconds;
    summary.seconds.commit = (performance.now() - commitStarted) / 1e3;
    await fs5.rm(target.tempDirectory, { recursive: true, force: true });
    return { summary, id };
  } finally {
    engine.close();
  }
}
async function loadOnStoreWorker(file2, label, workDir, store, cached, report) {
  const setupStarted = performance.now();
  let layout = cached;
  if (layout === null) {
    layout = await store.ready();
    void rememberLayout(layout);
  }
  const fields = await FieldWorkerClient.prepare(layout, store);
  const decodeStarted = performance.now();
  const builder = new ModelBuilder(layout, (table, data) => store.append(table, data), fields);
  let decoded;
  let result;
  try {
    decoded = await decodeRows(file2, label, workDir, builder, report);
    result = builder.finish();
    await fields.finish();
  } catch (err) {
    await fields.close();
    if (err instanceof WorkerStalled || store.failed() || fields.failed()) {
      if (store.failed()) await store.rethrowFailure();
      if (fields.failed()) await fields.rethrowFailure();
    }
    throw err;
  }
  await fields.close();
  const writerSummary = await store.finish(result);
  return {
    writerSummary,
    ...decoded,
    setupSeconds: (decodeStarted - setupStarted) / 1e3,
    decodeSeconds: (performance.now() - decodeStarted) / 1e3
  };
}
function decodeRows(file2, label, workDir, builder, report) {
  return decodeFile(file2, builder, {
    label,
    scratchDir: workDir,
    onProgress: (phase, bytesDone, bytesTotal) => report({ phase, bytesDone, bytesTotal, events: builder.eventCount })
  });
}
async function loadInProcess(file2, label, workDir, target, report) {
  const setupStarted = performance.now();
  const engine = await openDuckDb(target.dbPath, { memoryLimit: target.memoryLimit, tempDirectory: target.tempDirectory });
  try {
    const store = await ModelStore.beginLoad(engine);
    const decodeStarted = performance.now();
    const builder = new ModelBuilder(store.layout, (table, data) => store.append(table, data));
    const decoded = await decodeRows(file2, label, workDir, builder, report);
    const writerSummary = await store.commitLoad(builder.finish());
    return {
      writerSummary,
      ...decoded,
      setupSeconds: (decodeStarted - setupStarted) / 1e3,
      decodeSeconds: (performance.now() - decodeStarted) / 1e3
    };
  } finally {
    engine.close();
  }
}
function toSummary(w, x) {
  return {
    id: x.id,
    name: x.name,
    sourcePath: x.sourcePath,
    sizeBytes: x.sizeBytes,
    compression: x.compression,
    format: w.format,
    formatVersion: w.formatVersion,
    cpus: w.cpus,
    eventsTotal: w.eventsTotal,
    eventsByName: w.eventsByName,
    firstTsNs: w.firstTsNs?.toString() ?? null,
    lastTsNs: w.lastTsNs?.toString() ?? null,
    lostEvents: w.lostEvents,
    lostEventNotices: w.lostEventNotices,
    unparsedEvents: w.unparsedEvents,
    skippedInputs: w.skippedInputs,
    firstSkipped: w.firstSkipped,
    outOfOrderLines: x.outOfOrderLines,
    meta: w.meta,
    ingestedAt: (/* @__PURE__ */ new Date()).toISOString(),
    seconds: { hash: 0, decode: x.decodeSeconds, derive: x.deriveSeconds, total: 0 }
  };
}
async function writeTraceInfo(engine, s) {
  const facts = {
    ...Object.fromEntries(Object.entries(s.meta).map(([k, v]) => [`meta.${k}`, v])),
    id: s.id,
    content_sha256: s.id,
    name: s.name,
    source_file: s.sourcePath,
    source_bytes: String(s.sizeBytes),
    compression: s.compression.join(",") || "none",
    format: s.format,
    format_version: s.formatVersion ?? "",
    cpus: String(s.cpus),
    first_ts: s.firstTsNs ?? "",
    last_ts: s.lastTsNs ?? "",
    events_total: String(s.eventsTotal),
    lost_events: String(s.lostEvents),
    unparsed_events: String(s.unparsedEvents),
    skipped_inputs: String(s.skippedInputs),
    out_of_order_lines: String(s.outOfOrderLines),
    ingest_finished_at: s.ingestedAt,
    complete: "true"
  };
  const entries = Object.entries(facts);
  const placeholders = entries.map((_, i) => `($${i * 2 + 1}, $${i * 2 + 2})`).join(", ");
  await engine.query(`INSERT INTO trace_info VALUES ${placeholders}`, entries.flat());
}

// server/ingest/_prof_ingtime.mts
import fs6 from "node:fs";
function threads() {
  const out = {};
  for (const t of fs6.readdirSync("/proc/self/task")) {
    const s = fs6.readFileSync(`/proc/self/task/${t}/stat`, "utf8");
    const name = s.slice(s.indexOf("(") + 1, s.lastIndexOf(")"));
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    const cpu = (Number(f[11]) + Number(f[12])) / 100;
    out[`${name}#${t}`] = cpu;
  }
  return out;
}
var file = process.argv[2];
var n = Number(process.argv[3] ?? 1);
for (let i = 0; i < n; i++) {
  const dd = "/tmp/sc/dd-" + i;
  fs6.rmSync(dd, { recursive: true, force: true });
  globalThis.__waitMs = 0;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const r = await ingestFile(file, { dataDir: dd, force: true });
  const c = process.cpuUsage(c0);
  console.log(`run ${i}: wall ${((performance.now() - t0) / 1e3).toFixed(2)} s cpu ${((c.user + c.system) / 1e6).toFixed(2)} s`, JSON.stringify(r.summary.seconds, (k, v) => typeof v === "number" ? +v.toFixed(2) : v), "mainWait", (globalThis.__waitMs / 1e3).toFixed(2));
  fs6.rmSync(dd, { recursive: true, force: true });
}
var th = Object.entries(threads()).filter(([, v]) => v > 0.2).map(([k, v]) => `${k}=${v.toFixed(1)}`);
console.log("threads cpu-s:", th.join(" "));
