// Preloaded (node --import) into a child whose memory a test measures: prints
// the process's peak resident set size (worker threads included) as it exits.
process.on('exit', () => {
  process.stderr.write(`\nPEAK_RSS_KB=${process.resourceUsage().maxRSS}\n`);
});
