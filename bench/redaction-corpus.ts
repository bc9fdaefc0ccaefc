/**
 * Writes fixtures/redaction/corpus.json, the labelled corpus behind bench/redaction-quality.bench.ts:
 * planted credentials (every kind of test/helpers/credential-disguises.ts in every disguise, three
 * samples per pair) and benign strings that look like secrets to a careless scanner (placeholders,
 * package integrity hashes, git SHAs, UUIDs, digests, base64 fixtures, code). Deterministic: a
 * fixed seed, so rerunning it rewrites the same file. `npx tsx bench/redaction-corpus.ts`.
 */
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { credentialDisguiseList } from "../test/helpers/credential-disguises.js";
import { type Rng, seededRng } from "../test/helpers/seeded-rng.js";

export const CORPUS_SEED = 1414;

export interface PlantedEntry {
  kind: string;
  disguise: string;
  /** The message pieces (several for a stream split). */
  chunks: string[];
  /** The part of the credential that must not be visible after redaction. */
  needle: string;
}

export interface BenignEntry {
  category: string;
  text: string;
}

export interface Corpus {
  seed: number;
  planted: PlantedEntry[];
  benign: BenignEntry[];
}

const HEX = "0123456789abcdef";
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

function chars(rng: Rng, alphabet: string, n: number): string {
  let s = "";
  for (let k = 0; k < n; k++) s += alphabet[Math.floor(rng() * alphabet.length)];
  return s;
}

function uuid(rng: Rng): string {
  const h = chars(rng, HEX, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20)}`;
}

/** Base64 of `bytes` random bytes (a hash or a binary blob, as a registry prints it). */
function randomB64(rng: Rng, bytes: number): string {
  const raw = Buffer.alloc(bytes);
  for (let k = 0; k < bytes; k++) raw[k] = Math.floor(rng() * 256);
  return raw.toString("base64");
}

const WORDS = [
  "deploy",
  "build",
  "cache",
  "worker",
  "api",
  "release",
  "config",
  "metrics",
  "auth",
  "billing",
];

function word(rng: Rng): string {
  return WORDS[Math.floor(rng() * WORDS.length)] as string;
}

/** Templates of benign text, each drawing its variable parts from `rng`. */
const BENIGN_TEMPLATES: ReadonlyArray<readonly [string, (rng: Rng) => string]> = [
  ["placeholder", () => "API_KEY=YOUR_API_KEY_HERE"],
  ["placeholder", (r) => `export ${word(r).toUpperCase()}_TOKEN=<your-token>`],
  ["placeholder", () => "OPENAI_API_KEY=sk-...your-key..."],
  ["placeholder", () => 'password: "********"'],
  ["placeholder", (r) => `${word(r).toUpperCase()}_SECRET=xxxxxxxxxxxxxxxx`],
  ["placeholder", () => "Authorization: Bearer <token>"],
  ["placeholder", () => "Authorization: Bearer $GITHUB_TOKEN"],
  ["placeholder", () => 'api_key = "REPLACE_ME"'],
  ["placeholder", () => "AWS_SECRET_ACCESS_KEY=your-secret-access-key"],
  ["placeholder", () => "AWS_ACCESS_KEY_ID=YOUR_ACCESS_KEY_ID"],
  ["placeholder", () => `token: "\${{ secrets.NPM_TOKEN }}"`],
  ["placeholder", () => "DB_PASSWORD=changeme"],
  ["placeholder", () => "client_secret: <client-secret>"],
  ["placeholder", () => "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"],
  ["placeholder", () => "SLACK_BOT_TOKEN=xoxb-your-bot-token"],
  ["placeholder", () => 'STRIPE_SECRET_KEY="sk_test_..."'],
  ["placeholder", () => "password=<password>"],
  ["placeholder", () => "secret_key = 'your-secret-key-here'"],
  ["placeholder", () => "Set `API_KEY` to the value from the dashboard (it starts with `sk-`)."],
  ["integrity", (r) => `"integrity": "sha512-${randomB64(r, 64)}"`],
  ["integrity", (r) => `integrity sha512-${randomB64(r, 64)}`],
  [
    "integrity",
    (r) => `  resolved "https://registry.yarnpkg.com/${word(r)}/-/${word(r)}-1.2.3.tgz#${chars(r, HEX, 40)}"`,
  ],
  [
    "integrity",
    (r) => `<script src="https://cdn.example.com/lib.js" integrity="sha384-${randomB64(r, 48)}"></script>`,
  ],
  ["git-sha", (r) => `Commit ${chars(r, HEX, 40)} fixed the ${word(r)} path.`],
  ["git-sha", (r) => `git checkout ${chars(r, HEX, 7)} && git cherry-pick ${chars(r, HEX, 40)}`],
  ["git-sha", (r) => `https://github.com/acme/${word(r)}/commit/${chars(r, HEX, 40)}`],
  ["uuid", (r) => `request id ${uuid(r)} failed with 503`],
  ["uuid", (r) => `{"id": "${uuid(r)}", "tenant": "${uuid(r)}"}`],
  ["digest", (r) => `image: registry.example.com/${word(r)}@sha256:${chars(r, HEX, 64)}`],
  ["digest", (r) => `sha256:${chars(r, HEX, 64)}  ${word(r)}.tar.gz`],
  ["digest", (r) => `${chars(r, HEX, 64)}  release-${word(r)}.zip`],
  [
    "base64-fixture",
    (r) =>
      `const fixture = "${Buffer.from(`hello ${word(r)} world, this is a test fixture for the ${word(r)} parser`).toString("base64")}";`,
  ],
  [
    "base64-fixture",
    (r) =>
      `echo ${Buffer.from(`{"user":"${word(r)}","roles":["reader"],"ok":true}`).toString("base64")} | base64 -d`,
  ],
  [
    "base64-fixture",
    (r) =>
      `data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk${chars(r, ALNUM, 8)}AAAAABJRU5ErkJggg==`,
  ],
  [
    "base64-fixture",
    (r) =>
      `expect(decode("${Buffer.from(`The ${word(r)} service returned an unexpected payload`).toString("base64")}")).toBe(x);`,
  ],
  ["code", (r) => `const token = await get${word(r).replace(/^./, (c) => c.toUpperCase())}Token();`],
  ["code", () => 'password = os.environ["DB_PASSWORD"]'],
  ["code", () => "if (token === undefined) throw new Error('missing token');"],
  ["code", () => "api_key = config.api_key"],
  ["code", () => "secret: process.env.WEBHOOK_SECRET,"],
  ["code", (r) => `def rotate_${word(r)}_secret(client, secret_id):`],
  ["code", () => "export const TOKEN_TTL_SECONDS = 3600;"],
  ["code", (r) => `kubectl get secret ${word(r)}-tls -o jsonpath='{.data.tls\\.crt}'`],
  ["prose", (r) => `The ${word(r)} token expires after one hour; refresh it before the ${word(r)} job runs.`],
  ["prose", () => "Rotate your secret keys every 90 days and never commit them."],
  ["prose", () => "Use a bearer token in the Authorization header, not a query parameter."],
  ["url", (r) => `See https://docs.example.com/${word(r)}/guide?page=2&sort=asc#setup`],
  [
    "url",
    (r) => `[the ${word(r)} dashboard](https://grafana.example.com/d/${chars(r, ALNUM, 9)}/api?orgId=1)`,
  ],
  ["url", (r) => `https://github.com/acme/${word(r)}/pull/${Math.floor(r() * 9999)}/files`],
  ["path", (r) => `/usr/local/lib/node_modules/@acme/${word(r)}-cli/dist/commands/${word(r)}/index.js`],
  ["identifier", () => "AbstractSingletonProxyFactoryBeanConfigurationHandler"],
  ["identifier", (r) => `arn:aws:iam::${chars(r, "0123456789", 12)}:role/${word(r)}-deployer`],
  ["identifier", (r) => `i-${chars(r, HEX, 17)} in subnet-${chars(r, HEX, 17)}`],
  [
    "identifier",
    (r) =>
      `${word(r)}-${chars(r, "abcdefghijklmnopqrstuvwxyz0123456789", 10)}-${chars(r, "abcdefghijklmnopqrstuvwxyz0123456789", 5)}`,
  ],
  [
    "version",
    (r) => `"${word(r)}": "^${Math.floor(r() * 20)}.${Math.floor(r() * 40)}.${Math.floor(r() * 9)}"`,
  ],
];

/** At least `count` benign strings: every template in turn with fresh random parts, deduplicated. */
function benignEntries(rng: Rng, count: number): BenignEntry[] {
  const out: BenignEntry[] = [];
  const seen = new Set<string>();
  for (let round = 0; out.length < count && round < 100; round++) {
    for (const [category, make] of BENIGN_TEMPLATES) {
      const text = make(rng);
      if (seen.has(text)) continue;
      seen.add(text);
      out.push({ category, text });
    }
  }
  return out;
}

export function buildCorpus(): Corpus {
  const planted = credentialDisguiseList(CORPUS_SEED, 3).map((s) => ({
    kind: s.kind,
    disguise: s.disguise,
    chunks: [...s.chunks],
    needle: s.needle,
  }));
  const benign = benignEntries(seededRng(CORPUS_SEED), 420);
  return { seed: CORPUS_SEED, planted, benign };
}

export const CORPUS_PATH = fileURLToPath(new URL("../fixtures/redaction/corpus.json", import.meta.url));

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const corpus = buildCorpus();
  writeFileSync(CORPUS_PATH, `${JSON.stringify(corpus, null, 1)}\n`);
  process.stdout.write(`wrote ${corpus.planted.length} planted and ${corpus.benign.length} benign entries\n`);
}
