// O_DIRECT alignment checks shared by NodeIo and SimIo. Positions and lengths
// are checked against the Io's `directAlignment`. A buffer's address is
// checked exactly when its memory is registered as aligned (AlignedArena);
// for other buffers NodeIo lets the kernel decide (EINVAL, mapped to the same
// code) and SimIo, by default, rejects them, because an ordinary Buffer is
// aligned only by chance (node-platform.md §5.4: 0-2 in 10).

import { IoError, IoErrorCode } from '../io-error.js';
import { knownAddressAlignment } from './aligned-memory.js';

export function directAlignmentError(
  syscall: string,
  path: string,
  alignment: number,
  position: number,
  length: number,
  buffer: Uint8Array | null,
  unknownBuffers: 'reject' | 'allow',
): IoError | null {
  let problem: string | null = null;
  if (position % alignment !== 0) problem = 'position';
  else if (length % alignment !== 0) problem = 'length';
  else if (buffer !== null) {
    const known = knownAddressAlignment(buffer);
    if (known === 0 ? unknownBuffers === 'reject' : known < alignment) problem = 'buffer address';
  }
  if (problem === null) return null;
  return new IoError(IoErrorCode.invalidAlignment, `${syscall} ${path}: O_DIRECT ${problem} not aligned to ${alignment}`, {
    errno: 'EINVAL', syscall, path, context: { position, length, alignment, problem },
  });
}
