/** The segment buffer is the kit's (src/messaging/text/segment-buffer.ts), shared with Teams. */
export { SegmentBuffer } from "../messaging/text/segment-buffer.js";
