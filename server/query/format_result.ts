/**
 * A query result as text, for `stallscope query`: an aligned table (for
 * reading), CSV (RFC 4180, for spreadsheets and scripts) or JSON (an array
 * of row objects, integers exact however large).
 */
import type { QueryResult } from './sandbox.ts';

export type ResultFormat = 'table' | 'csv' | 'json';

const INTEGER_TYPE = /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT)$/;
const NUMERIC_TYPE =
  /^(TINYINT|SMALLINT|INTEGER|BIGINT|HUGEINT|UTINYINT|USMALLINT|UINTEGER|UBIGINT|UHUGEINT|FLOAT|DOUBLE|DECIMAL.*)$/;

/** A cell as text: NULL as empty, nested values as JSON. */
export function cellText(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

export function formatResult(r: QueryResult, format: ResultFormat): string {
  switch (format) {
    case 'csv':
      return toCsv(r);
    case 'json':
      return toJsonRows(r);
    default:
      return toTable(r);
  }
}

function csvField(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function toCsv(r: QueryResult): string {
  const lines = [r.columns.map((c) => csvField(c.name)).join(',')];
  for (let i = 0; i < r.rowCount; i++) lines.push(r.cols.map((col) => csvField(cellText(col[i]))).join(','));
  return `${lines.join('\r\n')}\r\n`;
}

function toJsonRows(r: QueryResult): string {
  const out: string[] = [];
  for (let i = 0; i < r.rowCount; i++) {
    const fields = r.columns.map((c, k) => {
      const v = r.cols[k]![i];
      // Integers past 2^53 travel as decimal strings: write them back as the numbers they are.
      const text =
        typeof v === 'string' && INTEGER_TYPE.test(c.type) && /^-?\d+$/.test(v) ? v : JSON.stringify(v ?? null);
      return `${JSON.stringify(c.name)}: ${text}`;
    });
    out.push(`  {${fields.join(', ')}}`);
  }
  return out.length ? `[\n${out.join(',\n')}\n]\n` : '[]\n';
}

const MAX_CELL = 60;

function toTable(r: QueryResult): string {
  if (r.columns.length === 0) return `(no result)\n`;
  const cells = r.cols.map((col) =>
    col.slice(0, r.rowCount).map((v) => {
      const s = v === null || v === undefined ? 'NULL' : cellText(v).replace(/\n/g, '\\n');
      return s.length > MAX_CELL ? `${s.slice(0, MAX_CELL - 1)}…` : s;
    }),
  );
  const widths = r.columns.map((c, k) => Math.max(c.name.length, ...cells[k]!.map((s) => s.length)));
  const right = r.columns.map((c) => NUMERIC_TYPE.test(c.type));
  const pad = (s: string, k: number) => (right[k] ? s.padStart(widths[k]!) : s.padEnd(widths[k]!));
  const lines = [
    r.columns
      .map((c, k) => pad(c.name, k))
      .join('  ')
      .trimEnd(),
    widths.map((w) => '-'.repeat(w)).join('  '),
  ];
  for (let i = 0; i < r.rowCount; i++)
    lines.push(
      r.columns
        .map((_, k) => pad(cells[k]![i]!, k))
        .join('  ')
        .trimEnd(),
    );
  lines.push(
    `(${r.rowCount.toLocaleString('en')} row${r.rowCount === 1 ? '' : 's'}${r.truncated ? ', more not shown' : ''})`,
  );
  return `${lines.join('\n')}\n`;
}
