#!/usr/bin/env node
// The `mailverify` command (src/cli/main.ts).
import "../dist/cli.js";
