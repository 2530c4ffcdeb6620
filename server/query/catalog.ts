/**
 * What a trace's database holds, for the query page's completion and for
 * the field filters and search: every user-facing table and view (names not
 * starting with `_`), its columns and types, and the descriptions that
 * queries/schema.sql gives them in its comments.
 */
import { readFileSync } from 'node:fs';
import { resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DuckDBConnection } from '@duckdb/node-api';
import { DETECTOR_MACROS_FILE } from '../findings/detector_registry.ts';
import { TYPED_TABLES } from '../model/typed_tables.ts';
import { readRows } from './sandbox.ts';
import type { CatalogTable, Catalog } from '../../shared/contract/query.ts';

export const SCHEMA_FILE = resolve(dirname(fileURLToPath(import.meta.url)), '../../queries/schema.sql');

export type { CatalogColumn, CatalogTable, Catalog } from '../../shared/contract/query.ts';
/** Columns every typed event table starts with (not fields). */
export const COMMON_EVENT_COLUMNS = new Set(['id', 'ts', 'cpu', 'utid']);

const TYPED = new Set<string>(TYPED_TABLES);

export async function readCatalog(conn: DuckDBConnection): Promise<Catalog> {
  const rows = await readRows<{ table_name: string; table_type: string; column_name: string; data_type: string }>(
    conn,
    `SELECT t.table_name, t.table_type, c.column_name, c.data_type
     FROM information_schema.tables t JOIN information_schema.columns c USING (table_catalog, table_schema, table_name)
     WHERE t.table_schema = 'main' AND t.table_name NOT LIKE '\\_%' ESCAPE '\\'
     ORDER BY t.table_name, c.ordinal_position`,
  );
  const docs = schemaDocs();
  const byName = new Map<string, CatalogTable>();
  for (const r of rows) {
    let t = byName.get(r.table_name);
    if (!t) {
      const doc = docs.get(r.table_name);
      t = {
        name: r.table_name,
        kind: r.table_type === 'VIEW' ? 'view' : 'table',
        description: doc?.description,
        columns: [],
        typed: TYPED.has(r.table_name),
      };
      byName.set(r.table_name, t);
    }
    t.columns.push({
      name: r.column_name,
      type: r.data_type,
      description: docs.get(r.table_name)?.columns.get(r.column_name),
    });
  }
  return { tables: [...byName.values()], macros: macroDocs() };
}

interface TableDoc {
  description: string;
  columns: Map<string, string>;
}

let docsCache: Map<string, TableDoc> | null = null;

/**
 * Descriptions from queries/schema.sql: the `--` block right above each
 * CREATE TABLE/VIEW, and the `-- ...` comment after each column.
 */
export function schemaDocs(): Map<string, TableDoc> {
  if (docsCache) return docsCache;
  const out = new Map<string, TableDoc>();
  const lines = readFileSync(SCHEMA_FILE, 'utf8').split('\n');
  let comment: string[] = [];
  let current: TableDoc | null = null;
  for (const line of lines) {
    const create = /^CREATE (?:TABLE|VIEW|OR REPLACE VIEW) (\w+)/.exec(line);
    if (create) {
      current = { description: comment.join(' ').trim(), columns: new Map() };
      out.set(create[1]!, current);
      comment = [];
      continue;
    }
    const c = /^--\s?(.*)$/.exec(line);
    if (c) {
      if (!current) comment.push(c[1]!);
      else if (!/^\s*$/.test(c[1]!)) {
        current = null;
        comment = [c[1]!];
      }
      continue;
    }
    if (/^\s*$/.test(line) || /^\);?\s*$/.test(line)) {
      if (/^\);/.test(line)) current = null;
      comment = [];
      continue;
    }
    if (current) {
      // `  name TYPE, -- what it is` (several columns may share a line and a comment)
      const m = /^\s*(.*?)\s*--\s*(.*)$/.exec(line);
      const defs = (m ? m[1]! : line)
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      for (const d of defs) {
        const name = /^"?(\w+)"?\s+[A-Z]/.exec(d)?.[1];
        if (name && m) current.columns.set(name, m[2]!.trim());
      }
    }
  }
  docsCache = out;
  return out;
}

let macrosCache: Catalog['macros'] | null = null;

function macroDocs(): Catalog['macros'] {
  if (macrosCache) return macrosCache;
  const text = readFileSync(DETECTOR_MACROS_FILE, 'utf8').split('\n');
  const out: Catalog['macros'] = [];
  let comment: string[] = [];
  for (const line of text) {
    const m = /^CREATE OR REPLACE TEMP MACRO (\w+)\(([^)]*)\)/.exec(line);
    if (m) {
      out.push({
        name: m[1]!,
        params: m[2]!,
        description: comment
          .filter((c) => !c.startsWith('@'))
          .join(' ')
          .trim(),
      });
      comment = [];
    } else if (/^--/.test(line)) comment.push(line.replace(/^--\s?/, ''));
    else if (line.trim() === '') comment = [];
  }
  macrosCache = out;
  return out;
}
