// Closing an engine while its queries run: DuckDB deadlocked when the
// connection was closed under a running query (engine.ts, close). The close
// now waits for them; the queries end with their results.
import { describe, expect, it } from 'vitest';
import { openDuckDb } from './engine.ts';

describe('engine close with queries running', () => {
  it('the queries finish, then the database closes', async () => {
    for (let round = 0; round < 5; round++) {
      const engine = await openDuckDb(':memory:', { threads: 1 });
      // ~0.1-0.3 s of work each on this VM, so the close lands inside them
      const counting = engine.query<{ n: bigint }>('SELECT count(*) AS n FROM range(20000000) t(i) WHERE i % 7 = 3');
      const creating = engine.exec('CREATE TABLE t AS SELECT * FROM range(2000000)');
      engine.close();
      const outcome = await Promise.race([
        Promise.all([counting, creating]).then(([rows]) => rows[0]!.n),
        new Promise<string>((r) => setTimeout(() => r('still running after 20 s'), 20_000).unref()),
      ]);
      expect(outcome).toBe(2857143n);
      // closed once they ended
      await expect(engine.query('SELECT 1')).rejects.toThrow();
    }
  }, 120_000);

  it('the further connections (beside, one per lane) close with their engine, after their queries too', async () => {
    for (let round = 0; round < 3; round++) {
      const engine = await openDuckDb(':memory:', { threads: 1 });
      await engine.exec('CREATE TABLE t AS SELECT * FROM range(1000) r(i)');
      const side = await engine.beside();
      // one connection per lane: lane 1 again is the same, lane 2 (also asked of a lane) another
      const lane2 = await side.beside(2);
      expect(await engine.beside()).toBe(side);
      expect(await engine.beside(2)).toBe(lane2);
      expect(lane2).not.toBe(side);
      // the second connection sees the same database; its close() leaves both open
      side.close();
      lane2.close();
      expect((await side.query<{ n: bigint }>('SELECT count(*) AS n FROM t'))[0]!.n).toBe(1000n);
      expect((await lane2.query<{ n: bigint }>('SELECT count(*) AS n FROM t'))[0]!.n).toBe(1000n);
      const counting = side.query<{ n: bigint }>('SELECT count(*) AS n FROM range(20000000) t(i) WHERE i % 7 = 3');
      const first = engine.query<{ n: bigint }>('SELECT sum(i) AS n FROM t');
      engine.close();
      const outcome = await Promise.race([
        Promise.all([counting, first]).then(([a, b]) => [a[0]!.n, b[0]!.n]),
        new Promise<string>((r) => setTimeout(() => r('still running after 20 s'), 20_000).unref()),
      ]);
      expect(outcome).toEqual([2857143n, 499500n]);
      await expect(side.query('SELECT 1')).rejects.toThrow();
      await expect(lane2.query('SELECT 1')).rejects.toThrow();
      await expect(engine.query('SELECT 1')).rejects.toThrow();
    }
  }, 120_000);
});
