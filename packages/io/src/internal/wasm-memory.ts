// Page-aligned memory from WebAssembly.Memory (pure JS). The tsconfig lib has
// no WebAssembly declarations, so the one constructor used is typed here.

import { assert } from '@seglog/common';

interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
interface WasmMemoryConstructor {
  new (descriptor: { readonly initial: number; readonly maximum: number }): WasmMemory;
}

const WebAssemblyMemory = (globalThis as unknown as { WebAssembly: { Memory: WasmMemoryConstructor } }).WebAssembly.Memory;

export const WASM_PAGE_BYTES = 65536;
export const WASM_PAGES_MAX = 65536;

/** `bytes` (rounded up to 64 KiB pages) of zeroed, page-aligned memory that never grows. */
export function wasmMemory(bytes: number): ArrayBuffer {
  const pages = Math.max(1, Math.ceil(bytes / WASM_PAGE_BYTES));
  assert(pages <= WASM_PAGES_MAX, 'wasmMemory: at most 4 GiB');
  return new WebAssemblyMemory({ initial: pages, maximum: pages }).buffer;
}
