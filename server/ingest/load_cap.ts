/**
 * The load's DuckDB cap, raised as the load opens shape tables
 * (ingest_memory.ts withLoadFloor): one place for the store worker's load
 * and the in-process one, so both keep a trace of many event kinds.
 */
import type { Engine } from '../engine/engine.ts';
import type { ModelStore } from '../model/model_store.ts';
import { withLoadFloor } from './ingest_memory.ts';

/** Installs on `store` the hook that raises `engine`'s memory_limit from `loadLimit` when its shape tables need more. */
export function raiseCapWithShapeTables(store: ModelStore, engine: Engine, loadLimit: string): void {
  let limit = loadLimit;
  store.onShapeTable = async (shapeColumns) => {
    const raised = withLoadFloor(limit, shapeColumns);
    if (raised === null) return;
    limit = raised;
    await engine.exec(`SET memory_limit = '${raised}'`);
  };
}
