// Public shape of the library API (implemented in lib/remove.ts).
import type { Box, ContentType, RemoveOptions } from '../domain/removal.js';

export interface RemoveOutput {
  data: Buffer;
  width: number;
  height: number;
  contentType: ContentType;
  foreground: Box;
}

export type RemoveInputOptions = Partial<RemoveOptions>;
