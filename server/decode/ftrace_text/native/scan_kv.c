/*
 * scan_kv.c: key=value argument text of text events, read in native code for
 * the field worker (compiled to WebAssembly by build_scan_kv.sh; the .wasm
 * is committed).
 *
 * Why native: in JavaScript, reading the reclaim events' `key=value` text
 * (KvColumnWriter.scan/scanWith, kv_columns.ts) and interning their flag
 * and enum values cost ~1.5-2 CPU-s per GB of tracefs text on the field
 * worker, the largest stage of a text ingest. The same reading here costs a
 * small part of that.
 *
 * What it reads is exactly what KvColumnWriter reads with a key sequence it
 * has learned (a "plan": kvSpansBytes in key_values_bytes.ts, plain decimals only), no
 * more: the JavaScript side learns each sequence as before and gives it
 * here (kv_add_plan); a record no plan of its event name matches is left to
 * the JavaScript path (native_kv_scanner.ts, kv_columns.test.ts compares
 * both).
 *
 * One call reads the records of one batch (record_batch.ts: 7 int32s per
 * record, format = event name id, its text at [at, at + len) of the batch's
 * bytes, kind 0 = page bytes) and writes, per record:
 *   out_plan[i]  the plan that read it, or -1 (JavaScript reads it);
 *   out_base[i]  where its values start in vals: one per key of the plan,
 *                the number for a numeric key, a token id for a text key.
 * Tokens are the text values, interned here by their bytes (ids stable for
 * the life of the module); JavaScript reads a new token's bytes once.
 *
 * Untyped events (no typed table: mm_page_alloc, kmalloc, most of a kmem
 * trace) are read the same way with the key sequences UntypedKvScan.scan
 * (untyped_kv.ts) found for their name (kv_add_untyped_plan): the scan and
 * its classification, exactly as there (kvSpansBytes with shapes, then
 * classify), giving per key its kind, value span and number (vals) and per
 * record the kinds' code and flags (kv_untyped_out), from which the field
 * worker writes the shape row. Why: that scan in JavaScript was ~1/3 of
 * the field worker's CPU on kmem text, the critical thread (bench/README.md,
 * "Session of 2026-11-29 (fifth): text").
 */
typedef unsigned char u8;
typedef int i32;
typedef unsigned int u32;
typedef unsigned long long u64;

/* record_batch.ts: ints per record and their places. */
#define REC_INTS 7
#define R_FORMAT 0
#define R_AT 4
#define R_LEN 5
#define R_KIND 6

#define MAX_RULES 32
#define MAX_KEY_BYTES 64
#define MAX_PLANS 2048
#define PLANS_PER_NAME 8
#define MAX_NAMES 16384
/* kvSpansBytes's longest plain decimal (15 digits: an exact double). */
#define MAX_DIGITS 15

/* The last text read per event name (by name id mod REPEAT_SLOTS), up to REPEAT_BYTES. */
#define REPEAT_SLOTS 1024
#define REPEAT_BYTES 256

#define TOKEN_SLOTS (1 << 17)
#define MAX_TOKENS (1 << 16)
#define TOKEN_ARENA (4 << 20)
#define MAX_TOKEN_BYTES 256

/* untyped_kv.ts MAX_KEYS: the most keys of an untyped plan (its kind code stays an exact integer). */
#define MAX_UNTYPED_KEYS 30

/* untyped_kv.ts value kinds (KV_NIL: `(nil)`, read as a hex 0). */
#define KV_INT 0
#define KV_HEX 1
#define KV_STR 2
#define KV_NIL 3

/* kvSpansBytes's value shapes (key_values_bytes.ts). */
#define VALUE_DIGITS 1
#define VALUE_SLASH_HEX 2
#define VALUE_HEX 4

/* kv_scan's per-record flags of an untyped read. */
#define U_PAIRS_BACK 1
#define U_PRINTS_BACK 2

#include <wasm_simd128.h>

extern u8 __heap_base;

typedef struct {
  i32 live;
  /* An untyped event's key sequence (kv_add_untyped_plan), read as UntypedKvScan.scan reads it. */
  i32 untyped;
  i32 nrules;
  u8 kind[MAX_RULES];
  u8 key_len[MAX_RULES];
  u8 key[MAX_RULES][MAX_KEY_BYTES];
} Plan;

static Plan plans[MAX_PLANS];
static i32 plan_count = 0;
/* Per event name id: its plans (handle + 1; 0 empty). */
static i32 name_plans[MAX_NAMES][PLANS_PER_NAME];
/* Per event name id: whether its plans are untyped ones (a name has one kind or the other). */
static u8 name_untyped[MAX_NAMES];

static i32 token_slot[TOKEN_SLOTS];
static i32 token_at[MAX_TOKENS];
static i32 token_len[MAX_TOKENS];
static u8 token_bytes[TOKEN_ARENA];
static i32 token_count = 0;
static i32 token_used = 0;

/*
 * The last text each event name's plan read, with its values: reclaim
 * events repeat their text (92% of lru_shrink_inactive and 66% of
 * lru_isolate events print the text of the event of that name before), and
 * comparing ~140 bytes costs less than reading them.
 */
static i32 repeat_name[REPEAT_SLOTS]; /* name id + 1, 0: empty */
static i32 repeat_plan[REPEAT_SLOTS];
static i32 repeat_len[REPEAT_SLOTS];
static u8 repeat_text[REPEAT_SLOTS][REPEAT_BYTES];
static double repeat_vals[REPEAT_SLOTS][MAX_RULES];

/** Where the caller may put its buffers (memory after the static data). */
u8 *heap_base(void) { return &__heap_base; }
i32 *token_starts(void) { return token_at; }
i32 *token_lengths(void) { return token_len; }
u8 *token_arena(void) { return token_bytes; }
i32 tokens(void) { return token_count; }

/** Forgets every plan (a new ingest learns its own); tokens stay. */
void kv_reset(void) {
  for (i32 i = 0; i < REPEAT_SLOTS; i++) repeat_name[i] = 0;
  for (i32 i = 0; i < plan_count; i++) plans[i].live = 0;
  plan_count = 0;
  for (i32 n = 0; n < MAX_NAMES; n++) {
    name_untyped[n] = 0;
    for (i32 k = 0; k < PLANS_PER_NAME; k++) name_plans[n][k] = 0;
  }
}

/*
 * A key sequence of event name `name`, from desc: [nrules, then per rule
 * kind (0 auto, 1 text, 2 numeric) and key length, then the key bytes
 * "key=" packed]. Returns its handle, or -1 if it is not taken (too long,
 * too many plans): its events stay on the JavaScript path.
 */
static i32 add_plan(i32 name, const u8 *desc, i32 untyped) {
  if (name < 0 || name >= MAX_NAMES || plan_count >= MAX_PLANS) return -1;
  i32 nrules = desc[0];
  if (nrules < 1 || nrules > MAX_RULES) return -1;
  i32 slot = -1;
  for (i32 k = 0; k < PLANS_PER_NAME; k++)
    if (name_plans[name][k] == 0) {
      slot = k;
      break;
    }
  if (slot < 0 || (name_plans[name][0] != 0 && name_untyped[name] != untyped)) return -1;
  Plan *p = &plans[plan_count];
  const u8 *keys = desc + 1 + 2 * nrules;
  for (i32 r = 0; r < nrules; r++) {
    i32 len = desc[2 + 2 * r];
    if (len < 1 || len > MAX_KEY_BYTES) return -1;
    p->kind[r] = desc[1 + 2 * r];
    p->key_len[r] = (u8)len;
    for (i32 j = 0; j < len; j++) p->key[r][j] = keys[j];
    keys += len;
  }
  p->nrules = nrules;
  p->untyped = untyped;
  p->live = 1;
  name_untyped[name] = (u8)untyped;
  name_plans[name][slot] = plan_count + 1;
  return plan_count++;
}

i32 kv_add_plan(i32 name, const u8 *desc) { return add_plan(name, desc, 0); }

/**
 * A key sequence (desc as kv_add_plan's) that UntypedKvScan.scan read for
 * untyped event name `name`: its events' texts are then scanned and
 * classified here (read_untyped), a batch at a time. Handle, or -1.
 */
i32 kv_add_untyped_plan(i32 name, const u8 *desc) {
  if (desc[0] > MAX_UNTYPED_KEYS) return -1;
  return add_plan(name, desc, 1);
}

/** A plan the JavaScript side no longer keeps. */
void kv_drop_plan(i32 handle) {
  if (handle < 0 || handle >= plan_count) return;
  plans[handle].live = 0;
  for (i32 i = 0; i < REPEAT_SLOTS; i++)
    if (repeat_plan[i] == handle) repeat_name[i] = 0;
  for (i32 n = 0; n < MAX_NAMES; n++)
    for (i32 k = 0; k < PLANS_PER_NAME; k++)
      if (name_plans[n][k] == handle + 1) name_plans[n][k] = 0;
}

static inline int same_bytes(const u8 *a, const u8 *b, i32 n) {
  i32 i = 0;
  for (; i + 16 <= n; i += 16)
    if (!wasm_i8x16_all_true(wasm_i8x16_eq(wasm_v128_load(a + i), wasm_v128_load(b + i)))) return 0;
  for (; i < n; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

/* The token of bytes s[0, n), interned on first sight; -1 when the table is full or the value too long. */
static i32 token_of(const u8 *s, i32 n) {
  if (n > MAX_TOKEN_BYTES) return -1;
  u32 h = 2166136261u;
  for (i32 i = 0; i < n; i++) h = (h ^ s[i]) * 16777619u;
  for (u32 k = 0; k < TOKEN_SLOTS; k++) {
    u32 slot = (h + k) & (TOKEN_SLOTS - 1);
    i32 v = token_slot[slot];
    if (v == 0) {
      if (token_count >= MAX_TOKENS || token_used + n > TOKEN_ARENA) return -1;
      i32 id = token_count++;
      for (i32 i = 0; i < n; i++) token_bytes[token_used + i] = s[i];
      token_at[id] = token_used;
      token_len[id] = n;
      token_used += n;
      token_slot[slot] = id + 1;
      return id;
    }
    v--;
    if (token_len[v] == n && same_bytes(token_bytes + token_at[v], s, n)) return v;
  }
  return -1;
}

/*
 * kvSpansBytes (key_values_bytes.ts) on b[s, n) with plan p, taking plain values only,
 * as KvColumnWriter.scanWith does: 1 and the values in vals, or 0.
 */
static int read_plan(const Plan *p, const u8 *b, i32 s, i32 n, double *vals) {
  i32 m = p->nrules;
  i32 at = s;
  for (i32 k = 0; k < m; k++) {
    i32 klen = p->key_len[k];
    if (at + klen > n || !same_bytes(b + at, p->key[k], klen)) return 0;
    i32 v0 = at + klen;
    i32 q = v0;
    if (p->kind[k] != 1) {
      u64 v = 0;
      u8 c = 0;
      while (q < n && (c = b[q]) >= '0' && c <= '9') {
        v = v * 10 + (c - '0');
        q++;
        if (q - v0 > MAX_DIGITS) return 0;
      }
      if (q == v0 || (q < n && c != ' ')) return 0;
      /* A zero-padded pointer printed in decimal digits is text (pointerWidthPadded). */
      if (p->kind[k] == 0 && b[v0] == '0' && (q - v0 == 16 || q - v0 == 8)) return 0;
      vals[k] = (double)v;
    } else {
      while (q < n && b[q] != ' ') q++;
      i32 t = token_of(b + v0, q - v0);
      if (t < 0) return 0;
      vals[k] = t;
    }
    if (k == m - 1) {
      if (q < n) return 0;
    } else {
      if (q >= n) return 0;
      at = q + 1;
      while (at < n && b[at] == ' ') at++;
    }
  }
  return 1;
}

/* text_scan.ts isKeyChar. */
static inline int is_key_char(u8 c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

/* values.ts pointerWidthPadded. */
static inline int pointer_width_padded(u8 c0, i32 len) { return c0 == '0' && (len == 16 || len == 8); }

/* key_values_bytes.ts firstKeyToken on b[s, n): where the first `key=` token starts, or -1. */
static i32 first_key_token(const u8 *b, i32 s, i32 n) {
  i32 i = s;
  while (i < n) {
    i32 j = i;
    u8 c = 0;
    while (j < n && is_key_char((c = b[j]))) j++;
    if (j > i && j < n && c == '=') return i;
    while (j < n && b[j] != ' ') j++;
    if (j >= n) return -1;
    while (j < n && b[j] == ' ') j++;
    i = j;
  }
  return -1;
}

/*
 * kvSpansBytes (key_values_bytes.ts) with `shapes`, on b[s, n) with plan p:
 * per key its value's span, number (NaN: none) and shape; 0 if the text is
 * not that sequence. (sameBytes there may compare a key past n, within the
 * batch; its value would start past n, no match either way.)
 */
static int spans_plan(const Plan *p, const u8 *b, i32 s, i32 n, double *nums, i32 *starts, i32 *ends, u8 *shapes) {
  i32 m = p->nrules;
  i32 at = s;
  for (i32 k = 0; k < m; k++) {
    i32 klen = p->key_len[k];
    if (at + klen > n || !same_bytes(b + at, p->key[k], klen)) return 0;
    i32 v0 = at + klen;
    i32 q = v0;
    double v = __builtin_nan("");
    u8 c = 0;
    i32 kind = p->kind[k];
    if (kind != 1) {
      i32 d0 = v0;
      if (b[v0] == '-' && v0 + 1 < n && (c = b[v0 + 1]) >= '1' && c <= '9') d0 = v0 + 1;
      double x = 0;
      q = d0;
      while (q < n && (c = b[q]) >= '0' && c <= '9') {
        x = x * 10 + (c - '0');
        q++;
      }
      if (q == d0 || q - d0 > MAX_DIGITS || (q < n && c != ' ') || (kind == 0 && pointer_width_padded(b[v0], q - v0)))
        v = __builtin_nan("");
      else
        v = d0 != v0 ? -x : x;
    } else {
      while (q < n && (c = b[q]) >= '0' && c <= '9') q++;
    }
    u8 shape = q == n || b[q] == ' ' ? VALUE_DIGITS : 0;
    if (q == v0 + 1 && b[v0] == '0' && q < n && b[q] == 'x') {
      q++;
      while (q < n && (((c = b[q]) >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) q++;
      i32 len = q - v0;
      if ((q == n || b[q] == ' ') && len >= 3 && len <= 18 && (b[v0 + 2] != '0' || len == 3)) shape = VALUE_HEX;
    }
    for (; q < n && (c = b[q]) != ' '; q++)
      if (c == '/' && q + 2 < n && b[q + 1] == '0' && b[q + 2] == 'x') shape = VALUE_SLASH_HEX;
    shapes[k] = shape;
    int last = k == m - 1;
    if (last ? q < n : q >= n) return 0;
    nums[k] = v;
    starts[k] = v0;
    ends[k] = q;
    if (!last) {
      at = q + 1;
      while (at < n && b[at] == ' ') at++;
    }
  }
  return 1;
}

/*
 * UntypedKvScan.classify (untyped_kv.ts, no lead fields): per key its
 * kind (nums keep the integers), the kinds' code and the flags; 0 when a
 * value is one the general path must read.
 */
static int classify(const Plan *p, const u8 *b, i32 text_at, i32 pairs_at, const double *nums, const i32 *starts,
                    const i32 *ends, const u8 *shapes, u8 *kinds, double *code_out, i32 *flags_out) {
  double code = 0;
  double mult = 1;
  int back = 1;
  int nil = 0;
  for (i32 k = 0; k < p->nrules; k++) {
    i32 v0 = starts[k];
    i32 q = ends[k];
    i32 len = q - v0;
    i32 rule_kind = p->kind[k];
    if (k > 0 && v0 - p->key_len[k] != ends[k - 1] + 1) back = 0;
    i32 kind;
    if (nums[k] == nums[k]) {
      kind = KV_INT;
      if (len > 1 && b[v0] == '0') back = 0;
    } else {
      if (len == 0) return 0;
      u8 c0 = b[v0];
      u8 shape = shapes[k];
      if (rule_kind == 2) return 0;
      if (rule_kind == 0 && len == 5 && c0 == '(' && b[v0 + 1] == 'n' && b[v0 + 2] == 'i' && b[v0 + 3] == 'l' &&
          b[v0 + 4] == ')') {
        kinds[k] = KV_NIL;
        code += KV_HEX * mult;
        mult *= 3;
        nil = 1;
        continue;
      }
      if (rule_kind == 0 && !pointer_width_padded(c0, len)) {
        if (c0 == '-' || c0 == '+' || c0 == '"' || (shape & VALUE_DIGITS) || (shape & VALUE_SLASH_HEX)) return 0;
        u8 last = b[q - 1];
        if (last == ',' || last == ']' || last == ')') return 0;
      }
      kind = (shape & VALUE_HEX) ? KV_HEX : KV_STR;
    }
    kinds[k] = (u8)kind;
    code += kind * mult;
    mult *= 3;
  }
  *code_out = code;
  *flags_out = (back ? U_PAIRS_BACK : 0) | (back && !nil && pairs_at == text_at ? U_PRINTS_BACK : 0);
  return 1;
}

/* Untyped outputs of kv_scan (kv_untyped_out): per record, and per key at its base. */
static double *u_code;
static i32 *u_flags;
static i32 *u_pairs_at;
static i32 *u_starts;
static i32 *u_ends;
static u8 *u_kinds;

/** Where kv_scan puts its untyped reads: per record code, flags, pairs' start; per key (at out_base) span and kind. */
void kv_untyped_out(double *code, i32 *flags, i32 *pairs_at, i32 *starts, i32 *ends, u8 *kinds) {
  u_code = code;
  u_flags = flags;
  u_pairs_at = pairs_at;
  u_starts = starts;
  u_ends = ends;
  u_kinds = kinds;
}

/*
 * UntypedKvScan.scan with the name's untyped plans (candidates): the pairs
 * from the text's start, else from its first `key=` token after other
 * tokens (the kmem plugin's `(call_site) `). Values at vals/u_* + base.
 */
static i32 read_untyped(const i32 *candidates, const u8 *b, i32 s, i32 n, i32 i, i32 base, double *vals) {
  u8 shapes[MAX_RULES];
  for (i32 pass = 0; pass < 2; pass++) {
    i32 at = s;
    if (pass == 1) {
      at = first_key_token(b, s, n);
      if (at <= s) return -1;
    }
    for (i32 k = 0; k < PLANS_PER_NAME; k++) {
      i32 h = candidates[k] - 1;
      if (h < 0) continue;
      const Plan *p = &plans[h];
      if (!spans_plan(p, b, at, n, vals + base, u_starts + base, u_ends + base, shapes)) continue;
      if (!classify(p, b, s, at, vals + base, u_starts + base, u_ends + base, shapes, u_kinds + base, &u_code[i],
                    &u_flags[i]))
        return -1;
      u_pairs_at[i] = at;
      return h;
    }
  }
  return -1;
}

/*
 * Reads a batch's records (see the top of the file). vals must hold
 * count * MAX_RULES doubles. Returns how many records a plan read.
 */
i32 kv_scan(const i32 *ints, i32 count, const u8 *bytes, i32 nbytes, i32 *out_plan, i32 *out_base, double *vals) {
  i32 read = 0;
  i32 base = 0;
  for (i32 i = 0; i < count; i++) {
    const i32 *rec = ints + i * REC_INTS;
    i32 name = rec[R_FORMAT];
    out_plan[i] = -1;
    if (name < 0 || name >= MAX_NAMES || rec[R_KIND] != 0) continue;
    i32 s = rec[R_AT];
    i32 n = s + rec[R_LEN];
    if (s < 0 || rec[R_LEN] < 0 || n > nbytes) continue;
    i32 len = n - s;
    const i32 *candidates = name_plans[name];
    if (name_untyped[name]) {
      i32 h = read_untyped(candidates, bytes, s, n, i, base, vals);
      if (h >= 0) {
        out_plan[i] = h;
        out_base[i] = base;
        base += plans[h].nrules;
        read++;
      }
      continue;
    }
    i32 r = name & (REPEAT_SLOTS - 1);
    if (repeat_name[r] == name + 1 && repeat_len[r] == len && same_bytes(repeat_text[r], bytes + s, len)) {
      i32 h = repeat_plan[r];
      for (i32 k = 0; k < plans[h].nrules; k++) vals[base + k] = repeat_vals[r][k];
      out_plan[i] = h;
      out_base[i] = base;
      base += plans[h].nrules;
      read++;
      continue;
    }
    for (i32 k = 0; k < PLANS_PER_NAME; k++) {
      i32 h = candidates[k] - 1;
      if (h < 0) continue;
      if (read_plan(&plans[h], bytes, s, n, vals + base)) {
        out_plan[i] = h;
        out_base[i] = base;
        if (len <= REPEAT_BYTES) {
          repeat_name[r] = name + 1;
          repeat_plan[r] = h;
          repeat_len[r] = len;
          for (i32 j = 0; j < len; j++) repeat_text[r][j] = bytes[s + j];
          for (i32 j = 0; j < plans[h].nrules; j++) repeat_vals[r][j] = vals[base + j];
        }
        base += plans[h].nrules;
        read++;
        break;
      }
    }
  }
  return read;
}
