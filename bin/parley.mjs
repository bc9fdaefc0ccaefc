#!/usr/bin/env node
// The installed `parley` command runs the compiled gateway (`npm start` builds it first).
import { existsSync } from "node:fs";

const entry = new URL("../dist/gateway/main.js", import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write("parley: not built yet; run `npm run build` (npm start does this for you)\n");
  process.exit(2);
}
await import(entry.href);
