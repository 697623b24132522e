// What an inline image is, read cheaply from its base64 without a decoder dependency: media type,
// decoded size, and the pixel dimensions of PNG, GIF, JPEG and WebP from their headers (only the
// first 64 KiB of base64 are decoded: a JPEG's size sits in its SOF segment, after any EXIF block,
// which a camera or a screenshot tool rarely makes longer than that). Remote URLs are not inline:
// they cost their URL's length in a request, and nothing here fetches them.
import { Buffer } from "node:buffer";
import type { ImagePart } from "./messages.js";

export interface ImageInfo {
  /** "image/png" etc., or "image" when unknown or not a plain type/subtype. */
  readonly mediaType: string;
  /** Decoded bytes. */
  readonly bytes: number;
  /** Characters the image adds to a request: its base64, or its whole data: URL. */
  readonly payloadChars: number;
  readonly width?: number;
  readonly height?: number;
}

const HEAD_BASE64_CHARS = 64 * 1024;
const MEDIA_TYPE = /^[a-z0-9][\w.+-]*\/[\w.+-]+$/i;
const DATA_URL = /^data:([^;,]*)(?:;[^,]*)?;base64,/i;

/** Facts about an inline (base64 or data: URL) image; undefined for a remote URL or an empty part. */
export function imageInfo(part: ImagePart): ImageInfo | undefined {
  let base64: string;
  let declared = part.mediaType;
  let payloadChars: number;
  if (part.data !== undefined && part.data !== "") {
    base64 = part.data;
    payloadChars = part.data.length;
  } else if (part.url !== undefined) {
    const m = DATA_URL.exec(part.url);
    if (!m) return undefined;
    base64 = part.url.slice(m[0].length);
    declared ??= m[1] !== "" ? m[1] : undefined;
    payloadChars = part.url.length;
  } else return undefined;
  const head = Buffer.from(base64.slice(0, HEAD_BASE64_CHARS), "base64");
  const size = dimensions(head);
  const mediaType = declared !== undefined && MEDIA_TYPE.test(declared) ? declared.toLowerCase() : (size?.type ?? "image");
  const info: { -readonly [K in keyof ImageInfo]: ImageInfo[K] } = { mediaType, bytes: decodedBytes(base64), payloadChars };
  if (size !== undefined) {
    info.width = size.width;
    info.height = size.height;
  }
  return info;
}

/** Decoded length of base64 text (whitespace-free, as providers send it), without decoding it. */
function decodedBytes(base64: string): number {
  let n = base64.length;
  while (n > 0 && base64.charCodeAt(n - 1) === 61 /* = */) n--;
  return Math.floor((n * 3) / 4);
}

function dimensions(b: Buffer): { type: string; width: number; height: number } | undefined {
  // PNG: signature, then the IHDR chunk: width and height as big-endian u32 at 16 and 20.
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47 && b.toString("latin1", 12, 16) === "IHDR") {
    return { type: "image/png", width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  }
  // GIF87a/GIF89a: logical screen width and height, little-endian u16 at 6 and 8.
  if (b.length >= 10 && b.toString("latin1", 0, 4) === "GIF8") return { type: "image/gif", width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
  if (b.length >= 30 && b.toString("latin1", 0, 4) === "RIFF" && b.toString("latin1", 8, 12) === "WEBP") return webp(b);
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) return jpeg(b);
  return undefined;
}

function webp(b: Buffer): { type: string; width: number; height: number } | undefined {
  const chunk = b.toString("latin1", 12, 16);
  if (chunk === "VP8X") return { type: "image/webp", width: 1 + b.readUIntLE(24, 3), height: 1 + b.readUIntLE(27, 3) };
  if (chunk === "VP8 " && b.length >= 30) return { type: "image/webp", width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
  if (chunk === "VP8L" && b.length >= 25) {
    const bits = b.readUInt32LE(21);
    return { type: "image/webp", width: 1 + (bits & 0x3fff), height: 1 + ((bits >>> 14) & 0x3fff) };
  }
  return undefined;
}

/** Walks the JPEG segments to the first start-of-frame marker (SOF0–SOF15 but DHT, JPG and DAC). */
function jpeg(b: Buffer): { type: string; width: number; height: number } | undefined {
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i++;
      continue;
    }
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { type: "image/jpeg", width: b.readUInt16BE(i + 7), height: b.readUInt16BE(i + 5) };
    }
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      i += 2;
      continue;
    }
    i += 2 + b.readUInt16BE(i + 2);
  }
  return undefined;
}
