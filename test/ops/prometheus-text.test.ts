/** The test's own exposition parser: what it accepts, and that it refuses what is not the format. */
import { describe, expect, it } from "vitest";
import { GatewayMetrics } from "../../src/gateway/ops/metrics.js";
import { ExpositionError, parseExposition, sampleValue, seriesOf } from "./prometheus-text.js";

describe("the strict text-format parser", () => {
  it("reads counters, labelled histograms and escaped label values", () => {
    const m = parseExposition(
      [
        "# HELP a_total Things.",
        "# TYPE a_total counter",
        'a_total{c="w",q="say \\"hi\\"\\n"} 3',
        "# TYPE h_seconds histogram",
        'h_seconds_bucket{le="1",c="w"} 0',
        'h_seconds_bucket{le="+Inf",c="w"} 2',
        'h_seconds_sum{c="w"} 3.5',
        'h_seconds_count{c="w"} 2',
        'h_seconds_bucket{le="1",c="t"} 1',
        'h_seconds_bucket{le="+Inf",c="t"} 1',
        'h_seconds_count{c="t"} 1',
        "# TYPE g gauge",
        "g Nan",
        "",
      ].join("\n"),
    );
    expect(sampleValue(m, "a_total", { c: "w", q: 'say "hi"\n' })).toBe(3);
    expect(sampleValue(m, "h_seconds_count", { c: "w" })).toBe(2);
    expect(sampleValue(m, "h_seconds_bucket", { c: "t", le: "1" })).toBe(1);
    expect(seriesOf(m, "h_seconds_count")).toHaveLength(2);
    expect(sampleValue(m, "g")).toBeNaN();
  });

  it.each([
    ["a sample of no declared family", "x 1"],
    ["TYPE after samples", "# TYPE a gauge\na 1\n# TYPE a gauge"],
    ["the same series twice", '# TYPE a gauge\na{x="1"} 1\na{x="1"} 2'],
    ["a bad value", "# TYPE a gauge\na one"],
    ["an unquoted label value", "# TYPE a gauge\na{x=1} 1"],
    ["a bad escape", '# TYPE a gauge\na{x="\\t"} 1'],
    ["an unterminated label set", '# TYPE a gauge\na{x="1" 1'],
    ["a bad metric name", "# TYPE 1a gauge\n1a 1"],
    ["buckets that shrink", '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_count 1'],
    ["no +Inf bucket", '# TYPE h histogram\nh_bucket{le="1"} 2\nh_count 2'],
    ["+Inf bucket not the count", '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_count 3'],
    ["a bucket on a counter", '# TYPE c counter\nc_bucket{le="1"} 1'],
  ])("refuses %s", (_what, text) => {
    expect(() => parseExposition(text)).toThrow(ExpositionError);
  });

  it("reads what the gateway's registry writes (every family documented)", async () => {
    const metrics = new GatewayMetrics();
    metrics.turnEnded({ channelType: "webchat", stopReason: "end_turn", ok: true, elapsedMs: 1200 } as never);
    metrics.turnEnded({
      channelType: "webchat",
      stopReason: "error",
      ok: false,
      elapsedMs: 10,
      deliveryFailed: true,
    } as never);
    metrics.firstText("webchat", 300);
    const m = parseExposition(await metrics.registry.metrics());
    expect(sampleValue(m, "parley_turns_total", { channel: "webchat", outcome: "answered" })).toBe(1);
    expect(sampleValue(m, "parley_turns_total", { channel: "webchat", outcome: "failed" })).toBe(1);
    expect(sampleValue(m, "parley_deliveries_failed_total", { channel: "webchat", kind: "turn" })).toBe(1);
    expect(sampleValue(m, "parley_turn_duration_seconds_bucket", { channel: "webchat", le: "1" })).toBe(1);
    expect(sampleValue(m, "parley_turn_first_token_seconds_bucket", { channel: "webchat", le: "0.25" })).toBe(
      0,
    );
    expect(sampleValue(m, "parley_turn_first_token_seconds_bucket", { channel: "webchat", le: "0.5" })).toBe(
      1,
    );
    for (const f of m.values()) expect(f.help, f.name).not.toBe("");
  });
});
