// Preloaded by measure.mjs: reports the process's peak RSS (KB) on stderr when it exits.
process.on('exit', () => process.stderr.write(`max-rss ${process.resourceUsage().maxRSS}\n`));
