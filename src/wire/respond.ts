// Small response helpers shared by the API and the routes a fallback adds: JSON answers (never sniffed,
// never cached, no body for HEAD) and a percent-decoding that reports bad input instead of throwing.
import { Buffer } from "node:buffer";
import type { IncomingMessage, ServerResponse } from "node:http";

export function sendJson(req: IncomingMessage, res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  });
  res.end(req.method === "HEAD" ? undefined : text);
}

/** A path segment decoded, or undefined when its percent-encoding is malformed (a 400, never a 500). */
export function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}
