/*
 * frame_lines.c: the common ftrace text event line, framed in native code
 * (compiled to WebAssembly by build_frame_lines.sh; the .wasm is committed).
 *
 * Why native: framing (find the line, read `comm-pid [cpu] flags ts: name:`)
 * was about a third of a text ingest's main-thread CPU in JavaScript
 * (parseNormalLineBytes, parseHeadBytes, parseTailBytes: ~1.5 CPU-s per GB). The same
 * reading here costs a few tenths of that.
 *
 * What it reads is exactly what parseNormalLineBytes (parse_event_line.ts) reads,
 * no more: a line it is not sure about is marked SLOW and the JavaScript
 * path reads it, as it did before. Where the JavaScript reading needs its
 * tables (the task name's string, the event name's record), this gives
 * positions and the JavaScript side looks them up (native_framer.ts).
 * native_framer.test.ts compares both readings line by line.
 *
 * One call frames the lines of one block of whole lines (it ends just past
 * a '\n') into records of REC_WORDS int32s:
 *
 *   [0] kind: 0 SLOW (read this line in JavaScript), 1 FAST,
 *       | 2 NEW_HEAD (words 3-6 hold a head not given before)
 *   [1] line start, [2] line end (without "\n" or "\r\n"), block offsets
 *   [3] cpu  [4] pid  [5] tgid (-1: no tgid column or `(-------)`)
 *   [6] end of the padded task name (the '-' before the pid); it starts at [1]
 *   [7] irq/preempt flags, -1: no flags column  [8] preempt count
 *   [9] whole seconds  [10] nanoseconds (a raw clock value: split into both)
 *   [11] event name id (interned here)  [12] name start  [13] the name's ':'
 *   [14] first argument byte after the padding  [15] argument end (trailing spaces dropped)
 */
#include <wasm_simd128.h>

typedef unsigned char u8;
typedef int i32;
typedef unsigned int u32;
typedef long long i64;

#define REC_WORDS 16
#define KIND_FAST 1
#define KIND_NEW_HEAD 2

/* Limits that keep every value an exact int32; longer runs of digits go to the JavaScript path. */
#define MAX_NUMBER_DIGITS 9
/* A timestamp without a fraction (a raw clock value in ns) is read up to this many digits, as in JavaScript. */
#define MAX_CLOCK_DIGITS 15
#define MAX_HEAD_BYTES 128
#define MAX_NAME_BYTES 64
#define NAME_SLOTS 8192
#define MAX_NAME_IDS 4096

/* Flag bits (decoded_event.ts TRACE_FLAGS). */
#define F_IRQS_OFF 0x01
#define F_IRQS_NOSUPPORT 0x02
#define F_NEED_RESCHED 0x04
#define F_HARDIRQ 0x08
#define F_SOFTIRQ 0x10
#define F_PREEMPT_RESCHED 0x20
#define F_NMI 0x40
#define F_BH_OFF 0x80

extern u8 __heap_base;

/* The head of the last line given as FAST: equal bytes read the same. */
static u8 last_head[MAX_HEAD_BYTES];
static i32 last_head_n = 0;

/* Event names, interned: slot -> id + 1 (0 empty); id -> bytes. */
static unsigned short name_slot[NAME_SLOTS];
static u8 name_bytes[MAX_NAME_IDS][MAX_NAME_BYTES];
static u8 name_len[MAX_NAME_IDS];
static i32 name_count = 0;
/* The last two names found: a task's events come in runs. */
static i32 last_name = -1, name_before = -1;

/** Where the caller may put a block and the records (memory after the static data). */
u8 *heap_base(void) { return &__heap_base; }

static inline int is_digit(u8 c) { return c >= '0' && c <= '9'; }

static inline int same_bytes(const u8 *a, const u8 *b, i32 n) {
  for (i32 i = 0; i < n; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

static int hex_val(u8 c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static int irqs_off_bits(u8 c) {
  switch (c) {
    case '.': return 0;
    case 'd': return F_IRQS_OFF;
    case 'D': return F_IRQS_OFF | F_BH_OFF;
    case 'b': return F_BH_OFF;
    case 'X': return F_IRQS_NOSUPPORT;
    default: return -1;
  }
}

/* The kernel's reading (FlagStyle 'kernel', the only one the decoder uses). */
static int need_resched_bits(u8 c) {
  switch (c) {
    case '.': return 0;
    case 'N': return F_NEED_RESCHED | F_PREEMPT_RESCHED;
    case 'n': return F_NEED_RESCHED;
    case 'p': return F_PREEMPT_RESCHED;
    case 'L': return 0x02 | F_PREEMPT_RESCHED;
    case 'l': return 0x02;
    case 'b': return F_NEED_RESCHED | 0x02;
    case 'B': return F_NEED_RESCHED | 0x02 | F_PREEMPT_RESCHED;
    default: return -1;
  }
}

static int hard_soft_bits(u8 c) {
  switch (c) {
    case '.': return 0;
    case 'h': return F_HARDIRQ;
    case 's': return F_SOFTIRQ;
    case 'H': return F_HARDIRQ | F_SOFTIRQ;
    case 'z': return F_NMI;
    case 'Z': return F_NMI | F_HARDIRQ;
    case 'b': return F_BH_OFF;
    default: return -1;
  }
}

/* parseFlagsTokenBytes: b[s, e) -> flags, preempt count; 0 if not a flags token. */
static int flags_token(const u8 *s, const u8 *e, i32 *flags, i32 *preempt) {
  i32 n = (i32)(e - s);
  if (n < 4 || n > 6) return 0;
  int x = irqs_off_bits(s[0]), y = need_resched_bits(s[1]), z = hard_soft_bits(s[2]);
  if (x < 0 || y < 0 || z < 0) return 0;
  int depth = s[3] == '.' ? 0 : hex_val(s[3]);
  if (depth < 0) return 0;
  int migrate = 0;
  if (n >= 5) {
    migrate = s[4] == '.' ? 0 : hex_val(s[4]);
    if (migrate < 0) return 0;
  }
  *flags = x | y | z;
  *preempt = depth | (migrate << 4);
  return 1;
}

/* The id of the name b[s, e), interned on first sight; -1 when the table is full or the name too long. */
static i32 name_id(const u8 *s, i32 n) {
  if (n > MAX_NAME_BYTES) return -1;
  u32 h = 2166136261u;
  for (i32 i = 0; i < n; i++) h = (h ^ s[i]) * 16777619u;
  for (u32 k = 0; k < NAME_SLOTS; k++) {
    u32 slot = (h + k) & (NAME_SLOTS - 1);
    i32 v = name_slot[slot];
    if (v == 0) {
      if (name_count >= MAX_NAME_IDS) return -1;
      i32 id = name_count++;
      for (i32 i = 0; i < n; i++) name_bytes[id][i] = s[i];
      name_len[id] = (u8)n;
      name_slot[slot] = (unsigned short)(id + 1);
      return id;
    }
    v--;
    if (name_len[v] == n && same_bytes(name_bytes[v], s, n)) return v;
  }
  return -1;
}

/* Whether the known name `id` is at p, followed by its ':' before e. */
static inline int name_at(const u8 *p, const u8 *e, i32 id) {
  i32 n = name_len[id];
  return p + n < e && p[n] == ':' && same_bytes(p, name_bytes[id], n);
}

/* The end of the line starting at p (the index of its '\n'); the block ends with one. */
static const u8 *line_end(const u8 *p, const u8 *end) {
  const v128_t nl = wasm_i8x16_splat('\n');
  while (p + 16 <= end) {
    u32 m = wasm_i8x16_bitmask(wasm_i8x16_eq(wasm_v128_load(p), nl));
    if (m) return p + __builtin_ctz(m);
    p += 16;
  }
  while (p < end && *p != '\n') p++;
  return p;
}

/*
 * parseHeadBytes on line[0, n): `comm-pid [(tgid)] [cpu]`. Returns the index of
 * the CPU column's ']' or -1; sets cpu, tgid, pid and the task name's end.
 */
static i32 read_head(const u8 *line, i32 n, i32 *cpu_out, i32 *tgid_out, i32 *pid_out, i32 *comm_end) {
  i32 br = 0, j = 0, cpu = 0;
  for (;;) {
    while (br < n && line[br] != '[') br++;
    if (br >= n) return -1;
    j = br + 1;
    cpu = 0;
    u8 c = 0;
    while (j < n && is_digit(c = line[j])) {
      if (j - br > MAX_NUMBER_DIGITS) return -1;
      cpu = cpu * 10 + (c - '0');
      j++;
    }
    if (j > br + 1 && j < n && c == ']' && br > 0 && line[br - 1] == ' ') break;
    br++;
  }
  i32 e = br - 1;
  while (e >= 0 && line[e] == ' ') e--;
  i32 tgid = -1;
  if (e >= 0 && line[e] == ')') {
    i32 o = e - 1;
    while (o >= 0 && line[o] != '(') o--;
    if (o < 0) return -1;
    i32 t = 0, digits = 0;
    for (i32 k = o + 1; k < e; k++) {
      u8 c = line[k];
      if (is_digit(c)) {
        if (++digits > MAX_NUMBER_DIGITS) return -1;
        t = t * 10 + (c - '0');
      } else if (c != ' ' && c != '-') return -1;
    }
    tgid = digits > 0 ? t : -1;
    e = o - 1;
    while (e >= 0 && line[e] == ' ') e--;
  }
  /* parseCommPidBytes: `-digits` at the end, after a name */
  i32 end = e, pid = 0, mult = 1;
  u8 c = 0;
  while (e >= 0 && is_digit(c = line[e])) {
    if (end - e >= MAX_NUMBER_DIGITS) return -1;
    pid += (c - '0') * mult;
    mult *= 10;
    e--;
  }
  if (e == end || e <= 0 || c != '-') return -1;
  *cpu_out = cpu;
  *tgid_out = tgid;
  *pid_out = pid;
  *comm_end = e;
  return j;
}

/*
 * Frames the lines of block[0, n) (n > 0, block[n - 1] == '\n') from
 * `from`, writing at most max_records records to out. Returns the number of
 * records (one per line); the lines framed end at the last record's line.
 */
i32 frame_lines(const u8 *block, i32 n, i32 from, i32 *out, i32 max_records) {
  const u8 *end = block + n;
  const u8 *p = block + from;
  i32 rec = 0;
  while (p < end && rec < max_records) {
    const u8 *nl = line_end(p, end);
    const u8 *line = p;
    i32 len = (i32)(nl - line);
    if (len > 0 && line[len - 1] == '\r') len--;
    p = nl + 1;
    i32 *o = out + rec * REC_WORDS;
    rec++;
    o[0] = 0;
    o[1] = (i32)(line - block);
    o[2] = o[1] + len;
    if (len == 0 || line[0] == '#') continue;

    /* head: the last one again, or read */
    i32 j, kind = KIND_FAST;
    i32 cpu = 0, tgid = -1, pid = 0, comm_end = 0;
    if (last_head_n > 0 && last_head_n <= len && same_bytes(line, last_head, last_head_n)) {
      j = last_head_n - 1;
    } else {
      j = read_head(line, len, &cpu, &tgid, &pid, &comm_end);
      if (j < 0) continue;
      kind |= KIND_NEW_HEAD;
    }

    /* optional flags column, then the timestamp */
    i32 q = j + 1;
    while (q < len && line[q] == ' ') q++;
    if (q >= len) continue;
    i32 flags = -1, preempt = -1;
    if (!is_digit(line[q])) {
      i32 t = q;
      while (t < len && line[t] != ' ') t++;
      if (!flags_token(line + q, line + t, &flags, &preempt)) continue;
      q = t;
      while (q < len && line[q] == ' ') q++;
    }
    i64 whole = 0;
    i32 s0 = q;
    u8 c = 0;
    while (q < len && is_digit(c = line[q])) {
      whole = whole * 10 + (c - '0');
      if (++q - s0 > MAX_CLOCK_DIGITS) break;
    }
    i32 digits = q - s0;
    if (digits == 0 || q >= len) continue;
    i32 secs, frac;
    if (c == '.') {
      /* `secs.frac:` */
      if (digits > MAX_NUMBER_DIGITS) continue;
      secs = (i32)whole;
      q++;
      i32 f0 = q;
      frac = 0;
      while (q < len && is_digit(c = line[q])) {
        if (q - f0 < 9) frac = frac * 10 + (c - '0');
        q++;
      }
      i32 k = q - f0;
      if (k == 0 || q >= len || c != ':') continue;
      for (i32 d = k; d < 9; d++) frac *= 10;
    } else if (c == ':' && digits <= MAX_CLOCK_DIGITS) {
      /* no fraction: a raw clock value (counter / x86-tsc clocks), taken as ns */
      secs = (i32)(whole / 1000000000);
      frac = (i32)(whole % 1000000000);
    } else
      continue;
    q++;
    if (q < len && line[q] != ' ') continue;
    while (q < len && line[q] == ' ') q++;

    /* event name, up to ':' (a space first: not a name) */
    i32 id = -1, colon;
    if (last_name >= 0 && name_at(line + q, line + len, last_name)) {
      id = last_name;
    } else if (name_before >= 0 && name_at(line + q, line + len, name_before)) {
      id = name_before;
      name_before = last_name;
      last_name = id;
    } else {
      colon = q;
      while (colon < len && (c = line[colon]) != ':' && c != ' ') colon++;
      if (colon == q || colon >= len || c != ':') continue;
      id = name_id(line + q, colon - q);
      if (id < 0) continue;
      if (id != last_name) {
        name_before = last_name;
        last_name = id;
      }
    }
    colon = q + name_len[id];

    /* arguments: after the padding, trailing spaces dropped */
    i32 a = colon + 1;
    while (a < len && line[a] == ' ') a++;
    i32 e = len;
    while (e > a && line[e - 1] == ' ') e--;

    if (kind & KIND_NEW_HEAD) {
      /* remembered only once given, so that a repeat always refers to a head the caller has */
      i32 hn = j + 1;
      if (hn <= MAX_HEAD_BYTES && hn >= 4) {
        for (i32 i = 0; i < hn; i++) last_head[i] = line[i];
        last_head_n = hn;
      } else last_head_n = 0;
      o[3] = cpu;
      o[4] = pid;
      o[5] = tgid;
      o[6] = o[1] + comm_end;
    }
    o[0] = kind;
    o[7] = flags;
    o[8] = preempt;
    o[9] = secs;
    o[10] = frac;
    o[11] = id;
    o[12] = o[1] + q;
    o[13] = o[1] + colon;
    o[14] = o[1] + a;
    o[15] = o[1] + e;
  }
  return rec;
}
