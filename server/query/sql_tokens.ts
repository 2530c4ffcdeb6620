/**
 * A small SQL lexer for DuckDB's dialect: enough to split a script into
 * statements and to see which words, strings and calls it contains, never
 * confused by a keyword inside a comment, a string or a quoted identifier.
 *
 * It is not the sandbox (DuckDB's own settings are, see sandbox.ts): it
 * exists to refuse what the sandbox would refuse anyway, earlier and with a
 * message that says why, and to map DuckDB's error positions back to the
 * script.
 */

export type TokenKind = 'word' | 'qident' | 'string' | 'number' | 'param' | 'punct';

export interface Token {
  kind: TokenKind;
  /** The text as written. */
  text: string;
  /** word: lower case; qident: unquoted; string: unquoted content; else the text. */
  value: string;
  /** Offsets into the script (UTF-16 code units, as JS strings index). */
  start: number;
  end: number;
}

export interface Statement {
  tokens: Token[];
  /** Offsets of the statement's text (first token to last, without the `;`). */
  start: number;
  end: number;
  text: string;
}

export class SqlLexError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(message);
    this.name = 'SqlLexError';
  }
}

const WORD_START = /[A-Za-z_\u0080-\uffff]/;
const WORD_PART = /[A-Za-z0-9_$\u0080-\uffff]/;

export function tokenize(sql: string): Token[] {
  const out: Token[] = [];
  const n = sql.length;
  let i = 0;
  while (i < n) {
    const c = sql[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v') {
      i++;
      continue;
    }
    // -- line comment
    if (c === '-' && sql[i + 1] === '-') {
      const nl = sql.indexOf('\n', i);
      i = nl < 0 ? n : nl + 1;
      continue;
    }
    // /* block comment */ (they nest, as in PostgreSQL's grammar which DuckDB's parser descends from)
    if (c === '/' && sql[i + 1] === '*') {
      let depth = 1;
      let j = i + 2;
      while (j < n && depth > 0) {
        if (sql[j] === '/' && sql[j + 1] === '*') {
          depth++;
          j += 2;
        } else if (sql[j] === '*' && sql[j + 1] === '/') {
          depth--;
          j += 2;
        } else j++;
      }
      if (depth > 0) throw new SqlLexError('unterminated /* comment', i);
      i = j;
      continue;
    }
    const start = i;
    // E'...' (backslash escapes) and '...' strings ('' is a quote)
    if ((c === 'e' || c === 'E') && sql[i + 1] === "'") {
      const { value, end } = readQuoted(sql, i + 1, "'", true);
      out.push({ kind: 'string', text: sql.slice(start, end), value, start, end });
      i = end;
      continue;
    }
    if (c === "'") {
      const { value, end } = readQuoted(sql, i, "'", false);
      out.push({ kind: 'string', text: sql.slice(start, end), value, start, end });
      i = end;
      continue;
    }
    if (c === '"') {
      const { value, end } = readQuoted(sql, i, '"', false);
      out.push({ kind: 'qident', text: sql.slice(start, end), value, start, end });
      i = end;
      continue;
    }
    // $tag$ ... $tag$ (dollar-quoted string) or $name / $1 (a parameter)
    if (c === '$') {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i, i + 66));
      if (tag) {
        const close = sql.indexOf(tag[0], i + tag[0].length);
        if (close < 0) throw new SqlLexError(`unterminated ${tag[0]} string`, i);
        const end = close + tag[0].length;
        out.push({
          kind: 'string',
          text: sql.slice(start, end),
          value: sql.slice(i + tag[0].length, close),
          start,
          end,
        });
        i = end;
        continue;
      }
      let j = i + 1;
      while (j < n && WORD_PART.test(sql[j]!)) j++;
      out.push({ kind: 'param', text: sql.slice(start, j), value: sql.slice(start, j), start, end: j });
      i = Math.max(j, i + 1);
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(sql[i + 1] ?? ''))) {
      let j = i;
      while (j < n && /[0-9A-Za-z_.]/.test(sql[j]!)) {
        // 1e-5, 1E+3
        if ((sql[j] === 'e' || sql[j] === 'E') && (sql[j + 1] === '-' || sql[j + 1] === '+')) j++;
        j++;
      }
      out.push({ kind: 'number', text: sql.slice(start, j), value: sql.slice(start, j), start, end: j });
      i = j;
      continue;
    }
    if (WORD_START.test(c)) {
      let j = i + 1;
      while (j < n && WORD_PART.test(sql[j]!)) j++;
      const text = sql.slice(start, j);
      out.push({ kind: 'word', text, value: text.toLowerCase(), start, end: j });
      i = j;
      continue;
    }
    out.push({ kind: 'punct', text: c, value: c, start, end: i + 1 });
    i++;
  }
  return out;
}

function readQuoted(sql: string, open: number, q: string, backslash: boolean): { value: string; end: number } {
  let j = open + 1;
  let value = '';
  for (;;) {
    if (j >= sql.length) throw new SqlLexError(`unterminated ${q === '"' ? 'quoted identifier' : 'string'}`, open);
    const ch = sql[j]!;
    if (backslash && ch === '\\' && j + 1 < sql.length) {
      value += sql[j + 1];
      j += 2;
      continue;
    }
    if (ch === q) {
      if (sql[j + 1] === q) {
        value += q;
        j += 2;
        continue;
      }
      return { value, end: j + 1 };
    }
    value += ch;
    j++;
  }
}

/** Splits a script into statements at top-level `;` (empty statements dropped). */
export function splitStatements(sql: string): Statement[] {
  const tokens = tokenize(sql);
  const out: Statement[] = [];
  let cur: Token[] = [];
  const flush = () => {
    if (cur.length) {
      const start = cur[0]!.start;
      const end = cur[cur.length - 1]!.end;
      out.push({ tokens: cur, start, end, text: sql.slice(start, end) });
    }
    cur = [];
  };
  for (const t of tokens) {
    if (t.kind === 'punct' && t.value === ';') flush();
    else cur.push(t);
  }
  flush();
  return out;
}

/** 1-based line and column of an offset. */
export function lineColumn(sql: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < sql.length; i++) {
    if (sql[i] === '\n') {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}
