/**
 * redactForDisplay throughput on a realistic Markdown corpus (prose, emphasis, links, code, a few
 * planted keys), and the time(4 MiB)/time(1 MiB) ratio (linear scaling reads ~4, target <= 4.5).
 */
import { redactForDisplay } from "../src/messaging/security/display-safety.js";

const MIB = 1024 * 1024;
const BLOCKS = [
  "The deploy finished in **42 s**; see [the run](https://ci.example.com/runs/1234) for details.\n\n",
  "- `npm test` passed\n- _lint_ clean\n- cache hit ratio 93%\n\n",
  '```ts\nconst client = new Client({ region: "eu-west-1" });\nawait client.send(cmd);\n```\n\n',
  "| service | status |\n|---|---|\n| api | ok |\n| worker | degraded |\n\n",
  "Rotate the key AKIA**IOSFODNN7EXAMPLE** before Friday, and never paste ghp_ tokens in chat.\n\n",
  "日本語のテキストも混ざります。Emoji too 🚀 and a long-ish sentence that wraps across the line.\n\n",
];

function corpus(bytes: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const block = BLOCKS[i % BLOCKS.length] as string;
    parts.push(block);
    size += Buffer.byteLength(block);
  }
  return parts.join("");
}

function time(text: string): number {
  // Paragraph-sized calls, as a renderer seals messages, not one giant string.
  const parts = text.split("\n\n");
  const t0 = performance.now();
  for (const p of parts) redactForDisplay(p);
  return performance.now() - t0;
}

/** One live bubble re-redacted whole on every edit, as a renderer does (finding 5: 313 ms per edit). */
function perEditMs(bubble: string): number {
  let best = Number.POSITIVE_INFINITY;
  for (let k = 0; k < 20; k++) {
    const t0 = performance.now();
    redactForDisplay(bubble);
    best = Math.min(best, performance.now() - t0);
  }
  return best;
}

export default async function bench() {
  const one = corpus(MIB);
  const four = corpus(4 * MIB);
  time(one); // warm-up
  const t1 = Math.min(time(one), time(one), time(one));
  const t4 = Math.min(time(four), time(four));
  const bubble = one.slice(0, 15_800);
  return {
    mbPerSec: Number((Buffer.byteLength(one) / MIB / (t1 / 1000)).toFixed(2)),
    msPerMiB: Number(t1.toFixed(1)),
    ratio4to1: Number((t4 / t1).toFixed(2)),
    bubble15k8MsPerEdit: Number(perEditMs(bubble).toFixed(2)),
    targetMbPerSec: 50,
  };
}
