import { DuckDBInstance } from '@duckdb/node-api';
const db = process.argv[2]!;
const inst = await DuckDBInstance.create(db, { access_mode: 'READ_ONLY', threads: '1' });
const c = await inst.connect();
const t = async (label: string, sql: string, p?: unknown[]) => { const s = performance.now(); const r = await c.runAndReadAll(sql, p as never); console.log(label, (performance.now() - s).toFixed(0), 'ms', r.currentRowCount); };
await t('literal', "select (ts - 5200904964156) // 192500000 b, count(*) from ftrace_event e where e.ts >= 5200904964156 and e.ts <= 5987953847656 group by 1");
await t('param  ', "select (ts - $1) // $2 b, count(*) from ftrace_event e where e.ts >= $1 and e.ts <= $3 group by 1", [5200904964156n, 192500000n, 5987953847656n]);
await t('literal narrow', "select count(*) from ftrace_event e where e.ts >= 5500904964156 and e.ts <= 5501004964156");
await t('param narrow', "select count(*) from ftrace_event e where e.ts >= $1 and e.ts <= $2", [5500904964156n, 5501004964156n]);
