// Preloaded (node --expose-gc --import) into a server a test measures: on
// SIGUSR2 it collects garbage and prints the live heap, so a test can tell
// memory kept from garbage not yet collected.
process.on('SIGUSR2', () => {
  globalThis.gc?.();
  globalThis.gc?.();
  const m = process.memoryUsage();
  process.stderr.write(
    `\nLIVE_HEAP_KB=${Math.round((m.heapUsed + m.external) / 1024)} RSS_KB=${Math.round(m.rss / 1024)}\n`,
  );
});
