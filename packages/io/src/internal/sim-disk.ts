// The state SimIo simulates: a tree of directories and files (nodes, like
// inodes, so an open or renamed file keeps its identity), each with what a
// power loss keeps and what the page cache shows. reliability.md §3.2:
//
// - A file has `durable` bytes (survive any crash), an ordered list of
//   `pending` data operations (writes, zero-fills, truncates) issued since its
//   last sync, and `visible` bytes (what reads see). Normally visible =
//   durable + pending; after a failed or lying sync the pending operations are
//   dropped ("lost") while visible keeps them, as Linux does after an fsync
//   error (the pages are marked clean).
// - A directory has visible `entries` and `durableEntries`. Creates, renames,
//   unlinks, mkdirs and rmdirs are namespace operations, pending in one global
//   list until an fsyncDir of a directory they touch (a rename touches both
//   of its directories, and an fsync of either commits all of it, as a
//   journalling file system does).
// - Every pending operation carries a global sequence number (issue order),
//   used by the ordered power-loss mode.
//
// `survive` computes the disk after a crash without touching this one, so a
// halted simulation can be recovered many times (every mode, many seeds).

import path from 'node:path/posix';
import { assert } from '@seglog/common';
import { ioErrorFromErrno } from '../io-error.js';
import type { Prng } from './prng.js';
import { SparseBytes } from './sparse-bytes.js';

export type DataOp =
  | { readonly seq: number; readonly kind: 'write'; readonly position: number; readonly bytes: Uint8Array }
  | { readonly seq: number; readonly kind: 'zero'; readonly position: number; readonly length: number }
  | { readonly seq: number; readonly kind: 'truncate'; readonly size: number };

interface EntryChange {
  readonly dir: number;
  readonly name: string;
  /** The node the entry points to afterwards; null removes the entry. */
  readonly node: number | null;
}

interface NamespaceOp {
  readonly seq: number;
  readonly changes: readonly EntryChange[];
}

export interface SimFileNode {
  readonly kind: 'file';
  readonly id: number;
  visible: SparseBytes;
  durable: SparseBytes;
  pending: DataOp[];
  /** Visible directory entries pointing here. */
  links: number;
  openCount: number;
  mtimeMs: number;
}

export interface SimDirNode {
  readonly kind: 'dir';
  readonly id: number;
  entries: Map<string, number>;
  durableEntries: Map<string, number>;
  links: number;
  openCount: number;
  mtimeMs: number;
}

export type SimNode = SimFileNode | SimDirNode;

export type SurvivalMode = 'process' | 'power-clean' | 'power-chaotic' | 'power-ordered';

export interface SurvivalOptions {
  readonly mode: SurvivalMode;
  readonly prng: Prng;
  readonly sectorBytes: number;
  readonly powersafeOverwrite: boolean;
  /** Relative odds of a pending operation surviving in full, being dropped, or torn (chaotic mode). */
  readonly chaos: { readonly full: number; readonly dropped: number; readonly torn: number };
}

/** Where a path leads: its parent directory, last name, and the node if it exists. */
export interface Walk {
  readonly parent: SimDirNode | null;
  readonly name: string;
  readonly node: SimNode | undefined;
}

const ROOT_ID = 1;

export class SimDisk {
  readonly nodes: Map<number, SimNode>;
  private nsPending: NamespaceOp[];
  private nextId: number;
  private nextSeq: number;
  /** A logical clock for mtimes: deterministic, one tick per modification. */
  private clockMs: number;

  constructor() {
    this.nodes = new Map();
    this.nsPending = [];
    this.nextId = ROOT_ID + 1;
    this.nextSeq = 1;
    this.clockMs = 1_700_000_000_000;
    this.nodes.set(ROOT_ID, newDir(ROOT_ID, this.clockMs));
  }

  private now(): number {
    this.clockMs += 1;
    return this.clockMs;
  }

  get root(): SimDirNode {
    return this.nodes.get(ROOT_ID) as SimDirNode;
  }

  static normalize(p: string): string {
    return path.resolve('/', p);
  }

  /** Resolves a normalised absolute path; a missing or non-directory component on the way throws. */
  walk(p: string, syscall: string): Walk {
    if (p === '/') return { parent: null, name: '', node: this.root };
    const names = p.split('/').slice(1);
    let dir = this.root;
    for (let i = 0; i < names.length - 1; i++) {
      const next = this.child(dir, names[i] as string);
      if (next === undefined) throw ioErrorFromErrno('ENOENT', syscall, p);
      if (next.kind !== 'dir') throw ioErrorFromErrno('ENOTDIR', syscall, p);
      dir = next;
    }
    const name = names[names.length - 1] as string;
    return { parent: dir, name, node: this.child(dir, name) };
  }

  child(dir: SimDirNode, name: string): SimNode | undefined {
    const id = dir.entries.get(name);
    return id === undefined ? undefined : this.nodes.get(id);
  }

  // ---- namespace -------------------------------------------------------

  createFile(parent: SimDirNode, name: string): SimFileNode {
    const node: SimFileNode = {
      kind: 'file', id: this.nextId++, visible: new SparseBytes(), durable: new SparseBytes(),
      pending: [], links: 0, openCount: 0, mtimeMs: this.now(),
    };
    this.nodes.set(node.id, node);
    this.changeEntries([{ dir: parent.id, name, node: node.id }]);
    return node;
  }

  createDir(parent: SimDirNode, name: string): SimDirNode {
    const node = newDir(this.nextId++, this.now());
    this.nodes.set(node.id, node);
    this.changeEntries([{ dir: parent.id, name, node: node.id }]);
    return node;
  }

  removeEntry(parent: SimDirNode, name: string): void {
    this.changeEntries([{ dir: parent.id, name, node: null }]);
  }

  rename(from: SimDirNode, fromName: string, to: SimDirNode, toName: string): void {
    const id = from.entries.get(fromName);
    assert(id !== undefined, 'SimDisk.rename: source entry must exist');
    this.changeEntries([{ dir: from.id, name: fromName, node: null }, { dir: to.id, name: toName, node: id }]);
  }

  /** Applies entry changes to the visible namespace and records them as one pending operation. */
  private changeEntries(changes: readonly EntryChange[]): void {
    for (const change of changes) applyEntryChange(this.nodes, change, 'entries');
    this.nsPending.push({ seq: this.nextSeq++, changes });
  }

  /** fsync of a directory: every pending namespace operation touching it becomes durable, in order. */
  syncDir(dir: SimDirNode): void {
    const rest: NamespaceOp[] = [];
    for (const op of this.nsPending) {
      if (op.changes.some((c) => c.dir === dir.id)) {
        for (const change of op.changes) applyEntryChange(this.nodes, change, 'durableEntries');
      } else {
        rest.push(op);
      }
    }
    this.nsPending = rest;
  }

  // ---- file data -------------------------------------------------------

  write(file: SimFileNode, position: number, bytes: Uint8Array): void {
    file.visible.write(position, bytes);
    file.pending.push({ seq: this.nextSeq++, kind: 'write', position, bytes });
    file.mtimeMs = this.now();
  }

  zero(file: SimFileNode, position: number, length: number): void {
    file.visible.zero(position, length);
    file.pending.push({ seq: this.nextSeq++, kind: 'zero', position, length });
    file.mtimeMs = this.now();
  }

  truncate(file: SimFileNode, size: number): void {
    file.visible.truncate(size);
    file.pending.push({ seq: this.nextSeq++, kind: 'truncate', size });
    file.mtimeMs = this.now();
  }

  /** fsync/fdatasync of a file: its pending operations become durable, or are lost (failed or lying sync). */
  sync(file: SimFileNode, outcome: 'durable' | 'lost'): void {
    if (outcome === 'durable') for (const op of file.pending) applyDataOp(file.durable, op);
    file.pending = [];
  }

  /** Bytes in use: the sizes of files that are linked or open (a quota counts logical sizes). */
  usedBytes(): number {
    let used = 0;
    for (const node of this.nodes.values()) {
      if (node.kind === 'file' && (node.links > 0 || node.openCount > 0)) used += node.visible.size;
    }
    return used;
  }

  pendingCount(): number {
    let count = this.nsPending.length;
    for (const node of this.nodes.values()) if (node.kind === 'file') count += node.pending.length;
    return count;
  }

  // ---- crash -----------------------------------------------------------

  /** The disk as it is after a crash of kind `options.mode`; this disk is not modified. */
  survive(options: SurvivalOptions): SimDisk {
    const next = new SimDisk();
    next.nextId = this.nextId;
    next.nextSeq = this.nextSeq;
    next.clockMs = this.clockMs;
    next.nodes.clear();
    if (options.mode === 'process') {
      this.copyAllInto(next);
    } else {
      this.copyDurableInto(next);
      this.applySurvivors(next, options);
      for (const node of next.nodes.values()) {
        if (node.kind === 'file') node.visible = node.durable.clone();
        else node.entries = new Map(node.durableEntries);
      }
    }
    next.collectUnreachable();
    return next;
  }

  /** Process crash: the page cache keeps everything, pending stays pending. */
  private copyAllInto(next: SimDisk): void {
    for (const node of this.nodes.values()) {
      if (node.kind === 'file') {
        next.nodes.set(node.id, {
          ...node, visible: node.visible.clone(), durable: node.durable.clone(), pending: [...node.pending], openCount: 0,
        });
      } else {
        next.nodes.set(node.id, { ...node, entries: new Map(node.entries), durableEntries: new Map(node.durableEntries), openCount: 0 });
      }
    }
    next.nsPending = [...this.nsPending];
  }

  private copyDurableInto(next: SimDisk): void {
    for (const node of this.nodes.values()) {
      if (node.kind === 'file') {
        next.nodes.set(node.id, { ...node, visible: new SparseBytes(), durable: node.durable.clone(), pending: [], openCount: 0 });
      } else {
        next.nodes.set(node.id, { ...node, entries: new Map(), durableEntries: new Map(node.durableEntries), openCount: 0 });
      }
    }
  }

  /** Power loss: decides, in issue order, which pending operations reach the durable state of `next`. */
  private applySurvivors(next: SimDisk, options: SurvivalOptions): void {
    if (options.mode === 'power-clean') return;
    type Item = { readonly seq: number; readonly file: number; readonly data: DataOp | null; readonly ns: NamespaceOp | null };
    const items: Item[] = [];
    for (const node of this.nodes.values()) {
      if (node.kind === 'file') for (const op of node.pending) items.push({ seq: op.seq, file: node.id, data: op, ns: null });
    }
    for (const op of this.nsPending) items.push({ seq: op.seq, file: 0, data: null, ns: op });
    items.sort((a, b) => a.seq - b.seq);

    const { prng } = options;
    const survivors = options.mode === 'power-ordered' ? prng.int(items.length + 1) : items.length;
    for (let i = 0; i < survivors; i++) {
      const item = items[i] as Item;
      if (item.ns !== null) {
        const keep = options.mode === 'power-ordered' || prng.chance(0.5);
        if (keep) for (const change of item.ns.changes) applyEntryChange(next.nodes, change, 'durableEntries');
        continue;
      }
      const file = next.nodes.get(item.file) as SimFileNode;
      const op = item.data as DataOp;
      if (options.mode === 'power-ordered') {
        const tornLast = i === survivors - 1 && op.kind === 'write' && prng.chance(0.5);
        if (tornLast) applyTornWrite(file.durable, op, 'prefix', options);
        else applyDataOp(file.durable, op);
        continue;
      }
      const outcome = pickOutcome(options);
      if (outcome === 'full') applyDataOp(file.durable, op);
      else if (outcome === 'torn' && op.kind === 'write') applyTornWrite(file.durable, op, 'subset', options);
      // A torn zero-fill lands as zeros either way: the same as full. A torn truncate is dropped.
      else if (outcome === 'torn' && op.kind === 'zero') applyDataOp(file.durable, op);
    }
  }

  /** Drops nodes no entry can reach, and recounts links. */
  private collectUnreachable(): void {
    const reachable = new Set<number>([ROOT_ID]);
    const queue = [ROOT_ID];
    const pendingTargets = new Map<number, number[]>();
    for (const op of this.nsPending) {
      for (const c of op.changes) if (c.node !== null) pendingTargets.set(c.dir, [...(pendingTargets.get(c.dir) ?? []), c.node]);
    }
    for (const node of this.nodes.values()) node.links = 0;
    while (queue.length > 0) {
      const dir = this.nodes.get(queue.pop() as number);
      if (dir === undefined || dir.kind !== 'dir') continue;
      for (const id of dir.entries.values()) {
        const target = this.nodes.get(id);
        if (target !== undefined) target.links++;
      }
      const targets = [...dir.entries.values(), ...dir.durableEntries.values(), ...(pendingTargets.get(dir.id) ?? [])];
      for (const id of targets) {
        if (!reachable.has(id)) {
          reachable.add(id);
          queue.push(id);
        }
      }
    }
    for (const id of [...this.nodes.keys()]) if (!reachable.has(id)) this.nodes.delete(id);
  }
}

function newDir(id: number, mtimeMs: number): SimDirNode {
  return { kind: 'dir', id, entries: new Map(), durableEntries: new Map(), links: 0, openCount: 0, mtimeMs };
}

function applyEntryChange(nodes: Map<number, SimNode>, change: EntryChange, which: 'entries' | 'durableEntries'): void {
  const dir = nodes.get(change.dir);
  if (dir === undefined || dir.kind !== 'dir') return;
  const map = dir[which];
  const counted = which === 'entries';
  const before = map.get(change.name);
  if (counted && before !== undefined) adjustLinks(nodes, before, -1);
  if (change.node === null) map.delete(change.name);
  else map.set(change.name, change.node);
  if (counted && change.node !== null) adjustLinks(nodes, change.node, 1);
}

function adjustLinks(nodes: Map<number, SimNode>, id: number, delta: number): void {
  const node = nodes.get(id);
  if (node !== undefined) node.links += delta;
}

export function applyDataOp(store: SparseBytes, op: DataOp): void {
  if (op.kind === 'write') store.write(op.position, op.bytes);
  else if (op.kind === 'zero') store.zero(op.position, op.length);
  else store.truncate(op.size);
}

function pickOutcome(options: SurvivalOptions): 'full' | 'dropped' | 'torn' {
  const { full, dropped, torn } = options.chaos;
  const r = options.prng.float() * (full + dropped + torn);
  if (r < full) return 'full';
  return r < full + dropped ? 'dropped' : 'torn';
}

/**
 * A write that reached the disk only in part, at sector granularity. The
 * size grows to cover the write (an append may land as zeros). Each sector
 * the write touches gets the new bytes or keeps the old ones ('subset':
 * independently; 'prefix': the first k sectors are new). Without powersafe
 * overwrite a sector may instead be garbage across its whole length,
 * including durable bytes outside the write's range.
 */
function applyTornWrite(
  store: SparseBytes,
  op: Extract<DataOp, { kind: 'write' }>,
  pattern: 'subset' | 'prefix',
  options: SurvivalOptions,
): void {
  const { prng, sectorBytes } = options;
  const end = op.position + op.bytes.byteLength;
  if (end === op.position) return;
  const first = Math.floor(op.position / sectorBytes);
  const last = Math.floor((end - 1) / sectorBytes);
  if (store.size < end) store.truncate(end);
  const cut = first + prng.int(last - first + 1);
  for (let sector = first; sector <= last; sector++) {
    const sectorStart = sector * sectorBytes;
    let outcome: 'new' | 'old' | 'garbage';
    if (pattern === 'prefix') {
      outcome = sector < cut ? 'new' : sector === cut && !options.powersafeOverwrite ? 'garbage' : 'old';
    } else {
      const choices = options.powersafeOverwrite ? 2 : 3;
      const r = prng.int(choices);
      outcome = r === 0 ? 'new' : r === 1 ? 'old' : 'garbage';
    }
    if (outcome === 'new') {
      const from = Math.max(op.position, sectorStart);
      const to = Math.min(end, sectorStart + sectorBytes);
      store.write(from, op.bytes.subarray(from - op.position, to - op.position));
    } else if (outcome === 'garbage') {
      const garbage = new Uint8Array(Math.min(sectorBytes, store.size - sectorStart));
      prng.fill(garbage);
      store.write(sectorStart, garbage);
    }
  }
}
