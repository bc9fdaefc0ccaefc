/**
 * A small strict parser of the Prometheus text exposition format (version 0.0.4), for the tests
 * that read /metrics. The one package on the registry for it folds a labelled histogram's series
 * into one and loses their labels, counts and sums, which is exactly what these tests check, so
 * the format is read here instead: anything outside the format throws, naming the line.
 *
 * Checked: HELP/TYPE lines (at most one each per family, TYPE before the family's samples), metric
 * and label names, quoted label values with their three escapes, numeric values (NaN, ±Inf),
 * samples that belong to their family (a histogram's _bucket/_sum/_count, a summary's _sum/_count),
 * no series twice, every histogram's buckets cumulative with an le="+Inf" bucket equal to _count.
 */

export type MetricType = "counter" | "gauge" | "histogram" | "summary" | "untyped";

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: MetricType;
  help: string;
  samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set<MetricType>(["counter", "gauge", "histogram", "summary", "untyped"]);

export class ExpositionError extends Error {}

function fail(lineNo: number, line: string, why: string): never {
  throw new ExpositionError(`line ${lineNo}: ${why}: ${JSON.stringify(line)}`);
}

/** As Prometheus reads a value (Go's ParseFloat): NaN and Inf in any case (prom-client writes "Nan"). */
function parseValue(text: string, lineNo: number, line: string): number {
  if (/^nan$/i.test(text)) return Number.NaN;
  if (/^\+?inf(inity)?$/i.test(text)) return Number.POSITIVE_INFINITY;
  if (/^-inf(inity)?$/i.test(text)) return Number.NEGATIVE_INFINITY;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) fail(lineNo, line, `not a number "${text}"`);
  return Number(text);
}

/** `name{a="x",b="y"} value [timestamp]` → its parts. */
function parseSampleLine(line: string, lineNo: number): Sample {
  const brace = line.indexOf("{");
  const space = line.search(/[ \t]/);
  const nameEnd = brace >= 0 && (space < 0 || brace < space) ? brace : space;
  if (nameEnd <= 0) fail(lineNo, line, "no value");
  const name = line.slice(0, nameEnd);
  if (!METRIC_NAME.test(name)) fail(lineNo, line, "bad metric name");
  const labels: Record<string, string> = {};
  let i = nameEnd;
  if (line[i] === "{") {
    i += 1;
    for (;;) {
      while (line[i] === " ") i += 1;
      if (line[i] === "}") {
        i += 1;
        break;
      }
      const eq = line.indexOf("=", i);
      if (eq < 0) fail(lineNo, line, "label without =");
      const labelName = line.slice(i, eq).trim();
      if (!LABEL_NAME.test(labelName)) fail(lineNo, line, `bad label name "${labelName}"`);
      if (labelName in labels) fail(lineNo, line, `label "${labelName}" twice`);
      i = eq + 1;
      if (line[i] !== '"') fail(lineNo, line, "label value not quoted");
      i += 1;
      let value = "";
      for (;;) {
        const c = line[i];
        if (c === undefined) fail(lineNo, line, "unterminated label value");
        if (c === '"') break;
        if (c === "\\") {
          const next = line[i + 1];
          if (next === "\\") value += "\\";
          else if (next === '"') value += '"';
          else if (next === "n") value += "\n";
          else fail(lineNo, line, "bad escape in label value");
          i += 2;
          continue;
        }
        value += c;
        i += 1;
      }
      labels[labelName] = value;
      i += 1;
      while (line[i] === " ") i += 1;
      if (line[i] === ",") i += 1;
      else if (line[i] !== "}") fail(lineNo, line, "expected , or } after a label");
    }
  }
  const rest = line
    .slice(i)
    .trim()
    .split(/[ \t]+/);
  if (rest.length < 1 || rest.length > 2 || rest[0] === "")
    fail(lineNo, line, "expected a value and an optional timestamp");
  if (rest[1] !== undefined && !/^-?\d+$/.test(rest[1])) fail(lineNo, line, "bad timestamp");
  return { name, labels, value: parseValue(rest[0] as string, lineNo, line) };
}

/** The family a sample name belongs to, given the families declared so far. */
function familyOf(sample: string, families: Map<string, Family>): Family | undefined {
  const exact = families.get(sample);
  if (exact) return exact;
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (!sample.endsWith(suffix)) continue;
    const f = families.get(sample.slice(0, -suffix.length));
    if (f?.type === "histogram" || (f?.type === "summary" && suffix !== "_bucket")) return f;
  }
  return undefined;
}

const seriesKey = (s: Sample) =>
  `${s.name}{${Object.entries(s.labels)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(",")}}`;

export function parseExposition(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  const lines = text.split("\n");
  lines.forEach((line, index) => {
    const lineNo = index + 1;
    if (line.trim() === "") return;
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!m) return; // a plain comment
      const [, kind, name = "", rest = ""] = m;
      if (!METRIC_NAME.test(name)) fail(lineNo, line, "bad metric name");
      let family = families.get(name);
      if (kind === "TYPE") {
        if (!TYPES.has(rest as MetricType)) fail(lineNo, line, `unknown type "${rest}"`);
        if (family?.samples.length) fail(lineNo, line, "TYPE after the family's samples");
        if (family && family.type !== "untyped") fail(lineNo, line, "TYPE twice");
        if (family) family.type = rest as MetricType;
        else families.set(name, { name, type: rest as MetricType, help: "", samples: [] });
        return;
      }
      if (family?.help) fail(lineNo, line, "HELP twice");
      if (!family) {
        family = { name, type: "untyped", help: "", samples: [] };
        families.set(name, family);
      }
      family.help = rest;
      return;
    }
    const sample = parseSampleLine(line, lineNo);
    const family = familyOf(sample.name, families);
    if (!family) fail(lineNo, line, "a sample of no declared family");
    const key = seriesKey(sample);
    if (seen.has(key)) fail(lineNo, line, "the same series twice");
    seen.add(key);
    family.samples.push(sample);
  });
  for (const family of families.values()) if (family.type === "histogram") checkHistogram(family);
  return families;
}

/** Per label set: buckets cumulative by le, an +Inf bucket, and it equals _count. */
function checkHistogram(family: Family): void {
  const groups = new Map<string, { buckets: [number, number][]; count?: number }>();
  for (const s of family.samples) {
    const { le, ...rest } = s.labels;
    const key = seriesKey({ name: "", labels: rest, value: 0 });
    const group = groups.get(key) ?? { buckets: [] };
    groups.set(key, group);
    if (s.name.endsWith("_bucket")) {
      if (le === undefined) throw new ExpositionError(`${family.name}: a bucket without le`);
      group.buckets.push([le === "+Inf" ? Number.POSITIVE_INFINITY : Number(le), s.value]);
    } else if (s.name.endsWith("_count")) group.count = s.value;
  }
  for (const [key, g] of groups) {
    const sorted = [...g.buckets].sort((a, b) => a[0] - b[0]);
    for (let i = 1; i < sorted.length; i += 1)
      if ((sorted[i]?.[1] ?? 0) < (sorted[i - 1]?.[1] ?? 0))
        throw new ExpositionError(`${family.name}${key}: buckets not cumulative`);
    const inf = sorted.at(-1);
    if (!inf || inf[0] !== Number.POSITIVE_INFINITY)
      throw new ExpositionError(`${family.name}${key}: no +Inf bucket`);
    if (g.count !== inf[1]) throw new ExpositionError(`${family.name}${key}: +Inf bucket is not _count`);
  }
}

/** The value of one series, or undefined when it is not exposed. Labels must match exactly. */
export function sampleValue(
  families: Map<string, Family>,
  sampleName: string,
  labels: Record<string, string> = {},
): number | undefined {
  const family = familyOf(sampleName, families);
  const want = seriesKey({ name: sampleName, labels, value: 0 });
  return family?.samples.find((s) => seriesKey(s) === want)?.value;
}

/** Every series of a sample name, as `labels → value`. */
export function seriesOf(families: Map<string, Family>, sampleName: string): Sample[] {
  return familyOf(sampleName, families)?.samples.filter((s) => s.name === sampleName) ?? [];
}
