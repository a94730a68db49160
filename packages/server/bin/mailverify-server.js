#!/usr/bin/env node
// The `mailverify-server` command (src/cli/main.ts).
import { main } from "../dist/main.js";

process.exitCode = await main(process.argv.slice(2));
