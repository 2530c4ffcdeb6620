/**
 * v7 compressed sections and flyrecord chunks. The algorithm name comes from
 * the file header ("zstd", "zlib" or "none"). Declared uncompressed sizes are
 * attacker-controlled, so they are capped before anything is allocated.
 */
import { inflateSync } from 'node:zlib';
import { decompress as zstdDecompress } from 'fzstd';

/** No real section or chunk comes near this; trace-cmd chunks are ~10 pages. */
export const MAX_UNCOMPRESSED = 512 * 1024 * 1024;

export class DecompressError extends Error {}

export function decompress(algorithm: string, input: Uint8Array, expectedSize: number): Buffer {
  if (!Number.isSafeInteger(expectedSize) || expectedSize < 0 || expectedSize > MAX_UNCOMPRESSED) {
    throw new DecompressError(`implausible uncompressed size ${expectedSize}`);
  }
  let out: Uint8Array;
  try {
    switch (algorithm) {
      case 'none':
        out = input;
        break;
      case 'zstd':
        out = zstdDecompress(input, new Uint8Array(expectedSize));
        break;
      case 'zlib':
        out = inflateSync(input, { maxOutputLength: Math.max(1, expectedSize) });
        break;
      default:
        throw new DecompressError(`unsupported compression algorithm ${JSON.stringify(algorithm)}`);
    }
  } catch (e) {
    if (e instanceof DecompressError) throw e;
    throw new DecompressError(`${algorithm} decompression failed: ${(e as Error).message}`);
  }
  if (out.length !== expectedSize) {
    throw new DecompressError(`${algorithm} produced ${out.length} bytes, expected ${expectedSize}`);
  }
  return Buffer.isBuffer(out) ? out : Buffer.from(out.buffer, out.byteOffset, out.length);
}
