/**
 * The long connection's wire frames, with the codec the Lark SDK ships: its generated `pbbp2.Frame`
 * (protobuf; fields SeqID, LogID, service, method, headers, payloadEncoding, payloadType, payload,
 * LogIDNew) registers itself in protobufjs' default root when the SDK loads, so the fake encodes
 * and decodes with exactly the schema the client speaks instead of a hand-copied one.
 */
import "@larksuiteoapi/node-sdk";
import protobuf from "protobufjs/minimal.js";

export interface FrameHeader {
  key: string;
  value: string;
}

export interface Frame {
  SeqID: number;
  LogID: number;
  service: number;
  /** 0: control (ping/pong), 1: data (events and their responses). */
  method: number;
  headers: FrameHeader[];
  payload?: Uint8Array;
}

export const METHOD_CONTROL = 0;
export const METHOD_DATA = 1;

interface FrameCodec {
  encode(frame: Frame): { finish(): Uint8Array };
  decode(bytes: Uint8Array): Frame;
  toObject(frame: Frame, options: { longs: NumberConstructor }): Frame;
}

function codec(): FrameCodec {
  const roots = (protobuf as unknown as { roots: Record<string, { pbbp2?: { Frame?: FrameCodec } }> }).roots;
  const frame = roots.default?.pbbp2?.Frame;
  if (!frame) throw new Error("the Lark SDK's frame schema (pbbp2.Frame) is not registered");
  return frame;
}

export function encodeFrame(frame: Frame): Uint8Array {
  return codec().encode(frame).finish();
}

/** Decodes a frame; uint64 ids come back as plain numbers. Throws on bytes that are not a frame. */
export function decodeFrame(bytes: Uint8Array): Frame {
  const c = codec();
  return c.toObject(c.decode(bytes), { longs: Number });
}

export function headerOf(frame: Frame, key: string): string | undefined {
  return frame.headers.find((h) => h.key === key)?.value;
}
