// Loaded into the benchmarked server (`node --expose-gc --import ./scripts/bench/memory-probe.mjs`,
// spawned with an IPC channel): asked 'memory', it runs full garbage collections and answers
// process.memoryUsage() plus the resident size before collecting, so the benchmark measures
// memory that is retained, not garbage no collection has reached yet. Nothing else changes.
process.channel?.unref()
process.on('message', (message) => {
  if (message !== 'memory') return
  const rssBeforeGc = process.memoryUsage.rss()
  for (let i = 0; i < 3; i++) globalThis.gc?.()
  process.send?.({ ...process.memoryUsage(), rssBeforeGc })
})
