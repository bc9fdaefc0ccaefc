/**
 * Redaction throughput and linearity.
 *
 * - mbPerSec: redactAll over ~1 MiB of realistic chat markdown (prose, code fences,
 *   lists, tables, bare URLs and markdown links, a few planted secrets).
 * - streamMbPerSec: the same text through StreamRedactor in 16-char chunks (LLM-sized).
 * - adversarial100kMs / adversarial400kMs: a 100 KB and a 400 KB input built from the
 *   patterns that break backtracking regexes (long token-like runs, nested brackets,
 *   many `[`/`(`, `](` chains, entity ladders, `eyJ`/`AKIA` runs, PEM headers without an
 *   END, `@`-heavy userinfo); linearityRatio = time(4x) / time(1x), ~4 when linear.
 */
import { redactAll } from "../src/messaging/security/redact.js";
import { StreamRedactor } from "../src/messaging/security/stream-redactor.js";

const MIB = 1024 * 1024;

/** Deterministic PRNG so every run measures the same text. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Planted secrets and the part of each that must never survive redaction. */
const PLANTED: ReadonlyArray<[string, string]> = [
  ["Found AKIAIOSFODNN7EXAMPLE in the env dump.\n", "IOSFODNN7EXAMPLE"],
  ["Token ghp_R4nd0mT0k3nV4lu3Xy9Zq8Wv7Ut6Sr5Qp4 was rotated.\n", "R4nd0mT0k3nV4lu3"],
  ["Header: Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl\n", "c2lnbmF0dXJl"],
  ["DB_PASSWORD=hunter2hunter2\n", "hunter2hunter2"],
  ["![pixel](https://tracker.example/p.gif?u=alice&k=s3cr3t)\n", "s3cr3t"],
];

const WORDS = [
  "the agent ran a quick check on the build and found that the deploy step failed because the config",
  "file was missing one value; after a retry it passed and the table below lists what changed in each",
  "service including latency error rate and cost per request for the region",
]
  .join(" ")
  .split(" ");

function realisticMarkdown(bytes: number): string {
  const r = rng(42);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const sentence = (): string => {
    const n = 6 + Math.floor(r() * 14);
    const ws: string[] = [];
    for (let k = 0; k < n; k++) ws.push(pick(WORDS));
    const s = ws.join(" ");
    return `${s.charAt(0).toUpperCase()}${s.slice(1)}.`;
  };
  const blocks: Array<() => string> = [
    () => `## ${sentence()}\n\n${sentence()} ${sentence()} ${sentence()}\n`,
    () => `${sentence()} See https://docs.example.com/guides/deploy#rollback for details.\n`,
    () =>
      `- ${sentence()}\n- ${sentence()} ([ref](https://github.com/acme/app/pull/${Math.floor(r() * 9999)}))\n`,
    () => `Search results: [open issues](https://github.com/acme/app/issues?q=is%3Aopen+label%3Abug).\n`,
    () =>
      "```ts\nexport async function retry<T>(fn: () => Promise<T>, tries = 3): Promise<T> {\n" +
      "  for (let i = 0; i < tries; i++) {\n    try { return await fn(); } catch (e) { await sleep(2 ** i * 100); }\n  }\n" +
      '  throw new Error("exhausted");\n}\n```\n',
    () => "```yaml\nservice:\n  name: api\n  replicas: 3\n  image: registry.example.com/api:1.4.2\n```\n",
    () =>
      "| service | p50 | p99 | errors |\n|---|---|---|---|\n" +
      `| api | ${Math.floor(r() * 90)}ms | ${Math.floor(r() * 900)}ms | 0.${Math.floor(r() * 9)}% |\n`,
    () => `Commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed the ${pick(WORDS)} path.\n`,
    () => `${sentence()} The dashboard is at https://grafana.example.com/d/abc123/api?orgId=1&from=now-6h.\n`,
  ];
  const parts: string[] = [];
  let size = 0;
  let n = 0;
  while (size < bytes) {
    const block = n % 97 === 96 ? pick(PLANTED)[0] : pick(blocks)();
    parts.push(block, "\n");
    size += block.length + 1;
    n++;
  }
  return parts.join("").slice(0, bytes);
}

function adversarial(bytes: number): string {
  const units = [
    "a".repeat(4000),
    "[".repeat(4000),
    "(".repeat(4000),
    "[[[(((]]])))".repeat(300),
    "](".repeat(2000),
    "](https://a.bc/?q".repeat(250),
    `sk-${"x".repeat(4000)}`,
    "=".repeat(4000),
    `https://${"a.".repeat(2000)}`,
    `https://${"b".repeat(4000)}`,
    "eyJa.".repeat(800),
    "AKIA".repeat(1000),
    "1".repeat(4000),
    "-----BEGIN PRIVATE KEY-----\n".repeat(150),
    "&#x26;t&#111;ken".repeat(250),
    `http://a:${"@".repeat(4000)}`,
    'password: "'.repeat(350),
    "Zq9+/".repeat(800),
  ];
  let out = "";
  let k = 0;
  while (out.length < bytes) out += `${units[k++ % units.length]} `;
  return out.slice(0, bytes);
}

function timeBest(fn: () => void, runs: number): number {
  let best = Number.POSITIVE_INFINITY;
  for (let k = 0; k < runs; k++) {
    const t = performance.now();
    fn();
    best = Math.min(best, performance.now() - t);
  }
  return best;
}

export default async (): Promise<Record<string, number>> => {
  const doc = realisticMarkdown(MIB);
  redactAll(doc); // warm up
  const docMs = timeBest(() => redactAll(doc), 5);

  const redacted = redactAll(doc);
  const leaked = PLANTED.filter(([, body]) => doc.includes(body) && redacted.includes(body)).length;

  const streamText = doc.slice(0, MIB / 4);
  let streamed = "";
  const streamMs = timeBest(() => {
    const r = new StreamRedactor();
    streamed = "";
    for (let i = 0; i < streamText.length; i += 16) streamed += r.push(streamText.slice(i, i + 16));
    streamed += r.flush();
  }, 3);

  const adv1 = adversarial(100_000);
  const adv4 = adversarial(400_000);
  redactAll(adv1);
  const adv1Ms = timeBest(() => redactAll(adv1), 5);
  const adv4Ms = timeBest(() => redactAll(adv4), 5);

  return {
    mbPerSec: Number((doc.length / MIB / (docMs / 1000)).toFixed(2)),
    realisticMs: Number(docMs.toFixed(1)),
    streamMbPerSec: Number((streamText.length / MIB / (streamMs / 1000)).toFixed(2)),
    adversarial100kMs: Number(adv1Ms.toFixed(1)),
    adversarial400kMs: Number(adv4Ms.toFixed(1)),
    linearityRatio: Number((adv4Ms / adv1Ms).toFixed(2)),
    plantedSecretsLeaked: leaked,
    streamMatchesBatch: streamed === redactAll(streamText) ? 1 : 0,
  };
};
