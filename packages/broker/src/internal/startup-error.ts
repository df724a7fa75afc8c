// Start-up refusals as one line. `pnpm start` (main.ts) prints what
// `startupRefusal` returns on stderr and exits with its code, instead of an
// uncaught error's stack: an operator needs the file, the reason and the
// command that inspects or repairs it, not 22 lines of frames. The stack is
// still there behind SEGLOG_DEBUG=1 (main.ts prints it after the line).
//
// Exit codes: 2 for a refusal the broker understands (port, lock, damaged
// data, producer-id file, file-descriptor limit or budget, any other typed
// SeglogError or errno error); 1 for an internal error (a bug: the line
// says so and how to get the stack).

import { isSeglogError } from '@seglog/common';
import type { SeglogError } from '@seglog/common';

export interface StartupContext {
  readonly dataDir: string;
  readonly host: string;
  readonly port: number;
}

export interface StartupRefusal {
  readonly line: string;
  readonly exitCode: number;
}

const PREFIX = 'seglog broker: cannot start:';

/** One line: newlines in messages (e.g. from a cause) would break it. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

function str(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** The first error along the cause chain that ran out of file descriptors, if any. */
function tooManyFiles(error: unknown): { path: string | null; syscall: string | null; errno: string } | null {
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const seglog = isSeglogError(e) ? e : null;
    const errno = seglog !== null ? str(seglog.context['errno']) : str((e as NodeJS.ErrnoException).code);
    if (errno === 'EMFILE' || errno === 'ENFILE') {
      const path = seglog !== null ? str(seglog.context['path']) : str((e as NodeJS.ErrnoException).path);
      const syscall = seglog !== null ? str(seglog.context['syscall']) : str((e as NodeJS.ErrnoException).syscall);
      return { path, syscall, errno };
    }
  }
  return null;
}

function typed(error: SeglogError, ctx: StartupContext): string {
  const verify = `pnpm seglog verify ${ctx.dataDir}`;
  const c = error.context;
  switch (error.code) {
    case 'SEGLOG_ERR_BROKER_LISTEN':
      if (c['errno'] === 'EADDRINUSE') {
        return `seglog broker: port ${ctx.port} is already in use on ${ctx.host}. Stop the other process, or pass another port: pnpm start -- --port 0 (any free port)`;
      }
      return `${PREFIX} ${ctx.host}:${ctx.port}: cannot listen (${String(c['errno'] ?? error.message)}, SEGLOG_ERR_BROKER_LISTEN). Pass another address or port: pnpm start -- --host 127.0.0.1 --port 0`;
    case 'SEGLOG_ERR_LOG_LOCKED':
      return `seglog broker: ${error.message}. Is another broker running on this data directory?`;
    case 'SEGLOG_ERR_LOG_CORRUPTION': {
      const path = str(c['path']) ?? ctx.dataDir;
      const where = [c['position'] === undefined ? '' : `position ${String(c['position'])}`, c['offset'] === undefined ? '' : `offset ${String(c['offset'])}`,
        c['recoveryPoint'] === undefined ? '' : `recovery point ${String(c['recoveryPoint'])}`].filter((s) => s !== '').join(', ');
      return `${PREFIX} ${path}: ${str(c['reason']) ?? error.message}${where === '' ? '' : ` (${where})`}: durable data is damaged (SEGLOG_ERR_LOG_CORRUPTION). ` +
        `Inspect: ${verify}; repair: pnpm seglog recover --truncate-corrupt --dry-run ${ctx.dataDir} shows what --truncate-corrupt would cut (records from the damage on are lost)`;
    }
    case 'SEGLOG_ERR_BROKER_PRODUCER_ID_CORRUPT':
      return `${PREFIX} ${str(c['path']) ?? ctx.dataDir}: ${str(c['reason']) ?? error.message}; starting could hand out a producer id twice (SEGLOG_ERR_BROKER_PRODUCER_ID_CORRUPT). ` +
        `Inspect: ${verify}; repair: pnpm seglog recover ${ctx.dataDir} (rewrites it above every producer id in the logs)`;
    case 'SEGLOG_ERR_BROKER_FD_LIMIT':
      return `${PREFIX} ${ctx.dataDir}: ${error.message} (SEGLOG_ERR_BROKER_FD_LIMIT)`;
    default: {
      const path = str(c['path']) ?? str(c['dir']) ?? ctx.dataDir;
      return `${PREFIX} ${path}: ${error.message} (${error.code}). Inspect: ${verify}`;
    }
  }
}

export function startupRefusal(error: unknown, ctx: StartupContext): StartupRefusal {
  const emfile = tooManyFiles(error);
  if (emfile !== null) {
    const during = emfile.syscall === null ? '' : ` during ${emfile.syscall}`;
    return {
      exitCode: 2,
      line: oneLine(`${PREFIX} ${emfile.path ?? ctx.dataDir}: too many open files (${emfile.errno}${during}, SEGLOG_ERR_IO_TOO_MANY_FILES). ` +
        `Raise the open-file limit (ulimit -n; LimitNOFILE= under systemd) and start again (pnpm seglog verify ${ctx.dataDir} checks the data)`),
    };
  }
  if (isSeglogError(error)) return { exitCode: 2, line: oneLine(typed(error, ctx)) };
  const errno = error as NodeJS.ErrnoException;
  if (error instanceof Error && typeof errno.code === 'string' && typeof errno.syscall === 'string') {
    return { exitCode: 2, line: oneLine(`${PREFIX} ${errno.path ?? ctx.dataDir}: ${errno.code} during ${errno.syscall}. Inspect: pnpm seglog verify ${ctx.dataDir}`) };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { exitCode: 1, line: oneLine(`${PREFIX} internal error: ${message} (a bug: SEGLOG_DEBUG=1 pnpm start prints the stack; please report it)`) };
}
